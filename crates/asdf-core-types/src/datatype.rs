//! The ndarray `datatype` model: scalar types, fixed-length ASCII and UCS-4 strings, and
//! structured records (named fields, nesting, per-field byte order and shape), with numpy's
//! "can be cast without loss" rules.

use std::fmt;

use asdf_yaml::{Node, NodeKind, Value};

/// A scalar element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScalarType {
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16`
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `complex64`
    Complex64,
    /// `complex128`
    Complex128,
    /// `bool8`
    Bool8,
}

const NAMES: [(ScalarType, &str); 14] = [
    (ScalarType::Int8, "int8"),
    (ScalarType::Int16, "int16"),
    (ScalarType::Int32, "int32"),
    (ScalarType::Int64, "int64"),
    (ScalarType::UInt8, "uint8"),
    (ScalarType::UInt16, "uint16"),
    (ScalarType::UInt32, "uint32"),
    (ScalarType::UInt64, "uint64"),
    (ScalarType::Float16, "float16"),
    (ScalarType::Float32, "float32"),
    (ScalarType::Float64, "float64"),
    (ScalarType::Complex64, "complex64"),
    (ScalarType::Complex128, "complex128"),
    (ScalarType::Bool8, "bool8"),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Signed,
    Unsigned,
    Float,
    Complex,
}

impl ScalarType {
    /// The name used in ASDF (`float64`).
    #[must_use]
    pub fn name(self) -> &'static str {
        NAMES.iter().find(|(t, _)| *t == self).map_or("?", |(_, n)| n)
    }

    /// Parses an ASDF scalar datatype name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// Bytes per element.
    #[must_use]
    pub fn size(self) -> usize {
        use ScalarType::{
            Bool8, Complex64, Complex128, Float16, Float32, Float64, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32,
            UInt64,
        };
        match self {
            Int8 | UInt8 | Bool8 => 1,
            Int16 | UInt16 | Float16 => 2,
            Int32 | UInt32 | Float32 => 4,
            Int64 | UInt64 | Float64 | Complex64 => 8,
            Complex128 => 16,
        }
    }

    fn kind(self) -> Kind {
        use ScalarType::{
            Bool8, Complex64, Complex128, Float16, Float32, Float64, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32,
            UInt64,
        };
        match self {
            Bool8 => Kind::Bool,
            Int8 | Int16 | Int32 | Int64 => Kind::Signed,
            UInt8 | UInt16 | UInt32 | UInt64 => Kind::Unsigned,
            Float16 | Float32 | Float64 => Kind::Float,
            Complex64 | Complex128 => Kind::Complex,
        }
    }

    /// numpy's `can_cast(self, to, "safe")`.
    #[must_use]
    pub fn can_cast_to(self, to: ScalarType) -> bool {
        let (a, b) = (self.kind(), to.kind());
        let (sa, sb) = (self.size(), to.size());
        match (a, b) {
            (Kind::Bool, _) => true,
            (_, Kind::Bool) => false,
            (Kind::Signed, Kind::Signed) | (Kind::Unsigned, Kind::Unsigned) | (Kind::Float, Kind::Float) => sa <= sb,
            (Kind::Complex, Kind::Complex) => sa <= sb,
            (Kind::Unsigned, Kind::Signed) => sa < sb,
            (Kind::Signed, Kind::Unsigned) => false,
            // Integers to floats: 8 bits -> float16, 16 bits -> float32, 32/64 bits -> float64.
            (Kind::Signed | Kind::Unsigned, Kind::Float) => match sa {
                1 => sb >= 2,
                2 => sb >= 4,
                _ => sb >= 8,
            },
            (Kind::Signed | Kind::Unsigned, Kind::Complex) => match sa {
                1 | 2 => sb >= 8,
                _ => sb >= 16,
            },
            (Kind::Float, Kind::Complex) => sb >= 2 * sa,
            (Kind::Float | Kind::Complex, Kind::Signed | Kind::Unsigned) | (Kind::Complex, Kind::Float) => false,
        }
    }
}

/// Byte order of a field or array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `big`
    Big,
    /// `little`
    Little,
}

/// A field of a structured datatype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name (numpy names unnamed fields `f0`, `f1`, ...).
    pub name: Option<String>,
    /// Its type.
    pub datatype: Datatype,
    /// Its byte order, if given.
    pub byteorder: Option<ByteOrder>,
    /// Its sub-array shape (empty for scalars).
    pub shape: Vec<usize>,
}

/// An ndarray element type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Datatype {
    /// A scalar.
    Scalar(ScalarType),
    /// `[ascii, n]`: n bytes of ASCII.
    Ascii(usize),
    /// `[ucs4, n]`: n UCS-4 code points.
    Ucs4(usize),
    /// A record of fields.
    Structured(Vec<Field>),
}

/// A `datatype` value that is not one the standard defines (with the value as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DatatypeError {
    /// Not a name, `[ascii, n]`, `[ucs4, n]` or a list of fields.
    #[error("invalid datatype: {0}")]
    Unknown(String),
    /// An element larger than numpy allows, or whose size overflows.
    #[error("invalid datatype: {0} (an element of more than {MAX_ELEMENT_BYTES} bytes)")]
    TooLarge(String),
}

/// The largest element [`Datatype::from_node`] accepts, in bytes: numpy's limit (its itemsize
/// is a C `int`).
pub const MAX_ELEMENT_BYTES: usize = i32::MAX as usize;

fn uint(n: &Node) -> Option<usize> {
    match n.as_scalar()?.value {
        Value::Int(i) => usize::try_from(i).ok(),
        _ => None,
    }
}

impl Datatype {
    /// Parses a `datatype` node: a name, `[ascii, n]`, `[ucs4, n]`, or a list of fields (each
    /// a datatype or a mapping with `name`, `datatype`, `byteorder`, `shape`).
    ///
    /// # Errors
    /// [`DatatypeError`] for anything else.
    pub fn from_node(n: &Node) -> Result<Self, DatatypeError> {
        let dt = Self::parse_node(n)?;
        // Sizes come from the file: one that overflows, or an element larger than numpy
        // allows (its itemsize is a C int), is refused here, so that `size()` is always exact.
        match dt.checked_size() {
            Some(s) if s <= MAX_ELEMENT_BYTES => Ok(dt),
            _ => Err(DatatypeError::TooLarge(describe(n))),
        }
    }

    fn parse_node(n: &Node) -> Result<Self, DatatypeError> {
        let err = || DatatypeError::Unknown(describe(n));
        match &n.kind {
            NodeKind::Scalar(s) => ScalarType::from_name(&s.text).map(Datatype::Scalar).ok_or_else(err),
            NodeKind::Sequence(seq) => {
                if let [kind, len] = &seq.items[..]
                    && let (Some(k), Some(l)) = (kind.as_str(), uint(len))
                {
                    return match k {
                        "ascii" => Ok(Datatype::Ascii(l)),
                        "ucs4" => Ok(Datatype::Ucs4(l)),
                        _ => Err(err()),
                    };
                }
                let fields = seq
                    .items
                    .iter()
                    .map(|f| match &f.kind {
                        NodeKind::Mapping(_) => {
                            let dt = Datatype::parse_node(f.get("datatype").ok_or_else(err)?)?;
                            let byteorder = match f.get("byteorder").and_then(Node::as_str) {
                                Some("big") => Some(ByteOrder::Big),
                                Some("little") => Some(ByteOrder::Little),
                                None => None,
                                Some(_) => return Err(err()),
                            };
                            let shape = match f.get("shape").and_then(Node::as_sequence) {
                                Some(s) => s
                                    .items
                                    .iter()
                                    .map(|d| uint(d).ok_or_else(err))
                                    .collect::<Result<_, _>>()?,
                                None => Vec::new(),
                            };
                            Ok(Field {
                                name: f.get("name").and_then(Node::as_str).map(str::to_owned),
                                datatype: dt,
                                byteorder,
                                shape,
                            })
                        }
                        _ => Ok(Field {
                            name: None,
                            datatype: Datatype::parse_node(f)?,
                            byteorder: None,
                            shape: Vec::new(),
                        }),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if fields.is_empty() {
                    return Err(err());
                }
                Ok(Datatype::Structured(fields))
            }
            _ => Err(err()),
        }
    }

    /// Bytes per element (`usize::MAX` for a datatype built by hand whose size overflows;
    /// [`Datatype::from_node`] refuses those).
    #[must_use]
    pub fn size(&self) -> usize {
        self.checked_size().unwrap_or(usize::MAX)
    }

    /// Bytes per element, or `None` when that overflows.
    #[must_use]
    pub fn checked_size(&self) -> Option<usize> {
        match self {
            Datatype::Scalar(s) => Some(s.size()),
            Datatype::Ascii(n) => Some(*n),
            Datatype::Ucs4(n) => n.checked_mul(4),
            Datatype::Structured(f) => f.iter().try_fold(0usize, |acc, f| {
                let count = f.shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d))?;
                acc.checked_add(f.datatype.checked_size()?.checked_mul(count)?)
            }),
        }
    }

    /// numpy's `can_cast(self, to, "safe")` for the cases ASDF schemas use: scalars as above;
    /// strings to wider strings (ASCII to UCS-4 too); records field by field.
    #[must_use]
    pub fn can_cast_to(&self, to: &Datatype) -> bool {
        match (self, to) {
            (Datatype::Scalar(a), Datatype::Scalar(b)) => a.can_cast_to(*b),
            (Datatype::Ascii(a), Datatype::Ascii(b) | Datatype::Ucs4(b)) | (Datatype::Ucs4(a), Datatype::Ucs4(b)) => {
                a <= b
            }
            (Datatype::Structured(a), Datatype::Structured(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.datatype.can_cast_to(&y.datatype))
            }
            _ => false,
        }
    }
}

fn describe(n: &Node) -> String {
    match &n.kind {
        NodeKind::Scalar(s) => s.text.to_string(),
        NodeKind::Sequence(_) => "[...]".to_owned(),
        NodeKind::Mapping(_) => "{...}".to_owned(),
        NodeKind::Alias(a) => format!("*{}", a.anchor),
    }
}

impl fmt::Display for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datatype::Scalar(s) => f.write_str(s.name()),
            Datatype::Ascii(n) => write!(f, "['ascii', {n}]"),
            Datatype::Ucs4(n) => write!(f, "['ucs4', {n}]"),
            Datatype::Structured(fields) => {
                f.write_str("[")?;
                for (i, fl) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", fl.datatype)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// The datatype numpy would give inline data (`np.asarray(nested_list)`): booleans -> bool8;
/// integers -> int64 (uint64 above i64); any float -> float64; strings -> ucs4 of the longest;
/// a mix with strings -> ucs4.
#[must_use]
pub fn infer_inline(data: &Node) -> Option<Datatype> {
    #[derive(Default)]
    struct Seen {
        bools: bool,
        ints: bool,
        big: bool,
        floats: bool,
        complex: bool,
        strings: usize,
        any_string: bool,
        other: bool,
    }
    let mut s = Seen::default();
    let mut stack = vec![data];
    while let Some(n) = stack.pop() {
        match &n.kind {
            NodeKind::Sequence(q) => stack.extend(q.items.iter()),
            NodeKind::Scalar(sc) => {
                if n.tag.as_deref().is_some_and(|t| t.contains("core/complex")) {
                    s.complex = true;
                    continue;
                }
                match sc.value {
                    Value::Bool(_) => s.bools = true,
                    Value::Int(_) => s.ints = true,
                    Value::BigInt(_) => s.big = true,
                    Value::Float(_) => s.floats = true,
                    Value::Str => {
                        s.any_string = true;
                        s.strings = s.strings.max(sc.text.chars().count());
                    }
                    _ => s.other = true,
                }
            }
            _ => s.other = true,
        }
    }
    if s.other {
        return None;
    }
    Some(if s.any_string {
        Datatype::Ucs4(s.strings.max(1))
    } else if s.complex {
        Datatype::Scalar(ScalarType::Complex128)
    } else if s.floats {
        Datatype::Scalar(ScalarType::Float64)
    } else if s.big {
        Datatype::Scalar(ScalarType::UInt64)
    } else if s.ints {
        Datatype::Scalar(ScalarType::Int64)
    } else if s.bools {
        Datatype::Scalar(ScalarType::Bool8)
    } else {
        Datatype::Scalar(ScalarType::Float64)
    })
}

/// The number of dimensions of nested-list data (following the first item at each level).
#[must_use]
pub fn inline_ndim(data: &Node) -> usize {
    let mut n = data;
    let mut d = 0;
    while let NodeKind::Sequence(s) = &n.kind {
        d += 1;
        match s.items.first() {
            Some(first) => n = first,
            None => break,
        }
    }
    d
}

fn flow_seq(items: Vec<Node>) -> Node {
    let mut n = Node::seq(items);
    if let Some(s) = n.as_sequence_mut() {
        s.flow = true;
    }
    n
}

impl Datatype {
    /// The node Python asdf writes for this datatype (structured fields as mappings with keys
    /// in sorted order; 1-byte fields get `byteorder: big`).
    #[must_use]
    pub fn to_node(&self) -> Node {
        match self {
            Datatype::Scalar(s) => Node::str(s.name()),
            Datatype::Ascii(n) => flow_seq(vec![
                Node::str("ascii"),
                Node::int(i64::try_from(*n).unwrap_or(i64::MAX)),
            ]),
            Datatype::Ucs4(n) => flow_seq(vec![
                Node::str("ucs4"),
                Node::int(i64::try_from(*n).unwrap_or(i64::MAX)),
            ]),
            Datatype::Structured(fields) => Node::seq(
                fields
                    .iter()
                    .map(|f| {
                        // A field with nothing but a type is written as the type alone.
                        if f.name.is_none() && f.byteorder.is_none() && f.shape.is_empty() {
                            return f.datatype.to_node();
                        }
                        let mut entries = Vec::new();
                        if let Some(b) = f.byteorder {
                            entries.push((Node::str("byteorder"), Node::str(byteorder_name(b))));
                        }
                        entries.push((Node::str("datatype"), f.datatype.to_node()));
                        if let Some(n) = &f.name {
                            entries.push((Node::str("name"), Node::str(n.clone())));
                        }
                        if !f.shape.is_empty() {
                            let dims = f
                                .shape
                                .iter()
                                .map(|d| Node::int(i64::try_from(*d).unwrap_or(i64::MAX)))
                                .collect();
                            entries.push((Node::str("shape"), flow_seq(dims)));
                        }
                        Node::map(entries)
                    })
                    .collect(),
            ),
        }
    }
}

/// `big` or `little`.
#[must_use]
pub fn byteorder_name(b: ByteOrder) -> &'static str {
    match b {
        ByteOrder::Big => "big",
        ByteOrder::Little => "little",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use asdf_yaml::{Limits, parse};

    fn dt(s: &str) -> Datatype {
        let d = parse(format!("v: {s}\n").as_bytes(), &Limits::default())
            .unwrap()
            .document;
        Datatype::from_node(d.root.get("v").unwrap()).unwrap()
    }

    #[test]
    fn parse_and_cast() {
        assert_eq!(dt("float64"), Datatype::Scalar(ScalarType::Float64));
        assert_eq!(dt("[ascii, 4]"), Datatype::Ascii(4));
        assert_eq!(dt("[ucs4, 2]").size(), 8);
        let s = dt("[[ascii, 4], uint16, {name: b, datatype: float32, byteorder: big, shape: [2, 3]}]");
        assert_eq!(s.size(), 4 + 2 + 4 * 6);
        use ScalarType as T;
        assert!(T::Int8.can_cast_to(T::Int16));
        assert!(!T::Int16.can_cast_to(T::Int8));
        assert!(T::UInt8.can_cast_to(T::Int16));
        assert!(!T::UInt8.can_cast_to(T::Int8));
        assert!(!T::Int8.can_cast_to(T::UInt64));
        assert!(T::Int16.can_cast_to(T::Float32));
        assert!(!T::Int32.can_cast_to(T::Float32));
        assert!(T::Int64.can_cast_to(T::Float64));
        assert!(T::Float32.can_cast_to(T::Complex64));
        assert!(!T::Float64.can_cast_to(T::Complex64));
        assert!(T::Bool8.can_cast_to(T::Float16));
        assert!(!T::Float16.can_cast_to(T::Bool8));
        assert!(Datatype::Ascii(3).can_cast_to(&Datatype::Ucs4(3)));
        assert!(!Datatype::Ucs4(3).can_cast_to(&Datatype::Ascii(3)));
        assert!(
            parse(b"v: [ascii]\n", &Limits::default())
                .map(|p| Datatype::from_node(p.document.root.get("v").unwrap()).is_err())
                .unwrap()
        );
    }
}
