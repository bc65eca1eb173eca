//! From YAML text to a [`Document`]: events of the own grammar, folded into nodes without recursion,
//! with PyYAML's YAML 1.1 resolution and the ASDF subset rules.

use std::collections::{BTreeMap, HashSet};

use crate::grammar::{Ev, Parser};
use crate::scanner::Mark;

use crate::error::{Error, LimitError, SubsetError, Warning};
use crate::node::{
    Alias, Anchor, Document, Mapping, Node, NodeKind, Scalar, ScalarStyle, Sequence, Span, Step, Value, tags,
};
use crate::resolve::{ConstructError, construct_core, resolve_plain};

/// Bounds on what parsing may build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Deepest nesting of collections.
    pub max_depth: usize,
    /// Most alias nodes.
    pub max_aliases: usize,
    /// Most nodes the tree would have with every alias expanded (stops alias bombs).
    pub max_expanded_nodes: u64,
    /// Longest text.
    pub max_bytes: usize,
}

impl Default for Limits {
    /// Depth 1,000; 100,000 aliases; 50 million expanded nodes; 1 GiB of text.
    fn default() -> Self {
        Self {
            max_depth: 1000,
            max_aliases: 100_000,
            max_expanded_nodes: 50_000_000,
            max_bytes: 1 << 30,
        }
    }
}

impl Limits {
    /// No limits (for trusted text only: deep nesting can then exhaust the stack of code that
    /// walks the tree recursively).
    #[must_use]
    pub fn unlimited() -> Self {
        Self {
            max_depth: usize::MAX,
            max_aliases: usize::MAX,
            max_expanded_nodes: u64::MAX,
            max_bytes: usize::MAX,
        }
    }
}

/// A parsed document and the warnings met while parsing it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The document.
    pub document: Document,
    /// Problems that did not stop parsing.
    pub warnings: Vec<Warning>,
}

const MIN_INT: i64 = -(i64::MAX - 1);

struct Frame {
    /// The collection (its item/entry vector stays empty until it ends).
    node: Node,
    /// Where its children start on the shared child stack (keys and values alternate for a
    /// mapping).
    start: usize,
    /// For mappings: a key is waiting for its value.
    key_pending: bool,
    /// Keys seen (mappings only, large ones), to detect duplicates; made on first use (a
    /// hash set's random keys cost a system call the first time).
    seen: Option<HashSet<(bool, String)>>,
    /// Nodes in this subtree with aliases expanded.
    expanded: u64,
}

struct Builder {
    limits: Limits,
    /// Any scalar may be a mapping key (YAML outside an ASDF tree: schemas, manifests), as in
    /// PyYAML; an ASDF tree's keys are strings, integers and booleans only.
    any_keys: bool,
    /// Keys as written (libasdf's reading): any node may be a key, and two keys are the same
    /// only when their text is (`1` and `0x1`, `true` and `True` stay apart).
    text_keys: bool,
    stack: Vec<Frame>,
    /// Finished children of the open collections, innermost last: each collection takes its
    /// own off when it ends, into a vector of exactly the right size.
    children: Vec<Node>,
    path: Vec<Step>,
    /// anchor -> (path, expanded size once complete)
    anchors: BTreeMap<String, (Vec<Step>, Option<u64>)>,
    /// Anchors whose node a duplicate key dropped from the tree, as copies with aliases
    /// expanded: PyYAML keeps the node object, so a later alias still means its value.
    detached: BTreeMap<String, Node>,
    /// Where each alias node was put, and the path it points to (to find the aliases that
    /// pointed into a value a duplicate key replaced).
    sites: Vec<(Vec<Step>, Vec<Step>)>,
    aliases: usize,
    expanded_total: u64,
    warnings: Vec<Warning>,
    root: Option<Node>,
}

impl Builder {
    fn child_step(&self) -> Option<Step> {
        let f = self.stack.last()?;
        let n = self.children.len() - f.start;
        Some(match &f.node.kind {
            NodeKind::Sequence(_) => Step::Item(n),
            NodeKind::Mapping(_) if !f.key_pending => Step::Key(n / 2),
            NodeKind::Mapping(_) => Step::Entry(n / 2),
            _ => Step::Item(0),
        })
    }

    fn count(&mut self, n: u64, at: Span) -> Result<(), Error> {
        self.expanded_total = self.expanded_total.saturating_add(n);
        if self.expanded_total > self.limits.max_expanded_nodes {
            return Err(Error::Limits {
                span: at,
                kind: LimitError::Expansion(self.limits.max_expanded_nodes),
            });
        }
        Ok(())
    }

    fn register_anchor(&mut self, anchor: &Option<String>) {
        if let Some(a) = anchor {
            let mut p = self.path.clone();
            if let Some(s) = self.child_step() {
                p.push(s);
            }
            self.anchors.insert(a.clone(), (p, None));
            self.detached.remove(a);
        }
    }

    /// A finished node of the tree being built, by path (`None` for a path into a collection
    /// still open, or to nothing).
    fn node_at(&self, target: &[Step]) -> Option<&Node> {
        let (abs, rest) = self.child_slot(target)?;
        self.children.get(abs)?.at_path(rest)
    }

    fn node_at_mut(&mut self, target: &[Step]) -> Option<&mut Node> {
        let (abs, rest) = self.child_slot(target)?;
        rest.iter().try_fold(self.children.get_mut(abs)?, |n, s| n.step_mut(*s))
    }

    /// The slot on the child stack of the finished node that `target` passes through, and the
    /// steps left below it.
    fn child_slot<'t>(&self, target: &'t [Step]) -> Option<(usize, &'t [Step])> {
        let c = target.iter().zip(&self.path).take_while(|(a, b)| a == b).count();
        let step = *target.get(c)?;
        let f = self.stack.get(c)?;
        let idx = match (step, &f.node.kind) {
            (Step::Item(n), NodeKind::Sequence(_)) => n,
            (Step::Key(n), NodeKind::Mapping(_)) => n.checked_mul(2)?,
            (Step::Entry(n), NodeKind::Mapping(_)) => n.checked_mul(2)?.checked_add(1)?,
            _ => return None,
        };
        let end = self.stack.get(c + 1).map_or(self.children.len(), |g| g.start);
        let abs = f.start.checked_add(idx)?;
        (abs < end).then_some((abs, &target[c + 1..]))
    }

    /// A copy of the node at `target` (inside `old`, the value a duplicate key is replacing,
    /// when it starts with `p_old`; else in the tree built so far) with every alias expanded
    /// and no anchors; an alias back to its own ancestor (a recursive structure) becomes null.
    fn materialize(&mut self, old: &Node, p_old: &[Step], target: &[Step], at: Span) -> Result<Node, Error> {
        let source = |b: &Self, t: &[Step]| -> Option<Node> {
            match t.strip_prefix(p_old) {
                Some(rest) => old.at_path(rest).cloned(),
                None => b.node_at(t).cloned(),
            }
        };
        let mut out = source(self, target).unwrap_or_else(Node::null);
        let mut work: Vec<(&mut Node, Vec<Step>)> = vec![(&mut out, target.to_vec())];
        while let Some((n, from)) = work.pop() {
            n.anchor = None;
            if let NodeKind::Alias(a) = &n.kind {
                let t = a.target.clone();
                if from.starts_with(&t) || from.len() > self.limits.max_depth {
                    *n = Node::null();
                    continue;
                }
                self.count(1, at)?;
                *n = source(self, &t).unwrap_or_else(Node::null);
                work.push((n, t));
                continue;
            }
            self.count(1, at)?;
            match &mut n.kind {
                NodeKind::Mapping(m) => {
                    for (i, (k, v)) in m.entries.iter_mut().enumerate() {
                        work.push((k, [from.as_slice(), &[Step::Key(i)]].concat()));
                        work.push((v, [from.as_slice(), &[Step::Entry(i)]].concat()));
                    }
                }
                NodeKind::Sequence(q) => {
                    for (i, item) in q.items.iter_mut().enumerate() {
                        work.push((item, [from.as_slice(), &[Step::Item(i)]].concat()));
                    }
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// A duplicate key's value `node` replaces the value at `p_old` (`old`, taken out of the
    /// tree). What pointed into `old` keeps its meaning, as in PyYAML, where an alias is the
    /// node object itself: anchors defined in `old` become detached copies for later aliases,
    /// and aliases already made (in `node` or elsewhere) that point into `old` become copies.
    fn orphan(&mut self, old: &Node, p_old: &[Step], p_new: &[Step], node: &mut Node, at: Span) -> Result<(), Error> {
        let dying: Vec<(String, Vec<Step>)> = self
            .anchors
            .iter()
            .filter(|(_, (t, _))| t.starts_with(p_old))
            .map(|(a, (t, _))| (a.clone(), t.clone()))
            .collect();
        for (name, t) in dying {
            let copy = self.materialize(old, p_old, &t, at)?;
            self.anchors.remove(&name);
            self.detached.insert(name, copy);
        }
        let mut stack = vec![&mut *node];
        while let Some(n) = stack.pop() {
            if let NodeKind::Alias(a) = &n.kind
                && a.target.starts_with(p_old)
            {
                let t = a.target.clone();
                *n = self.materialize(old, p_old, &t, at)?;
                continue;
            }
            match &mut n.kind {
                NodeKind::Mapping(m) => stack.extend(m.entries.iter_mut().flat_map(|(k, v)| [k, v])),
                NodeKind::Sequence(q) => stack.extend(q.items.iter_mut()),
                _ => {}
            }
        }
        let elsewhere: Vec<(Vec<Step>, Vec<Step>)> = self
            .sites
            .iter()
            .filter(|(s, t)| t.starts_with(p_old) && !s.starts_with(p_old) && !s.starts_with(p_new))
            .cloned()
            .collect();
        for (s, t) in elsewhere {
            let copy = self.materialize(old, p_old, &t, at)?;
            if let Some(n) = self.node_at_mut(&s)
                && matches!(&n.kind, NodeKind::Alias(a) if a.target == t)
            {
                *n = copy;
            }
        }
        self.sites.retain(|(s, _)| !s.starts_with(p_old));
        Ok(())
    }

    /// Attaches a finished node (with its expanded size) to the parent, or makes it the root.
    fn attach(&mut self, mut node: Node, expanded: u64) -> Result<(), Error> {
        // An alias as a mapping key (`? *k : v`) is its anchored scalar's key, as PyYAML
        // reads it: the key becomes a copy of that scalar, checked as any key is.
        if let NodeKind::Alias(a) = &node.kind
            && self
                .stack
                .last()
                .is_some_and(|f| matches!(f.node.kind, NodeKind::Mapping(_)) && !f.key_pending)
            && let Some(target) = self
                .node_at(&a.target)
                .filter(|t| matches!(t.kind, NodeKind::Scalar(_)))
        {
            let mut copy = target.clone();
            copy.anchor = None;
            copy.span = node.span;
            node = copy;
        }
        if let Some(a) = &node.anchor
            && let Some(entry) = self.anchors.get_mut(&**a)
        {
            entry.1 = Some(expanded);
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        parent.expanded = parent.expanded.saturating_add(expanded);
        if !matches!(parent.node.kind, NodeKind::Mapping(_)) {
            self.children.push(node);
            return Ok(());
        }
        if !parent.key_pending {
            if self.text_keys {
                // Any node.
            } else if !self.any_keys {
                check_key(&node)?;
            } else if !matches!(node.kind, NodeKind::Scalar(_)) {
                // A collection key cannot be a dict key in Python either.
                return Err(Error::Subset {
                    span: node.span,
                    kind: SubsetError::KeyType,
                });
            }
            parent.key_pending = true;
            self.children.push(node);
            return Ok(());
        }
        parent.key_pending = false;
        let key_at = self.children.len() - 1;
        let keys = &self.children[parent.start..key_at];
        let dup = if self.text_keys {
            text_duplicate_of(&mut parent.seen, keys, &self.children[key_at])
        } else {
            duplicate_of(&mut parent.seen, keys, &self.children[key_at])
        };
        if let Some(i) = dup {
            let key = self.children.pop();
            self.warnings.push(Warning::DuplicateKey {
                span: key.as_ref().map(|k| k.span).unwrap_or_default(),
                key: key
                    .as_ref()
                    .and_then(|k| k.as_scalar())
                    .map(|s| s.text.to_string())
                    .unwrap_or_default(),
            });
            // The value takes entry i's place: anchors defined inside it, and aliases inside
            // it to those anchors, were recorded at the entry it would have had.
            let start = parent.start;
            let gone = (key_at - start) / 2;
            let mut prefix = self.path.clone();
            prefix.push(Step::Entry(gone));
            let depth = prefix.len() - 1;
            let mut node = node;
            // The dropped key's own anchor (`&a k: ...` repeated) lives on as a detached copy,
            // as PyYAML keeps the key object: aliases to it, in its value or later, mean it.
            if let Some(k) = &key
                && let Some(name) = k.anchor.as_deref()
            {
                let mut key_path = self.path.clone();
                key_path.push(Step::Key(gone));
                if self.anchors.get(name).is_some_and(|(t, _)| *t == key_path) {
                    self.anchors.remove(name);
                    let mut copy = k.clone();
                    copy.anchor = None;
                    let mut stack = vec![&mut node];
                    while let Some(n) = stack.pop() {
                        if matches!(&n.kind, NodeKind::Alias(a) if a.target == key_path) {
                            let span = n.span;
                            *n = copy.clone();
                            n.span = span;
                            continue;
                        }
                        match &mut n.kind {
                            NodeKind::Mapping(m) => stack.extend(m.entries.iter_mut().flat_map(|(k, v)| [k, v])),
                            NodeKind::Sequence(q) => stack.extend(q.items.iter_mut()),
                            _ => {}
                        }
                    }
                    self.sites.retain(|(_, t)| *t != key_path);
                    self.detached.insert(name.to_owned(), copy);
                }
            }
            let slot = start + 2 * i + 1;
            let mut p_old = self.path.clone();
            p_old.push(Step::Entry(i));
            let old = std::mem::replace(&mut self.children[slot], Node::null());
            self.orphan(&old, &p_old, &prefix, &mut node, old.span)?;
            for (target, _) in self.anchors.values_mut() {
                if target.starts_with(&prefix) {
                    target[depth] = Step::Entry(i);
                }
            }
            for (site, target) in &mut self.sites {
                for p in [site, target] {
                    if p.starts_with(&prefix) {
                        p[depth] = Step::Entry(i);
                    }
                }
            }
            let mut stack = vec![&mut node];
            while let Some(n) = stack.pop() {
                match &mut n.kind {
                    NodeKind::Alias(a) if a.target.starts_with(&prefix) => a.target[depth] = Step::Entry(i),
                    NodeKind::Mapping(m) => stack.extend(m.entries.iter_mut().flat_map(|(k, v)| [k, v])),
                    NodeKind::Sequence(q) => stack.extend(q.items.iter_mut()),
                    _ => {}
                }
            }
            self.children[slot] = node;
            return Ok(());
        }
        self.children.push(node);
        Ok(())
    }

    fn scalar(
        &mut self,
        at: Span,
        anchor: Option<String>,
        tag: Option<String>,
        text: std::borrow::Cow<'_, str>,
        st: ScalarStyle,
    ) -> Result<(), Error> {
        self.register_anchor(&anchor);
        let is_key = self
            .stack
            .last()
            .is_some_and(|f| matches!(f.node.kind, NodeKind::Mapping(_)) && !f.key_pending);
        let mut tag = tag;
        let value = match tag.as_deref() {
            // A `<<` merge key is kept as the string key `<<` (merging is not performed).
            None if st == ScalarStyle::Plain && is_key && text == "<<" => Ok(Value::Str),
            // Plain texts PyYAML resolves to a tag its safe constructor lacks (`=` to
            // `!!value`, `<<` as a value to `!!merge`): Python asdf's loader gives the text as a
            // string tagged so, as it does for every YAML tag it does not construct.
            None if st == ScalarStyle::Plain => match resolve_plain(&text) {
                Err(ConstructError::ValueTag) => {
                    tag = Some(format!("{}value", tags::YAML));
                    Ok(Value::Str)
                }
                Err(ConstructError::MergeTag) => {
                    tag = Some(format!("{}merge", tags::YAML));
                    Ok(Value::Str)
                }
                r => r,
            },
            // The non-specific `!` asks for the plain resolution whatever the style, as C
            // libyaml reads it (`plain_implicit`): `! '2026-11-22 03:20:32+00:00'`, which
            // libyaml writes for a timestamp it must quote, is a timestamp to PyYAML.
            Some("!") => resolve_plain(&text),
            None => Ok(Value::Str),
            // YAML core tags PyYAML's safe constructor lacks (`!!python/str`, `!!value`, any
            // other): the text as a string, the tag kept, as Python asdf's loader gives them
            // (with a warning when converted); nothing is ever constructed from them.
            Some(t) if t.starts_with(tags::YAML) => match construct_core(t, &text) {
                Err(ConstructError::UnsupportedTag(_) | ConstructError::ValueTag | ConstructError::MergeTag) => {
                    Ok(Value::Str)
                }
                r => r,
            },
            // Application tags (ASDF's and others') on scalars hold strings, as in Python asdf.
            Some(_) => Ok(Value::Str),
        }
        .map_err(|kind| Error::Construct { span: at, kind })?;
        let out_of_range = match &value {
            Value::Int(i) => *i < MIN_INT,
            Value::BigInt(_) => true,
            _ => false,
        };
        if out_of_range {
            self.warnings.push(Warning::IntOutOfRange {
                span: at,
                text: text.to_string(),
            });
        }
        self.count(1, at)?;
        let node = Node {
            tag: tag.map(String::into_boxed_str),
            anchor: anchor.map(Anchor::from),
            span: at,
            kind: NodeKind::Scalar(Scalar {
                text: text.into(),
                value,
                style: st,
            }),
        };
        self.attach(node, 1)
    }

    fn alias(&mut self, at: Span, name: String) -> Result<(), Error> {
        self.aliases += 1;
        if self.aliases > self.limits.max_aliases {
            return Err(Error::Limits {
                span: at,
                kind: LimitError::Aliases(self.limits.max_aliases),
            });
        }
        let Some((target, size)) = self.anchors.get(&name).cloned() else {
            if let Some(copy) = self.detached.get(&name) {
                let mut copy = copy.clone();
                copy.span = at;
                let n = node_count(&copy);
                self.count(n, at)?;
                return self.attach(copy, n);
            }
            return Err(Error::Subset {
                span: at,
                kind: SubsetError::UndefinedAlias(name),
            });
        };
        let mut site = self.path.clone();
        if let Some(s) = self.child_step() {
            site.push(s);
        }
        self.sites.push((site, target.clone()));
        // An alias to a node still being built (a recursive structure) counts once.
        let size = size.unwrap_or(1);
        self.count(size, at)?;
        let node = Node {
            tag: None,
            anchor: None,
            span: at,
            kind: NodeKind::Alias(Alias {
                anchor: Anchor::from(name),
                target,
            }),
        };
        self.attach(node, size)
    }

    fn start(&mut self, at: Span, anchor: Option<String>, tag: Option<String>, kind: NodeKind) -> Result<(), Error> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(Error::Limits {
                span: at,
                kind: LimitError::Depth(self.limits.max_depth),
            });
        }
        self.register_anchor(&anchor);
        self.count(1, at)?;
        if let Some(step) = self.child_step() {
            self.path.push(step);
        }
        self.stack.push(Frame {
            node: Node {
                tag: tag.map(String::into_boxed_str),
                anchor: anchor.map(Anchor::from),
                span: at,
                kind,
            },
            start: self.children.len(),
            key_pending: false,
            seen: None,
            expanded: 1,
        });
        Ok(())
    }

    fn end(&mut self) -> Result<(), Error> {
        let Some(mut f) = self.stack.pop() else {
            return Ok(());
        };
        if !self.stack.is_empty() {
            self.path.pop();
        }
        let start = f.start.min(self.children.len());
        match &mut f.node.kind {
            NodeKind::Sequence(s) => s.items = self.children.drain(start..).collect(),
            NodeKind::Mapping(m) => {
                let mut entries = Vec::with_capacity((self.children.len() - start) / 2);
                let mut it = self.children.drain(start..);
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                drop(it);
                m.entries = entries;
            }
            _ => {}
        }
        check_collection_tag(&f.node)?;
        self.attach(f.node, f.expanded)
    }
}

/// Nodes in a tree without aliases.
fn node_count(n: &Node) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        total += 1;
        match &n.kind {
            NodeKind::Mapping(m) => stack.extend(m.entries.iter().flat_map(|(k, v)| [k, v])),
            NodeKind::Sequence(q) => stack.extend(q.items.iter()),
            _ => {}
        }
    }
    total
}

/// Mappings up to this size are checked for duplicate keys by a linear scan; larger ones
/// through a hash set built on first use.
const LINEAR_KEYS: usize = 16;

/// The index of an existing entry whose key equals `key`; `kv` holds the entries so far as
/// alternating keys and values.
fn duplicate_of(seen: &mut Option<HashSet<(bool, String)>>, kv: &[Node], key: &Node) -> Option<usize> {
    let (is_str, text) = key_parts(key)?;
    let same = |k: &Node| key_parts(k).is_some_and(|(s, t)| s == is_str && t == text);
    let n = kv.len() / 2;
    if n < LINEAR_KEYS {
        return kv.iter().step_by(2).position(same);
    }
    let seen = seen.get_or_insert_with(|| kv.iter().step_by(2).filter_map(key_identity).collect());
    if seen.insert((is_str, text.clone().into_owned())) {
        return None;
    }
    kv.iter().step_by(2).position(same)
}

/// As [`duplicate_of`] for keys as written: a scalar key equal in text (and tag) to an earlier
/// one; other nodes are never duplicates.
fn text_duplicate_of(seen: &mut Option<HashSet<(bool, String)>>, kv: &[Node], key: &Node) -> Option<usize> {
    let id = |k: &Node| -> Option<String> {
        let s = k.as_scalar()?;
        Some(format!("{}\u{0}{}", k.tag.as_deref().unwrap_or(""), s.text))
    };
    let mine = id(key)?;
    let n = kv.len() / 2;
    if n < LINEAR_KEYS {
        return kv
            .iter()
            .step_by(2)
            .position(|k| id(k).as_deref() == Some(mine.as_str()));
    }
    let seen = seen.get_or_insert_with(|| kv.iter().step_by(2).filter_map(id).map(|t| (true, t)).collect());
    if seen.insert((true, mine.clone())) {
        return None;
    }
    kv.iter()
        .step_by(2)
        .position(|k| id(k).as_deref() == Some(mine.as_str()))
}

/// Whether a key is YAML 1.1's merge key (a plain, untagged `<<`): a mapping may have several,
/// which PyYAML applies in turn, so they are never duplicates of each other.
fn is_merge_key(k: &Node) -> bool {
    k.tag.is_none()
        && k.as_scalar()
            .is_some_and(|s| s.style == ScalarStyle::Plain && s.text == "<<")
}

/// A key as (is a string, canonical text), borrowing where it can; `None` for keys that are
/// never duplicates (merge keys, collections).
fn key_parts(k: &Node) -> Option<(bool, std::borrow::Cow<'_, str>)> {
    if is_merge_key(k) {
        return None;
    }
    let s = k.as_scalar()?;
    match &s.value {
        Value::Str => Some((true, std::borrow::Cow::Borrowed(s.text.as_str()))),
        Value::Int(i) => Some((false, std::borrow::Cow::Owned(i.to_string()))),
        Value::BigInt(b) => Some((false, std::borrow::Cow::Owned(b.to_string()))),
        Value::Bool(b) => Some((false, std::borrow::Cow::Borrowed(if *b { "1" } else { "0" }))),
        Value::Null => Some((false, std::borrow::Cow::Borrowed("null"))),
        Value::Float(f) => Some((false, std::borrow::Cow::Owned(float_identity(*f)))),
        Value::Timestamp => Some((false, std::borrow::Cow::Owned(format!("timestamp:{}", s.text)))),
        _ => None,
    }
}

/// A float key's identity among keys of its own type: equal values are one key (`1.5` and
/// `1.50`, `0.0` and `-0.0`), and every NaN is one key (PyYAML builds each `.nan` as the same
/// object, so a dict holds one). Apart from integers and booleans: `1.0` beside `1` stays a
/// key of its own (see [`key_identity`]).
fn float_identity(f: f64) -> String {
    if f.is_nan() {
        "float:nan".to_owned()
    } else if f == 0.0 {
        "float:0".to_owned()
    } else {
        format!("float:{f:?}")
    }
}

/// What makes two mapping keys one key to a YAML reader (PyYAML's dict): `(is a string, text)`,
/// with `true` and `1` one key, as are `false` and `0`; floats of one value are one key (every
/// NaN too), and timestamps of one text; `None` for keys that are never duplicates here (merge
/// keys, collections). A float equal to an integer (`1.0` beside `1`) stays a key of its own:
/// Python merges them, and a reader that keeps both (renamed, with a warning) loses nothing.
#[must_use]
pub fn key_identity(k: &Node) -> Option<(bool, String)> {
    if is_merge_key(k) {
        return None;
    }
    let s = k.as_scalar()?;
    match s.value {
        Value::Str => Some((true, s.text.to_string())),
        Value::Int(i) => Some((false, i.to_string())),
        Value::BigInt(ref b) => Some((false, b.to_string())),
        Value::Bool(b) => Some((false, if b { "1" } else { "0" }.to_owned())),
        Value::Null => Some((false, "null".to_owned())),
        Value::Float(f) => Some((false, float_identity(f))),
        Value::Timestamp => Some((false, format!("timestamp:{}", s.text))),
        _ => None,
    }
}

fn check_key(key: &Node) -> Result<(), Error> {
    let ok = match &key.kind {
        NodeKind::Scalar(s) => matches!(s.value, Value::Str | Value::Int(_) | Value::BigInt(_) | Value::Bool(_)),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::Subset {
            span: key.span,
            kind: SubsetError::KeyType,
        })
    }
}

/// `!!omap`, `!!pairs`, `!!set`, `!!seq`, `!!map` (and other core tags) on collections, as
/// PyYAML's SafeConstructor checks them.
fn check_collection_tag(n: &Node) -> Result<(), Error> {
    let Some(tag) = n.tag.as_deref() else {
        return Ok(());
    };
    let shape = |problem: &'static str| Error::Construct {
        span: n.span,
        kind: ConstructError::Shape {
            tag: tag.to_owned(),
            problem,
        },
    };
    match (tag, &n.kind) {
        (tags::OMAP | tags::PAIRS, NodeKind::Sequence(s)) => {
            for item in &s.items {
                match &item.kind {
                    NodeKind::Mapping(m) if m.entries.len() == 1 => {}
                    NodeKind::Mapping(_) => return Err(shape("expected a single mapping item")),
                    _ => return Err(shape("expected a mapping of length 1")),
                }
            }
            Ok(())
        }
        (tags::OMAP | tags::PAIRS, _) => Err(shape("expected a sequence")),
        (tags::SEQ, NodeKind::Sequence(_)) | (tags::MAP | tags::SET, NodeKind::Mapping(_)) => Ok(()),
        (tags::SEQ, _) => Err(shape("expected a sequence")),
        (tags::MAP | tags::SET, _) => Err(shape("expected a mapping")),
        // Other YAML core tags on collections (`!!python/tuple`, `!!python/object:...`): the
        // collection kept with its tag, as Python asdf's loader gives it (never constructed).
        _ => Ok(()),
    }
}

/// Parses the YAML text of an ASDF tree (or any single YAML 1.1 document).
///
/// # Errors
/// Syntax errors, constructor errors, subset violations and limits, each with line:column.
pub fn parse(text: &[u8], limits: &Limits) -> Result<Parsed, Error> {
    parse_keys(text, limits, false)
}

/// Parses YAML that is not an ASDF tree (a schema, a manifest): as [`parse`], except that any
/// scalar may be a mapping key (`null`, a float, a timestamp), as PyYAML reads it.
///
/// # Errors
/// As [`parse`].
pub fn parse_yaml(text: &[u8], limits: &Limits) -> Result<Parsed, Error> {
    parse_keys(text, limits, true)
}

/// Parses YAML with its mapping keys as written, as libasdf (the C library) reads a tree: any
/// node may be a key, and keys are the same only when their text is (`1`, `0x1` and `01` are
/// three keys; PyYAML makes them one). For the C API.
///
/// # Errors
/// As [`parse`].
pub fn parse_as_written(text: &[u8], limits: &Limits) -> Result<Parsed, Error> {
    if text.len() > limits.max_bytes {
        return Err(Error::Limits {
            span: Span::default(),
            kind: LimitError::Bytes(limits.max_bytes),
        });
    }
    build_with(
        text,
        limits,
        (true, true),
        text.len() >= PIPELINE_MIN_BYTES && cores() > 1,
    )
}

fn parse_keys(text: &[u8], limits: &Limits, any_keys: bool) -> Result<Parsed, Error> {
    if text.len() > limits.max_bytes {
        return Err(Error::Limits {
            span: Span::default(),
            kind: LimitError::Bytes(limits.max_bytes),
        });
    }
    build_with(
        text,
        limits,
        (any_keys, false),
        text.len() >= PIPELINE_MIN_BYTES && cores() > 1,
    )
}

/// Trees at least this long are parsed on two threads when the machine has two cores: one
/// turns the text into events, the other folds the events into nodes.
const PIPELINE_MIN_BYTES: usize = 256 * 1024;
/// Events handed from the event thread to the builder at a time.
const BATCH: usize = 2048;

type Batch<'a> = Vec<(Ev<'a>, Mark)>;

fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

fn build_with(text: &[u8], limits: &Limits, keys: (bool, bool), pipelined: bool) -> Result<Parsed, Error> {
    let (any_keys, text_keys) = keys;
    let mut b = Builder {
        limits: *limits,
        any_keys,
        text_keys,
        stack: Vec::new(),
        children: Vec::new(),
        path: Vec::new(),
        anchors: BTreeMap::new(),
        detached: BTreeMap::new(),
        sites: Vec::new(),
        aliases: 0,
        expanded_total: 0,
        warnings: Vec::new(),
        root: None,
    };
    let mut doc = DocState::default();
    if pipelined && let Some(done) = build_pipelined(text, &mut b, &mut doc) {
        done?;
        return Ok(finish(b, doc));
    }
    let mut parser = Parser::new(text)?;
    while let Some((ev, at)) = parser.next()? {
        b.event(ev, at, &mut doc)?;
    }
    Ok(finish(b, doc))
}

/// Events made on a second thread, nodes built on this one; the result (and the first error)
/// is the same as parsing on one thread. `None` when the thread could not be started (nothing
/// has been consumed then).
fn build_pipelined(text: &[u8], b: &mut Builder, doc: &mut DocState) -> Option<Result<(), Error>> {
    use std::sync::mpsc::sync_channel;
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<Result<Batch<'_>, Error>>(4);
        let (empty_tx, empty_rx) = sync_channel::<Batch<'_>>(8);
        let producer = std::thread::Builder::new()
            .name("asdf-yaml-events".into())
            .spawn_scoped(scope, move || {
                let mut parser = match Parser::new(text) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        return;
                    }
                };
                loop {
                    let mut batch = empty_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    let mut end = false;
                    while batch.len() < BATCH {
                        match parser.next() {
                            Ok(Some(e)) => batch.push(e),
                            Ok(None) => {
                                end = true;
                                break;
                            }
                            Err(e) => {
                                if !batch.is_empty() {
                                    let _ = full_tx.send(Ok(batch));
                                }
                                let _ = full_tx.send(Err(e));
                                return;
                            }
                        }
                    }
                    // A closed channel means the builder stopped (an error of its own).
                    if full_tx.send(Ok(batch)).is_err() || end {
                        return;
                    }
                }
            });
        if producer.is_err() {
            return None;
        }
        for batch in full_rx {
            let mut batch = match batch {
                Ok(batch) => batch,
                Err(e) => return Some(Err(e)),
            };
            for (ev, at) in batch.drain(..) {
                if let Err(e) = b.event(ev, at, doc) {
                    return Some(Err(e));
                }
            }
            let _ = empty_tx.try_send(batch);
        }
        Some(Ok(()))
    })
}

#[derive(Default)]
struct DocState {
    version: Option<(i32, i32)>,
    tag_directives: Vec<(String, String)>,
    documents: usize,
}

fn finish(b: Builder, doc: DocState) -> Parsed {
    let root = b.root.unwrap_or_else(Node::null);
    let mut document = Document {
        version: doc.version,
        tag_directives: doc.tag_directives,
        root,
    };
    if b.aliases > 0 {
        link_aliases(&mut document.root);
    }
    Parsed {
        document,
        warnings: b.warnings,
    }
}

/// Gives each alias the identity of the anchor it refers to (the parser tracks it by path,
/// which stays true only until the tree is edited).
fn link_aliases(root: &mut Node) {
    for p in root.alias_paths() {
        let Some(NodeKind::Alias(a)) = root.at_path(&p).map(|n| &n.kind) else {
            continue;
        };
        let Some(anchor) = root.at_path(&a.target).and_then(|t| t.anchor.clone()) else {
            continue;
        };
        if let Some(Node {
            kind: NodeKind::Alias(a),
            ..
        }) = root.at_path_mut(&p)
            && *a.anchor == *anchor
        {
            a.anchor = anchor;
        }
    }
}

impl Builder {
    fn event(&mut self, ev: Ev<'_>, at: Mark, doc: &mut DocState) -> Result<(), Error> {
        let at: Span = at.into();
        match ev {
            Ev::StreamStart | Ev::DocEnd { .. } | Ev::StreamEnd => {}
            Ev::DocStart { version: v, tags, .. } => {
                doc.documents += 1;
                if doc.documents > 1 {
                    return Err(Error::Subset {
                        span: at,
                        kind: SubsetError::MultipleDocuments,
                    });
                }
                if let Some((major, minor)) = v {
                    if (major, minor) != (1, 1) {
                        self.warnings.push(Warning::YamlVersion {
                            major: i32::from(major),
                            minor: i32::from(minor),
                        });
                    }
                    doc.version = Some((i32::from(major), i32::from(minor)));
                }
                doc.tag_directives = tags;
            }
            Ev::Alias(anchor) => self.alias(at, anchor.to_owned())?,
            Ev::Scalar {
                anchor,
                tag,
                value,
                style,
            } => self.scalar(at, anchor.map(str::to_owned), tag, value, style)?,
            Ev::SeqStart { anchor, tag, flow } => self.start(
                at,
                anchor.map(str::to_owned),
                tag,
                NodeKind::Sequence(Sequence {
                    items: Vec::new(),
                    flow,
                }),
            )?,
            Ev::MapStart { anchor, tag, flow } => self.start(
                at,
                anchor.map(str::to_owned),
                tag,
                NodeKind::Mapping(Mapping {
                    entries: Vec::new(),
                    flow,
                }),
            )?,
            Ev::SeqEnd | Ev::MapEnd => self.end()?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{BATCH, Limits, build_with};
    use std::fmt::Write;

    /// Pipelined and one-thread parsing give the same trees, warnings and first errors.
    #[test]
    fn pipelined_parsing_matches_one_thread() {
        let mut big =
            String::from("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nanchored: &a {x: 1}\nrows:\n");
        for i in 0..(3 * BATCH) {
            let _ = writeln!(big, "- {{a: {i}, b: row {i}, c: !!float '{i}', d: *a, a: dup}}");
        }
        let ok = big.clone() + "...\n";
        let cases = [
            ok.clone(),
            big.clone() + "- [unclosed\n",
            big.clone() + "- {? [1]: key is a sequence}\n",
            big.clone() + "- *missing\n",
            format!("{big}- {}{}\n", "[".repeat(50), "]".repeat(50)),
            ok.replace("c: !!float '100'", "c: !!float 'x'"),
            format!("{ok}--- second\n"),
        ];
        let limits = Limits {
            max_depth: 40,
            ..Limits::default()
        };
        for (i, text) in cases.iter().enumerate() {
            let one = build_with(text.as_bytes(), &limits, (false, false), false);
            let two = build_with(text.as_bytes(), &limits, (false, false), true);
            assert_eq!(format!("{one:?}"), format!("{two:?}"), "case {i}");
            assert_eq!(one.is_ok(), i == 0, "case {i}: {:?}", one.as_ref().err());
        }
        let parsed = build_with(ok.as_bytes(), &limits, (false, false), true).unwrap();
        assert_eq!(parsed.warnings.len(), 3 * BATCH, "one duplicate key per row");
    }
}

#[cfg(test)]
mod as_written_tests {
    #[test]
    fn keys_as_written_stay_apart() {
        let text = b"1: a\ntrue: b\nTrue: c\n0x1: d\n01: e\n? [1, 2]\n: f\n";
        let p = super::parse_as_written(text, &super::Limits::default()).unwrap();
        let m = p.document.root.as_mapping().unwrap();
        assert_eq!(m.entries.len(), 6);
        let p = super::parse_yaml(b"1: a\ntrue: b\nTrue: c\n0x1: d\n01: e\n", &super::Limits::default()).unwrap();
        assert!(
            p.document.root.as_mapping().unwrap().entries.len() < 5,
            "PyYAML makes one key of equal ones"
        );
    }
}
