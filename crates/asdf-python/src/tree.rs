//! The tree as Python values: nodes by JSON pointer, mappings (merge keys, `!!omap`, `!!set`),
//! keys Python asdf would rename, tagged values, dtypes for numpy.

use asdf::core_types::{ByteOrder, Datatype, ScalarType};
use asdf::{AsdfFile, Error, Node, NodeKind, Value};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::errors::usage;

/// A mapping key as Python asdf reads it: a timestamp as PyYAML's date or datetime (made by
/// `asdf_rs._timestamp`), other scalars as [`scalar_value`].
pub(crate) fn key_value(py: Python<'_>, node: &Node) -> PyResult<Py<PyAny>> {
    match &node.kind {
        NodeKind::Scalar(s) if s.value == Value::Timestamp && user_tag(node).is_none() => Ok(py
            .import("asdf_rs")?
            .getattr("_timestamp")?
            .call1((s.text.as_str(),))?
            .unbind()),
        _ => scalar_value(py, node),
    }
}

pub(crate) fn scalar_value(py: Python<'_>, node: &Node) -> PyResult<Py<PyAny>> {
    let NodeKind::Scalar(s) = &node.kind else {
        return Ok(py.None());
    };
    match &s.value {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Int(i) => i.into_py_any(py),
        Value::BigInt(b) => {
            let text = b.to_string();
            py.import("builtins")?.getattr("int")?.call1((text,)).map(Bound::unbind)
        }
        Value::Float(f) => f.into_py_any(py),
        Value::Binary(b) => PyBytes::new(py, b).into_py_any(py),
        Value::Str | Value::Timestamp => s.text.as_str().into_py_any(py),
    }
}

/// The walk of [`NativeFile::convert`].
pub(crate) struct Converter<'a, 'py> {
    pub(crate) doc: &'a asdf::Document,
    pub(crate) array: Bound<'py, PyAny>,
    pub(crate) scalar: Bound<'py, PyAny>,
    pub(crate) mapping: Option<Bound<'py, PyAny>>,
    pub(crate) sequence: Option<Bound<'py, PyAny>>,
    pub(crate) timestamp: Option<Bound<'py, PyAny>>,
    pub(crate) scalar_text: bool,
    /// The objects made of anchored nodes, by node address: an alias gives its anchor's
    /// object (a cycle the container being filled).
    pub(crate) seen: Bound<'py, PyDict>,
    /// Plain string keys made once (a tree of records repeats its keys thousands of times).
    pub(crate) keys: std::collections::HashMap<&'a str, Py<PyAny>>,
    /// Keys renamed because Python holds them equal to an earlier key of their mapping.
    pub(crate) renamed: Vec<String>,
    /// Keys of an `!!omap` written twice (the later value kept).
    pub(crate) duplicates: Vec<String>,
}

/// The keys of the mapping at `pointer` (`(object, text)` each, in order), one-to-one: a key
/// Python holds equal to an earlier one (`1`, `1.0` and `true` are one dict key) becomes its
/// text as a string (with a suffix `_1`, `_2`, ... while that is a key of the mapping too, or
/// given already), the rename recorded: two entries of the file never become one entry of a
/// dict.
pub(crate) fn one_to_one_keys(
    py: Python<'_>,
    keys: Vec<(Py<PyAny>, &str)>,
    pointer: &str,
    renamed: &mut Vec<String>,
) -> PyResult<Vec<Py<PyAny>>> {
    let originals = PyDict::new(py);
    for (k, _) in &keys {
        originals.set_item(k, py.None())?;
    }
    if originals.len() == keys.len() {
        return Ok(keys.into_iter().map(|(k, _)| k).collect());
    }
    let taken = PyDict::new(py);
    let mut out = Vec::with_capacity(keys.len());
    for (k, text) in keys {
        if !taken.contains(&k)? {
            taken.set_item(&k, py.None())?;
            out.push(k);
            continue;
        }
        let mut name = text.to_owned();
        let mut n = 0;
        while taken.contains(&name)? || originals.contains(&name)? {
            n += 1;
            name = format!("{text}_{n}");
        }
        renamed.push(format!(
            "{}: {} read as {name:?} (equal in Python to an earlier key)",
            if pointer.is_empty() { "/" } else { pointer },
            k.bind(py).repr()?
        ));
        taken.set_item(&name, py.None())?;
        out.push(name.into_py_any(py)?);
    }
    Ok(out)
}

/// A `UserWarning` listing the keys renamed by [`one_to_one_key`] that `warned` (the file's)
/// does not hold yet, which it then holds.
pub(crate) fn warn_renamed(
    py: Python<'_>,
    renamed: &[String],
    warned: &std::sync::Mutex<std::collections::HashSet<String>>,
) -> PyResult<()> {
    warn_once(
        py,
        "keys that Python holds equal to an earlier key of their mapping were renamed (the file keeps both)",
        renamed,
        warned,
    )
}

/// A `UserWarning` of `what`, listing the `items` that `warned` (the file's) does not hold
/// yet, which it then holds.
pub(crate) fn warn_once(
    py: Python<'_>,
    what: &str,
    items: &[String],
    warned: &std::sync::Mutex<std::collections::HashSet<String>>,
) -> PyResult<()> {
    let items: Vec<&String> = {
        let mut w = warned.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        items.iter().filter(|r| w.insert((*r).clone())).collect()
    };
    if items.is_empty() {
        return Ok(());
    }
    let msg = format!(
        "{what}: {}",
        items.iter().map(|r| r.as_str()).collect::<Vec<_>>().join("; ")
    );
    let msg = std::ffi::CString::new(msg.replace('\0', " ")).map_err(|_| usage("a warning with a NUL"))?;
    PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &msg, 1)
}

/// A step of the walk's path: the JSON pointer is written out only for an array's callback.
#[derive(Clone, Copy)]
pub(crate) enum Seg<'a> {
    /// Entry `i` of a mapping's entries.
    Entry(&'a [(Node, Node)], usize),
    Index(usize),
}

pub(crate) fn pointer_of(base: &str, path: &[Seg<'_>]) -> String {
    use std::fmt::Write as _;
    let mut out = base.to_owned();
    for seg in path {
        match seg {
            Seg::Entry(entries, i) => {
                out.push('/');
                out.push_str(&entry_token(entries, *i));
            }
            Seg::Index(i) => {
                let _ = write!(out, "/{i}");
            }
        }
    }
    out
}

// Tags other than PyYAML's own (`!!x`, `!!python/tuple`, ...) are kept as tagged nodes,
// never constructed, as Python asdf's loader does.
use asdf::yaml::keys::user_tag;

/// YAML 1.1's collection types that Python asdf's loader builds as Python types: `!!set` (a
/// `set`), `!!omap` (an `OrderedDict`), `!!pairs` (a list of tuples).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Yaml11 {
    Set,
    Omap,
    Pairs,
}

impl Yaml11 {
    pub(crate) fn of(node: &Node) -> Option<Self> {
        match (node.tag.as_deref()?, &node.kind) {
            ("tag:yaml.org,2002:set", NodeKind::Mapping(_)) => Some(Yaml11::Set),
            ("tag:yaml.org,2002:omap", NodeKind::Sequence(_)) => Some(Yaml11::Omap),
            ("tag:yaml.org,2002:pairs", NodeKind::Sequence(_)) => Some(Yaml11::Pairs),
            _ => None,
        }
    }
}

/// The prefix of the tokens that name a mapping's entry by its position (`~e3`: entry 3): what
/// [`NativeFile::node`] gives for a key that no JSON pointer token names one-to-one (the
/// integer `1` beside the string `'1'`, a second `true`, a null or float key). RFC 6901 allows
/// only `~0` and `~1`, so such a token never names a key of its own.
pub(crate) const ENTRY: &str = "~e";

/// The JSON pointer token that names the key `k` (as asdf-yaml matches them: strings and
/// integers by their text, booleans as `true`/`false`); `None` for keys no token names.
pub(crate) fn key_token(k: &Node) -> Option<&str> {
    let s = k.as_scalar()?;
    match &s.value {
        Value::Str | Value::Int(_) | Value::BigInt(_) => Some(s.text.as_str()),
        Value::Bool(true) => Some("true"),
        Value::Bool(false) => Some("false"),
        _ => None,
    }
}

/// The entry a JSON pointer token leads to, as asdf-yaml's pointers choose it: the first string
/// key of that text, else the first key of another type whose token it is (`1`, `true`).
pub(crate) fn token_target(entries: &[(Node, Node)], token: &str) -> Option<usize> {
    entries
        .iter()
        .position(|(k, _)| k.as_str() == Some(token))
        .or_else(|| entries.iter().position(|(k, _)| key_token(k) == Some(token)))
}

/// The one-to-one tokens of a mapping's entries: each key's JSON pointer token when that
/// token leads to that entry ([`token_target`]), else its position (`~e<i>`).
pub(crate) fn entry_tokens(entries: &[(Node, Node)]) -> Vec<String> {
    use std::collections::HashMap;
    let mut strings: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    let mut any: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (i, (k, _)) in entries.iter().enumerate() {
        if let Some(t) = k.as_str() {
            strings.entry(t).or_insert(i);
        }
        if let Some(t) = key_token(k) {
            any.entry(t).or_insert(i);
        }
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| match key_token(k) {
            Some(t) if strings.get(t).or_else(|| any.get(t)) == Some(&i) => asdf::escape_pointer_token(t),
            _ => format!("{ENTRY}{i}"),
        })
        .collect()
}

/// The one-to-one token of entry `i` alone (see [`entry_tokens`]).
pub(crate) fn entry_token(entries: &[(Node, Node)], i: usize) -> String {
    match entries.get(i).and_then(|(k, _)| key_token(k)) {
        Some(t) if token_target(entries, t) == Some(i) => asdf::escape_pointer_token(t),
        _ => format!("{ENTRY}{i}"),
    }
}

/// An entry of a mapping as PyYAML builds the mapping: its key and value nodes, and the steps
/// from the mapping to the value (one entry; or, for an entry a merge key brought, the `<<`
/// entry, the item of its list, and the entry of the mapping merged, which may itself be
/// merged).
pub(crate) struct Flat<'a> {
    pub(crate) key: &'a Node,
    pub(crate) value: &'a Node,
    pub(crate) route: Vec<Seg<'a>>,
}

/// Whether a key is YAML 1.1's merge key: a plain `<<` (or one tagged `!!merge`).
pub(crate) fn is_merge_key(k: &Node) -> bool {
    match &k.kind {
        NodeKind::Scalar(s) => match k.tag.as_deref() {
            None => s.style == asdf::yaml::ScalarStyle::Plain && s.text == "<<",
            Some(t) => t == "tag:yaml.org,2002:merge",
        },
        _ => false,
    }
}

/// What makes two merged keys one in PyYAML's `flatten_mapping`, which drops a merged pair
/// whose key text is the same Python object as an earlier one's (`id(key_node.value)`): the
/// same key node (an anchor merged twice), or, as CPython shares them, one text of at most one
/// Latin-1 character.
#[derive(PartialEq, Eq, Hash)]
pub(crate) enum MergedKeyId<'a> {
    Shared(&'a str),
    Node(usize),
}

pub(crate) fn merged_key_id(k: &Node) -> MergedKeyId<'_> {
    let text = k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (None, _) => MergedKeyId::Shared(text),
        (Some(c), None) if u32::from(c) < 256 => MergedKeyId::Shared(text),
        _ => MergedKeyId::Node(std::ptr::from_ref(k) as usize),
    }
}

/// The entries of mapping `m` (at `pointer`, for messages) as PyYAML's loader (so Python
/// asdf) builds them, merge keys applied (`<<: *base`, `<<: [*a, *b]`), in PyYAML's order:
/// the merged entries first (each `<<` in turn, a list's mappings in order, a key already
/// merged dropped as PyYAML drops it), then the mapping's own. A dict made of them in order
/// is PyYAML's (a later value wins: the mapping's own keys win over merged ones). `None` for
/// a mapping without merge keys (its entries as they are).
pub(crate) fn flatten<'a>(
    doc: &'a asdf::Document,
    m: &'a asdf::yaml::Mapping,
    pointer: &str,
    busy: &mut Vec<usize>,
) -> PyResult<Option<Vec<Flat<'a>>>> {
    if !m.entries.iter().any(|(k, _)| is_merge_key(doc.resolve(k))) {
        return Ok(None);
    }
    busy.push(std::ptr::from_ref(m) as usize);
    let mut merged = Vec::new();
    let mut own = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, (k, v)) in m.entries.iter().enumerate() {
        if !is_merge_key(doc.resolve(k)) {
            own.push(Flat {
                key: k,
                value: v,
                route: vec![Seg::Entry(&m.entries, i)],
            });
            continue;
        }
        let at = format!("{pointer}/{}", entry_token(&m.entries, i));
        let sources: Vec<(Option<usize>, &'a asdf::yaml::Mapping)> = match &doc.resolve(v).kind {
            NodeKind::Mapping(sm) => vec![(None, sm)],
            NodeKind::Sequence(s) => s
                .items
                .iter()
                .enumerate()
                .map(|(j, item)| match &doc.resolve(item).kind {
                    NodeKind::Mapping(sm) => Ok((Some(j), sm)),
                    _ => Err(usage(format!(
                        "{at}/{j}: a merge key's list holds something other than a mapping (PyYAML, so Python asdf, refuses the file)"
                    ))),
                })
                .collect::<PyResult<_>>()?,
            _ => {
                return Err(usage(format!(
                    "{at}: a merge key (<<) whose value is not a mapping or a list of mappings (PyYAML, so Python asdf, refuses the file)"
                )));
            }
        };
        for (j, sm) in sources {
            let sub_pointer = match j {
                Some(j) => format!("{at}/{j}"),
                None => at.clone(),
            };
            // A mapping that merges itself (through an alias to an ancestor): its own entries,
            // as PyYAML, which takes the merge keys out before it flattens what they name.
            let sub = if busy.contains(&(std::ptr::from_ref(sm) as usize)) {
                None
            } else {
                flatten(doc, sm, &sub_pointer, busy)?
            };
            let sub = sub.unwrap_or_else(|| {
                sm.entries
                    .iter()
                    .enumerate()
                    .filter(|(_, (k, _))| !is_merge_key(doc.resolve(k)))
                    .map(|(e, (k, v))| Flat {
                        key: k,
                        value: v,
                        route: vec![Seg::Entry(&sm.entries, e)],
                    })
                    .collect()
            });
            for f in sub {
                if ids.insert(merged_key_id(doc.resolve(f.key))) {
                    let mut route = vec![Seg::Entry(&m.entries, i)];
                    route.extend(j.map(Seg::Index));
                    route.extend(f.route);
                    merged.push(Flat {
                        key: f.key,
                        value: f.value,
                        route,
                    });
                }
            }
        }
    }
    busy.pop();
    merged.extend(own);
    Ok(Some(merged))
}

/// A JSON pointer token unescaped (`~0` is `~`, `~1` is `/`); `None` for another escape
/// (the tree's own pointer rules, asdf-yaml's).
pub(crate) fn unescape_token(t: &str) -> Option<String> {
    asdf::yaml::pointer::tokens(&format!("/{t}")).ok()?.pop()
}

/// An index as RFC 6901 writes array indices (and `~e<i>` its entries): decimal digits,
/// without a sign or leading zeros.
pub(crate) fn strict_index(token: &str) -> Option<usize> {
    let canonical =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    if canonical { token.parse().ok() } else { None }
}

/// The node at `pointer`: a JSON pointer, whose tokens may also be the `~e<i>` of
/// [`entry_tokens`] (aliases followed).
pub(crate) fn node_at<'a>(f: &'a AsdfFile, pointer: &str) -> Result<&'a Node, Error> {
    if !pointer.contains(ENTRY) {
        return f.get(pointer);
    }
    let doc = f.document();
    let not_found = || Error::NotFound(pointer.to_owned());
    let rest = pointer.strip_prefix('/').ok_or_else(not_found)?;
    let mut n = doc.resolve(&doc.root);
    for raw in rest.split('/') {
        let next = match &n.kind {
            NodeKind::Mapping(m) => match raw.strip_prefix(ENTRY) {
                Some(i) => m.entries.get(strict_index(i).ok_or_else(not_found)?),
                None => {
                    let t = unescape_token(raw).ok_or_else(not_found)?;
                    token_target(&m.entries, &t).and_then(|i| m.entries.get(i))
                }
            }
            .map(|(_, v)| v),
            NodeKind::Sequence(s) => strict_index(raw).and_then(|i| s.items.get(i)),
            _ => None,
        };
        n = doc.resolve(next.ok_or_else(not_found)?);
        if matches!(n.kind, NodeKind::Alias(_)) {
            return Err(not_found());
        }
    }
    Ok(n)
}

/// The pointer (one-to-one tokens, see [`entry_tokens`]) of the node at `path` under `root`.
pub(crate) fn pointer_by_steps(root: &Node, path: &[asdf::Step]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut n = root;
    for step in path {
        match (step, &n.kind) {
            (asdf::Step::Entry(i), NodeKind::Mapping(m)) => {
                out.push('/');
                out.push_str(&entry_token(&m.entries, *i));
                match m.entries.get(*i) {
                    Some((_, v)) => n = v,
                    None => break,
                }
            }
            (asdf::Step::Item(i), NodeKind::Sequence(s)) => {
                let _ = write!(out, "/{i}");
                match s.items.get(*i) {
                    Some(v) => n = v,
                    None => break,
                }
            }
            _ => break,
        }
    }
    out
}

impl<'a, 'py> Converter<'a, 'py> {
    pub(crate) fn node(
        &mut self,
        py: Python<'py>,
        node: &'a Node,
        base: &str,
        path: &mut Vec<Seg<'a>>,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let anchored = matches!(node.kind, NodeKind::Alias(_)) || node.anchor.is_some();
        let node = self.doc.resolve(node);
        let key = std::ptr::from_ref(node) as usize;
        if anchored && let Some(obj) = self.seen.get_item(key)? {
            return Ok(obj.unbind());
        }
        let tag = user_tag(node);
        if !raw && tag.is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t)) {
            let obj = self.array.call1((pointer_of(base, path), tag))?.unbind();
            if anchored {
                self.seen.set_item(key, &obj)?;
            }
            return Ok(obj);
        }
        if let Some(kind) = Yaml11::of(node)
            && let Some(obj) = self.yaml11(py, node, kind, base, path)?
        {
            if anchored {
                self.seen.set_item(key, &obj)?;
            }
            return Ok(obj);
        }
        let obj = match &node.kind {
            NodeKind::Mapping(m) => {
                let d = PyDict::new(py);
                if anchored {
                    self.seen.set_item(key, &d)?;
                }
                let flat = flatten(self.doc, m, &pointer_of(base, path), &mut Vec::new())?;
                // Merge keys applied as PyYAML does (see `flatten`): entries set in its order,
                // so the dict keeps its keys and values.
                for f in flat.iter().flatten() {
                    let kobj = self.key_of(py, f.key)?;
                    let depth = path.len();
                    path.extend(f.route.iter().copied());
                    let vobj = self.node(py, f.value, base, path, false);
                    path.truncate(depth);
                    d.set_item(kobj, vobj?)?;
                }
                let plain = if flat.is_some() { &[][..] } else { &m.entries[..] };
                let mut kobjs = Vec::with_capacity(plain.len());
                for (k, _) in plain {
                    kobjs.push(self.key_with_text(py, k)?);
                }
                let kobjs = one_to_one_keys(py, kobjs, &pointer_of(base, path), &mut self.renamed)?;
                for (i, ((_, v), kobj)) in plain.iter().zip(kobjs).enumerate() {
                    path.push(Seg::Entry(&m.entries, i));
                    let vobj = self.node(py, v, base, path, false);
                    path.pop();
                    d.set_item(kobj, vobj?)?;
                }
                match (tag, &self.mapping) {
                    (Some(t), Some(f)) => f.call1((t, d))?.unbind(),
                    _ => d.into_any().unbind(),
                }
            }
            NodeKind::Sequence(s) => {
                let l = PyList::empty(py);
                if anchored {
                    self.seen.set_item(key, &l)?;
                }
                for (i, item) in s.items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    let obj = self.node(py, item, base, path, false);
                    path.pop();
                    l.append(obj?)?;
                }
                match (tag, &self.sequence) {
                    (Some(t), Some(f)) => f.call1((t, l))?.unbind(),
                    _ => l.into_any().unbind(),
                }
            }
            _ => self.scalar_of(py, node)?,
        };
        if anchored {
            self.seen.set_item(key, &obj)?;
        }
        Ok(obj)
    }

    /// A mapping key as a Python object (strings made once).
    pub(crate) fn key_of(&mut self, py: Python<'py>, k: &'a Node) -> PyResult<Py<PyAny>> {
        let k = self.doc.resolve(k);
        let text = k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
        // A plain `=` key (`!!value`): PyYAML's mappings make it the string `=`.
        let value_key = k.tag.as_deref() == Some("tag:yaml.org,2002:value");
        Ok(match &k.kind {
            NodeKind::Scalar(s) if (k.tag.is_none() || value_key) && s.value == Value::Str => {
                if let Some(o) = self.keys.get(text) {
                    o.clone_ref(py)
                } else {
                    let o = text.into_py_any(py)?;
                    self.keys.insert(text, o.clone_ref(py));
                    o
                }
            }
            NodeKind::Scalar(_) => self.scalar_of(py, k)?,
            // A container as a key (YAML allows it): its text form.
            _ => text.into_py_any(py)?,
        })
    }

    /// A mapping key as Python takes it, with its text (for [`one_to_one_keys`]).
    pub(crate) fn key_with_text(&mut self, py: Python<'py>, k: &'a Node) -> PyResult<(Py<PyAny>, &'a str)> {
        let doc: &'a asdf::Document = self.doc;
        let text = doc.resolve(k).as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
        Ok((self.key_of(py, k)?, text))
    }

    /// `!!set`, `!!omap` or `!!pairs` as PyYAML's safe loader and Python asdf build them;
    /// `None` (then read as an untagged container) when the node is not of that form (an
    /// `!!omap` item that is not a mapping of one key).
    pub(crate) fn yaml11(
        &mut self,
        py: Python<'py>,
        node: &'a Node,
        kind: Yaml11,
        base: &str,
        path: &mut Vec<Seg<'a>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match (&node.kind, kind) {
            (NodeKind::Mapping(m), Yaml11::Set) => {
                let set = pyo3::types::PySet::empty(py)?;
                for (k, _) in &m.entries {
                    set.add(self.key_of(py, k)?)?;
                }
                Ok(Some(set.into_any().unbind()))
            }
            (NodeKind::Sequence(s), Yaml11::Omap | Yaml11::Pairs) => {
                let mut entries = Vec::with_capacity(s.items.len());
                let mut kobjs = Vec::with_capacity(s.items.len());
                for item in &s.items {
                    let item = self.doc.resolve(item);
                    let NodeKind::Mapping(m) = &item.kind else {
                        return Ok(None);
                    };
                    let [(k, _)] = m.entries.as_slice() else {
                        return Ok(None);
                    };
                    kobjs.push(self.key_with_text(py, k)?);
                    entries.push(m.entries.as_slice());
                }
                // An ordered mapping's keys as a mapping's are: a key written twice (`a` and
                // `a`, `1` and `true`) is one entry, the later value in the earlier place (as
                // PyYAML's OrderedDict makes it), with a warning; keys Python holds equal but
                // written differently (`1` and `1.0`) are renamed. Pairs keep them all.
                let (kobjs, entries) = if kind == Yaml11::Omap {
                    let pointer = pointer_of(base, path);
                    let mut first: std::collections::HashMap<(bool, String), usize> = std::collections::HashMap::new();
                    let mut keys: Vec<(Py<PyAny>, &str)> = Vec::new();
                    let mut kept: Vec<&'a [(Node, Node)]> = Vec::new();
                    for (i, (kobj, m)) in kobjs.into_iter().zip(entries).enumerate() {
                        let id = asdf::yaml::key_identity(self.doc.resolve(&m[0].0));
                        if let Some(&at) = id.as_ref().and_then(|id| first.get(id)) {
                            self.duplicates.push(format!(
                                "{pointer}/{i}: the key {} written again (the later value kept)",
                                kobj.0.bind(py).repr()?,
                            ));
                            kept[at] = m;
                            continue;
                        }
                        if let Some(id) = id {
                            first.insert(id, kept.len());
                        }
                        keys.push(kobj);
                        kept.push(m);
                    }
                    (one_to_one_keys(py, keys, &pointer, &mut self.renamed)?, kept)
                } else {
                    (kobjs.into_iter().map(|(k, _)| k).collect(), entries)
                };
                let mut pairs = Vec::with_capacity(s.items.len());
                for (i, (m, kobj)) in entries.into_iter().zip(kobjs).enumerate() {
                    let v = &m[0].1;
                    path.push(Seg::Index(i));
                    path.push(Seg::Entry(m, 0));
                    let vobj = self.node(py, v, base, path, false);
                    path.pop();
                    path.pop();
                    pairs.push(PyTuple::new(py, [kobj, vobj?])?);
                }
                let list = PyList::new(py, pairs)?;
                if kind == Yaml11::Pairs {
                    return Ok(Some(list.into_any().unbind()));
                }
                let od = py.import("collections")?.getattr("OrderedDict")?.call1((list,))?;
                Ok(Some(od.unbind()))
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn scalar_of(&self, py: Python<'py>, node: &Node) -> PyResult<Py<PyAny>> {
        let NodeKind::Scalar(s) = &node.kind else {
            return Ok(py.None());
        };
        if let Some(t) = user_tag(node) {
            let value = if self.scalar_text {
                s.text.as_str().into_py_any(py)?
            } else {
                scalar_value(py, node)?
            };
            return Ok(self.scalar.call1((t, value))?.unbind());
        }
        if let (Value::Timestamp, Some(f)) = (&s.value, &self.timestamp) {
            return Ok(f.call1((s.text.as_str(),))?.unbind());
        }
        scalar_value(py, node)
    }
}

/// numpy's name of a datatype in a byte order (`'<f8'`, `'|S10'`, a list of fields).
pub(crate) fn numpy_dtype(py: Python<'_>, dt: &Datatype, order: ByteOrder) -> PyResult<Py<PyAny>> {
    let o = match order {
        ByteOrder::Big => '>',
        ByteOrder::Little => '<',
    };
    match dt {
        Datatype::Scalar(s) => {
            let (kind, size) = match s {
                ScalarType::Int8 => ('i', 1),
                ScalarType::Int16 => ('i', 2),
                ScalarType::Int32 => ('i', 4),
                ScalarType::Int64 => ('i', 8),
                ScalarType::UInt8 => ('u', 1),
                ScalarType::UInt16 => ('u', 2),
                ScalarType::UInt32 => ('u', 4),
                ScalarType::UInt64 => ('u', 8),
                ScalarType::Float16 => ('f', 2),
                ScalarType::Float32 => ('f', 4),
                ScalarType::Float64 => ('f', 8),
                ScalarType::Complex64 => ('c', 8),
                ScalarType::Complex128 => ('c', 16),
                ScalarType::Bool8 => ('b', 1),
                _ => return Err(usage(format!("datatype {dt} has no numpy equivalent here"))),
            };
            format!("{o}{kind}{size}").into_py_any(py)
        }
        Datatype::Ascii(n) => format!("|S{n}").into_py_any(py),
        Datatype::Ucs4(n) => format!("{o}U{n}").into_py_any(py),
        Datatype::Structured(fields) => {
            let list = PyList::empty(py);
            for (i, f) in fields.iter().enumerate() {
                let name = f.name.clone().unwrap_or_else(|| format!("f{i}"));
                let sub = numpy_dtype(py, &f.datatype, f.byteorder.unwrap_or(order))?;
                if f.shape.is_empty() {
                    list.append((name, sub))?;
                } else {
                    list.append((name, sub, PyTuple::new(py, &f.shape)?))?;
                }
            }
            list.into_py_any(py)
        }
        _ => Err(usage(format!("datatype {dt} has no numpy equivalent here"))),
    }
}
