//! `diff`: semantic differences between two trees, array values included.

use asdf::{AsdfFile, Node, NodeKind, Value};

/// One difference, at a JSON pointer.
pub struct Difference {
    pub pointer: String,
    pub what: String,
}

/// Differences between `a` and `b`, skipping every pointer that starts with one of `ignore`.
pub fn diff(a: &AsdfFile, b: &AsdfFile, ignore: &[String]) -> Vec<Difference> {
    let mut d = Differ {
        a,
        b,
        ignore,
        out: Vec::new(),
        stack: Vec::new(),
    };
    d.walk(a.tree(), b.tree(), "");
    d.out
}

struct Differ<'a> {
    a: &'a AsdfFile,
    b: &'a AsdfFile,
    ignore: &'a [String],
    out: Vec<Difference>,
    /// Address pairs of the nodes being compared: an alias back to one of them is not followed.
    stack: Vec<(usize, usize)>,
}

fn short(n: &Node) -> String {
    match &n.kind {
        NodeKind::Scalar(s) => {
            let t: String = s.text.chars().take(60).collect();
            if matches!(s.value, Value::Str) {
                format!("{t:?}")
            } else {
                t
            }
        }
        NodeKind::Mapping(m) => format!("mapping of {}", m.entries.len()),
        NodeKind::Sequence(s) => format!("sequence of {}", s.items.len()),
        NodeKind::Alias(a) => format!("*{}", a.anchor),
    }
}

fn key_text(k: &Node) -> String {
    k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default()
}

fn same_scalar(x: &Value, y: &Value, tx: &str, ty: &str) -> bool {
    match (x, y) {
        (Value::Float(p), Value::Float(q)) => p == q || (p.is_nan() && q.is_nan()),
        (Value::Int(p), Value::Float(q)) | (Value::Float(q), Value::Int(p)) => (*p as f64) == *q,
        (Value::Str, Value::Str) | (Value::Timestamp, Value::Timestamp) => tx == ty,
        _ => x == y,
    }
}

impl Differ<'_> {
    fn push(&mut self, pointer: &str, what: String) {
        self.out.push(Difference {
            pointer: pointer.to_owned(),
            what,
        });
    }

    fn walk(&mut self, na: &Node, nb: &Node, ptr: &str) {
        if self.ignored(ptr) {
            return;
        }
        let na = self.a.document().resolve(na);
        let nb = self.b.document().resolve(nb);
        let addr = (std::ptr::from_ref(na) as usize, std::ptr::from_ref(nb) as usize);
        if self.stack.iter().any(|&(x, y)| x == addr.0 || y == addr.1) {
            if !self.stack.contains(&addr) {
                self.push(ptr, "an alias back to an ancestor in only one file".to_owned());
            }
            return;
        }
        if crate::is_ndarray(na) && crate::is_ndarray(nb) {
            // Compared by value: the tag's version and the storage may differ.
            return self.arrays(ptr);
        }
        if na.tag != nb.tag {
            let t = |n: &Node| {
                n.tag
                    .as_deref()
                    .map(str::to_owned)
                    .unwrap_or_else(|| "(no tag)".to_owned())
            };
            self.push(ptr, format!("tag {} != {}", t(na), t(nb)));
            // The contents are still compared: a new tag version often holds the same data.
        }
        self.stack.push(addr);
        match (&na.kind, &nb.kind) {
            (NodeKind::Mapping(ma), NodeKind::Mapping(mb)) => {
                for (k, va) in &ma.entries {
                    let key = key_text(k);
                    let p = format!("{ptr}/{}", asdf::escape_pointer_token(&key));
                    match mb.entries.iter().find(|(kb, _)| key_text(kb) == key) {
                        Some((_, vb)) => self.walk(va, vb, &p),
                        None if !self.ignored(&p) => self.push(&p, "only in the first file".to_owned()),
                        None => {}
                    }
                }
                for (k, _) in &mb.entries {
                    let key = key_text(k);
                    let p = format!("{ptr}/{}", asdf::escape_pointer_token(&key));
                    if !ma.entries.iter().any(|(ka, _)| key_text(ka) == key) && !self.ignored(&p) {
                        self.push(&p, "only in the second file".to_owned());
                    }
                }
            }
            (NodeKind::Sequence(sa), NodeKind::Sequence(sb)) => {
                if sa.items.len() != sb.items.len() {
                    self.push(ptr, format!("length {} != {}", sa.items.len(), sb.items.len()));
                }
                for (i, (va, vb)) in sa.items.iter().zip(&sb.items).enumerate() {
                    self.walk(va, vb, &format!("{ptr}/{i}"));
                }
            }
            (NodeKind::Scalar(sa), NodeKind::Scalar(sb)) => {
                if !same_scalar(&sa.value, &sb.value, &sa.text, &sb.text) {
                    self.push(ptr, format!("{} != {}", short(na), short(nb)));
                }
            }
            _ => self.push(ptr, format!("{} != {}", short(na), short(nb))),
        }
        self.stack.pop();
    }

    fn ignored(&self, p: &str) -> bool {
        self.ignore.iter().any(|i| p == i || p.starts_with(&format!("{i}/")))
    }

    fn arrays(&mut self, ptr: &str) {
        let (x, y) = match (self.a.array(ptr), self.b.array(ptr)) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) => return self.push(ptr, format!("first file: {e}")),
            (_, Err(e)) => return self.push(ptr, format!("second file: {e}")),
        };
        if x.shape != y.shape {
            return self.push(ptr, format!("shape {:?} != {:?}", x.shape, y.shape));
        }
        if x.datatype != y.datatype {
            self.push(ptr, format!("datatype {} != {}", x.datatype, y.datatype));
        }
        let differing: Vec<usize> = x
            .elements
            .iter()
            .zip(&y.elements)
            .enumerate()
            .filter(|(_, (p, q))| !p.same(q))
            .map(|(i, _)| i)
            .collect();
        if let Some(&first) = differing.first() {
            self.push(
                ptr,
                format!(
                    "{} of {} elements differ; first at flat index {first}: {:?} != {:?}",
                    differing.len(),
                    x.elements.len(),
                    x.elements[first],
                    y.elements[first]
                ),
            );
        }
        if x.mask != y.mask {
            self.push(ptr, "masks differ".to_owned());
        }
    }
}
