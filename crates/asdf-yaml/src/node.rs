//! The node tree: ordered mappings, sequences and scalars, each with an optional tag, anchor
//! and source position; aliases kept as links to their anchored node.

pub use compact_str::CompactString;
use num_bigint::BigInt;

/// The YAML core tags (`tag:yaml.org,2002:`).
pub mod tags {
    /// Prefix of the YAML core tags.
    pub const YAML: &str = "tag:yaml.org,2002:";
    /// `!!str`
    pub const STR: &str = "tag:yaml.org,2002:str";
    /// `!!int`
    pub const INT: &str = "tag:yaml.org,2002:int";
    /// `!!float`
    pub const FLOAT: &str = "tag:yaml.org,2002:float";
    /// `!!bool`
    pub const BOOL: &str = "tag:yaml.org,2002:bool";
    /// `!!null`
    pub const NULL: &str = "tag:yaml.org,2002:null";
    /// `!!binary`
    pub const BINARY: &str = "tag:yaml.org,2002:binary";
    /// `!!timestamp`
    pub const TIMESTAMP: &str = "tag:yaml.org,2002:timestamp";
    /// `!!map`
    pub const MAP: &str = "tag:yaml.org,2002:map";
    /// `!!seq`
    pub const SEQ: &str = "tag:yaml.org,2002:seq";
    /// `!!omap`
    pub const OMAP: &str = "tag:yaml.org,2002:omap";
    /// `!!pairs`
    pub const PAIRS: &str = "tag:yaml.org,2002:pairs";
    /// `!!set`
    pub const SET: &str = "tag:yaml.org,2002:set";
    /// The ASDF tag prefix, written as `!` by `%TAG ! tag:stsci.edu:asdf/`.
    pub const ASDF: &str = "tag:stsci.edu:asdf/";
}

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

/// A scalar's resolved value (YAML 1.1, as PyYAML's SafeLoader resolves it).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `~`, `null`, empty.
    Null,
    /// `true`, `yes`, `on`, ...
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// An integer beyond i64, kept exactly.
    BigInt(Box<BigInt>),
    /// A float.
    Float(f64),
    /// A string: the scalar's text.
    Str,
    /// A YAML timestamp, kept as its text.
    Timestamp,
    /// `!!binary` data, decoded from base64.
    Binary(Box<[u8]>),
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

/// An alias: a link to the node carrying `anchor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    /// The anchor name.
    pub anchor: String,
    /// Path from the root to the anchored node, as it was when parsed.
    pub target: Vec<Step>,
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
    pub anchor: Option<Box<str>>,
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

    /// The node an alias points to (following aliases to aliases).
    #[must_use]
    pub fn resolve<'a>(&'a self, node: &'a Node) -> &'a Node {
        let mut n = node;
        for _ in 0..64 {
            match &n.kind {
                NodeKind::Alias(a) => match self.root.at_path(&a.target) {
                    Some(t) => n = t,
                    None => return n,
                },
                _ => return n,
            }
        }
        n
    }
}
