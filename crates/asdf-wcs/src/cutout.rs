//! The WCS of a cutout: the file's WCS with a shift prepended, so that the cutout's pixel
//! (0, 0) is the region's corner (as astrocut does), and the bounding box moved with it and
//! cut to the cutout. Its arrays (polynomial coefficients, tables) are written inline, so the
//! node stands alone in a new file; gwcs reads it and gives, at each cutout pixel, what the
//! original gives at the same pixel of the full image.

use asdf::{AsdfFile, Node, NodeKind};

use crate::error::Error;
use crate::parse::At;
use crate::wcs::Wcs;

/// Deeper nesting is refused (as in reading).
const MAX_DEPTH: usize = 256;

const COMPOSE: &str = "tag:stsci.edu:asdf/transform/compose-1.2.0";
const CONCATENATE: &str = "tag:stsci.edu:asdf/transform/concatenate-1.2.0";
const SHIFT: &str = "tag:stsci.edu:asdf/transform/shift-1.2.0";
const BOUNDING_BOX: &str = "tag:stsci.edu:asdf/transform/property/bounding_box-1.0.0";

fn key(k: &str) -> Node {
    Node::str(k)
}

fn names(list: &[String]) -> Node {
    Node::seq(list.iter().map(|s| Node::str(s.as_str())).collect())
}

/// The node of the WCS at `pointer` for a cutout whose pixel `(0, 0, ...)` is pixel `origin`
/// of the original (x first, as the WCS's pixel axes) and whose size is `size` pixels per
/// axis, for a file of ASDF Standard `standard` (its tags of quantities and units).
///
/// # Errors
/// As [`Wcs::read`]; [`Error::Usage`] when `origin` or `size` do not give one value per pixel
/// axis; [`Error::Unsupported`] for a masked array inside the WCS.
pub fn cutout_node(
    file: &AsdfFile,
    pointer: &str,
    origin: &[f64],
    size: &[usize],
    standard: asdf::Version,
) -> Result<Node, Error> {
    let wcs = Wcs::read(file, pointer)?;
    let n = wcs.pixel_n_dim();
    if origin.len() != n || size.len() != n {
        return Err(Error::Usage(format!(
            "a cutout of a WCS of {n} pixel axes needs {n} offsets and sizes"
        )));
    }
    let at = At::new(file, file.get(pointer)?);
    let mut node = standalone(&at, 0)?;
    let first = node
        .get_mut("steps")
        .and_then(|s| s.as_sequence_mut())
        .and_then(|s| s.items.first_mut())
        .and_then(|s| s.get_mut("transform"))
        .ok_or_else(|| at.malformed("the first step has no transform"))?;
    let mut old = std::mem::replace(first, Node::null());
    let input_names: Vec<String> = old
        .get("inputs")
        .and_then(Node::as_sequence)
        .map(|s| s.items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect())
        .filter(|v: &Vec<String>| v.len() == n)
        .unwrap_or_else(|| {
            if n == 1 {
                vec!["x".to_owned()]
            } else {
                (0..n).map(|i| format!("x{i}")).collect()
            }
        });
    if let Some(m) = old.as_mapping_mut() {
        m.remove("bounding_box");
    }
    // Where the pipeline takes quantities, the shift is one too, in the frame's unit (a plain
    // number added to pixels in a unit is an error in astropy).
    let quantity = wcs.uses_quantity();
    let quantity_tag = asdf::tag_for(standard, "unit/quantity")?;
    let unit_tag = asdf::tag_for(standard, "unit/unit")?;
    let units: Vec<Option<String>> = (0..n)
        .map(|i| wcs.input_frame().axes.get(i).and_then(|a| a.unit.clone()))
        .collect();
    let shifts: Vec<Node> = origin
        .iter()
        .zip(&units)
        .map(|(o, unit)| {
            let offset = match unit {
                Some(u) if quantity => Node::map(vec![
                    (key("value"), Node::float(*o)),
                    (key("unit"), Node::str(u.as_str()).with_tag(unit_tag.as_str())),
                ])
                .with_tag(quantity_tag.as_str()),
                _ => Node::float(*o),
            };
            Node::map(vec![
                (key("offset"), offset),
                (key("inputs"), names(&["x".to_owned()])),
                (key("outputs"), names(&["y".to_owned()])),
            ])
            .with_tag(SHIFT)
        })
        .collect();
    let shift = if n == 1 {
        shifts.into_iter().next().unwrap_or_else(Node::null)
    } else {
        let mut it = shifts.into_iter().rev();
        let mut acc = it.next().unwrap_or_else(Node::null);
        for s in it {
            acc = Node::map(vec![(key("forward"), Node::seq(vec![s, acc]))]).with_tag(CONCATENATE);
        }
        acc
    };
    // The bounding box: the original's moved by the shift, cut to the cutout's pixels.
    let mut intervals = Vec::with_capacity(n);
    for (i, name) in input_names.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let (mut lo, mut hi): (f64, f64) = (-0.5, size[i] as f64 - 0.5);
        if let Some(Some((a, b))) = wcs.bounding_box().and_then(|bb| bb.get(i).copied()) {
            lo = lo.max(a - origin[i]);
            hi = hi.min(b - origin[i]);
        }
        // In the frame's unit where the pipeline takes quantities (astropy compares them).
        let bound = |v: f64| match &units[i] {
            Some(u) if quantity => Node::map(vec![
                (key("value"), Node::float(v)),
                (key("unit"), Node::str(u.as_str()).with_tag(unit_tag.as_str())),
            ])
            .with_tag(quantity_tag.as_str()),
            _ => Node::float(v),
        };
        intervals.push((key(name), Node::seq(vec![bound(lo), bound(hi)])));
    }
    let bbox = Node::map(vec![
        (key("intervals"), Node::map(intervals)),
        (key("ignore"), Node::seq(Vec::new())),
        (key("order"), Node::str("F")),
    ])
    .with_tag(BOUNDING_BOX);
    let mut entries = vec![(key("forward"), Node::seq(vec![shift, old]))];
    entries.push((key("inputs"), names(&input_names)));
    entries.push((key("bounding_box"), bbox));
    *first = Node::map(entries).with_tag(COMPOSE);
    Ok(node)
}

/// A copy of the subtree with its aliases followed and its ndarrays written inline.
fn standalone(at: &At<'_>, depth: usize) -> Result<Node, Error> {
    if depth > MAX_DEPTH {
        return Err(at.malformed("nested too deeply"));
    }
    let n = at.node;
    let tag = at.tag();
    if tag.starts_with("tag:stsci.edu:asdf/core/ndarray-") && n.get("data").is_none() {
        let arr = at.file.array(&at.pointer())?;
        if arr.is_masked() {
            return Err(at.unsupported("a masked array in a WCS"));
        }
        let values = arr.values()?;
        let shape = values.shape.clone();
        let flat: Vec<Node> = values
            .elements
            .iter()
            .map(|e| match e {
                asdf::Element::Float(f) => Ok(Node::float(*f)),
                asdf::Element::Int(i) => Ok(Node::int(*i)),
                asdf::Element::UInt(u) => i64::try_from(*u)
                    .map(Node::int)
                    .map_err(|_| at.unsupported("a uint64 beyond int64 in a WCS array")),
                asdf::Element::Bool(b) => Ok(Node::bool(*b)),
                _ => Err(at.unsupported("an array of other than numbers in a WCS")),
            })
            .collect::<Result<_, _>>()?;
        let data = nest(flat, &shape);
        let mut entries = vec![(key("data"), data)];
        if let Some(d) = n.get("datatype") {
            entries.push((key("datatype"), d.clone()));
        }
        entries.push((
            key("shape"),
            Node::seq(
                shape
                    .iter()
                    .map(|s| Node::int(i64::try_from(*s).unwrap_or(i64::MAX)))
                    .collect(),
            ),
        ));
        return Ok(Node::map(entries).with_tag(tag));
    }
    let mut out = match &n.kind {
        NodeKind::Mapping(m) => {
            let mut entries = Vec::with_capacity(m.entries.len());
            for (k, _) in &m.entries {
                let name = k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                if let Some(child) = at.get(&name) {
                    entries.push((k.clone(), standalone(&child, depth + 1)?));
                }
            }
            Node::map(entries)
        }
        NodeKind::Sequence(_) => {
            let items = at.items().unwrap_or_default();
            Node::seq(
                items
                    .iter()
                    .map(|i| standalone(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => {
            let mut c = n.clone();
            c.anchor = None;
            return Ok(c);
        }
    };
    out.tag = n.tag.clone();
    if let (NodeKind::Sequence(s), NodeKind::Sequence(o)) = (&n.kind, &mut out.kind) {
        o.flow = s.flow;
    }
    Ok(out)
}

/// The values nested as lists of `shape`.
fn nest(flat: Vec<Node>, shape: &[usize]) -> Node {
    match shape {
        [] => flat.into_iter().next().unwrap_or_else(Node::null),
        [_] => Node::seq(flat),
        [first, rest @ ..] => {
            let per: usize = rest.iter().product();
            let mut it = flat.into_iter();
            let mut rows = Vec::with_capacity(*first);
            for _ in 0..*first {
                let chunk: Vec<Node> = it.by_ref().take(per).collect();
                rows.push(nest(chunk, rest));
            }
            Node::seq(rows)
        }
    }
}
