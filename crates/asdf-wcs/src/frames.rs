//! gwcs's coordinate frames: the names, units, types and physical types of a step's axes.

use crate::error::Error;
use crate::parse::{At, GWCS, tag_parts};
use crate::units::Unit;

/// What kind of frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameKind {
    /// A frame of a detector or a plane (`frame2d`).
    Frame2d,
    /// The sky (`celestial_frame`).
    Celestial,
    /// Wavelength, frequency, energy, velocity (`spectral_frame`).
    Spectral,
    /// Time (`temporal_frame`).
    Temporal,
    /// Polarisation (`stokes_frame`).
    Stokes,
    /// A frame of several (`composite_frame`).
    Composite,
    /// Any other axes (`frame`, or a frame given only by its name).
    Generic,
}

/// One axis of a frame.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The axis's name (`lon`, `wavelength`, `x`), when the file gives one.
    pub name: String,
    /// The unit, as written (`deg`), when the file gives one.
    pub unit: Option<String>,
    /// The axis type (`SPATIAL`, `SPECTRAL`, `TEMPORAL`, `STOKES`, or another).
    pub axis_type: String,
    /// The physical type (`pos.eq.ra`, `em.wl`), when known.
    pub physical_type: Option<String>,
    pub(crate) parsed_unit: Option<Unit>,
}

/// A time as a file writes it: its value (`J2000.000`, `2022-09-27T02:16:18.414`) and its
/// scale when given (`tt`).
pub type TimeValue = (String, Option<String>);

/// A frame of a gwcs step.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The frame's name (`detector`, `world`).
    pub name: String,
    /// What kind.
    pub kind: FrameKind,
    /// The axes, in the order of the transform's coordinates.
    pub axes: Vec<Axis>,
    /// The reference frame's tag (`tag:astropy.org:astropy/coordinates/frames/icrs-1.1.0`), for
    /// a celestial frame.
    pub reference_frame: Option<String>,
    /// A temporal frame's reference time: its value as written (`2022-09-27T02:16:18.414`) and
    /// its scale when the file gives one (`utc`).
    pub reference_time: Option<(String, Option<String>)>,
    /// The reference frame's attributes (`equinox`, `obstime`, ...): for a time, its value as
    /// written and its scale; `None` for an attribute of another kind (not carried).
    pub frame_attributes: Vec<(String, Option<TimeValue>)>,
}

impl Frame {
    /// How many axes.
    #[must_use]
    pub fn naxes(&self) -> usize {
        self.axes.len()
    }

    /// A frame known by its name only (the first gwcs files wrote steps so).
    pub(crate) fn named(name: &str) -> Frame {
        Frame {
            name: name.to_owned(),
            kind: FrameKind::Generic,
            axes: Vec::new(),
            reference_frame: None,
            reference_time: None,
            frame_attributes: Vec::new(),
        }
    }
}

pub(crate) fn frame(at: At<'_>) -> Result<Frame, Error> {
    if let Some(s) = at.str() {
        return Ok(Frame::named(s));
    }
    let tag = at.tag();
    let Some((name, _)) = tag_parts(tag, GWCS).filter(|(_, v)| crate::parse::known_major(v)) else {
        return Err(at.unsupported(format!("the frame {tag:?}")));
    };
    let kind = match name {
        "frame2d" => FrameKind::Frame2d,
        "celestial_frame" => FrameKind::Celestial,
        "spectral_frame" => FrameKind::Spectral,
        "temporal_frame" => FrameKind::Temporal,
        "stokes_frame" => FrameKind::Stokes,
        "composite_frame" => FrameKind::Composite,
        "frame" => FrameKind::Generic,
        _ => return Err(at.unsupported(format!("the frame {tag}"))),
    };
    let fname = at.key_str("name").unwrap_or_default().to_owned();
    if kind == FrameKind::Composite {
        let subs = at
            .get("frames")
            .and_then(|f| f.items())
            .ok_or_else(|| at.malformed("a composite frame without `frames`"))?;
        let mut placed: Vec<Option<Axis>> = Vec::new();
        let mut next = 0usize;
        let mut reference = None;
        let mut reference_time = None;
        let mut frame_attributes = Vec::new();
        for s in subs {
            let f = frame(s)?;
            let order = axes_order(&s, f.axes.len(), next)?;
            for (a, o) in f.axes.into_iter().zip(order) {
                if placed.len() <= o {
                    placed.resize(o + 1, None);
                }
                if placed[o].is_some() {
                    return Err(s.malformed(format!("two frames claim axis {o}")));
                }
                placed[o] = Some(a);
                next = next.max(o + 1);
            }
            if reference.is_none() {
                reference = f.reference_frame;
                frame_attributes = f.frame_attributes;
            }
            if reference_time.is_none() {
                reference_time = f.reference_time;
            }
        }
        let axes = placed
            .into_iter()
            .enumerate()
            .map(|(i, a)| a.ok_or_else(|| at.malformed(format!("no frame gives axis {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Frame {
            name: fname,
            kind,
            axes,
            reference_frame: reference,
            reference_time,
            frame_attributes,
        });
    }
    let names: Vec<String> = at
        .get("axes_names")
        .and_then(|a| a.items())
        .map(|it| it.iter().map(|a| a.str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default();
    let units = at.get("unit").and_then(|u| u.items()).unwrap_or_default();
    let types: Vec<String> = at
        .get("axes_type")
        .and_then(|a| a.items())
        .map(|it| it.iter().map(|a| a.str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default();
    let phys: Vec<Option<String>> = at
        .get("axis_physical_types")
        .and_then(|a| a.items())
        .map(|it| it.iter().map(|a| a.str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let naxes = at
        .get("naxes")
        .and_then(|n| n.node.as_i64())
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(match kind {
            FrameKind::Frame2d | FrameKind::Celestial => 2,
            FrameKind::Spectral | FrameKind::Temporal | FrameKind::Stokes => 1,
            _ => names.len().max(units.len()).max(types.len()),
        });
    let naxes = naxes.max(names.len()).max(units.len());
    if naxes > crate::parse::MAX_AXES {
        return Err(at.malformed(format!("a frame of more than {} axes", crate::parse::MAX_AXES)));
    }
    let reference = at.get("reference_frame").map(|r| r.tag().to_owned());
    let default_type = match kind {
        FrameKind::Frame2d | FrameKind::Celestial => "SPATIAL",
        FrameKind::Spectral => "SPECTRAL",
        FrameKind::Temporal => "TEMPORAL",
        FrameKind::Stokes => "STOKES",
        _ => "",
    };
    let mut axes = Vec::with_capacity(naxes);
    for i in 0..naxes {
        let (unit, parsed_unit) = match units.get(i) {
            Some(u) if !u.node.is_null() => {
                let text = u.node.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                (Some(text), Some(u.unit()?))
            }
            _ => (None, None),
        };
        let physical_type = phys.get(i).cloned().flatten().or_else(|| {
            (kind == FrameKind::Celestial).then(|| {
                let eq = reference
                    .as_deref()
                    .is_some_and(|r| ["icrs", "fk5", "fk4", "gcrs", "cirs"].iter().any(|k| r.contains(k)));
                match (i, eq) {
                    (0, true) => "pos.eq.ra".to_owned(),
                    (_, true) => "pos.eq.dec".to_owned(),
                    (0, false) => "custom:pos.lon".to_owned(),
                    (_, false) => "custom:pos.lat".to_owned(),
                }
            })
        });
        axes.push(Axis {
            name: names.get(i).cloned().unwrap_or_default(),
            unit,
            axis_type: types.get(i).cloned().unwrap_or_else(|| default_type.to_owned()),
            physical_type,
            parsed_unit,
        });
    }
    let reference_time = if kind == FrameKind::Temporal {
        at.get("reference_frame").and_then(|r| {
            if let Some(v) = r.node.as_scalar() {
                return Some((v.text.to_string(), None));
            }
            let value = r.get("value")?.node.as_scalar()?.text.to_string();
            Some((value, r.key_str("scale").map(str::to_owned)))
        })
    } else {
        None
    };
    let frame_attributes = at
        .get("reference_frame")
        .and_then(|r| r.get("frame_attributes"))
        .and_then(|fa| {
            let m = fa.node.as_mapping()?;
            Some(
                m.entries
                    .iter()
                    .filter_map(|(k, _)| {
                        let name = k.as_scalar()?.text.to_string();
                        let v = fa.get(&name)?;
                        let time = v.tag().contains("/time/time-").then(|| {
                            if let Some(sc) = v.node.as_scalar() {
                                return Some((sc.text.to_string(), None));
                            }
                            let value = v.get("value")?.node.as_scalar()?.text.to_string();
                            Some((value, v.key_str("scale").map(str::to_owned)))
                        });
                        Some((name, time.flatten()))
                    })
                    .collect(),
            )
        })
        .unwrap_or_default();
    Ok(Frame {
        name: fname,
        kind,
        axes,
        reference_frame: reference,
        reference_time,
        frame_attributes,
    })
}

/// A sub-frame's `axes_order` (where its axes go in the composite), default the next ones.
fn axes_order(at: &At<'_>, n: usize, next: usize) -> Result<Vec<usize>, Error> {
    match at.get("axes_order").and_then(|a| a.items()) {
        Some(items) => {
            let v: Option<Vec<usize>> = items
                .iter()
                .map(|a| {
                    a.node
                        .as_i64()
                        .and_then(|i| usize::try_from(i).ok())
                        .filter(|i| *i < 4096)
                })
                .collect();
            let v = v.ok_or_else(|| at.malformed("axes_order must list axis indices"))?;
            if v.len() != n {
                return Err(at.malformed("axes_order must give one index per axis"));
            }
            Ok(v)
        }
        None => Ok((next..next + n).collect()),
    }
}
