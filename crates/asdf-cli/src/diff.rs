//! `diff`: semantic differences between two trees, array values included.

use asdf::{AsdfFile, Node, NodeKind, Value};

/// One difference, at a JSON pointer.
pub struct Difference {
    pub pointer: String,
    pub what: String,
}

/// What a comparison found: the differences, and the nodes that could not be compared (an
/// array whose values could not be read): never counted as differences.
pub struct Outcome {
    pub differences: Vec<Difference>,
    pub unreadable: Vec<Difference>,
}

/// Differences between `a` and `b`, skipping every pointer that starts with one of `ignore`.
///
/// One walk of the first tree (aliases followed within the walk's budget); the second tree is
/// followed along it, node by node, and its keys missing from the first are listed when a
/// mapping is left.
pub fn diff(a: &AsdfFile, b: &AsdfFile, ignore: &[String]) -> Result<Outcome, asdf::Error> {
    let mut d = Differ {
        a,
        b,
        doc_b: b.document()?,
        ignore,
        out: Vec::new(),
        unreadable: Vec::new(),
        second: Vec::new(),
    };
    let walked = asdf::walk::Walker::default().walk(a.document()?, &mut d);
    if let Some(w) = walked.warning() {
        crate::report::warning(&w);
    }
    Ok(Outcome {
        differences: d.out,
        unreadable: d.unreadable,
    })
}

struct Differ<'a> {
    a: &'a AsdfFile,
    b: &'a AsdfFile,
    doc_b: &'a asdf::Document,
    ignore: &'a [String],
    out: Vec<Difference>,
    unreadable: Vec<Difference>,
    /// For each node of the first tree entered and not yet left, its counterpart in the second
    /// (`None` when its children are not compared).
    second: Vec<Option<Counterpart<'a>>>,
}

/// A node of the second tree, with a large mapping's keys looked up in a hash map (linear in the
/// number of keys, not quadratic).
struct Counterpart<'a> {
    node: &'a Node,
    keys: Option<std::collections::HashMap<String, &'a Node>>,
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

/// Mappings with at most this many keys are searched, not hashed.
const SMALL: usize = 16;

/// Whether the key node `k` is the key whose identity is `id` ([`key_id`]).
fn key_is(k: &Node, id: &str) -> bool {
    key_id(k) == id
}

/// A key's identity: its type and its text (`1` and `'1'`, `true` and `'true'` are different
/// keys, as in Python asdf).
fn key_id(k: &Node) -> String {
    let Some(s) = k.as_scalar() else { return String::new() };
    let kind = match s.value {
        Value::Str => 's',
        Value::Int(_) | Value::BigInt(_) => 'i',
        Value::Bool(_) => 'b',
        _ => 'o',
    };
    format!("{kind}{}", s.text)
}

/// A key's text (for pointers).
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

impl<'a> Differ<'a> {
    fn push(&mut self, pointer: &str, what: String) {
        self.out.push(Difference {
            pointer: pointer.to_owned(),
            what,
        });
    }

    /// A node that could not be compared: which file, and why.
    fn unreadable(&mut self, pointer: &str, which: &str, e: &asdf::Error) {
        self.unreadable.push(Difference {
            pointer: pointer.to_owned(),
            what: format!("{which} file: {e}"),
        });
    }

    /// The counterpart in the second tree of the node `at` of the first (unresolved).
    fn counterpart(&self, at: &asdf::walk::At<'_, '_>) -> Option<&'a Node> {
        let parent = match self.second.last() {
            None => return Some(&self.doc_b.root),
            Some(p) => p.as_ref()?,
        };
        match (at.step()?, &parent.node.kind) {
            (asdf::Step::Entry(i), NodeKind::Mapping(m)) => {
                // The key node in the first tree, for its type as well as its text.
                let key = match at.parent().map(|p| &p.kind) {
                    Some(NodeKind::Mapping(pa)) => key_id(&pa.entries.get(i)?.0),
                    _ => format!("s{}", at.key()?),
                };
                match &parent.keys {
                    Some(keys) => keys.get(&key).copied(),
                    None => m.entries.iter().find(|(k, _)| key_is(k, &key)).map(|(_, v)| v),
                }
            }
            (asdf::Step::Item(i), NodeKind::Sequence(s)) => s.items.get(i),
            _ => None,
        }
    }

    /// Compares `na` (first tree) with `nb` (second, resolved): whether their children are
    /// to be compared.
    fn compare(&mut self, na: &Node, nb: &Node, ptr: &str) -> bool {
        if crate::info::is_ndarray(na) && crate::info::is_ndarray(nb) {
            // Compared by value: the tag's version and the storage may differ.
            self.arrays(ptr);
            return false;
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
        match (&na.kind, &nb.kind) {
            (NodeKind::Mapping(_), NodeKind::Mapping(_)) => true,
            (NodeKind::Sequence(sa), NodeKind::Sequence(sb)) => {
                if sa.items.len() != sb.items.len() {
                    self.push(ptr, format!("length {} != {}", sa.items.len(), sb.items.len()));
                }
                true
            }
            (NodeKind::Scalar(sa), NodeKind::Scalar(sb)) => {
                if !same_scalar(&sa.value, &sb.value, &sa.text, &sb.text) {
                    self.push(ptr, format!("{} != {}", short(na), short(nb)));
                }
                false
            }
            _ => {
                self.push(ptr, format!("{} != {}", short(na), short(nb)));
                false
            }
        }
    }

    /// Whether `n` (of the second tree) is the counterpart of a node being compared.
    fn open_in_second(&self, n: &Node) -> bool {
        self.second.iter().flatten().any(|c| std::ptr::eq(c.node, n))
    }
    /// Two arrays with blocks and no mask, compared element by element as they are decoded
    /// (bounded memory whatever their shapes and strides).
    fn arrays_streamed(&mut self, ptr: &str) {
        let (va, vb) = match (
            self.a.array(ptr).and_then(|a| a.view().cloned()),
            self.b.array(ptr).and_then(|a| a.view().cloned()),
        ) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) => return self.unreadable(ptr, "first", &e),
            (_, Err(e)) => return self.unreadable(ptr, "second", &e),
        };
        if va.shape != vb.shape {
            return self.push(ptr, format!("shape {:?} != {:?}", va.shape, vb.shape));
        }
        if va.datatype != vb.datatype {
            self.push(ptr, format!("datatype {} != {}", va.datatype, vb.datatype));
        }
        let (a, b) = (self.a, self.b);
        let compared = a.array(ptr).and_then(|a| {
            a.with_elements(|_, xs| {
                b.array(ptr).and_then(|b| {
                    b.with_elements(|_, ys| {
                        let (mut count, mut differing, mut first) = (0usize, 0usize, None);
                        for (x, y) in xs.zip(ys) {
                            if !x.same(&y) {
                                differing += 1;
                                if first.is_none() {
                                    first = Some((count, x, y));
                                }
                            }
                            count += 1;
                        }
                        (count, differing, first)
                    })
                })
            })
        });
        match compared {
            Ok(Ok((count, differing, Some((at, x, y))))) => self.push(
                ptr,
                format!("{differing} of {count} elements differ; first at flat index {at}: {x:?} != {y:?}"),
            ),
            Ok(Ok(_)) => {}
            Err(e) => self.unreadable(ptr, "first", &e),
            Ok(Err(e)) => self.unreadable(ptr, "second", &e),
        }
    }

    fn ignored(&self, p: &str) -> bool {
        self.ignore.iter().any(|i| p == i || p.starts_with(&format!("{i}/")))
    }

    fn arrays(&mut self, ptr: &str) {
        let plain = |f: &AsdfFile| {
            f.get(ptr)
                .ok()
                .and_then(|n| f.document().ok().map(|d| d.resolve(n)))
                .is_some_and(|n| n.get("source").is_some() && n.get("mask").is_none())
        };
        if plain(self.a) && plain(self.b) {
            return self.arrays_streamed(ptr);
        }
        let (x, y) = match (
            self.a.array(ptr).and_then(|a| a.values()),
            self.b.array(ptr).and_then(|a| a.values()),
        ) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) => return self.unreadable(ptr, "first", &e),
            (_, Err(e)) => return self.unreadable(ptr, "second", &e),
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

impl<'a> asdf::walk::Visitor<'a> for Differ<'a> {
    fn enter(&mut self, at: &asdf::walk::At<'_, 'a>) -> asdf::Visit {
        let ptr = at.pointer();
        let nb = if self.ignored(&ptr) { None } else { self.counterpart(at) };
        let Some(nb) = nb else {
            if !self.ignored(&ptr) && matches!(at.step(), Some(asdf::Step::Entry(_))) {
                self.push(&ptr, "only in the first file".to_owned());
            }
            self.second.push(None);
            return asdf::Visit::SkipChildren;
        };
        let nb = self.doc_b.resolve(nb);
        if self.open_in_second(nb) {
            self.push(&ptr, "an alias back to an ancestor in only one file".to_owned());
            self.second.push(None);
            return asdf::Visit::SkipChildren;
        }
        let deeper = self.compare(at.node(), nb, &ptr);
        let keys = match &nb.kind {
            NodeKind::Mapping(m) if deeper && m.entries.len() > SMALL => {
                Some(m.entries.iter().map(|(k, v)| (key_id(k), v)).collect())
            }
            _ => None,
        };
        self.second.push(deeper.then_some(Counterpart { node: nb, keys }));
        if deeper {
            asdf::Visit::Continue
        } else {
            asdf::Visit::SkipChildren
        }
    }

    fn leave(&mut self, at: &asdf::walk::At<'_, 'a>) {
        let Some(Some(c)) = self.second.pop() else { return };
        if let (NodeKind::Mapping(ma), NodeKind::Mapping(mb)) = (&at.node().kind, &c.node.kind) {
            let in_a: Option<std::collections::HashSet<String>> =
                (ma.entries.len() > SMALL).then(|| ma.entries.iter().map(|(k, _)| key_id(k)).collect());
            let mut ptr = None;
            for (k, _) in &mb.entries {
                let id = key_id(k);
                let key = key_text(k);
                let found = match &in_a {
                    Some(set) => set.contains(&id),
                    None => ma.entries.iter().any(|(ka, _)| key_is(ka, &id)),
                };
                if found {
                    continue;
                }
                let ptr = ptr.get_or_insert_with(|| at.pointer());
                let p = format!("{ptr}/{}", asdf::escape_pointer_token(&key));
                if !self.ignored(&p) {
                    self.push(&p, "only in the second file".to_owned());
                }
            }
        }
    }

    fn cut(&mut self, at: &asdf::walk::At<'_, 'a>, why: asdf::walk::Cut) -> asdf::Visit {
        if why == asdf::walk::Cut::Cycle {
            let ptr = at.pointer();
            let back_in_second = self
                .counterpart(at)
                .is_some_and(|nb| self.open_in_second(self.doc_b.resolve(nb)));
            if !back_in_second && !self.ignored(&ptr) {
                self.push(&ptr, "an alias back to an ancestor in only one file".to_owned());
            }
        }
        asdf::Visit::Continue
    }
}

/// Show the differences between two files' trees, array values included. Exit 0: the same;
/// 1: they differ; 2: some node could not be compared (an array that could not be read: each
/// is named on standard error, never counted as a difference).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The first file.
    first: std::path::PathBuf,
    /// The second file.
    second: std::path::PathBuf,
    /// Print only the pointers that differ.
    #[arg(short, long)]
    minimal: bool,
    /// A JSON pointer to leave out (with everything under it); repeatable.
    #[arg(short, long = "ignore", value_name = "POINTER")]
    ignore: Vec<String>,
}

impl Args {
    pub fn run(&self) -> Result<std::process::ExitCode, asdf::Error> {
        run_diff(&self.first, &self.second, self.minimal, &self.ignore)
    }
}

fn run_diff(
    a: &std::path::Path,
    b: &std::path::Path,
    minimal: bool,
    ignore: &[String],
) -> Result<std::process::ExitCode, asdf::Error> {
    let fa = asdf::Open::path_or_url(a)
        .options(crate::schemas::read_options())
        .open()?;
    let fb = asdf::Open::path_or_url(b)
        .options(crate::schemas::read_options())
        .open()?;
    let ignore: Vec<String> = ignore.iter().map(|i| i.trim_end_matches('/').to_owned()).collect();
    let Outcome {
        differences,
        unreadable,
    } = diff(&fa, &fb, &ignore)?;
    for d in &differences {
        let p = if d.pointer.is_empty() { "/" } else { &d.pointer };
        if minimal {
            println!("{p}");
        } else {
            println!("{p}: {}", d.what);
        }
    }
    if !minimal && !differences.is_empty() {
        println!("{} difference(s)", differences.len());
    }
    for u in &unreadable {
        eprintln!(
            "error: {}: not compared: {}",
            if u.pointer.is_empty() { "/" } else { &u.pointer },
            u.what
        );
    }
    Ok(if !unreadable.is_empty() {
        eprintln!("error: {} node(s) could not be compared", unreadable.len());
        std::process::ExitCode::from(2)
    } else if differences.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}
