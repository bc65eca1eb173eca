//! The node tree: ordered mappings, sequences and scalars, each with an optional tag, anchor
//! and source position; aliases kept as links to their anchored node.

pub use crate::resolve::{Value, tags};
pub use compact_str::CompactString;
use num_bigint::BigInt;

/// A position in the YAML text (0-based line and column, byte offset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// 0-based line.
    pub line: u32,
    /// 0-based column (in characters).
    pub column: u32,
    /// Byte offset in the text.
    pub index: u64,
}

impl Span {
    /// The span of a node that was not read from text but filled in from a schema's `default`
    /// (a tree older than ASDF Standard 1.6.0 is read with its defaults filled in memory; the
    /// writer leaves out the entries whose key and value still carry this span).
    pub const FILLED: Span = Span {
        line: u32::MAX,
        column: u32::MAX,
        index: u64::MAX,
    };

    /// Whether this is [`Span::FILLED`].
    #[must_use]
    pub fn is_filled(&self) -> bool {
        *self == Self::FILLED
    }

    /// The span `lines` further down (a tree's lines as lines of the file holding it).
    #[must_use]
    pub fn shifted(self, lines: u64) -> Span {
        Span {
            line: self.line.saturating_add(u32::try_from(lines).unwrap_or(u32::MAX)),
            ..self
        }
    }
}

impl std::fmt::Display for Span {
    /// `line:column`, 1-based (`schema default` for [`Span::FILLED`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_filled() {
            return f.write_str("schema default");
        }
        write!(f, "{}:{}", self.line + 1, self.column + 1)
    }
}

/// How a scalar was (or is to be) written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ScalarStyle {
    /// Let the emitter choose (plain where it reads back the same, quoted otherwise).
    #[default]
    Any,
    /// `plain`
    Plain,
    /// `'single'`
    SingleQuoted,
    /// `"double"`
    DoubleQuoted,
    /// `|` block
    Literal,
    /// `>` block
    Folded,
}

/// A scalar node.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The scalar's text as parsed (after unescaping), or as it will be written (kept inline,
    /// without a heap allocation, up to 24 bytes).
    pub text: CompactString,
    /// The resolved value.
    pub value: Value,
    /// The style it was written in (or should be).
    pub style: ScalarStyle,
}

/// A sequence node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sequence {
    /// The items, in order.
    pub items: Vec<Node>,
    /// Written in flow style (`[a, b]`).
    pub flow: bool,
}

/// A mapping node; keys keep their order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapping {
    /// The entries, in order.
    pub entries: Vec<(Node, Node)>,
    /// Written in flow style (`{a: 1}`).
    pub flow: bool,
}

/// One step of a path from the root to a node: a sequence index or a mapping entry index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Item `i` of a sequence.
    Item(usize),
    /// The value of entry `i` of a mapping.
    Entry(usize),
    /// The key of entry `i` of a mapping.
    Key(usize),
}

/// An anchor: a name with an identity. An alias refers to one anchored node by this identity,
/// not by its name or its place: edits that move the node (or insert and remove nodes before
/// it) do not change what the alias means, and two anchors that share a name (YAML allows
/// redefining one) stay different anchors. Equality (`==`) compares names; [`Anchor::same`]
/// compares identities. A clone is the same anchor.
#[derive(Clone, Eq)]
pub struct Anchor(std::sync::Arc<str>);

impl Anchor {
    /// A new anchor named `name`, different from every other.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Anchor(std::sync::Arc::from(name))
    }

    /// The name, as written after `&` and `*`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.0
    }

    /// Whether `other` is this anchor (not merely one with the same name).
    #[must_use]
    pub fn same(&self, other: &Anchor) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for Anchor {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl std::ops::Deref for Anchor {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Anchor {
    fn from(name: &str) -> Self {
        Anchor::new(name)
    }
}

impl From<String> for Anchor {
    fn from(name: String) -> Self {
        Anchor(std::sync::Arc::from(name))
    }
}

/// An alias: a link to the node that carries `anchor` (the same [`Anchor`], by identity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    /// The anchor of the node this alias stands for.
    pub anchor: Anchor,
    /// Where that node was when last located (a hint: [`Document::anchored`] checks it and,
    /// when edits moved the node, finds it by identity).
    pub target: Vec<Step>,
}

impl Alias {
    /// An alias to `node`, which must carry an anchor (`None` otherwise). Place it after the
    /// node in document order, or anywhere: the emitter writes the node in full where it first
    /// meets it.
    #[must_use]
    pub fn to(node: &Node) -> Option<Alias> {
        Some(Alias {
            anchor: node.anchor.clone()?,
            target: Vec::new(),
        })
    }
}

/// What a walk does after visiting a node ([`Node::walk_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Go on, into the node's children.
    Continue,
    /// Go on, but not into this node's children.
    SkipChildren,
    /// Stop the walk.
    Stop,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Sequence(Sequence),
    /// A mapping.
    Mapping(Mapping),
    /// A link to an anchored node.
    Alias(Alias),
}

/// A node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The explicit tag as a full URI (`tag:stsci.edu:asdf/core/ndarray-1.1.0`,
    /// `tag:yaml.org,2002:str`, `!` for the non-specific tag); `None` when untagged.
    pub tag: Option<Box<str>>,
    /// The anchor, if the node has one.
    pub anchor: Option<Anchor>,
    /// Where the node starts in the source text (default for built nodes).
    pub span: Span,
    /// The node itself.
    pub kind: NodeKind,
}

impl Node {
    fn of(kind: NodeKind) -> Self {
        Node {
            tag: None,
            anchor: None,
            span: Span::default(),
            kind,
        }
    }

    /// A null scalar.
    #[must_use]
    pub fn null() -> Self {
        Self::scalar_value(String::from("null"), Value::Null)
    }

    /// A string scalar.
    #[must_use]
    pub fn str(s: impl Into<String>) -> Self {
        Self::scalar_value(s.into(), Value::Str)
    }

    /// A boolean scalar.
    #[must_use]
    pub fn bool(b: bool) -> Self {
        Self::scalar_value(if b { "true" } else { "false" }.to_owned(), Value::Bool(b))
    }

    /// An integer scalar.
    #[must_use]
    pub fn int(i: i64) -> Self {
        Self::scalar_value(i.to_string(), Value::Int(i))
    }

    /// An arbitrary-precision integer scalar (written as an i64 when it fits).
    #[must_use]
    pub fn bigint(i: BigInt) -> Self {
        match i64::try_from(&i) {
            Ok(v) => Self::int(v),
            Err(_) => Self::scalar_value(i.to_string(), Value::BigInt(Box::new(i))),
        }
    }

    /// A float scalar, written as Python's `repr` writes it.
    #[must_use]
    pub fn float(f: f64) -> Self {
        Self::scalar_value(crate::resolve::python_float_repr(f), Value::Float(f))
    }

    /// Binary data, written as `!!binary` base64.
    #[must_use]
    pub fn binary(data: Vec<u8>) -> Self {
        let text = crate::resolve::base64_lines(&data);
        let mut n = Self::scalar_value(text, Value::Binary(data.into_boxed_slice()));
        n.tag = Some(tags::BINARY.into());
        if let NodeKind::Scalar(s) = &mut n.kind {
            s.style = ScalarStyle::Literal;
        }
        n
    }

    fn scalar_value(text: impl Into<CompactString>, value: Value) -> Self {
        Self::of(NodeKind::Scalar(Scalar {
            text: text.into(),
            value,
            style: ScalarStyle::Any,
        }))
    }

    /// An empty block-style sequence.
    #[must_use]
    pub fn seq(items: Vec<Node>) -> Self {
        Self::of(NodeKind::Sequence(Sequence { items, flow: false }))
    }

    /// An empty block-style mapping.
    #[must_use]
    pub fn map(entries: Vec<(Node, Node)>) -> Self {
        Self::of(NodeKind::Mapping(Mapping { entries, flow: false }))
    }

    /// Sets the tag (builder style).
    #[must_use]
    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into().into_boxed_str());
        self
    }

    /// The scalar, if this is one.
    #[must_use]
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The string, if this is a string scalar.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar(Scalar {
                text,
                value: Value::Str,
                ..
            }) => Some(text),
            _ => None,
        }
    }

    /// The integer, if this is an integer scalar that fits in i64.
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match self.as_scalar()?.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The float value of an int or float scalar.
    #[must_use]
    pub fn as_f64(&self) -> Option<f64> {
        match self.as_scalar()?.value {
            Value::Float(f) => Some(f),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    /// The boolean, if this is a boolean scalar.
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self.as_scalar()?.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// Whether this is a null scalar.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.as_scalar().map(|s| &s.value), Some(Value::Null))
    }

    /// The mapping, if this is one.
    #[must_use]
    pub fn as_mapping(&self) -> Option<&Mapping> {
        match &self.kind {
            NodeKind::Mapping(m) => Some(m),
            _ => None,
        }
    }

    /// The mapping, mutably.
    pub fn as_mapping_mut(&mut self) -> Option<&mut Mapping> {
        match &mut self.kind {
            NodeKind::Mapping(m) => Some(m),
            _ => None,
        }
    }

    /// The sequence, if this is one.
    #[must_use]
    pub fn as_sequence(&self) -> Option<&Sequence> {
        match &self.kind {
            NodeKind::Sequence(s) => Some(s),
            _ => None,
        }
    }

    /// The sequence, mutably.
    pub fn as_sequence_mut(&mut self) -> Option<&mut Sequence> {
        match &mut self.kind {
            NodeKind::Sequence(s) => Some(s),
            _ => None,
        }
    }

    /// The value under string key `key`, if this is a mapping that has it.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_mapping()?.get(key)
    }

    /// The value under string key `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_mapping_mut()?.get_mut(key)
    }

    /// Whether the node is a scalar, or a collection holding only scalars (PyYAML writes these
    /// in flow style).
    #[must_use]
    pub fn is_scalar_collection(&self) -> bool {
        let is_scalar = |n: &Node| matches!(n.kind, NodeKind::Scalar(_));
        match &self.kind {
            NodeKind::Sequence(s) => s.items.iter().all(is_scalar),
            NodeKind::Mapping(m) => m.entries.iter().all(|(k, v)| is_scalar(k) && is_scalar(v)),
            _ => false,
        }
    }

    /// Follows one step.
    #[must_use]
    pub fn step(&self, step: Step) -> Option<&Node> {
        match (step, &self.kind) {
            (Step::Item(i), NodeKind::Sequence(s)) => s.items.get(i),
            (Step::Entry(i), NodeKind::Mapping(m)) => m.entries.get(i).map(|(_, v)| v),
            (Step::Key(i), NodeKind::Mapping(m)) => m.entries.get(i).map(|(k, _)| k),
            _ => None,
        }
    }

    /// Follows one step, mutably.
    pub fn step_mut(&mut self, step: Step) -> Option<&mut Node> {
        match (step, &mut self.kind) {
            (Step::Item(i), NodeKind::Sequence(s)) => s.items.get_mut(i),
            (Step::Entry(i), NodeKind::Mapping(m)) => m.entries.get_mut(i).map(|(_, v)| v),
            (Step::Key(i), NodeKind::Mapping(m)) => m.entries.get_mut(i).map(|(k, _)| k),
            _ => None,
        }
    }

    /// Follows a path of steps.
    #[must_use]
    pub fn at_path(&self, path: &[Step]) -> Option<&Node> {
        path.iter().try_fold(self, |n, s| n.step(*s))
    }

    /// Follows a path of steps, mutably.
    pub fn at_path_mut(&mut self, path: &[Step]) -> Option<&mut Node> {
        path.iter().try_fold(self, |n, s| n.step_mut(*s))
    }

    /// Whether this node or one below it is an alias.
    #[must_use]
    pub fn has_alias(&self) -> bool {
        self.any(&|n| matches!(n.kind, NodeKind::Alias(_)))
    }

    /// Whether this node or one below it carries an anchor.
    #[must_use]
    pub fn has_anchor(&self) -> bool {
        self.any(&|n| n.anchor.is_some())
    }

    /// The path (from here) of the first node in document order for which `pred` holds.
    #[must_use]
    pub fn find(&self, pred: &dyn Fn(&Node) -> bool) -> Option<Vec<Step>> {
        let mut found = None;
        self.walk(&mut |path, n| {
            if pred(n) {
                found = Some(path.to_vec());
            }
            found.is_none()
        });
        found
    }

    /// Whether `pred` holds for this node or one below it.
    fn any(&self, pred: &dyn Fn(&Node) -> bool) -> bool {
        self.find(pred).is_some()
    }

    /// The paths (from here) of the aliases, in document order.
    pub(crate) fn alias_paths(&self) -> Vec<Vec<Step>> {
        let mut out = Vec::new();
        self.walk(&mut |path, n| {
            if matches!(n.kind, NodeKind::Alias(_)) {
                out.push(path.to_vec());
            }
            true
        });
        out
    }

    /// The anchors of the aliases in this node (and below) whose anchored node is not in it.
    #[must_use]
    pub fn outside_aliases(&self) -> Vec<Anchor> {
        let mut inside = std::collections::HashSet::new();
        let mut aliases = Vec::new();
        self.walk(&mut |_, n| {
            if let Some(a) = &n.anchor {
                inside.insert(anchor_key(a));
            }
            if let NodeKind::Alias(a) = &n.kind {
                aliases.push(a.anchor.clone());
            }
            true
        });
        aliases.retain(|a| !inside.contains(&anchor_key(a)));
        aliases
    }
}

impl Mapping {
    /// The value under string key `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The value under string key `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Sets `key` to `value`, replacing an existing entry in place or appending.
    pub fn insert(&mut self, key: &str, value: Node) {
        match self.get_mut(key) {
            Some(v) => *v = value,
            None => self.entries.push((Node::str(key), value)),
        }
    }

    /// Removes and returns the value under `key`.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let i = self.entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
        Some(self.entries.remove(i).1)
    }
}

/// A parsed YAML document: the `%YAML` version, `%TAG` directives and the root node.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The `%YAML` directive's version, if present.
    pub version: Option<(i32, i32)>,
    /// `%TAG` directives as (handle, prefix).
    pub tag_directives: Vec<(String, String)>,
    /// The root node.
    pub root: Node,
}

impl Document {
    /// A document holding `root`, with `%YAML 1.1` and `%TAG ! tag:stsci.edu:asdf/`.
    #[must_use]
    pub fn new(root: Node) -> Self {
        Self {
            version: Some((1, 1)),
            tag_directives: vec![("!".to_owned(), tags::ASDF.to_owned())],
            root,
        }
    }

    /// The node an alias points to (following aliases to aliases); the alias itself when it
    /// is orphaned (its anchored node is no longer in the tree: see [`Document::orphans`]).
    #[must_use]
    pub fn resolve<'a>(&'a self, node: &'a Node) -> &'a Node {
        let mut n = node;
        for _ in 0..64 {
            match &n.kind {
                NodeKind::Alias(a) => match self.anchored(a) {
                    Some((_, t)) => n = t,
                    None => return n,
                },
                _ => return n,
            }
        }
        n
    }

    /// The node carrying `alias`'s anchor (by identity) and its path: where the alias's hint
    /// says when that is still so, else found by a search of the tree in document order.
    /// `None` when no node carries it (the alias is orphaned).
    #[must_use]
    pub fn anchored<'a>(&'a self, alias: &Alias) -> Option<(Vec<Step>, &'a Node)> {
        if let Some(n) = self.root.at_path(&alias.target)
            && carries(n, &alias.anchor)
        {
            return Some((alias.target.clone(), n));
        }
        let path = self.root.find(&|n| carries(n, &alias.anchor))?;
        Some((path.clone(), self.root.at_path(&path)?))
    }

    /// The aliases whose anchored node is not in the tree (after an edit removed it), with
    /// their paths. Writing refuses a tree that has any.
    #[must_use]
    pub fn orphans(&self) -> Vec<(Vec<Step>, Anchor)> {
        let anchors = self.anchor_paths();
        let mut out = Vec::new();
        self.root.walk(&mut |path, n| {
            if let NodeKind::Alias(a) = &n.kind
                && !anchors.contains_key(&anchor_key(&a.anchor))
            {
                out.push((path.to_vec(), a.anchor.clone()));
            }
            true
        });
        out
    }

    /// Where each anchor is (by identity), in document order of first occurrence.
    pub(crate) fn anchor_paths(&self) -> std::collections::HashMap<usize, Vec<Step>> {
        let mut anchors = std::collections::HashMap::new();
        self.root.walk(&mut |path, n| {
            if let Some(a) = &n.anchor {
                anchors.entry(anchor_key(a)).or_insert_with(|| path.to_vec());
            }
            true
        });
        anchors
    }

    /// Brings every alias's hint up to date (after edits moved anchored nodes), so that
    /// resolving it is a walk down its path again. Returns how many aliases are orphaned.
    pub fn relink(&mut self) -> usize {
        let anchors = self.anchor_paths();
        let mut orphans = 0;
        for p in self.root.alias_paths() {
            if let Some(Node {
                kind: NodeKind::Alias(a),
                ..
            }) = self.root.at_path_mut(&p)
            {
                match anchors.get(&anchor_key(&a.anchor)) {
                    Some(t) => a.target.clone_from(t),
                    None => orphans += 1,
                }
            }
        }
        orphans
    }

    /// Removes the node at `path` and returns it, keeping every alias outside it true: an
    /// anchored node inside it that an alias elsewhere still refers to takes the place of the
    /// first such alias (in document order), anchor and all, so the tree reads and writes the
    /// same values as before, less the removed node. `None` when there is no such node (or
    /// `path` is empty: the root cannot be removed).
    pub fn remove_path(&mut self, path: &[Step]) -> Option<Node> {
        let removed = self.take_path(path)?;
        if removed.has_anchor() {
            self.keep_anchors_of(&removed);
        }
        Some(removed)
    }

    /// Removes the node at `path` without looking after aliases to it (see
    /// [`Document::remove_path`]); aliases to anchors inside it are orphaned until it is put
    /// back.
    pub fn take_path(&mut self, path: &[Step]) -> Option<Node> {
        let (last, parent) = path.split_last()?;
        let parent = self.root.at_path_mut(parent)?;
        match (last, &mut parent.kind) {
            (Step::Item(i), NodeKind::Sequence(s)) if *i < s.items.len() => Some(s.items.remove(*i)),
            (Step::Entry(i), NodeKind::Mapping(m)) if *i < m.entries.len() => Some(m.entries.remove(*i).1),
            _ => None,
        }
    }

    /// After `removed` left the tree: each orphaned alias whose anchored node is in `removed`
    /// is replaced by that node (the first alias in document order gets it; the others then
    /// refer to it there).
    pub fn keep_anchors_of(&mut self, removed: &Node) {
        // Each round moves one anchored node back; there are at most as many rounds as
        // anchors in `removed`.
        loop {
            let mut pick = None;
            for (at, anchor) in self.orphans() {
                if let Some(p) = removed.find(&|n| carries(n, &anchor)) {
                    pick = Some((at, p));
                    break;
                }
            }
            let Some((at, p)) = pick else { break };
            let (Some(node), Some(slot)) = (removed.at_path(&p), self.root.at_path_mut(&at)) else {
                break;
            };
            let span = slot.span;
            *slot = node.clone();
            slot.span = span;
        }
        self.relink();
    }
}

/// Whether `n` carries `anchor` (by identity).
fn carries(n: &Node, anchor: &Anchor) -> bool {
    n.anchor.as_ref().is_some_and(|x| x.same(anchor))
}

/// A key for an anchor's identity.
pub(crate) fn anchor_key(a: &Anchor) -> usize {
    std::sync::Arc::as_ptr(&a.0).cast::<u8>().addr()
}
