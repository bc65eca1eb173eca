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
        doc_b: b.document(),
        ignore,
        out: Vec::new(),
        unreadable: Vec::new(),
        second: Vec::new(),
    };
    let walked = asdf::walk::Walker::default().walk(a.document(), &mut d);
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
    keys: Option<std::collections::HashMap<String, (usize, &'a Node)>>,
    /// Its JSON pointer in the second tree, naming it exactly (`~e<i>` where a key's text
    /// names another entry): the second file's arrays are read by it.
    pointer: String,
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

/// A key's identity: its type and its value (`1` and `'1'`, `true` and `'true'` are different
/// keys, as in Python asdf; `0x10`, `+16` and `16` are one key, 16, as PyYAML reads them).
fn key_id(k: &Node) -> String {
    let Some(s) = k.as_scalar() else { return String::new() };
    match &s.value {
        Value::Str => format!("s{}", s.text),
        Value::Int(i) => format!("i{i}"),
        Value::BigInt(b) => format!("i{b}"),
        Value::Bool(b) => format!("b{b}"),
        _ => format!("o{}", s.text),
    }
}

fn same_scalar(x: &Value, y: &Value, tx: &str, ty: &str) -> bool {
    match (x, y) {
        (Value::Float(p), Value::Float(q)) => p == q || (p.is_nan() && q.is_nan()),
        // Integers and floats exactly (2^53 + 1 is not 2^53.0, as Python's `==` has it).
        (Value::Int(_) | Value::BigInt(_), Value::Float(_)) | (Value::Float(_), Value::Int(_) | Value::BigInt(_)) => {
            matches!((crate::numbers::number(x), crate::numbers::number(y)), (Some(a), Some(b)) if crate::numbers::numbers_equal(&a, &b))
        }
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

    /// The counterpart in the second tree of the node `at` of the first (unresolved), and its
    /// exact pointer there.
    fn counterpart(&self, at: &asdf::walk::At<'_, '_>) -> Option<(&'a Node, String)> {
        let parent = match self.second.last() {
            None => return Some((&self.doc_b.root, String::new())),
            Some(p) => p.as_ref()?,
        };
        match (at.step()?, &parent.node.kind) {
            (asdf::Step::Entry(i), NodeKind::Mapping(m)) => {
                // The key node in the first tree, for its type as well as its text.
                let key = match at.parent().map(|p| &p.kind) {
                    Some(NodeKind::Mapping(pa)) => key_id(&pa.entries.get(i)?.0),
                    _ => format!("s{}", at.key()?),
                };
                let (j, v) = match &parent.keys {
                    Some(keys) => keys.get(&key).copied()?,
                    None => m
                        .entries
                        .iter()
                        .enumerate()
                        .find(|(_, (k, _))| key_is(k, &key))
                        .map(|(j, (_, v))| (j, v))?,
                };
                let token = asdf::yaml::pointer::entry_token(parent.node, j)?;
                Some((v, format!("{}/{token}", parent.pointer)))
            }
            (asdf::Step::Item(i), NodeKind::Sequence(s)) => Some((s.items.get(i)?, format!("{}/{i}", parent.pointer))),
            _ => None,
        }
    }

    /// Compares `na` (first tree) with `nb` (second, resolved): whether their children are
    /// to be compared.
    fn compare(&mut self, na: &Node, nb: &Node, ptr: &str, ptr_b: &str) -> bool {
        // Chunked arrays (asdf-zarr's, ASDF.jl's) are arrays too: their values are compared,
        // not the chunk maps and metadata their nodes hold.
        let array = |n: &Node| crate::info::is_ndarray(n) || n.tag.as_deref().is_some_and(asdf::is_chunked_array_tag);
        if array(na) && array(nb) {
            // Compared by value: the tag's version and the storage may differ.
            self.arrays(ptr, ptr_b);
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
    fn arrays_streamed(&mut self, ptr: &str, ptr_b: &str) {
        // (A view whose zero strides repeat its data a billion times is not compared element
        // by element: it could not be, in any time.)
        let view = |a: asdf::Array<'_>| a.refuse_repeated(a.shape()).and_then(|()| a.view().cloned());
        let (va, vb) = match (self.a.array(ptr).and_then(view), self.b.array(ptr_b).and_then(view)) {
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
        let (x, y) = match (self.a.array(ptr), self.b.array(ptr_b)) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) => return self.unreadable(ptr, "first", &e),
            (_, Err(e)) => return self.unreadable(ptr, "second", &e),
        };
        match compare_elements(&x, &y, &va) {
            Ok((count, differing, Some((at, x, y)))) => self.push(
                ptr,
                format!(
                    "{differing} of {count} elements differ; first at flat index {at}: {} != {}",
                    asdf_tools::json::element_text(&x),
                    asdf_tools::json::element_text(&y)
                ),
            ),
            Ok(_) => {}
            Err(failed) => match *failed {
                (Side::First, e) => self.unreadable(ptr, "first", &e),
                (Side::Second, e) => self.unreadable(ptr, "second", &e),
            },
        }
    }

    fn ignored(&self, p: &str) -> bool {
        self.ignore.iter().any(|i| p == i || p.starts_with(&format!("{i}/")))
    }

    fn arrays(&mut self, ptr: &str, ptr_b: &str) {
        let plain = |f: &AsdfFile, ptr: &str| {
            f.get(ptr).ok().map(|n| f.document().resolve(n)).is_some_and(|n| {
                let chunked = n.tag.as_deref().is_some_and(asdf::is_chunked_array_tag);
                (chunked || n.get("source").is_some()) && n.get("mask").is_none()
            })
        };
        if plain(self.a, ptr) && plain(self.b, ptr_b) {
            return self.arrays_streamed(ptr, ptr_b);
        }
        let values = |a: asdf::Array<'_>| a.refuse_repeated(a.shape()).and_then(|()| a.values());
        let (x, y) = match (self.a.array(ptr).and_then(values), self.b.array(ptr_b).and_then(values)) {
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
                    "{} of {} elements differ; first at flat index {first}: {} != {}",
                    differing.len(),
                    x.elements.len(),
                    asdf_tools::json::element_text(&x.elements[first]),
                    asdf_tools::json::element_text(&y.elements[first])
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
        // Pointers that name their nodes exactly (`~e<i>` for a key whose text names another
        // entry): each file's arrays are read by its own.
        let ptr = at.pointer_exact();
        let nb = if self.ignored(&ptr) { None } else { self.counterpart(at) };
        let Some((nb, ptr_b)) = nb else {
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
        let deeper = self.compare(at.node(), nb, &ptr, &ptr_b);
        let keys = match &nb.kind {
            NodeKind::Mapping(m) if deeper && m.entries.len() > SMALL => Some(
                m.entries
                    .iter()
                    .enumerate()
                    .map(|(j, (k, v))| (key_id(k), (j, v)))
                    .collect(),
            ),
            _ => None,
        };
        self.second.push(deeper.then_some(Counterpart {
            node: nb,
            keys,
            pointer: ptr_b,
        }));
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
            for (j, (k, _)) in mb.entries.iter().enumerate() {
                let id = key_id(k);
                let found = match &in_a {
                    Some(set) => set.contains(&id),
                    None => ma.entries.iter().any(|(ka, _)| key_is(ka, &id)),
                };
                if found {
                    continue;
                }
                // Named in the second file's terms (its exact pointer there).
                let token = asdf::yaml::pointer::entry_token(c.node, j).unwrap_or_default();
                let p = format!("{}/{token}", c.pointer);
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
                .is_some_and(|(nb, _)| self.open_in_second(self.doc_b.resolve(nb)));
            if !back_in_second && !self.ignored(&ptr) {
                self.push(&ptr, "an alias back to an ancestor in only one file".to_owned());
            }
        }
        asdf::Visit::Continue
    }
}

/// Show the differences between two files' trees, array values included. Exit 0: the same;
/// 1: they differ; 2: trouble: a file that cannot be opened, or a node that could not be
/// compared (an array that could not be read: each is named on standard error, never counted
/// as a difference).
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
    // A pointer to leave out that is not one is a usage error (it would leave out nothing).
    let valid = |p: &str| {
        p.is_empty()
            || p.strip_prefix('/').is_some_and(|rest| {
                rest.split('/').all(|t| match t.strip_prefix("~e") {
                    Some(d) => {
                        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
                    }
                    None => asdf::yaml::pointer::tokens(&format!("/{t}")).is_ok(),
                })
            })
    };
    if let Some(bad) = ignore.iter().find(|i| !valid(i)) {
        crate::report::error(&format!(
            "--ignore `{bad}` is not a JSON pointer (`/a/b`, `~0` for `~`, `~1` for `/`)"
        ));
        return Ok(std::process::ExitCode::from(2));
    }
    // A file that cannot be opened is trouble (exit 2), not a difference.
    let open = |p: &std::path::Path| {
        asdf::Open::path_or_url(p)
            .options(crate::schemas::read_options())
            .open()
    };
    let (fa, fb) = match (open(a), open(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            crate::report::error(&e.to_string());
            return Ok(std::process::ExitCode::from(2));
        }
    };
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

/// Which of the two files a read failed in.
enum Side {
    First,
    Second,
}

/// What comparing two arrays element by element found: how many elements, how many differ,
/// the first difference (flat index and the two elements).
type Compared = (usize, usize, Option<(usize, asdf::Element, asdf::Element)>);

/// Two arrays of one shape compared element by element, read a batch of rows at a time (about
/// 1 MiB of each): memory bounded by a batch and the decoded block, whatever the shapes and
/// strides.
fn compare_elements(
    a: &asdf::Array<'_>,
    b: &asdf::Array<'_>,
    view: &asdf::View,
) -> Result<Compared, Box<(Side, asdf::Error)>> {
    let (mut count, mut differing, mut first) = (0usize, 0usize, None);
    let size = view.datatype.size().max(1);
    let row: usize = view.shape.iter().skip(1).product();
    let rows = view.shape.first().copied().unwrap_or(1);
    let step = ((1usize << 20) / row.saturating_mul(size).max(1)).max(1);
    let mut start = 0;
    while start < rows || (start == 0 && view.shape.is_empty()) {
        let end = rows.min(start.saturating_add(step));
        let region: asdf::Region = if view.shape.is_empty() {
            asdf::Region::default()
        } else {
            // A slice of the first axis keeps every axis (an index would drop one).
            asdf::Region {
                slices: vec![asdf::core_types::region::Slice::Range {
                    start: i64::try_from(start).ok(),
                    stop: i64::try_from(end).ok(),
                    step: None,
                }],
            }
        };
        let x: asdf::RegionBytes = a.read_region(&region).map_err(|e| Box::new((Side::First, e)))?;
        let y: asdf::RegionBytes = b.read_region(&region).map_err(|e| Box::new((Side::Second, e)))?;
        let vx = asdf::View {
            byteorder: x.byte_order,
            ..view.clone()
        };
        let vy = asdf::View {
            byteorder: y.byte_order,
            datatype: b.datatype().clone(),
            ..view.clone()
        };
        let size_y = b.datatype().size().max(1);
        for (ex, ey) in x.bytes.chunks_exact(size).zip(y.bytes.chunks_exact(size_y)) {
            let bad = |e| asdf::Error::Array {
                pointer: a.pointer().to_owned(),
                source: e,
            };
            let ex = vx.decode_one(ex).map_err(|e| Box::new((Side::First, bad(e))))?;
            let ey = vy.decode_one(ey).map_err(|e| Box::new((Side::Second, bad(e))))?;
            if !ex.same(&ey) {
                differing += 1;
                if first.is_none() {
                    first = Some((count, ex, ey));
                }
            }
            count += 1;
        }
        if view.shape.is_empty() {
            break;
        }
        start = end;
    }
    Ok((count, differing, first))
}
