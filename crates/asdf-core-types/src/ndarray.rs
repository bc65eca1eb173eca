//! `ndarray-1.0.0`/`1.1.0` (and reading `1.2.0`): the node model and element decoding from a
//! block's bytes or from inline data, with offsets, strides (negative too), byte orders,
//! structured records, streamed first dimensions and masks.

use asdf_yaml::{Document, Node, NodeKind, Value};

use crate::complex::{self, Complex};
use crate::datatype::{ByteOrder, Datatype, Field, ScalarType, infer_inline};

/// Whether `tag` is an ndarray tag of the ASDF Standard (`tag:stsci.edu:asdf/core/ndarray-*`,
/// any version): the one test every walker uses.
#[must_use]
pub fn is_ndarray_tag(tag: &str) -> bool {
    // `core/ndarray-1.1.0`, not `core/ndarray-chunk-1.0.0` (a chunk of a chunked ndarray,
    // as ASDF.jl writes them, is a mapping of its own).
    tag.strip_prefix("tag:stsci.edu:asdf/core/ndarray-")
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// Why an ndarray node or its data cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NdArrayError {
    /// The node is not an ndarray (neither a mapping nor a list).
    #[error("not an ndarray")]
    NotAnArray,
    /// A key has a value of the wrong shape.
    #[error("invalid `{0}`")]
    Invalid(&'static str),
    /// Neither `source` nor `data`.
    #[error("an ndarray needs `source` or `data`")]
    NoData,
    /// A bad datatype.
    #[error(transparent)]
    Datatype(#[from] crate::datatype::DatatypeError),
    /// Inline data whose structure does not match the shape or datatype.
    #[error("inline data doesn't match the given shape")]
    ShapeMismatch,
    /// An inline value that is not of the datatype.
    #[error("inline value `{0}` does not fit the datatype")]
    BadValue(String),
    /// The view reaches outside its block.
    #[error("the array view (offset {offset}, shape, strides) reaches byte {end} of a {len}-byte block")]
    OutOfBlock {
        /// The view's offset.
        offset: u64,
        /// The furthest byte it needs.
        end: i128,
        /// The block's length.
        len: u64,
    },
    /// Shape, datatype, strides or offset that span more bytes than a 64-bit size holds.
    #[error("the array's shape, datatype, strides and offset span more bytes than a 64-bit size can hold")]
    SizeOverflow,
    /// More dimensions than [`MAX_DIMS`].
    #[error("the array has {ndim} dimensions, more than the {MAX_DIMS} allowed")]
    TooManyDims {
        /// How many.
        ndim: usize,
    },
    /// The array has more elements than can be held in memory.
    #[error("the array has {elements} elements, more than memory can hold")]
    TooLarge {
        /// How many.
        elements: usize,
    },
    /// A typed read asked for another element type than the array's.
    #[error("the array holds {have}, not {}", want.name())]
    TypeMismatch {
        /// The type asked for.
        want: ScalarType,
        /// The array's datatype.
        have: String,
    },
    /// The array's data lives in a block or file that was not given.
    #[error("the array's data is in a block or file that was not provided")]
    MissingBlock,
}

/// One dimension of `shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    /// A fixed length.
    Fixed(usize),
    /// `'*'`: the streamed first dimension, derived from the block's length.
    Streamed,
}

/// Where the data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A block of this file (negative: counted from the end).
    Block(i64),
    /// Block 0 of another ASDF file, by relative URI (exploded form).
    Uri(String),
}

/// One element of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A real number.
    Float(f64),
    /// A complex number.
    Complex(Complex),
    /// A string (ASCII or UCS-4, trailing NULs removed).
    Str(String),
    /// A record of fields.
    Record(Vec<Element>),
    /// A sub-array field, flattened in C order.
    Array(Vec<Element>),
}

impl Element {
    /// numpy's conversion to bool (for mask arrays of other types): nonzero numbers, NaN and
    /// non-empty strings are true.
    #[must_use]
    pub fn truthy(&self) -> bool {
        match self {
            Element::Bool(b) => *b,
            Element::Int(i) => *i != 0,
            Element::UInt(u) => *u != 0,
            Element::Float(f) => *f != 0.0,
            Element::Complex(c) => c.re != 0.0 || c.im != 0.0,
            Element::Str(s) => !s.is_empty(),
            Element::Record(_) | Element::Array(_) => true,
        }
    }

    /// Equality with NaN equal to NaN and numbers compared by value across kinds.
    #[must_use]
    pub fn same(&self, other: &Element) -> bool {
        use Element::{Array, Bool, Complex as C, Float, Int, Record, Str, UInt};
        let num = |e: &Element| match e {
            Int(i) => Some(*i as f64),
            UInt(u) => Some(*u as f64),
            Float(f) => Some(*f),
            Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        match (self, other) {
            (Int(a), Int(b)) => a == b,
            (UInt(a), UInt(b)) => a == b,
            (Int(a), UInt(b)) | (UInt(b), Int(a)) => u64::try_from(*a).is_ok_and(|a| a == *b),
            (C(a), C(b)) => a.same(b),
            (C(a), x) | (x, C(a)) => num(x).is_some_and(|f| a.same(&Complex::new(f, 0.0))),
            (Str(a), Str(b)) => a == b,
            (Record(a), Record(b)) | (Array(a), Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (Float(a), Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => match (num(self), num(other)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }
}

/// A mask: a value (elements equal to it are masked; NaN masks NaN) or a boolean array.
#[derive(Debug, Clone, PartialEq)]
pub enum Mask {
    /// A scalar mask value.
    Value(Element),
    /// A mask array.
    Array(Box<NdArray>),
}

/// An ndarray node.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    /// Where the data is (absent for inline data).
    pub source: Option<Source>,
    /// Inline data (nested lists).
    pub data: Option<Node>,
    /// The element type (absent for inline data: inferred).
    pub datatype: Option<Datatype>,
    /// Byte order of block data (default big).
    pub byteorder: ByteOrder,
    /// The shape (absent for inline data: inferred).
    pub shape: Option<Vec<Dim>>,
    /// Byte offset of the first element in the block.
    pub offset: u64,
    /// Bytes between elements along each dimension (default C-contiguous).
    pub strides: Option<Vec<i64>>,
    /// The mask.
    pub mask: Option<Mask>,
    /// Keys of the node this library does not model, kept as they were.
    pub extra: Vec<(Node, Node)>,
    /// How the node was written, so that writing it back gives the same node.
    pub form: Form,
}

/// Details of how an ndarray node was written that its values do not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    /// The short form: a bare list of data (`!core/ndarray-1.1.0 [1, 2, 3]`).
    pub bare: bool,
    /// The `byteorder` key as written (`None`: absent). Written back when it still equals
    /// [`NdArray::byteorder`]; otherwise Python asdf's rule applies (`big` for 1-byte types).
    pub byteorder: Option<ByteOrder>,
    /// `offset` was written (even as 0).
    pub offset: bool,
    /// The tag of a mask array (`None`: the array's own tag).
    pub mask_tag: Option<String>,
}

/// Decoded elements in C order, with the resolved shape and datatype.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The element type.
    pub datatype: Datatype,
    /// The shape (the streamed dimension resolved).
    pub shape: Vec<usize>,
    /// The elements, C order.
    pub elements: Vec<Element>,
    /// Where inline data had `null` (C-order indices): masked values, as the standard and
    /// Python asdf write them, decoded as zero (numpy's data under the mask) and masked by
    /// [`NdArray::mask_flags`]. Empty for block data.
    pub nulls: Vec<usize>,
}

impl Decoded {
    /// The element at `index` (one index per dimension).
    ///
    /// # Errors
    /// [`NdArrayError::Invalid`] for an index outside the shape.
    pub fn element(&self, index: &[usize]) -> Result<Element, NdArrayError> {
        if index.len() != self.shape.len() || index.iter().zip(&self.shape).any(|(i, n)| i >= n) {
            return Err(NdArrayError::Invalid("index"));
        }
        let flat = index.iter().zip(&self.shape).fold(0usize, |acc, (i, n)| acc * n + i);
        self.elements.get(flat).cloned().ok_or(NdArrayError::Invalid("index"))
    }
}

fn scalar_from_block(t: ScalarType, b: &[u8], order: ByteOrder) -> Element {
    macro_rules! rd {
        ($ty:ty) => {{
            let mut a = [0u8; std::mem::size_of::<$ty>()];
            a.copy_from_slice(&b[..std::mem::size_of::<$ty>()]);
            match order {
                ByteOrder::Big => <$ty>::from_be_bytes(a),
                ByteOrder::Little => <$ty>::from_le_bytes(a),
            }
        }};
    }
    match t {
        ScalarType::Int8 => Element::Int(i64::from(rd!(i8))),
        ScalarType::Int16 => Element::Int(i64::from(rd!(i16))),
        ScalarType::Int32 => Element::Int(i64::from(rd!(i32))),
        ScalarType::Int64 => Element::Int(rd!(i64)),
        ScalarType::UInt8 => Element::UInt(u64::from(rd!(u8))),
        ScalarType::UInt16 => Element::UInt(u64::from(rd!(u16))),
        ScalarType::UInt32 => Element::UInt(u64::from(rd!(u32))),
        ScalarType::UInt64 => Element::UInt(rd!(u64)),
        ScalarType::Float16 => Element::Float(f16_to_f64(rd!(u16))),
        ScalarType::Float32 => Element::Float(f64::from(rd!(f32))),
        ScalarType::Float64 => Element::Float(rd!(f64)),
        ScalarType::Complex64 => {
            let re = f64::from(rd!(f32));
            let im = f64::from(scalar_f32(&b[4..8], order));
            Element::Complex(Complex::new(re, im))
        }
        ScalarType::Complex128 => {
            let re = rd!(f64);
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[8..16]);
            let im = match order {
                ByteOrder::Big => f64::from_be_bytes(a),
                ByteOrder::Little => f64::from_le_bytes(a),
            };
            Element::Complex(Complex::new(re, im))
        }
        ScalarType::Bool8 => Element::Bool(b[0] != 0),
    }
}

fn scalar_f32(b: &[u8], order: ByteOrder) -> f32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    match order {
        ByteOrder::Big => f32::from_be_bytes(a),
        ByteOrder::Little => f32::from_le_bytes(a),
    }
}

/// IEEE 754 half precision to f64.
#[must_use]
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

pub(crate) fn decode_element(dt: &Datatype, b: &[u8], order: ByteOrder) -> Element {
    match dt {
        Datatype::Scalar(t) => scalar_from_block(*t, b, order),
        Datatype::Ascii(n) => {
            let s = &b[..*n];
            let end = s.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            Element::Str(String::from_utf8_lossy(&s[..end]).into_owned())
        }
        Datatype::Ucs4(n) => {
            let mut out = String::new();
            for i in 0..*n {
                let mut a = [0u8; 4];
                a.copy_from_slice(&b[4 * i..4 * i + 4]);
                let cp = match order {
                    ByteOrder::Big => u32::from_be_bytes(a),
                    ByteOrder::Little => u32::from_le_bytes(a),
                };
                out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
            }
            let trimmed = out.trim_end_matches('\0').to_owned();
            Element::Str(trimmed)
        }
        Datatype::Structured(fields) => {
            let mut pos = 0;
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let o = f.byteorder.unwrap_or(order);
                let size = f.datatype.size();
                let count: usize = f.shape.iter().product();
                if f.shape.is_empty() {
                    out.push(decode_element(&f.datatype, &b[pos..], o));
                } else {
                    let items = (0..count)
                        .map(|k| decode_element(&f.datatype, &b[pos + k * size..], o))
                        .collect();
                    out.push(Element::Array(items));
                }
                pos += size * count.max(1);
            }
            Element::Record(out)
        }
    }
}

/// The most dimensions an array may have (numpy's `NPY_MAXDIMS`).
pub const MAX_DIMS: usize = 64;

fn dims(n: &Node) -> Result<Vec<Dim>, NdArrayError> {
    let s = n.as_sequence().ok_or(NdArrayError::Invalid("shape"))?;
    if s.items.len() > MAX_DIMS {
        return Err(NdArrayError::TooManyDims { ndim: s.items.len() });
    }
    s.items
        .iter()
        .map(|d| match &d.as_scalar().ok_or(NdArrayError::Invalid("shape"))?.value {
            Value::Int(i) => usize::try_from(*i)
                .map(Dim::Fixed)
                .map_err(|_| NdArrayError::Invalid("shape")),
            Value::Str if d.as_str() == Some("*") => Ok(Dim::Streamed),
            _ => Err(NdArrayError::Invalid("shape")),
        })
        .collect()
}

impl NdArray {
    /// Reads an ndarray node (a mapping, or a bare list of inline data).
    ///
    /// # Errors
    /// [`NdArrayError`] for malformed keys.
    pub fn from_node(node: &Node, doc: &Document) -> Result<Self, NdArrayError> {
        let node = doc.resolve(node);
        if let NodeKind::Sequence(_) = node.kind {
            return Ok(NdArray {
                source: None,
                data: Some(node.clone()),
                datatype: None,
                byteorder: ByteOrder::Big,
                shape: None,
                offset: 0,
                strides: None,
                mask: None,
                extra: Vec::new(),
                form: Form {
                    bare: true,
                    ..Form::default()
                },
            });
        }
        if !matches!(node.kind, NodeKind::Mapping(_)) {
            return Err(NdArrayError::NotAnArray);
        }
        let get = |k: &str| node.get(k).map(|n| doc.resolve(n));
        let source = match get("source") {
            None => None,
            Some(s) => Some(match &s.as_scalar().ok_or(NdArrayError::Invalid("source"))?.value {
                Value::Int(i) => Source::Block(*i),
                Value::Str => Source::Uri(s.as_str().unwrap_or_default().to_owned()),
                _ => return Err(NdArrayError::Invalid("source")),
            }),
        };
        let data = get("data").cloned();
        if source.is_none() && data.is_none() {
            // A mapping that is not tagged an ndarray is not one; a tagged one lacks its data.
            return Err(if node.tag.as_deref().is_some_and(crate::is_ndarray_tag) {
                NdArrayError::NoData
            } else {
                NdArrayError::NotAnArray
            });
        }
        let datatype = get("datatype").map(Datatype::from_node).transpose()?;
        let byteorder = match get("byteorder").and_then(Node::as_str) {
            None | Some("big") => ByteOrder::Big,
            Some("little") => ByteOrder::Little,
            Some(_) => return Err(NdArrayError::Invalid("byteorder")),
        };
        let shape = get("shape").map(dims).transpose()?;
        let offset = match get("offset") {
            None => 0,
            Some(o) => o
                .as_i64()
                .and_then(|i| u64::try_from(i).ok())
                .ok_or(NdArrayError::Invalid("offset"))?,
        };
        // The bytes the shape spans must be a number (whole rows of a streamed array count once).
        if let (Some(dt), Some(sh)) = (&datatype, &shape) {
            let bytes = sh.iter().try_fold(dt.size(), |a, d| match d {
                Dim::Fixed(n) => a.checked_mul(*n),
                Dim::Streamed => Some(a),
            });
            if bytes.is_none_or(|b| u64::try_from(b).is_err()) {
                return Err(NdArrayError::SizeOverflow);
            }
        }
        let strides = match get("strides") {
            None => None,
            Some(s) => Some(
                s.as_sequence()
                    .ok_or(NdArrayError::Invalid("strides"))?
                    .items
                    .iter()
                    .map(|x| x.as_i64().ok_or(NdArrayError::Invalid("strides")))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let mask = match get("mask") {
            None => None,
            Some(m) => Some(match &m.kind {
                NodeKind::Mapping(_) | NodeKind::Sequence(_) => Mask::Array(Box::new(NdArray::from_node(m, doc)?)),
                NodeKind::Scalar(_) => Mask::Value(inline_scalar(m, None)?),
                NodeKind::Alias(_) => return Err(NdArrayError::Invalid("mask")),
            }),
        };
        const KNOWN: [&str; 8] = [
            "source",
            "data",
            "datatype",
            "byteorder",
            "shape",
            "offset",
            "strides",
            "mask",
        ];
        let extra = node
            .as_mapping()
            .map(|m| {
                m.entries
                    .iter()
                    .filter(|(k, _)| !k.as_str().is_some_and(|k| KNOWN.contains(&k)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let form = Form {
            bare: false,
            byteorder: get("byteorder").map(|_| byteorder),
            offset: get("offset").is_some(),
            mask_tag: get("mask").and_then(|m| m.tag.as_deref().map(str::to_owned)),
        };
        Ok(NdArray {
            source,
            data,
            datatype,
            byteorder,
            shape,
            offset,
            strides,
            mask,
            extra,
            form,
        })
    }

    /// The shape with a streamed dimension resolved from the block length (whole rows only).
    ///
    /// # Errors
    /// [`NdArrayError::MissingBlock`] for a streamed shape without a block length.
    pub fn resolved_shape(&self, block_len: Option<u64>) -> Result<Vec<usize>, NdArrayError> {
        let dt = self.datatype.as_ref().ok_or(NdArrayError::Invalid("datatype"))?;
        let shape = self.shape.as_ref().ok_or(NdArrayError::Invalid("shape"))?;
        let row: usize = shape
            .iter()
            .skip(1)
            .map(|d| match d {
                Dim::Fixed(n) => *n,
                Dim::Streamed => 1,
            })
            .fold(dt.size(), usize::saturating_mul);
        shape
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Ok(*n),
                Dim::Streamed => {
                    let len = block_len.ok_or(NdArrayError::MissingBlock)?;
                    let avail = len.saturating_sub(self.offset);
                    Ok(usize::try_from(avail)
                        .unwrap_or(usize::MAX)
                        .checked_div(row)
                        .unwrap_or(0))
                }
            })
            .collect()
    }

    pub(crate) fn decode_inline(&self) -> Result<Decoded, NdArrayError> {
        let data = self.data.as_ref().ok_or(NdArrayError::NoData)?;
        let dt = match &self.datatype {
            Some(d) => d.clone(),
            None => infer_inline(data).ok_or(NdArrayError::Invalid("data"))?,
        };
        let record = matches!(dt, Datatype::Structured(_));
        // Leaves: scalars, or (for records) the innermost lists.
        let mut leaves = Vec::new();
        let mut shape: Vec<usize> = Vec::new();
        fn walk<'a>(
            n: &'a Node,
            depth: usize,
            record: bool,
            shape: &mut Vec<usize>,
            leaves: &mut Vec<&'a Node>,
        ) -> Result<(), NdArrayError> {
            match &n.kind {
                NodeKind::Sequence(s) => {
                    let is_record_row = record
                        && s.items
                            .iter()
                            .all(|i| !matches!(i.kind, NodeKind::Sequence(_)) || i.tag.is_some());
                    if is_record_row && depth > 0 {
                        leaves.push(n);
                        return Ok(());
                    }
                    if is_record_row
                        && depth == 0
                        && s.items
                            .first()
                            .is_some_and(|i| !matches!(i.kind, NodeKind::Sequence(_)))
                    {
                        leaves.push(n);
                        return Ok(());
                    }
                    match shape.get(depth) {
                        Some(&d) if d != s.items.len() => return Err(NdArrayError::ShapeMismatch),
                        Some(_) => {}
                        None => shape.push(s.items.len()),
                    }
                    for i in &s.items {
                        walk(i, depth + 1, record, shape, leaves)?;
                    }
                    Ok(())
                }
                _ => {
                    if shape.len() != depth {
                        return Err(NdArrayError::ShapeMismatch);
                    }
                    leaves.push(n);
                    Ok(())
                }
            }
        }
        walk(data, 0, record, &mut shape, &mut leaves)?;
        if let Some(given) = &self.shape {
            let given: Vec<usize> = given
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => *n,
                    Dim::Streamed => 0,
                })
                .collect();
            // Nested lists cannot show the dimensions after an empty one (`[[], [], [], []]`
            // for shape [4, 0, 5], as Python asdf writes it): a data that holds no element
            // and whose shape begins the given one has the given shape.
            let empty_prefix = leaves.is_empty() && shape.last() == Some(&0) && given.starts_with(&shape);
            if given != shape && !empty_prefix {
                return Err(NdArrayError::ShapeMismatch);
            }
            shape = given;
        }
        let mut nulls = Vec::new();
        let mut elements = Vec::with_capacity(leaves.len());
        for (i, l) in leaves.into_iter().enumerate() {
            match (&dt, l.as_scalar().map(|s| &s.value)) {
                // A masked value: zero, as Python asdf decodes it (under the mask).
                (Datatype::Scalar(t), Some(Value::Null)) if l.tag.is_none() => {
                    nulls.push(i);
                    elements.push(zero(*t));
                }
                _ => elements.push(inline_value(l, &dt)?),
            }
        }
        Ok(Decoded {
            datatype: dt,
            shape,
            elements,
            nulls,
        })
    }

    /// Which decoded elements are masked (true = masked), for arrays with a mask.
    ///
    /// # Errors
    /// As [`NdArray::decode`] for a mask array (given its own block).
    pub fn mask_flags(&self, decoded: &Decoded, mask_block: Option<&[u8]>) -> Result<Option<Vec<bool>>, NdArrayError> {
        let mut flags = self.own_mask_flags(decoded, mask_block)?;
        if !decoded.nulls.is_empty() {
            let f = flags.get_or_insert_with(|| vec![false; decoded.elements.len()]);
            for &i in &decoded.nulls {
                if let Some(x) = f.get_mut(i) {
                    *x = true;
                }
            }
        }
        Ok(flags)
    }

    /// The flags of the `mask` key alone.
    fn own_mask_flags(&self, decoded: &Decoded, mask_block: Option<&[u8]>) -> Result<Option<Vec<bool>>, NdArrayError> {
        match &self.mask {
            None => Ok(None),
            Some(Mask::Value(v)) => Ok(Some(
                decoded
                    .elements
                    .iter()
                    .map(|e| match (v, e) {
                        (Element::Float(m), Element::Float(x)) if m.is_nan() => x.is_nan(),
                        _ => e.same(v),
                    })
                    .collect(),
            )),
            Some(Mask::Array(m)) => {
                let d = m.decode(mask_block)?;
                Ok(Some(d.elements.iter().map(Element::truthy).collect()))
            }
        }
    }
}

/// The zero of scalar type `t` (a masked inline value's data).
fn zero(t: ScalarType) -> Element {
    match t {
        ScalarType::Bool8 => Element::Bool(false),
        ScalarType::UInt8 | ScalarType::UInt16 | ScalarType::UInt32 | ScalarType::UInt64 => Element::UInt(0),
        ScalarType::Float16 | ScalarType::Float32 | ScalarType::Float64 => Element::Float(0.0),
        ScalarType::Complex64 | ScalarType::Complex128 => Element::Complex(Complex::new(0.0, 0.0)),
        _ => Element::Int(0),
    }
}

fn inline_scalar(n: &Node, t: Option<ScalarType>) -> Result<Element, NdArrayError> {
    let bad = || NdArrayError::BadValue(n.as_scalar().map(|s| s.text.to_string()).unwrap_or_default());
    if n.tag.as_deref().is_some_and(|t| t.contains("core/complex")) {
        let s = n.as_scalar().ok_or_else(bad)?;
        return complex::parse_lenient(&s.text).map(Element::Complex).ok_or_else(bad);
    }
    let s = n.as_scalar().ok_or_else(bad)?;
    let e = match s.value {
        Value::Bool(b) => Element::Bool(b),
        Value::Int(i) => Element::Int(i),
        Value::BigInt(ref b) => Element::UInt(b.to_string().parse().map_err(|_| bad())?),
        Value::Float(f) => Element::Float(f),
        Value::Str => Element::Str(s.text.to_string()),
        _ => return Err(bad()),
    };
    Ok(match (t, e) {
        (Some(ScalarType::Float16 | ScalarType::Float32 | ScalarType::Float64), Element::Int(i)) => {
            Element::Float(i as f64)
        }
        (Some(ScalarType::Complex64 | ScalarType::Complex128), Element::Int(i)) => {
            Element::Complex(Complex::new(i as f64, 0.0))
        }
        (Some(ScalarType::Complex64 | ScalarType::Complex128), Element::Float(f)) => {
            Element::Complex(Complex::new(f, 0.0))
        }
        (Some(ScalarType::UInt8 | ScalarType::UInt16 | ScalarType::UInt32 | ScalarType::UInt64), Element::Int(i)) => {
            Element::UInt(u64::try_from(i).map_err(|_| bad())?)
        }
        (Some(ScalarType::Bool8), Element::Int(i)) => Element::Bool(i != 0),
        #[allow(clippy::cast_possible_truncation)]
        (Some(ScalarType::Float32), Element::Float(f)) => Element::Float(f64::from(f as f32)),
        (_, e) => e,
    })
}

fn inline_value(n: &Node, dt: &Datatype) -> Result<Element, NdArrayError> {
    match dt {
        Datatype::Scalar(t) => inline_scalar(n, Some(*t)),
        Datatype::Ascii(_) | Datatype::Ucs4(_) => match n.as_scalar() {
            Some(s) => Ok(Element::Str(s.text.to_string())),
            None => Err(NdArrayError::BadValue(String::new())),
        },
        Datatype::Structured(fields) => {
            let s = n.as_sequence().ok_or(NdArrayError::ShapeMismatch)?;
            if s.items.len() != fields.len() {
                return Err(NdArrayError::ShapeMismatch);
            }
            s.items
                .iter()
                .zip(fields)
                .map(|(v, f): (&Node, &Field)| inline_value(v, &f.datatype))
                .collect::<Result<Vec<_>, _>>()
                .map(Element::Record)
        }
    }
}

impl Element {
    /// The node Python asdf writes for this element in inline data.
    #[must_use]
    pub fn to_node(&self) -> Node {
        match self {
            Element::Bool(b) => Node::bool(*b),
            Element::Int(i) => Node::int(*i),
            Element::UInt(u) => Node::bigint((*u).into()),
            Element::Float(f) => Node::float(*f),
            Element::Complex(c) => Node::str(complex::to_python_string(*c))
                .with_tag(format!("{}core/complex-1.0.0", asdf_yaml::node::tags::ASDF)),
            Element::Str(s) => Node::str(s.clone()),
            Element::Record(items) | Element::Array(items) => Node::seq(items.iter().map(Element::to_node).collect()),
        }
    }
}

fn int_node(n: usize) -> Node {
    Node::int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Nests `elements` (C order) into lists of `shape`.
fn nest(elements: &[Element], shape: &[usize]) -> Node {
    match shape.split_first() {
        None => elements.first().map_or_else(Node::null, Element::to_node),
        Some((_, [])) => Node::seq(elements.iter().map(Element::to_node).collect()),
        Some((n, rest)) => {
            let step: usize = rest.iter().product();
            Node::seq(
                (0..*n)
                    .map(|i| nest(elements.get(i * step..(i + 1) * step).unwrap_or(&[]), rest))
                    .collect(),
            )
        }
    }
}

impl NdArray {
    /// An array of inline data: `elements` in C order, nested into lists of `shape` (give
    /// exactly the product of `shape` elements; missing ones leave short lists, which fail
    /// validation rather than panic).
    #[must_use]
    pub fn inline(datatype: Datatype, shape: &[usize], elements: &[Element]) -> Self {
        NdArray {
            source: None,
            data: Some(nest(elements, shape)),
            datatype: Some(datatype),
            byteorder: ByteOrder::Little,
            shape: Some(shape.iter().map(|d| Dim::Fixed(*d)).collect()),
            offset: 0,
            strides: None,
            mask: None,
            extra: Vec::new(),
            form: Form::default(),
        }
    }

    /// An array in block `source` (C order, no offset): `shape`'s dimensions, the first
    /// [`Dim::Streamed`] for a streamed array.
    #[must_use]
    pub fn in_block(source: i64, datatype: Datatype, byteorder: ByteOrder, shape: Vec<Dim>) -> Self {
        NdArray {
            source: Some(Source::Block(source)),
            data: None,
            datatype: Some(datatype),
            byteorder,
            shape: Some(shape),
            offset: 0,
            strides: None,
            mask: None,
            extra: Vec::new(),
            form: Form::default(),
        }
    }

    /// The node Python asdf writes (keys in the schema's order: source, data, mask, datatype,
    /// byteorder, shape, offset, strides; `byteorder: big` for 1-byte types; `offset` and
    /// `strides` only when not the defaults), tagged `tag` (e.g. `.../core/ndarray-1.1.0`).
    #[must_use]
    pub fn to_node(&self, tag: &str) -> Node {
        // Data alone read in the short form (`!core/ndarray-1.1.0 [1, 2, 3]`) is written so.
        if let (true, Some(d), None, None, None, None) = (
            self.form.bare,
            &self.data,
            &self.source,
            &self.datatype,
            &self.shape,
            &self.mask,
        ) && matches!(d.kind, NodeKind::Sequence(_))
            && self.offset == 0
            && self.strides.is_none()
            && self.extra.is_empty()
        {
            return d.clone().with_tag(tag);
        }
        let mut e = Vec::new();
        match &self.source {
            Some(Source::Block(i)) => e.push((Node::str("source"), Node::int(*i))),
            Some(Source::Uri(u)) => e.push((Node::str("source"), Node::str(u.clone()))),
            None => {}
        }
        if let Some(d) = &self.data {
            e.push((Node::str("data"), d.clone()));
        }
        match &self.mask {
            Some(Mask::Value(v)) => e.push((Node::str("mask"), v.to_node())),
            Some(Mask::Array(a)) => e.push((
                Node::str("mask"),
                a.to_node(self.form.mask_tag.as_deref().unwrap_or(tag)),
            )),
            None => {}
        }
        if let Some(dt) = &self.datatype {
            e.push((Node::str("datatype"), dt.to_node()));
        }
        let python_rule = match &self.datatype {
            // Python asdf writes `big` for 1-byte types, whatever numpy says.
            Some(dt) if dt.size() == 1 && !matches!(dt, Datatype::Structured(_)) => ByteOrder::Big,
            _ => self.byteorder,
        };
        let order = match self.form.byteorder {
            Some(b) if b == self.byteorder => Some(b),
            _ if self.source.is_some() && self.datatype.is_some() => Some(python_rule),
            _ => None,
        };
        if let Some(order) = order {
            e.push((
                Node::str("byteorder"),
                Node::str(crate::datatype::byteorder_name(order)),
            ));
        }
        if let Some(shape) = &self.shape {
            let dims = shape
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => int_node(*n),
                    Dim::Streamed => Node::str("*"),
                })
                .collect();
            e.push((Node::str("shape"), Node::seq(dims)));
        }
        if self.offset != 0 || self.form.offset {
            e.push((
                Node::str("offset"),
                Node::int(i64::try_from(self.offset).unwrap_or(i64::MAX)),
            ));
        }
        if let Some(s) = &self.strides {
            e.push((
                Node::str("strides"),
                Node::seq(s.iter().map(|x| Node::int(*x)).collect()),
            ));
        }
        e.extend(self.extra.iter().cloned());
        Node::map(e).with_tag(tag)
    }
}
