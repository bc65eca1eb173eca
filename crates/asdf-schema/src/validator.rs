//! A JSON Schema Draft 4 validator over the YAML node tree, with the YAML Schema `tag` keyword
//! and pluggable keywords. Schemas are compiled once (every `$ref` resolved ahead of time,
//! cycles allowed) into an arena; validation walks the arena.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use asdf_yaml::{Document, Mapping, Node, NodeKind, Value};
use num_bigint::BigInt;
use regex::Regex;

/// A `pattern`: its syntax checked when the schema is compiled, the matcher built on first
/// use (most of the standard's patterns are never needed by a given file, and a compiled
/// regex costs tens of kilobytes).
#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) source: String,
    pub(crate) compiled: std::sync::OnceLock<Option<Regex>>,
}

impl Pattern {
    fn is_match(&self, text: &str) -> bool {
        self.compiled
            .get_or_init(|| Regex::new(&self.source).ok())
            .as_ref()
            .is_some_and(|r| r.is_match(text))
    }
}

use crate::error::{KeywordError, SchemaError, Violation};
use crate::format;
use crate::registry::{Location, Registry, id_of};
use crate::uri::glob_match;

// (A path of its own: `build.rs` compiles this file too, from another folder.)
#[path = "validator/check.rs"]
mod check;
use check::Cx;

/// A keyword implemented outside this crate (ASDF's `ndim`, `datatype`, ...).
pub trait Keyword: Send + Sync + fmt::Debug {
    /// Checks `instance`.
    ///
    /// # Errors
    /// Why the instance fails.
    fn validate(&self, instance: &Node, doc: &Document) -> Result<(), KeywordError>;
}

/// Compiles a custom keyword's value (found in `schema`) into a [`Keyword`].
pub trait KeywordFactory: Send + Sync {
    /// The keyword's name.
    fn name(&self) -> &str;
    /// Compiles the keyword's value.
    ///
    /// # Errors
    /// Why the value is malformed.
    fn compile(&self, value: &Node, schema: &Node) -> Result<Box<dyn Keyword>, KeywordError>;
}

#[derive(Debug, Clone)]
pub(crate) enum Num {
    I(BigInt),
    F(f64),
}

fn num_of(n: &Node) -> Option<Num> {
    match &n.as_scalar()?.value {
        Value::Int(i) => Some(Num::I(BigInt::from(*i))),
        Value::BigInt(b) => Some(Num::I((**b).clone())),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

fn big_to_f64(b: &BigInt) -> f64 {
    b.to_string().parse().unwrap_or(f64::NAN)
}

fn cmp_num(a: &Num, b: &Num) -> Option<Ordering> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Some(x.cmp(y)),
        (Num::I(x), Num::F(y)) => big_to_f64(x).partial_cmp(y),
        (Num::F(x), Num::I(y)) => x.partial_cmp(&big_to_f64(y)),
        (Num::F(x), Num::F(y)) => x.partial_cmp(y),
    }
}

fn num_eq(a: &Num, b: &Num) -> bool {
    cmp_num(a, b) == Some(Ordering::Equal)
}

const T_NULL: u8 = 1;
const T_BOOL: u8 = 2;
const T_INT: u8 = 4;
const T_NUMBER: u8 = 8;
const T_STRING: u8 = 16;
const T_ARRAY: u8 = 32;
const T_OBJECT: u8 = 64;
/// A YAML timestamp with a time of day, which Python asdf's validator takes for a string where
/// the schema says `type: string, format: date-time` (PyYAML reads such text as a datetime).
const T_DATETIME: u8 = 128;

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => T_NULL,
        "boolean" => T_BOOL,
        "integer" => T_INT,
        "number" => T_NUMBER,
        "string" => T_STRING,
        "array" => T_ARRAY,
        "object" => T_OBJECT,
        _ => return None,
    })
}

/// The JSON type bits a node satisfies (an integer is also a number).
fn type_bits(n: &Node) -> u8 {
    match &n.kind {
        NodeKind::Mapping(_) => T_OBJECT,
        NodeKind::Sequence(_) => T_ARRAY,
        NodeKind::Alias(_) => 0,
        NodeKind::Scalar(s) => match s.value {
            Value::Null => T_NULL,
            Value::Bool(_) => T_BOOL,
            Value::Int(_) | Value::BigInt(_) => T_INT | T_NUMBER,
            Value::Float(_) => T_NUMBER,
            Value::Str => T_STRING,
            // A date alone is a `date`, not a `datetime`, in Python: no exemption for it.
            Value::Timestamp if s.text.trim().len() > 10 => T_DATETIME,
            Value::Timestamp | Value::Binary(_) => 0,
        },
    }
}

/// JSON equality: numbers by value (1 == 1.0), booleans never equal numbers, strings by
/// text, arrays item by item, objects by key set.
fn json_eq(a: &Node, b: &Node, da: &Document, db: &Document) -> bool {
    let (a, b) = (da.resolve(a), db.resolve(b));
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => match (&x.value, &y.value) {
            (Value::Str, Value::Str) | (Value::Timestamp, Value::Timestamp) => x.text == y.text,
            (Value::Null, Value::Null) => true,
            (Value::Bool(p), Value::Bool(q)) => p == q,
            (Value::Binary(p), Value::Binary(q)) => p == q,
            _ => match (num_of(a), num_of(b)) {
                (Some(p), Some(q)) => num_eq(&p, &q),
                _ => false,
            },
        },
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            x.items.len() == y.items.len() && x.items.iter().zip(&y.items).all(|(p, q)| json_eq(p, q, da, db))
        }
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            x.entries.len() == y.entries.len()
                && x.entries.iter().all(|(k, v)| {
                    y.entries
                        .iter()
                        .any(|(k2, v2)| json_eq(k, k2, da, db) && json_eq(v, v2, da, db))
                })
        }
        _ => false,
    }
}

/// Python-like text of a value, for messages (`'abc'`, `42`, `{...}`).
fn repr(n: &Node) -> String {
    match &n.kind {
        NodeKind::Scalar(s) => match s.value {
            Value::Str | Value::Timestamp => {
                let t: String = s.text.chars().take(60).collect();
                format!("'{t}'")
            }
            Value::Null => "None".to_owned(),
            Value::Bool(b) => if b { "True" } else { "False" }.to_owned(),
            _ => s.text.to_string(),
        },
        NodeKind::Sequence(_) => "[...]".to_owned(),
        NodeKind::Mapping(_) => "{...}".to_owned(),
        NodeKind::Alias(a) => format!("*{}", a.anchor),
    }
}

#[derive(Debug)]
pub(crate) enum AddItems {
    Any,
    No,
    Schema(usize),
}

#[derive(Debug)]
pub(crate) enum Dep {
    Props(Vec<String>),
    Schema(usize),
}

#[derive(Debug)]
pub(crate) enum Kw {
    Ref(usize),
    Unresolvable(String),
    Type(u8),
    Enum(Vec<Node>, Arc<Document>),
    Minimum(Num, bool),
    Maximum(Num, bool),
    MultipleOf(Num),
    MinLength(u64),
    MaxLength(u64),
    Pattern(Pattern, String),
    Items(usize),
    ItemsTuple(Vec<usize>, AddItems),
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    Properties(Vec<(String, usize)>),
    PatternProperties(Vec<(Pattern, usize)>),
    AdditionalProperties {
        names: Vec<String>,
        patterns: Vec<Pattern>,
        schema: Option<usize>,
    },
    Required(Vec<String>),
    MinProperties(u64),
    MaxProperties(u64),
    Dependencies(Vec<(String, Dep)>),
    AllOf(Vec<usize>),
    AnyOf(Vec<usize>),
    OneOf(Vec<usize>),
    Not(usize),
    Format(String),
    Tag(String),
    Custom(String, Box<dyn Keyword>),
    /// A keyword this build does not implement, kept for the build-time tables
    /// ([`CompileOptions::keep_unknown`]): compiled when the tables are read if a
    /// [`KeywordFactory`] of that name is given then, dropped otherwise. `schema` holds the
    /// sibling keywords a factory may consult (see `crate::compiled`).
    #[cfg_attr(not(test), allow(dead_code))]
    Deferred {
        value: Node,
        schema: Node,
    },
    /// A keyword whose compilation failed when the build-time tables were read (a custom
    /// keyword rejecting its value): every instance that reaches it fails with this message.
    Broken(String),
}

#[derive(Debug, Default)]
pub(crate) struct Compiled {
    pub(crate) location: String,
    pub(crate) kws: Vec<(String, Kw)>,
}

/// What an index past the arena finds: nothing to check.
pub(crate) static EMPTY: Compiled = Compiled {
    location: String::new(),
    kws: Vec::new(),
};

/// The compiled schema nodes of a [`Validator`]: built in memory (`Vec`), or read lazily
/// from the build-time bytes (`compiled.rs`).
pub(crate) trait NodeSource: Send + Sync + fmt::Debug {
    fn get(&self, i: usize) -> &Compiled;
    #[cfg_attr(not(test), allow(dead_code))]
    fn len(&self) -> usize;
    /// The nodes, when they are in memory.
    fn owned(&self) -> Option<&[Compiled]> {
        None
    }
}

impl NodeSource for Vec<Compiled> {
    fn get(&self, i: usize) -> &Compiled {
        self.as_slice().get(i).unwrap_or(&EMPTY)
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn owned(&self) -> Option<&[Compiled]> {
        Some(self)
    }
}

/// Keys that are never validation keywords (annotations, and draft-4 keywords read next to
/// another): the build-time tables do not keep them, so a factory with one of these names
/// is served by a compile at run time instead (see `compiled.rs`).
const NOT_KEYWORDS: &[&str] = &[
    "$schema",
    "$comment",
    "id",
    "title",
    "description",
    "default",
    "definitions",
    "examples",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "additionalItems",
];

/// Draft 4 keywords whose values are schemas: left out of a deferred keyword's siblings.
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "dependencies",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
];

pub(crate) fn never_a_keyword(key: &str) -> bool {
    NOT_KEYWORDS.contains(&key)
}

/// What a deferred keyword's factory is given as its schema: the schema's entries without
/// prose and without subschemas (a factory reads its sibling keywords, such as `datatype`
/// reading `exact_datatype`; the subschemas are compiled on their own).
pub(crate) fn siblings(schema: &Node) -> Node {
    let mut out = Mapping::default();
    if let Some(m) = schema.as_mapping() {
        for (k, v) in &m.entries {
            let key = k.as_str().unwrap_or_default();
            if matches!(key, "title" | "description" | "examples") || SUBSCHEMA_KEYWORDS.contains(&key) {
                continue;
            }
            out.entries.push((k.clone(), v.clone()));
        }
    }
    Node {
        tag: None,
        anchor: None,
        span: schema.span,
        kind: NodeKind::Mapping(out),
    }
}

/// Options for compiling schemas.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CompileOptions {
    /// Check `format` (date-time, email, hostname, ipv4, ipv6, uri). Off by default, as in
    /// Python asdf, which treats formats as annotations.
    pub check_formats: bool,
    /// Keywords implemented outside this crate.
    pub keywords: Vec<Arc<dyn KeywordFactory>>,
    /// Build-time tables only: keep `format` and every keyword without a factory (as
    /// [`Kw::Deferred`]) so that the tables serve any options they are read with.
    pub(crate) keep_unknown: bool,
}

impl CompileOptions {
    /// Sets whether `format` is checked.
    #[must_use]
    pub fn check_formats(mut self, yes: bool) -> Self {
        self.check_formats = yes;
        self
    }

    /// Adds a keyword implementation.
    #[must_use]
    pub fn keyword(mut self, k: Arc<dyn KeywordFactory>) -> Self {
        self.keywords.push(k);
        self
    }
}

impl fmt::Debug for CompileOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.keywords.iter().map(|k| k.name()).collect();
        f.debug_struct("CompileOptions")
            .field("check_formats", &self.check_formats)
            .field("keywords", &names)
            .finish()
    }
}

/// Compiled schemas, ready to validate instances.
#[derive(Debug)]
pub struct Validator {
    pub(crate) nodes: Box<dyn NodeSource>,
    pub(crate) roots: Roots,
    pub(crate) check_formats: bool,
}

/// The compiled roots: (URI, node) sorted by URI, found by binary search. The build-time
/// table's URIs are borrowed from its bytes, so reading it allocates no string and hashes
/// nothing.
#[derive(Debug, Default)]
pub(crate) struct Roots(Vec<(std::borrow::Cow<'static, str>, usize)>);

impl Roots {
    /// The table of `pairs`; the last of equal URIs wins, as in a map.
    pub(crate) fn new(mut pairs: Vec<(std::borrow::Cow<'static, str>, usize)>) -> Self {
        pairs.reverse();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|a, b| a.0 == b.0);
        Roots(pairs)
    }

    /// The table of `pairs` already sorted by URI with no duplicates; `None` otherwise.
    pub(crate) fn sorted(pairs: Vec<(std::borrow::Cow<'static, str>, usize)>) -> Option<Self> {
        pairs.windows(2).all(|w| w[0].0 < w[1].0).then_some(Roots(pairs))
    }

    pub(crate) fn get(&self, uri: &str) -> Option<usize> {
        self.0
            .binary_search_by(|(u, _)| u.as_ref().cmp(uri))
            .ok()
            .map(|i| self.0[i].1)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        self.0.iter().map(|(u, i)| (u.as_ref(), *i))
    }
}

struct Compiler<'r> {
    registry: &'r mut Registry,
    nodes: Vec<Compiled>,
    memo: HashMap<Location, usize>,
    opts: &'r CompileOptions,
}

fn invalid(loc: &Location, key: &str, problem: &'static str) -> SchemaError {
    let mut l = loc.clone();
    l.tokens.push(key.to_owned());
    SchemaError::Invalid {
        location: l.display(),
        problem,
    }
}

fn as_u64(n: &Node, loc: &Location, key: &str) -> Result<u64, SchemaError> {
    match n.as_scalar().map(|s| &s.value) {
        Some(Value::Int(i)) if *i >= 0 => Ok(i.unsigned_abs()),
        Some(Value::Float(f)) if *f >= 0.0 && f.fract() == 0.0 && *f < 1e18 => Ok(f.to_string().parse().unwrap_or(0)),
        _ => Err(invalid(loc, key, "expected a non-negative integer")),
    }
}

fn strings(n: &Node, loc: &Location, key: &str) -> Result<Vec<String>, SchemaError> {
    n.as_sequence()
        .ok_or_else(|| invalid(loc, key, "expected an array of strings"))?
        .items
        .iter()
        .map(|i| {
            i.as_scalar()
                .map(|s| s.text.to_string())
                .ok_or_else(|| invalid(loc, key, "expected an array of strings"))
        })
        .collect()
}

/// Translates ECMA 262 classes that differ from the regex crate's Unicode ones (`\d`, `\w`
/// are ASCII in ECMA 262).
fn ecma_regex(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('d') => out.push_str(if in_class { "0-9" } else { "[0-9]" }),
                Some('D') if !in_class => out.push_str("[^0-9]"),
                Some('w') => out.push_str(if in_class { "a-zA-Z0-9_" } else { "[a-zA-Z0-9_]" }),
                Some('W') if !in_class => out.push_str("[^a-zA-Z0-9_]"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A pattern of the schema at `loc`, its syntax checked now unless `checked` says a test did.
pub(crate) fn regex(p: &str, loc: &Location, key: &str, checked: bool) -> Result<Pattern, SchemaError> {
    let source = ecma_regex(p);
    if checked {
        return Ok(Pattern {
            source,
            compiled: std::sync::OnceLock::new(),
        });
    }
    regex_syntax::Parser::new()
        .parse(&source)
        .map(|_| Pattern {
            source,
            compiled: std::sync::OnceLock::new(),
        })
        .map_err(|e| {
            let e = regex::Error::Syntax(e.to_string());
            let mut l = loc.clone();
            l.tokens.push(key.to_owned());
            SchemaError::Regex {
                location: l.display(),
                pattern: p.to_owned(),
                source: Box::new(e),
            }
        })
}

impl Compiler<'_> {
    fn child(&mut self, loc: &Location, sub: &[&str]) -> Result<usize, SchemaError> {
        let mut l = loc.clone();
        l.tokens.extend(sub.iter().map(|s| (*s).to_owned()));
        self.compile(&l)
    }

    fn compile(&mut self, loc: &Location) -> Result<usize, SchemaError> {
        if let Some(&i) = self.memo.get(loc) {
            return Ok(i);
        }
        let idx = self.nodes.len();
        self.nodes.push(Compiled {
            location: loc.display(),
            kws: Vec::new(),
        });
        self.memo.insert(loc.clone(), idx);
        let node = self
            .registry
            .node(loc)
            .cloned()
            .ok_or_else(|| SchemaError::Unresolvable {
                reference: loc.display(),
                base: loc.doc.clone(),
            })?;
        let kws = self.keywords(&node, loc)?;
        self.nodes[idx].kws = kws;
        Ok(idx)
    }

    #[allow(clippy::too_many_lines)]
    fn keywords(&mut self, node: &Node, loc: &Location) -> Result<Vec<(String, Kw)>, SchemaError> {
        let mut kws = Vec::new();
        let Some(m) = node.as_mapping() else {
            return Ok(kws);
        };
        let checked = self.registry.patterns_checked(&loc.doc);
        // Draft 4: `$ref` replaces every sibling keyword.
        if let Some(r) = node.get("$ref").and_then(Node::as_str) {
            let base = self.registry.base_at(loc);
            // An unresolvable reference (a schema from a package this build does not have)
            // fails only the instances that reach it.
            let kw = match self.registry.resolve(&base, r) {
                Ok(target) => Kw::Ref(self.compile(&target)?),
                Err(SchemaError::Unresolvable { reference, .. }) => Kw::Unresolvable(reference),
                Err(e) => return Err(e),
            };
            kws.push(("$ref".to_owned(), kw));
            return Ok(kws);
        }
        let get = |k: &str| node.get(k);
        for (k, v) in &m.entries {
            let Some(key) = k.as_str() else { continue };
            let kw = match key {
                "type" => {
                    let names: Vec<String> = match &v.kind {
                        NodeKind::Sequence(_) => strings(v, loc, key)?,
                        _ => vec![
                            v.as_str()
                                .ok_or_else(|| invalid(loc, key, "expected a type name"))?
                                .to_owned(),
                        ],
                    };
                    let mut bits = 0;
                    for n in &names {
                        // Unknown type names match nothing (as in Python's jsonschema).
                        bits |= type_bit(n).unwrap_or(0);
                    }
                    // Python asdf's `validate_type`: a datetime is a string where the format
                    // is date-time.
                    if bits & T_STRING != 0 && get("format").and_then(Node::as_str) == Some("date-time") {
                        bits |= T_DATETIME;
                    }
                    Kw::Type(bits)
                }
                "enum" => {
                    let items = v.as_sequence().ok_or_else(|| invalid(loc, key, "expected an array"))?;
                    Kw::Enum(items.items.clone(), Arc::new(Document::new(Node::null())))
                }
                "minimum" | "maximum" => {
                    let n = num_of(v).ok_or_else(|| invalid(loc, key, "expected a number"))?;
                    let ex_key = if key == "minimum" {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    };
                    let exclusive = get(ex_key).and_then(Node::as_bool).unwrap_or(false);
                    if key == "minimum" {
                        Kw::Minimum(n, exclusive)
                    } else {
                        Kw::Maximum(n, exclusive)
                    }
                }
                "multipleOf" => Kw::MultipleOf(num_of(v).ok_or_else(|| invalid(loc, key, "expected a number"))?),
                "minLength" => Kw::MinLength(as_u64(v, loc, key)?),
                "maxLength" => Kw::MaxLength(as_u64(v, loc, key)?),
                "pattern" => {
                    let p = v.as_scalar().ok_or_else(|| invalid(loc, key, "expected a string"))?;
                    Kw::Pattern(regex(&p.text, loc, key, checked)?, p.text.to_string())
                }
                "items" => match &v.kind {
                    NodeKind::Sequence(s) => {
                        let mut ids = Vec::new();
                        for i in 0..s.items.len() {
                            ids.push(self.child(loc, &["items", &i.to_string()])?);
                        }
                        let add = match get("additionalItems") {
                            Some(a) if a.as_bool() == Some(false) => AddItems::No,
                            Some(a) if matches!(a.kind, NodeKind::Mapping(_)) => {
                                AddItems::Schema(self.child(loc, &["additionalItems"])?)
                            }
                            _ => AddItems::Any,
                        };
                        Kw::ItemsTuple(ids, add)
                    }
                    NodeKind::Mapping(_) => Kw::Items(self.child(loc, &["items"])?),
                    _ => {
                        return Err(invalid(loc, key, "expected a schema or an array of schemas"));
                    }
                },
                "minItems" => Kw::MinItems(as_u64(v, loc, key)?),
                "maxItems" => Kw::MaxItems(as_u64(v, loc, key)?),
                "uniqueItems" => {
                    if v.as_bool() == Some(true) {
                        Kw::UniqueItems
                    } else {
                        continue;
                    }
                }
                "properties" => {
                    let mm = v.as_mapping().ok_or_else(|| invalid(loc, key, "expected an object"))?;
                    let mut props = Vec::new();
                    for (pk, _) in &mm.entries {
                        let name = pk.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                        let id = self.child(loc, &["properties", &name])?;
                        props.push((name, id));
                    }
                    Kw::Properties(props)
                }
                "patternProperties" => {
                    let mm = v.as_mapping().ok_or_else(|| invalid(loc, key, "expected an object"))?;
                    let mut pats = Vec::new();
                    for (pk, _) in &mm.entries {
                        let p = pk.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                        let id = self.child(loc, &["patternProperties", &p])?;
                        pats.push((regex(&p, loc, key, checked)?, id));
                    }
                    Kw::PatternProperties(pats)
                }
                "additionalProperties" => {
                    let schema = match &v.kind {
                        NodeKind::Mapping(_) => Some(self.child(loc, &["additionalProperties"])?),
                        _ if v.as_bool() == Some(false) => None,
                        _ => continue,
                    };
                    let names = get("properties")
                        .and_then(Node::as_mapping)
                        .map(|m| {
                            m.entries
                                .iter()
                                .filter_map(|(k, _)| k.as_scalar().map(|s| s.text.to_string()))
                                .collect()
                        })
                        .unwrap_or_default();
                    let mut patterns = Vec::new();
                    if let Some(pp) = get("patternProperties").and_then(Node::as_mapping) {
                        for (pk, _) in &pp.entries {
                            let p = pk.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                            patterns.push(regex(&p, loc, "patternProperties", checked)?);
                        }
                    }
                    Kw::AdditionalProperties {
                        names,
                        patterns,
                        schema,
                    }
                }
                "required" => Kw::Required(strings(v, loc, key)?),
                "minProperties" => Kw::MinProperties(as_u64(v, loc, key)?),
                "maxProperties" => Kw::MaxProperties(as_u64(v, loc, key)?),
                "dependencies" => {
                    let mm = v.as_mapping().ok_or_else(|| invalid(loc, key, "expected an object"))?;
                    let mut deps = Vec::new();
                    for (dk, dv) in &mm.entries {
                        let name = dk.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                        let dep = match &dv.kind {
                            NodeKind::Sequence(_) => Dep::Props(strings(dv, loc, key)?),
                            NodeKind::Mapping(_) => Dep::Schema(self.child(loc, &["dependencies", &name])?),
                            _ => return Err(invalid(loc, key, "expected arrays or schemas")),
                        };
                        deps.push((name, dep));
                    }
                    Kw::Dependencies(deps)
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let s = v
                        .as_sequence()
                        .ok_or_else(|| invalid(loc, key, "expected an array of schemas"))?;
                    let mut ids = Vec::new();
                    for i in 0..s.items.len() {
                        ids.push(self.child(loc, &[key, &i.to_string()])?);
                    }
                    match key {
                        "allOf" => Kw::AllOf(ids),
                        "anyOf" => Kw::AnyOf(ids),
                        _ => Kw::OneOf(ids),
                    }
                }
                "not" => Kw::Not(self.child(loc, &["not"])?),
                "format" if self.opts.check_formats || self.opts.keep_unknown => match v.as_str() {
                    Some(f) => Kw::Format(f.to_owned()),
                    None => continue,
                },
                "tag" => match v.as_str() {
                    Some(t) => Kw::Tag(t.to_owned()),
                    None => continue,
                },
                other => {
                    let Some(f) = self.opts.keywords.iter().find(|f| f.name() == other) else {
                        if self.opts.keep_unknown && !never_a_keyword(other) {
                            kws.push((
                                other.to_owned(),
                                Kw::Deferred {
                                    value: v.clone(),
                                    schema: siblings(node),
                                },
                            ));
                        }
                        continue;
                    };
                    let c = f.compile(v, node).map_err(|source| SchemaError::Keyword {
                        location: loc.display(),
                        keyword: other.to_owned(),
                        source,
                    })?;
                    Kw::Custom(other.to_owned(), c)
                }
            };
            kws.push((key.to_owned(), kw));
        }
        // Keep `id` for diagnostics only; nothing to validate.
        let _ = id_of(node);
        Ok(kws)
    }
}

impl Validator {
    /// Compiles the schemas at `uris` (and everything they reference) from `registry`.
    ///
    /// # Errors
    /// Unresolvable references, malformed keywords, bad regular expressions.
    pub fn compile(registry: &mut Registry, uris: &[&str], opts: &CompileOptions) -> Result<Self, SchemaError> {
        let mut c = Compiler {
            registry,
            nodes: Vec::new(),
            memo: HashMap::new(),
            opts,
        };
        let mut roots = Vec::with_capacity(uris.len());
        for u in uris {
            let loc = c.registry.resolve(u, u)?;
            let i = c.compile(&loc)?;
            roots.push((std::borrow::Cow::Owned((*u).to_owned()), i));
        }
        Ok(Validator {
            nodes: Box::new(c.nodes),
            roots: Roots::new(roots),
            check_formats: opts.check_formats,
        })
    }

    /// A validator that knows no schema.
    #[must_use]
    pub fn empty(opts: &CompileOptions) -> Self {
        Validator {
            nodes: Box::new(Vec::new()),
            roots: Roots::default(),
            check_formats: opts.check_formats,
        }
    }

    /// The URIs this validator was compiled for.
    pub fn roots(&self) -> impl Iterator<Item = &str> {
        self.roots.iter().map(|(u, _)| u)
    }

    /// Whether `uri` is one of the compiled roots.
    #[must_use]
    pub fn has(&self, uri: &str) -> bool {
        self.roots.get(uri).is_some()
    }

    /// Validates `node` (a node of `doc`, whose pointer is `pointer`) against schema `uri`;
    /// returns every violation found.
    ///
    /// # Errors
    /// [`SchemaError::Unresolvable`] when `uri` was not compiled.
    pub fn validate(
        &self,
        uri: &str,
        node: &Node,
        doc: &Document,
        pointer: &str,
    ) -> Result<Vec<Violation>, SchemaError> {
        let root = self.roots.get(uri).ok_or_else(|| SchemaError::Unresolvable {
            reference: uri.to_owned(),
            base: String::new(),
        })?;
        let mut out = Vec::new();
        let mut path = pointer.to_owned();
        let mut cx = Cx {
            v: self,
            doc,
            active: Vec::new(),
        };
        cx.check(root, node, &mut path, Some(&mut out));
        Ok(out)
    }

    /// Whether `node` is valid against schema `uri` (stops at the first failure).
    ///
    /// # Errors
    /// [`SchemaError::Unresolvable`] when `uri` was not compiled.
    pub fn is_valid(&self, uri: &str, node: &Node, doc: &Document) -> Result<bool, SchemaError> {
        let root = self.roots.get(uri).ok_or_else(|| SchemaError::Unresolvable {
            reference: uri.to_owned(),
            base: String::new(),
        })?;
        let mut path = String::new();
        let mut cx = Cx {
            v: self,
            doc,
            active: Vec::new(),
        };
        Ok(cx.check(root, node, &mut path, None))
    }
}
