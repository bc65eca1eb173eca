//! One open file as the viewer sees it: its tree, blocks and validation as JSON, and its
//! arrays drawn.

use std::sync::Arc;

use asdf::{AsdfFile, Node, NodeKind};
use asdf_preview::{Colormap, Picture, Stretch, Style};
use serde_json::{Value as J, json};

use crate::source::HostSource;

/// The most nodes the tree's JSON lists (the rest are counted, not listed).
const MAX_NODES: usize = 50_000;
/// The deepest level listed.
const MAX_DEPTH: usize = 200;
/// Scalars are shown up to this many characters.
const MAX_TEXT: usize = 200;
/// Pictures are reduced to this many pixels on a side unless asked otherwise.
const DEFAULT_MAX: usize = 1024;

/// An open file.
#[derive(Debug)]
pub struct Session {
    file: AsdfFile,
    source: Arc<HostSource>,
}

/// A drawn array: a description (JSON), the picture's RGBA bytes, and the values drawn (one
/// per pixel of an image, for the value under the cursor).
#[derive(Debug)]
pub struct Drawn {
    /// `kind`, `width`, `height`, `shape`, `region`, `lo`, `hi`, `histogram`, ...
    pub header: J,
    /// RGBA, rows from the top.
    pub rgba: Vec<u8>,
    /// The plane's values (images only), rows as drawn (from the top).
    pub values: Vec<f32>,
}

fn short(s: &str) -> String {
    if s.chars().count() > MAX_TEXT {
        format!("{}…", s.chars().take(MAX_TEXT).collect::<String>())
    } else {
        s.to_owned()
    }
}

/// The tag as users read it (`core/ndarray-1.1.0` for the standard's own).
fn short_tag(t: &str) -> &str {
    t.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(t)
}

impl Session {
    /// Opens the file the host reads (`size` bytes).
    ///
    /// # Errors
    /// The library's, as text.
    pub fn open(source: HostSource) -> Result<Session, asdf::Error> {
        let source = Arc::new(source);
        let file = asdf::Open::source(source.clone())
            .options(asdf::OpenOptions::default().validate(false))
            .open()?;
        Ok(Session { file, source })
    }

    /// The open file.
    #[must_use]
    pub fn file(&self) -> &AsdfFile {
        &self.file
    }

    /// Bytes and requests the host served so far.
    #[must_use]
    pub fn host_stats(&self) -> (u64, u64) {
        self.source.stats()
    }

    /// What the viewer shows of the file: version, tree, blocks, validation, warnings.
    #[must_use]
    pub fn describe(&self) -> J {
        let mut budget = MAX_NODES;
        let tree = self.node(self.file.tree(), "", None, 0, &mut budget);
        let blocks: Vec<J> = self
            .file
            .source()
            .blocks()
            .map(|b| {
                json!({
                    "index": b.index(),
                    "offset": b.offset().ok(),
                    "compression": b.compression().ok().map(|c| c.to_string()),
                    "data_len": b.data_len().ok(),
                    "header": b.header().ok().map(|h| format!("{h:?}")),
                })
            })
            .collect();
        let validation = match self.file.validate(None, None) {
            Ok(r) => json!({
                "valid": r.is_valid(),
                "violations": r.violations.iter().map(|v| json!({
                    "pointer": if v.instance.is_empty() { "/".to_owned() } else { v.instance.clone() },
                    "line": v.span.line + 1,
                    "column": v.span.column + 1,
                    "message": v.message,
                    "schema": v.schema,
                })).collect::<Vec<_>>(),
                "warnings": r.warnings.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>(),
            }),
            Err(e) => json!({ "error": e.to_string() }),
        };
        json!({
            "standard": self.file.standard_version().to_string(),
            "tree": tree,
            "blocks": blocks,
            "validation": validation,
            "warnings": self.file.warnings().iter().map(ToString::to_string).collect::<Vec<_>>(),
            "images": asdf_preview::image_pointers(&self.file).unwrap_or_default(),
            "wcs": crate::world::describe(&self.file),
        })
    }

    fn node(&self, n: &Node, pointer: &str, key: Option<&str>, depth: usize, budget: &mut usize) -> J {
        *budget = budget.saturating_sub(1);
        let mut o = serde_json::Map::new();
        if let Some(k) = key {
            o.insert("k".into(), J::from(short(k)));
        }
        o.insert("p".into(), J::from(pointer));
        o.insert(
            "l".into(),
            J::from(format!("{}:{}", n.span.line + 1, n.span.column + 1)),
        );
        if let Some(t) = n.tag.as_deref() {
            o.insert("t".into(), J::from(short_tag(t)));
        }
        let is_array = n
            .tag
            .as_deref()
            .is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t));
        if is_array {
            o.insert("a".into(), self.array_summary(pointer));
        }
        let children: Vec<(String, &Node)> = match &n.kind {
            NodeKind::Scalar(s) => {
                o.insert("y".into(), J::from(s.value.kind_name()));
                o.insert("v".into(), J::from(short(&s.text)));
                Vec::new()
            }
            NodeKind::Alias(a) => {
                o.insert("y".into(), J::from("alias"));
                o.insert("v".into(), J::from(format!("*{a:?}")));
                Vec::new()
            }
            NodeKind::Sequence(s) => {
                o.insert("y".into(), J::from("seq"));
                o.insert("n".into(), J::from(s.items.len()));
                s.items.iter().enumerate().map(|(i, c)| (i.to_string(), c)).collect()
            }
            NodeKind::Mapping(m) => {
                o.insert("y".into(), J::from("map"));
                o.insert("n".into(), J::from(m.entries.len()));
                m.entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match &k.kind {
                            NodeKind::Scalar(s) => s.text.to_string(),
                            _ => "?".to_owned(),
                        };
                        (key, v)
                    })
                    .collect()
            }
        };
        // An array's own keys (source, datatype, ...) are summarised above; listed too,
        // folded, as any mapping.
        if !children.is_empty() {
            if depth >= MAX_DEPTH || *budget == 0 {
                o.insert("more".into(), J::from(children.len()));
            } else {
                let mut list = Vec::with_capacity(children.len());
                for (k, c) in &children {
                    if *budget == 0 {
                        o.insert("more".into(), J::from(children.len() - list.len()));
                        break;
                    }
                    let p = format!("{pointer}/{}", asdf::escape_pointer_token(k));
                    list.push(self.node(c, &p, Some(k), depth + 1, budget));
                }
                o.insert("c".into(), J::from(list));
            }
        }
        J::Object(o)
    }

    fn array_summary(&self, pointer: &str) -> J {
        match self.file.array(pointer) {
            Ok(a) => json!({
                "shape": a.shape(),
                "datatype": a.datatype().to_string(),
                "byteorder": format!("{:?}", a.byte_order()).to_lowercase(),
                "storage": format!("{:?}", a.storage()),
                "compression": a.compression().map(|c| c.to_string()),
                "masked": a.is_masked(),
            }),
            Err(e) => json!({ "error": e.to_string() }),
        }
    }

    /// Draws the array a request names: `{"pointer", "slice"?, "stretch"?, "cmap"?, "max"?,
    /// "origin_upper"?, "lo"?, "hi"?, "plot": [w, h]?}`.
    ///
    /// # Errors
    /// A message for the page.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the values under the cursor are shown as f32, to 7 digits"
    )]
    pub fn draw(&self, request: &J) -> Result<Drawn, String> {
        let pointer = request["pointer"].as_str().ok_or("no pointer")?;
        let shape = self.file.array(pointer).map_err(|e| e.to_string())?.shape().to_vec();
        let slice = match request["slice"].as_str().filter(|s| !s.trim().is_empty()) {
            Some(s) => s.to_owned(),
            None => asdf_preview::default_slice(&shape),
        };
        let region: asdf::Region = slice.parse().map_err(|e| format!("slice: {e}"))?;
        let stretch: Stretch = request["stretch"].as_str().unwrap_or("zscale").parse()?;
        let cmap: Colormap = request["cmap"].as_str().unwrap_or("gray").parse()?;
        let style = Style {
            stretch,
            cmap,
            origin_lower: !request["origin_upper"].as_bool().unwrap_or(false),
            ..Style::default()
        };
        let max = request["max"]
            .as_u64()
            .and_then(|m| usize::try_from(m).ok())
            .unwrap_or(DEFAULT_MAX);
        match asdf_preview::picture(&self.file, pointer, Some(&region)).map_err(|e| e.to_string())? {
            Picture::Image(plane) => {
                let full = (plane.width, plane.height);
                let plane = plane.reduced(max);
                let (auto_lo, auto_hi) = plane.limits(stretch).unwrap_or((0.0, 1.0));
                let lo = request["lo"].as_f64().unwrap_or(auto_lo);
                let hi = request["hi"].as_f64().unwrap_or(auto_hi);
                let img = plane.render_between(&style, lo, hi);
                let usable = plane.usable_values();
                let (min, max_v) = Stretch::MinMax.limits(&usable).unwrap_or((0.0, 1.0));
                let mut values: Vec<f32> = Vec::with_capacity(plane.values.len());
                for row in 0..plane.height {
                    let y = if style.origin_lower {
                        plane.height - 1 - row
                    } else {
                        row
                    };
                    let masked = plane.masked.as_ref();
                    values.extend((0..plane.width).map(|x| {
                        let i = y * plane.width + x;
                        if masked.is_some_and(|m| m[i]) {
                            f32::NAN
                        } else {
                            plane.values[i] as f32
                        }
                    }));
                }
                Ok(Drawn {
                    header: json!({
                        "kind": "image",
                        "pointer": pointer,
                        "shape": shape,
                        "region": slice,
                        "width": img.width,
                        "height": img.height,
                        "full": [full.0, full.1],
                        "lo": lo,
                        "hi": hi,
                        "min": min,
                        "max": max_v,
                        "histogram": asdf_preview::histogram(&usable, min, max_v, 128),
                    }),
                    rgba: img.rgba,
                    values,
                })
            }
            Picture::Line(v) => {
                let size = request["plot"].as_array();
                let dim = |i: usize, d: usize| {
                    size.and_then(|s| s.get(i))
                        .and_then(J::as_u64)
                        .and_then(|x| usize::try_from(x).ok())
                        .unwrap_or(d)
                        .min(4096)
                };
                let img = asdf_preview::line_plot(&v, dim(0, 800), dim(1, 400));
                Ok(Drawn {
                    header: json!({
                        "kind": "plot",
                        "pointer": pointer,
                        "shape": shape,
                        "region": slice,
                        "width": img.width,
                        "height": img.height,
                        "count": v.len(),
                    }),
                    rgba: img.rgba,
                    values: Vec::new(),
                })
            }
        }
    }
}
