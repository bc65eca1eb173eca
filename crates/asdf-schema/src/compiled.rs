//! The compiled validator as bytes: the build script compiles every embedded schema once
//! (with the same compiler, `src/validator.rs`) and writes the arena with [`to_bytes`];
//! start-up reads nothing of it, and each compiled schema node is decoded from the bytes the
//! first time validation reaches it. Opening a file then costs no YAML parsing of schemas,
//! no `$ref` resolution and no URI joins, only the few nodes its tags need.
//!
//! Written by hand: the arena is a handful of enums of strings, integers and indices, and a
//! general serialisation crate would add a dependency to both the build script and the
//! library for what is a hundred lines each way.
//!
//! Layout (integers are LEB128 unless said otherwise; a string is its length and UTF-8):
//! `MAGIC`, node count, root count, the roots (URI, node), then one little-endian `u32`
//! offset per node, then the nodes: location, keyword count, each keyword's name, a kind
//! byte and its value.

use std::fmt;
use std::sync::{Arc, OnceLock};

use asdf_yaml::{Mapping, Node, NodeKind, Scalar, ScalarStyle, Sequence, Span, Value};
use num_bigint::BigInt;

use crate::validator::{
    AddItems, CompileOptions, Compiled, Dep, EMPTY, KeywordFactory, Kw, NodeSource, Num, Pattern, Roots, Validator,
    never_a_keyword,
};

const MAGIC: &[u8; 8] = b"ASDFCV1\0";
const CHUNK: usize = 64;

/// `CHUNK` nodes, each decoded on first use.
type Chunk = Box<[OnceLock<Compiled>]>;

pub(crate) struct Lazy {
    bytes: &'static [u8],
    /// Where the offset table starts.
    table: usize,
    len: usize,
    chunks: Box<[OnceLock<Chunk>]>,
    keywords: Vec<Arc<dyn KeywordFactory>>,
    check_formats: bool,
}

impl NodeSource for Lazy {
    fn get(&self, i: usize) -> &Compiled {
        if i >= self.len {
            return &EMPTY;
        }
        let chunk = self.chunks[i / CHUNK].get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        chunk[i % CHUNK].get_or_init(|| self.decode(i))
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl fmt::Debug for Lazy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} nodes compiled at build time", self.len)
    }
}

impl Lazy {
    fn decode(&self, i: usize) -> Compiled {
        let at = self.table + 4 * i;
        let offset = self
            .bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes);
        let mut r = Reader {
            bytes: self.bytes,
            at: offset.map_or(usize::MAX, |o| o as usize),
        };
        r.node(&self.keywords, self.check_formats).unwrap_or_else(|| Compiled {
            location: format!("build-time schema node {i}"),
            kws: vec![(
                "$ref".to_owned(),
                Kw::Broken(format!("build-time schema node {i} does not decode")),
            )],
        })
    }
}

impl Validator {
    /// The validator the build script compiled (`bytes` from [`Validator::to_bytes`]), read
    /// lazily with `opts`' keywords and format setting. `None` when the bytes are not such a
    /// table (or empty: the build could not compile the schemas), or when a keyword of
    /// `opts` has a name the tables never keep.
    pub(crate) fn from_bytes(bytes: &'static [u8], opts: &CompileOptions) -> Option<Validator> {
        if opts.keywords.iter().any(|k| never_a_keyword(k.name())) {
            return None;
        }
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let len = r.usize()?;
        let n_roots = r.usize()?;
        let mut roots = Vec::with_capacity(n_roots.min(4096));
        for _ in 0..n_roots {
            let uri = r.str()?;
            let i = r.usize()?;
            if i >= len {
                return None;
            }
            roots.push((std::borrow::Cow::Borrowed(uri), i));
        }
        let roots = Roots::sorted(roots)?;
        let table = r.at;
        if bytes.len().checked_sub(table)? < len.checked_mul(4)? {
            return None;
        }
        Some(Validator {
            nodes: Box::new(Lazy {
                bytes,
                table,
                len,
                chunks: (0..len.div_ceil(CHUNK)).map(|_| OnceLock::new()).collect(),
                keywords: opts.keywords.clone(),
                check_formats: opts.check_formats,
            }),
            roots,
            check_formats: opts.check_formats,
        })
    }

    /// The bytes of this validator's arena (for the build script). `None` when it holds
    /// something that has no bytes: a keyword compiled by a factory, or an anchored node.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn to_bytes(&self) -> Option<Vec<u8>> {
        let nodes = self.nodes.owned()?;
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        uint(&mut out, nodes.len() as u64);
        let roots: Vec<(&str, usize)> = self.roots.iter().collect();
        uint(&mut out, roots.len() as u64);
        for (uri, i) in roots {
            string(&mut out, uri);
            uint(&mut out, i as u64);
        }
        let table = out.len();
        out.resize(table + 4 * nodes.len(), 0);
        for (i, n) in nodes.iter().enumerate() {
            let offset = u32::try_from(out.len()).ok()?;
            out[table + 4 * i..table + 4 * i + 4].copy_from_slice(&offset.to_le_bytes());
            string(&mut out, &n.location);
            uint(&mut out, n.kws.len() as u64);
            for (key, kw) in &n.kws {
                string(&mut out, key);
                keyword(&mut out, kw)?;
            }
        }
        Some(out)
    }
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn uint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn string(out: &mut Vec<u8>, s: &str) {
    uint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn indices(out: &mut Vec<u8>, v: &[usize]) {
    uint(out, v.len() as u64);
    for i in v {
        uint(out, *i as u64);
    }
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn strings(out: &mut Vec<u8>, v: &[String]) {
    uint(out, v.len() as u64);
    for s in v {
        string(out, s);
    }
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn num(out: &mut Vec<u8>, n: &Num) {
    match n {
        Num::I(b) => {
            out.push(0);
            string(out, &b.to_string());
        }
        Num::F(f) => {
            out.push(1);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
    }
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn pattern(out: &mut Vec<u8>, p: &Pattern) {
    string(out, &p.source);
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn node(out: &mut Vec<u8>, n: &Node) -> Option<()> {
    if n.anchor.is_some() {
        return None;
    }
    match &n.tag {
        Some(t) => {
            out.push(1);
            string(out, t);
        }
        None => out.push(0),
    }
    uint(out, u64::from(n.span.line));
    uint(out, u64::from(n.span.column));
    uint(out, n.span.index);
    match &n.kind {
        NodeKind::Scalar(s) => {
            out.push(0);
            string(out, &s.text);
            out.push(match s.style {
                ScalarStyle::Any => 0,
                ScalarStyle::Plain => 1,
                ScalarStyle::SingleQuoted => 2,
                ScalarStyle::DoubleQuoted => 3,
                ScalarStyle::Literal => 4,
                ScalarStyle::Folded => 5,
            });
            match &s.value {
                Value::Null => out.push(0),
                Value::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
                Value::Int(i) => {
                    out.push(2);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Value::BigInt(b) => {
                    out.push(3);
                    string(out, &b.to_string());
                }
                Value::Float(f) => {
                    out.push(4);
                    out.extend_from_slice(&f.to_bits().to_le_bytes());
                }
                Value::Str => out.push(5),
                Value::Timestamp => out.push(6),
                Value::Binary(b) => {
                    out.push(7);
                    uint(out, b.len() as u64);
                    out.extend_from_slice(b);
                }
            }
        }
        NodeKind::Sequence(s) => {
            out.push(1);
            out.push(u8::from(s.flow));
            uint(out, s.items.len() as u64);
            for i in &s.items {
                node(out, i)?;
            }
        }
        NodeKind::Mapping(m) => {
            out.push(2);
            out.push(u8::from(m.flow));
            uint(out, m.entries.len() as u64);
            for (k, v) in &m.entries {
                node(out, k)?;
                node(out, v)?;
            }
        }
        NodeKind::Alias(_) => return None,
    }
    Some(())
}

// Written by the build script (which includes this file) and the tests.
#[cfg_attr(not(test), allow(dead_code))]
fn keyword(out: &mut Vec<u8>, kw: &Kw) -> Option<()> {
    match kw {
        Kw::Ref(i) => {
            out.push(0);
            uint(out, *i as u64);
        }
        Kw::Unresolvable(r) => {
            out.push(1);
            string(out, r);
        }
        Kw::Type(t) => out.extend_from_slice(&[2, *t]),
        Kw::Enum(items, _) => {
            out.push(3);
            uint(out, items.len() as u64);
            for i in items {
                node(out, i)?;
            }
        }
        Kw::Minimum(n, ex) | Kw::Maximum(n, ex) => {
            out.push(if matches!(kw, Kw::Minimum(..)) { 4 } else { 5 });
            num(out, n);
            out.push(u8::from(*ex));
        }
        Kw::MultipleOf(n) => {
            out.push(6);
            num(out, n);
        }
        Kw::MinLength(l)
        | Kw::MaxLength(l)
        | Kw::MinItems(l)
        | Kw::MaxItems(l)
        | Kw::MinProperties(l)
        | Kw::MaxProperties(l) => {
            out.push(match kw {
                Kw::MinLength(_) => 7,
                Kw::MaxLength(_) => 8,
                Kw::MinItems(_) => 12,
                Kw::MaxItems(_) => 13,
                Kw::MinProperties(_) => 19,
                _ => 20,
            });
            uint(out, *l);
        }
        Kw::Pattern(p, text) => {
            out.push(9);
            pattern(out, p);
            string(out, text);
        }
        Kw::Items(i) => {
            out.push(10);
            uint(out, *i as u64);
        }
        Kw::ItemsTuple(ids, add) => {
            out.push(11);
            indices(out, ids);
            match add {
                AddItems::Any => out.push(0),
                AddItems::No => out.push(1),
                AddItems::Schema(i) => {
                    out.push(2);
                    uint(out, *i as u64);
                }
            }
        }
        Kw::UniqueItems => out.push(14),
        Kw::Properties(props) => {
            out.push(15);
            uint(out, props.len() as u64);
            for (name, i) in props {
                string(out, name);
                uint(out, *i as u64);
            }
        }
        Kw::PatternProperties(pats) => {
            out.push(16);
            uint(out, pats.len() as u64);
            for (p, i) in pats {
                pattern(out, p);
                uint(out, *i as u64);
            }
        }
        Kw::AdditionalProperties {
            names,
            patterns,
            schema,
        } => {
            out.push(17);
            strings(out, names);
            uint(out, patterns.len() as u64);
            for p in patterns {
                pattern(out, p);
            }
            match schema {
                Some(i) => {
                    out.push(1);
                    uint(out, *i as u64);
                }
                None => out.push(0),
            }
        }
        Kw::Required(r) => {
            out.push(18);
            strings(out, r);
        }
        Kw::Dependencies(deps) => {
            out.push(21);
            uint(out, deps.len() as u64);
            for (name, dep) in deps {
                string(out, name);
                match dep {
                    Dep::Props(p) => {
                        out.push(0);
                        strings(out, p);
                    }
                    Dep::Schema(i) => {
                        out.push(1);
                        uint(out, *i as u64);
                    }
                }
            }
        }
        Kw::AllOf(ids) | Kw::AnyOf(ids) | Kw::OneOf(ids) => {
            out.push(match kw {
                Kw::AllOf(_) => 22,
                Kw::AnyOf(_) => 23,
                _ => 24,
            });
            indices(out, ids);
        }
        Kw::Not(i) => {
            out.push(25);
            uint(out, *i as u64);
        }
        Kw::Format(f) => {
            out.push(26);
            string(out, f);
        }
        Kw::Tag(t) => {
            out.push(27);
            string(out, t);
        }
        Kw::Deferred { value, schema } => {
            out.push(28);
            node(out, value)?;
            node(out, schema)?;
        }
        Kw::Broken(m) => {
            out.push(29);
            string(out, m);
        }
        Kw::Custom(..) => return None,
    }
    Some(())
}

/// A cursor over the bytes; every read is bounds-checked (`None` past the end).
struct Reader {
    bytes: &'static [u8],
    at: usize,
}

impl Reader {
    fn take(&mut self, n: usize) -> Option<&'static [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn uint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.uint()?).ok()
    }

    /// A count of items each at least one byte long (bounded by what is left).
    fn count(&mut self) -> Option<usize> {
        let n = self.usize()?;
        (n <= self.bytes.len().saturating_sub(self.at)).then_some(n)
    }

    fn str(&mut self) -> Option<&'static str> {
        let n = self.usize()?;
        std::str::from_utf8(self.take(n)?).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }

    fn u64_le(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn indices(&mut self) -> Option<Vec<usize>> {
        let n = self.count()?;
        (0..n).map(|_| self.usize()).collect()
    }

    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.count()?;
        (0..n).map(|_| self.string()).collect()
    }

    fn num(&mut self) -> Option<Num> {
        Some(match self.byte()? {
            0 => Num::I(self.str()?.parse::<BigInt>().ok()?),
            1 => Num::F(f64::from_bits(self.u64_le()?)),
            _ => return None,
        })
    }

    fn pattern(&mut self) -> Option<Pattern> {
        Some(Pattern {
            source: self.string()?,
            compiled: OnceLock::new(),
        })
    }

    fn yaml(&mut self, depth: usize) -> Option<Node> {
        if depth > 64 {
            return None;
        }
        let tag = match self.byte()? {
            0 => None,
            1 => Some(Box::from(self.str()?)),
            _ => return None,
        };
        let span = Span {
            line: u32::try_from(self.uint()?).ok()?,
            column: u32::try_from(self.uint()?).ok()?,
            index: self.uint()?,
        };
        let kind = match self.byte()? {
            0 => {
                let text = self.str()?;
                let style = match self.byte()? {
                    0 => ScalarStyle::Any,
                    1 => ScalarStyle::Plain,
                    2 => ScalarStyle::SingleQuoted,
                    3 => ScalarStyle::DoubleQuoted,
                    4 => ScalarStyle::Literal,
                    5 => ScalarStyle::Folded,
                    _ => return None,
                };
                let value = match self.byte()? {
                    0 => Value::Null,
                    1 => Value::Bool(self.byte()? != 0),
                    2 => Value::Int(i64::from_le_bytes(self.take(8)?.try_into().ok()?)),
                    3 => Value::BigInt(Box::new(self.str()?.parse().ok()?)),
                    4 => Value::Float(f64::from_bits(self.u64_le()?)),
                    5 => Value::Str,
                    6 => Value::Timestamp,
                    7 => {
                        let n = self.usize()?;
                        Value::Binary(self.take(n)?.into())
                    }
                    _ => return None,
                };
                NodeKind::Scalar(Scalar {
                    text: text.into(),
                    value,
                    style,
                })
            }
            1 => {
                let flow = self.byte()? != 0;
                let n = self.count()?;
                let items = (0..n).map(|_| self.yaml(depth + 1)).collect::<Option<Vec<_>>>()?;
                NodeKind::Sequence(Sequence { items, flow })
            }
            2 => {
                let flow = self.byte()? != 0;
                let n = self.count()?;
                let entries = (0..n)
                    .map(|_| Some((self.yaml(depth + 1)?, self.yaml(depth + 1)?)))
                    .collect::<Option<Vec<_>>>()?;
                NodeKind::Mapping(Mapping { entries, flow })
            }
            _ => return None,
        };
        Some(Node {
            tag,
            anchor: None,
            span,
            kind,
        })
    }

    /// One compiled node; deferred keywords are compiled by `keywords`' factories (or
    /// dropped), `format` kept only when formats are checked.
    fn node(&mut self, keywords: &[Arc<dyn KeywordFactory>], check_formats: bool) -> Option<Compiled> {
        let location = self.string()?;
        let n = self.count()?;
        let mut kws = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.string()?;
            let kw = match self.byte()? {
                0 => Kw::Ref(self.usize()?),
                1 => Kw::Unresolvable(self.string()?),
                2 => Kw::Type(self.byte()?),
                3 => {
                    let n = self.count()?;
                    let items = (0..n).map(|_| self.yaml(0)).collect::<Option<Vec<_>>>()?;
                    Kw::Enum(items, Arc::new(asdf_yaml::Document::new(Node::null())))
                }
                k @ (4 | 5) => {
                    let lim = self.num()?;
                    let ex = self.byte()? != 0;
                    if k == 4 {
                        Kw::Minimum(lim, ex)
                    } else {
                        Kw::Maximum(lim, ex)
                    }
                }
                6 => Kw::MultipleOf(self.num()?),
                7 => Kw::MinLength(self.uint()?),
                8 => Kw::MaxLength(self.uint()?),
                9 => Kw::Pattern(self.pattern()?, self.string()?),
                10 => Kw::Items(self.usize()?),
                11 => {
                    let ids = self.indices()?;
                    let add = match self.byte()? {
                        0 => AddItems::Any,
                        1 => AddItems::No,
                        2 => AddItems::Schema(self.usize()?),
                        _ => return None,
                    };
                    Kw::ItemsTuple(ids, add)
                }
                12 => Kw::MinItems(self.uint()?),
                13 => Kw::MaxItems(self.uint()?),
                14 => Kw::UniqueItems,
                15 => {
                    let n = self.count()?;
                    Kw::Properties(
                        (0..n)
                            .map(|_| Some((self.string()?, self.usize()?)))
                            .collect::<Option<_>>()?,
                    )
                }
                16 => {
                    let n = self.count()?;
                    Kw::PatternProperties(
                        (0..n)
                            .map(|_| Some((self.pattern()?, self.usize()?)))
                            .collect::<Option<_>>()?,
                    )
                }
                17 => {
                    let names = self.strings()?;
                    let n = self.count()?;
                    let patterns = (0..n).map(|_| self.pattern()).collect::<Option<_>>()?;
                    let schema = match self.byte()? {
                        0 => None,
                        1 => Some(self.usize()?),
                        _ => return None,
                    };
                    Kw::AdditionalProperties {
                        names,
                        patterns,
                        schema,
                    }
                }
                18 => Kw::Required(self.strings()?),
                19 => Kw::MinProperties(self.uint()?),
                20 => Kw::MaxProperties(self.uint()?),
                21 => {
                    let n = self.count()?;
                    let mut deps = Vec::with_capacity(n);
                    for _ in 0..n {
                        let name = self.string()?;
                        let dep = match self.byte()? {
                            0 => Dep::Props(self.strings()?),
                            1 => Dep::Schema(self.usize()?),
                            _ => return None,
                        };
                        deps.push((name, dep));
                    }
                    Kw::Dependencies(deps)
                }
                22 => Kw::AllOf(self.indices()?),
                23 => Kw::AnyOf(self.indices()?),
                24 => Kw::OneOf(self.indices()?),
                25 => Kw::Not(self.usize()?),
                26 => {
                    let f = self.string()?;
                    if !check_formats {
                        continue;
                    }
                    Kw::Format(f)
                }
                27 => Kw::Tag(self.string()?),
                28 => {
                    let value = self.yaml(0)?;
                    let schema = self.yaml(0)?;
                    let Some(f) = keywords.iter().find(|f| f.name() == key) else {
                        continue;
                    };
                    match f.compile(&value, &schema) {
                        Ok(c) => Kw::Custom(key.clone(), c),
                        Err(source) => Kw::Broken(
                            crate::error::SchemaError::Keyword {
                                location: location.clone(),
                                keyword: key.clone(),
                                source,
                            }
                            .to_string(),
                        ),
                    }
                }
                29 => Kw::Broken(self.string()?),
                _ => return None,
            };
            kws.push((key, kw));
        }
        Some(Compiled { location, kws })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AsdfSchemas;
    use crate::error::KeywordError;
    use crate::validator::Keyword;

    fn runtime(opts: &CompileOptions) -> Validator {
        let embedded = AsdfSchemas::with_options(opts.clone()).unwrap();
        let mut registry = embedded.registry().clone();
        let uris = registry.schema_uris();
        let refs: Vec<&str> = uris.iter().map(String::as_str).collect();
        Validator::compile(&mut registry, &refs, opts).unwrap()
    }

    fn table() -> &'static [u8] {
        crate::asdf::embedded_compiled()
    }

    #[test]
    fn the_build_time_table_is_what_the_compiler_makes_at_run_time() {
        assert!(table().len() > 1000, "the build script compiled nothing");
        for check_formats in [false, true] {
            let opts = CompileOptions::default().check_formats(check_formats);
            let want = runtime(&opts);
            let got = Validator::from_bytes(table(), &opts).unwrap();
            assert_eq!(got.nodes.len(), want.nodes.len());
            assert!(want.nodes.len() > 500, "{} nodes", want.nodes.len());
            let a: Vec<_> = got.roots.iter().collect();
            let b: Vec<_> = want.roots.iter().collect();
            assert_eq!(a, b);
            for i in 0..want.nodes.len() {
                assert_eq!(
                    format!("{:?}", got.nodes.get(i)),
                    format!("{:?}", want.nodes.get(i)),
                    "node {i}"
                );
            }
        }
    }

    #[derive(Debug)]
    struct Always(String);
    impl Keyword for Always {
        fn validate(&self, _: &Node, _: &asdf_yaml::Document) -> Result<(), KeywordError> {
            Err(self.0.clone().into())
        }
    }
    struct Factory(&'static str);
    impl KeywordFactory for Factory {
        fn name(&self) -> &str {
            self.0
        }
        fn compile(&self, value: &Node, schema: &Node) -> Result<Box<dyn Keyword>, KeywordError> {
            if value.as_str() == Some("refuse") {
                return Err("refused".into());
            }
            let sib = schema.get("exact_datatype").and_then(Node::as_bool);
            Ok(Box::new(Always(format!("{}:{:?}:{sib:?}", self.0, value.as_str()))))
        }
    }

    /// A table holding a keyword no factory was given at build time is compiled with the
    /// factories given when it is read (with its sibling keywords), and dropped without one.
    #[test]
    fn deferred_keywords_meet_the_factories_given_when_read() {
        let schema = asdf_yaml::parse(
            b"id: http://example.org/k\ntype: object\nproperties:\n  a:\n    datatype: float64\n    exact_datatype: true\n    description: x\n  b:\n    datatype: refuse\n",
            &asdf_yaml::Limits::default(),
        )
        .unwrap()
        .document;
        let mut reg = crate::Registry::new();
        reg.add(None, schema.root);
        let opts = CompileOptions {
            keep_unknown: true,
            ..CompileOptions::default()
        };
        let built = Validator::compile(&mut reg, &["http://example.org/k"], &opts).unwrap();
        let bytes: &'static [u8] = Box::leak(built.to_bytes().unwrap().into_boxed_slice());
        let doc = asdf_yaml::parse(b"a: 1\nb: 2\n", &asdf_yaml::Limits::default())
            .unwrap()
            .document;

        let with = CompileOptions::default().keyword(Arc::new(Factory("datatype")));
        let v = Validator::from_bytes(bytes, &with).unwrap();
        let errs = v.validate("http://example.org/k", &doc.root, &doc, "").unwrap();
        let msgs: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(msgs[0], "datatype:Some(\"float64\"):Some(true)");
        assert!(msgs[1].contains("keyword `datatype`: refused"), "{}", msgs[1]);

        let without = Validator::from_bytes(bytes, &CompileOptions::default()).unwrap();
        assert!(
            without
                .validate("http://example.org/k", &doc.root, &doc, "")
                .unwrap()
                .is_empty()
        );
        // A factory named like an annotation the tables drop: no table, compile at run time.
        let odd = CompileOptions::default().keyword(Arc::new(Factory("title")));
        assert!(Validator::from_bytes(bytes, &odd).is_none());
    }

    /// Damaged tables never panic: `from_bytes` refuses them or their nodes fail validation.
    #[test]
    fn damaged_tables_do_not_panic() {
        let t = table();
        let doc = asdf_yaml::parse(b"a: 1\n", &asdf_yaml::Limits::default())
            .unwrap()
            .document;
        let opts = CompileOptions::default();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for round in 0..200 {
            let mut b = t.to_vec();
            match round % 3 {
                0 => b.truncate((round * 977) % t.len()),
                _ => {
                    for _ in 0..(1 + round % 7) {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        let i = usize::try_from(state % b.len() as u64).unwrap_or(0);
                        b[i] = state.to_le_bytes()[4];
                    }
                }
            }
            let b: &'static [u8] = Box::leak(b.into_boxed_slice());
            if let Some(v) = Validator::from_bytes(b, &opts) {
                let uris: Vec<String> = v.roots().map(str::to_owned).collect();
                for u in uris.iter().take(20) {
                    let _ = v.validate(u, &doc.root, &doc, "");
                }
                for i in 0..v.nodes.len().min(2000) {
                    let _ = v.nodes.get(i);
                }
            }
        }
    }
}
