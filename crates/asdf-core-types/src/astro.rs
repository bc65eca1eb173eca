//! Typed values of the tags built on ndarrays and units: `core/ndarray` itself,
//! `core/integer`, `core/complex`, `core/table` and `core/column`, `table/table` and
//! `table/column` (astronomy), `unit/quantity`, `time/time` and `fits/fits`.
//!
//! Nested values keep the tag they were read with (`None` for an untagged value, such as
//! `unit: km` in a quantity), so node -> typed -> node gives an equivalent node; new values
//! get the tags of the standard version they are written for from the caller.
//!
//! ```
//! use asdf_core_types::astro::{Quantity, QuantityValue};
//! use asdf_core_types::typed::Typed;
//! use asdf_yaml::{parse, Limits};
//! let text = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !unit/quantity-1.2.0 {value: 3.5, unit: km}\n...\n";
//! let q = Quantity::from_node(&parse(text, &Limits::default())?.document.root)?;
//! assert_eq!(q.unit, "km");
//! assert!(matches!(q.value, QuantityValue::Number(n) if n.as_f64() == 3.5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use asdf_yaml::{Document, Node, NodeKind, Value};
use num_bigint::BigInt;

use crate::complex::{self, Complex};
use crate::datatype::ScalarType;
use crate::ndarray::NdArray;
use crate::typed::{Obj, Typed, TypedError, object};

/// A node with `tag`, or untagged when `tag` is `None` or empty.
fn tagged(n: Node, tag: Option<&str>) -> Node {
    match tag {
        Some(t) if !t.is_empty() => n.with_tag(t),
        _ => n,
    }
}

/// A YAML number as written: an integer or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

impl Number {
    /// The value as f64.
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    fn from_node(n: &Node) -> Option<Self> {
        match n.as_scalar()?.value {
            Value::Int(i) => Some(Number::Int(i)),
            Value::Float(f) => Some(Number::Float(f)),
            _ => None,
        }
    }

    fn to_node(self) -> Node {
        match self {
            Number::Int(i) => Node::int(i),
            Number::Float(f) => Node::float(f),
        }
    }
}

/// An ndarray with the tag it is written with.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The array.
    pub array: NdArray,
    /// Its tag (`tag:stsci.edu:asdf/core/ndarray-1.1.0`).
    pub tag: String,
}

impl Array {
    fn from_node(n: &Node, tag: &'static str, key: &'static str) -> Result<Self, TypedError> {
        let array = NdArray::from_node(n, &Document::new(Node::null())).map_err(|_| TypedError::Type {
            tag,
            key,
            expected: "an ndarray",
        })?;
        Ok(Array {
            array,
            tag: n.tag.as_deref().map(str::to_owned).unwrap_or_default(),
        })
    }

    fn to_node(&self) -> Node {
        self.array.to_node(&self.tag)
    }
}

impl Typed for NdArray {
    const NAME: &'static str = "core/ndarray";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        NdArray::from_node(n, &Document::new(Node::null())).map_err(|_| TypedError::Kind {
            tag: Self::NAME,
            expected: "an ndarray (a mapping with source or data, or a list)",
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        NdArray::to_node(self, tag)
    }
}

impl Typed for Complex {
    const NAME: &'static str = "core/complex";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        n.as_scalar()
            .and_then(|s| complex::parse(&s.text))
            .ok_or(TypedError::Kind {
                tag: Self::NAME,
                expected: "a complex number such as 1+2j",
            })
    }

    /// Written as Python writes complex numbers (`(1+2j)`).
    fn to_node(&self, tag: &str) -> Node {
        Node::str(complex::to_python_string(*self)).with_tag(tag)
    }
}

/// `core/integer-1.0.0`/`1.1.0`: an integer of any size, as 32-bit words (least significant
/// first) in an ndarray, a sign, and optionally its decimal text.
#[derive(Debug, Clone, PartialEq)]
pub struct Integer {
    /// True for `sign: -`.
    pub negative: bool,
    /// The words (`uint32`), inline or in a block.
    pub words: Array,
    /// The decimal text, if written.
    pub string: Option<String>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Integer {
    /// The value from the decoded words.
    #[must_use]
    pub fn value(&self, words: &[u32]) -> BigInt {
        crate::integer::from_words(self.negative, words)
    }

    /// A value with its words inline (`ndarray_tag` for the words), and its decimal text, as
    /// Python asdf writes it.
    #[must_use]
    pub fn inline(value: &BigInt, ndarray_tag: &str) -> Self {
        let (negative, words) = crate::integer::to_words(value);
        let elements: Vec<crate::Element> = words.iter().map(|w| crate::Element::UInt(u64::from(*w))).collect();
        let array = NdArray::inline(
            crate::Datatype::Scalar(ScalarType::UInt32),
            &[elements.len()],
            &elements,
        );
        Integer {
            negative,
            words: Array {
                array,
                tag: ndarray_tag.to_owned(),
            },
            string: Some(value.to_string()),
            extra: Vec::new(),
        }
    }
}

impl Typed for Integer {
    const NAME: &'static str = "core/integer";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        let sign = o.str("sign")?;
        let negative = match sign.as_str() {
            "+" => false,
            "-" => true,
            _ => {
                return Err(TypedError::Type {
                    tag: Self::NAME,
                    key: "sign",
                    expected: "+ or -",
                });
            }
        };
        let words = o.get("words").ok_or(TypedError::Missing {
            tag: Self::NAME,
            key: "words",
        })?;
        Ok(Integer {
            negative,
            words: Array::from_node(words, Self::NAME, "words")?,
            string: o.opt_str("string")?,
            extra: o.extra(&["sign", "words", "string"]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        object(
            tag,
            vec![
                ("sign", Some(Node::str(if self.negative { "-" } else { "+" }))),
                ("words", Some(self.words.to_node())),
                ("string", self.string.as_deref().map(Node::str)),
            ],
            &self.extra,
        )
    }
}

/// A column of a table (`core/column-1.0.0` or `table/column-1.x`).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its values.
    pub data: Array,
    /// What it holds.
    pub description: Option<String>,
    /// Its unit, with the unit's tag (`None`: untagged).
    pub unit: Option<(String, Option<String>)>,
    /// Free-form metadata.
    pub meta: Option<Node>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
    /// The column's tag (used when written inside a table).
    pub tag: Option<String>,
}

const COLUMN_KEYS: [&str; 5] = ["name", "data", "description", "unit", "meta"];

fn column_from(n: &Node, name: &'static str) -> Result<Column, TypedError> {
    let o = Obj::new(name, n)?;
    let data = o.get("data").ok_or(TypedError::Missing { tag: name, key: "data" })?;
    let unit = match o.get("unit") {
        None => None,
        Some(u) => Some((
            u.as_scalar().map(|s| s.text.to_string()).ok_or(TypedError::Type {
                tag: name,
                key: "unit",
                expected: "a unit string",
            })?,
            u.tag.as_deref().map(str::to_owned),
        )),
    };
    Ok(Column {
        name: o.str("name")?,
        data: Array::from_node(data, name, "data")?,
        description: o.opt_str("description")?,
        unit,
        meta: o.get("meta").cloned(),
        extra: o.extra(&COLUMN_KEYS),
        tag: n.tag.as_deref().map(str::to_owned),
    })
}

impl Column {
    fn node(&self, tag: &str) -> Node {
        object(
            tag,
            vec![
                ("name", Some(Node::str(&self.name))),
                ("data", Some(self.data.to_node())),
                ("description", self.description.as_deref().map(Node::str)),
                (
                    "unit",
                    self.unit.as_ref().map(|(u, t)| tagged(Node::str(u), t.as_deref())),
                ),
                ("meta", self.meta.clone()),
            ],
            &self.extra,
        )
    }
}

impl Typed for Column {
    const NAME: &'static str = "core/column";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        column_from(n, Self::NAME)
    }

    fn to_node(&self, tag: &str) -> Node {
        self.node(tag)
    }
}

/// A table: named columns of equal length (`core/table-1.0.0`, or with
/// [`AstroTable`] `table/table-1.x`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// Free-form metadata.
    pub meta: Option<Node>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

fn table_from(n: &Node, name: &'static str, column: &'static str) -> Result<Table, TypedError> {
    let o = Obj::new(name, n)?;
    let cols = o
        .get("columns")
        .ok_or(TypedError::Missing {
            tag: name,
            key: "columns",
        })?
        .as_sequence()
        .ok_or(TypedError::Type {
            tag: name,
            key: "columns",
            expected: "a list of columns",
        })?;
    Ok(Table {
        columns: cols
            .items
            .iter()
            .map(|c| column_from(c, column))
            .collect::<Result<_, _>>()?,
        meta: o.get("meta").cloned(),
        extra: o.extra(&["columns", "meta"]),
    })
}

impl Table {
    fn node(&self, tag: &str) -> Node {
        let cols = self
            .columns
            .iter()
            .map(|c| c.node(c.tag.as_deref().unwrap_or_default()))
            .collect();
        object(
            tag,
            vec![("columns", Some(Node::seq(cols))), ("meta", self.meta.clone())],
            &self.extra,
        )
    }
}

impl Typed for Table {
    const NAME: &'static str = "core/table";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        table_from(n, Self::NAME, Column::NAME)
    }

    fn to_node(&self, tag: &str) -> Node {
        self.node(tag)
    }
}

/// `table/table-1.x` (the astronomy table): the same content as [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct AstroTable(pub Table);

impl Typed for AstroTable {
    const NAME: &'static str = "table/table";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        table_from(n, Self::NAME, "table/column").map(AstroTable)
    }

    fn to_node(&self, tag: &str) -> Node {
        self.0.node(tag)
    }
}

/// `table/column-1.x` (the astronomy column): the same content as [`Column`].
#[derive(Debug, Clone, PartialEq)]
pub struct AstroColumn(pub Column);

impl Typed for AstroColumn {
    const NAME: &'static str = "table/column";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        column_from(n, Self::NAME).map(AstroColumn)
    }

    fn to_node(&self, tag: &str) -> Node {
        self.0.node(tag)
    }
}

/// The value of a quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum QuantityValue {
    /// A scalar.
    Number(Number),
    /// An array.
    Array(Box<Array>),
}

/// `unit/quantity-1.x`: a value (scalar or array) with a unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// The value.
    pub value: QuantityValue,
    /// The unit (a VOUnit string).
    pub unit: String,
    /// The unit's tag (`None`: untagged, as in `unit: km`).
    pub unit_tag: Option<String>,
    /// The scalar datatype of a scalar value (`float32`), if given.
    pub datatype: Option<String>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
    /// The quantity's tag (used when nested, as in a time's location).
    pub tag: Option<String>,
}

impl Typed for Quantity {
    const NAME: &'static str = "unit/quantity";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        let v = o.get("value").ok_or(TypedError::Missing {
            tag: Self::NAME,
            key: "value",
        })?;
        let value = match Number::from_node(v) {
            Some(x) if v.tag.is_none() => QuantityValue::Number(x),
            _ => QuantityValue::Array(Box::new(Array::from_node(v, Self::NAME, "value")?)),
        };
        let u = o.get("unit").ok_or(TypedError::Missing {
            tag: Self::NAME,
            key: "unit",
        })?;
        Ok(Quantity {
            value,
            unit: u.as_scalar().map(|s| s.text.to_string()).ok_or(TypedError::Type {
                tag: Self::NAME,
                key: "unit",
                expected: "a unit string",
            })?,
            unit_tag: u.tag.as_deref().map(str::to_owned),
            datatype: o.opt_str("datatype")?,
            extra: o.extra(&["value", "unit", "datatype"]),
            tag: n.tag.as_deref().map(str::to_owned),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let value = match &self.value {
            QuantityValue::Number(x) => x.to_node(),
            QuantityValue::Array(a) => a.to_node(),
        };
        object(
            tag,
            vec![
                ("value", Some(value)),
                ("unit", Some(tagged(Node::str(&self.unit), self.unit_tag.as_deref()))),
                ("datatype", self.datatype.as_deref().map(Node::str)),
            ],
            &self.extra,
        )
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A scalar quantity as its value and unit (`3.5 km / s`); an array quantity as its shape
/// and unit (`[3, 4] array of km`).
impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            QuantityValue::Number(x) => write!(f, "{x} {}", self.unit),
            QuantityValue::Array(a) => match &a.array.shape {
                Some(shape) => write!(
                    f,
                    "[{}] array of {}",
                    shape
                        .iter()
                        .map(|d| match d {
                            crate::Dim::Fixed(k) => k.to_string(),
                            crate::Dim::Streamed => "*".to_owned(),
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.unit
                ),
                None => write!(f, "array of {}", self.unit),
            },
        }
    }
}

impl Quantity {
    fn nested(&self) -> Node {
        self.to_node(self.tag.as_deref().unwrap_or_default())
    }
}

/// One coordinate of a time's location: a number (metres, or `unit`) or a quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum Coordinate {
    /// A number (time-1.0.0 and 1.1.0).
    Number(Number),
    /// A quantity (later versions).
    Quantity(Box<Quantity>),
}

impl Coordinate {
    fn from_node(n: &Node, key: &'static str) -> Result<Self, TypedError> {
        match Number::from_node(n) {
            Some(x) if n.tag.is_none() => Ok(Coordinate::Number(x)),
            _ => Quantity::from_node(n)
                .map(|q| Coordinate::Quantity(Box::new(q)))
                .map_err(|_| TypedError::Type {
                    tag: Time::NAME,
                    key,
                    expected: "a number or a quantity",
                }),
        }
    }

    fn to_node(&self) -> Node {
        match self {
            Coordinate::Number(x) => x.to_node(),
            Coordinate::Quantity(q) => q.nested(),
        }
    }
}

/// Where a time was observed: geocentric x, y, z.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    /// x.
    pub x: Coordinate,
    /// y.
    pub y: Coordinate,
    /// z.
    pub z: Coordinate,
    /// Other keys (`unit` for plain numbers, or geodetic `lon`/`lat`/`h`), as they were.
    pub extra: Vec<(Node, Node)>,
}

/// The value of a time.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeValue {
    /// A string (`2000-12-31T13:05:27.737`, `B2000.0`, `2001:003:04:05:06.789`).
    Text(String),
    /// Nested lists of strings, as written.
    Texts(Node),
    /// A number in `format` (`2000.0` as `jyear`).
    Number(Number),
    /// An array of numbers in `format`.
    Array(Box<Array>),
}

/// `time/time-1.x`: an instant or an array of them, in either the short form (just the
/// value) or the object form with format, scale and location.
#[derive(Debug, Clone, PartialEq)]
pub struct Time {
    /// The value.
    pub value: TimeValue,
    /// The format of the value (`jyear`, `mjd`, `iso`, ...).
    pub format: Option<String>,
    /// The format the time was created with (astropy's), if given.
    pub base_format: Option<String>,
    /// The time scale (`utc`, `tai`, `tdb`, ...).
    pub scale: Option<String>,
    /// Digits of precision for output.
    pub precision: Option<i64>,
    /// Sub-formats for input and output.
    pub in_subfmt: Option<String>,
    /// See `in_subfmt`.
    pub out_subfmt: Option<String>,
    /// Where it was observed.
    pub location: Option<Location>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
    /// True for the short form (the value alone, a string or list of strings).
    pub short: bool,
}

const TIME_KEYS: [&str; 8] = [
    "value",
    "format",
    "base_format",
    "scale",
    "precision",
    "in_subfmt",
    "out_subfmt",
    "location",
];

fn time_value(v: &Node) -> Result<TimeValue, TypedError> {
    if v.tag.as_deref().is_some_and(crate::ndarray::is_ndarray_tag) {
        return Array::from_node(v, Time::NAME, "value").map(|a| TimeValue::Array(Box::new(a)));
    }
    match &v.kind {
        NodeKind::Sequence(_) => Ok(TimeValue::Texts(v.clone())),
        NodeKind::Scalar(s) => match s.value {
            Value::Int(i) => Ok(TimeValue::Number(Number::Int(i))),
            Value::Float(f) => Ok(TimeValue::Number(Number::Float(f))),
            _ => Ok(TimeValue::Text(s.text.to_string())),
        },
        _ => Err(TypedError::Type {
            tag: Time::NAME,
            key: "value",
            expected: "a time string, a list of them, a number or an ndarray",
        }),
    }
}

impl Typed for Time {
    const NAME: &'static str = "time/time";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        if !matches!(n.kind, NodeKind::Mapping(_)) {
            let mut plain = n.clone();
            plain.tag = None;
            return Ok(Time {
                value: time_value(&plain)?,
                format: None,
                base_format: None,
                scale: None,
                precision: None,
                in_subfmt: None,
                out_subfmt: None,
                location: None,
                extra: Vec::new(),
                short: true,
            });
        }
        let o = Obj::new(Self::NAME, n)?;
        let value = time_value(o.get("value").ok_or(TypedError::Missing {
            tag: Self::NAME,
            key: "value",
        })?)?;
        let location = match o.get("location") {
            None => None,
            Some(l) => {
                let lo = Obj::new(Self::NAME, l)?;
                let c = |k: &'static str| {
                    lo.get(k)
                        .ok_or(TypedError::Missing {
                            tag: Self::NAME,
                            key: k,
                        })
                        .and_then(|n| Coordinate::from_node(n, k))
                };
                Some(Location {
                    x: c("x")?,
                    y: c("y")?,
                    z: c("z")?,
                    extra: lo.extra(&["x", "y", "z"]),
                })
            }
        };
        let precision = match o.get("precision") {
            None => None,
            Some(p) => Some(p.as_i64().ok_or(TypedError::Type {
                tag: Self::NAME,
                key: "precision",
                expected: "an integer",
            })?),
        };
        Ok(Time {
            value,
            format: o.opt_str("format")?,
            base_format: o.opt_str("base_format")?,
            scale: o.opt_str("scale")?,
            precision,
            in_subfmt: o.opt_str("in_subfmt")?,
            out_subfmt: o.opt_str("out_subfmt")?,
            location,
            extra: o.extra(&TIME_KEYS),
            short: false,
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let value = match &self.value {
            TimeValue::Text(s) => Node::str(s),
            TimeValue::Texts(n) => n.clone(),
            TimeValue::Number(x) => x.to_node(),
            TimeValue::Array(a) => a.to_node(),
        };
        if self.short {
            return tagged(value, Some(tag));
        }
        let location = self.location.as_ref().map(|l| {
            object(
                "",
                vec![
                    ("x", Some(l.x.to_node())),
                    ("y", Some(l.y.to_node())),
                    ("z", Some(l.z.to_node())),
                ],
                &l.extra,
            )
        });
        object(
            tag,
            vec![
                ("value", Some(value)),
                ("format", self.format.as_deref().map(Node::str)),
                ("base_format", self.base_format.as_deref().map(Node::str)),
                ("scale", self.scale.as_deref().map(Node::str)),
                ("precision", self.precision.map(Node::int)),
                ("in_subfmt", self.in_subfmt.as_deref().map(Node::str)),
                ("out_subfmt", self.out_subfmt.as_deref().map(Node::str)),
                ("location", location),
            ],
            &self.extra,
        )
    }
}

/// The value of a FITS header card.
#[derive(Debug, Clone, PartialEq)]
pub enum CardValue {
    /// A string.
    Text(String),
    /// A number.
    Number(Number),
    /// A logical.
    Bool(bool),
}

/// One header card: `[KEYWORD, value, comment]`, any of them absent (`[]` is a blank card).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Card {
    /// The keyword (up to 8 characters), if present.
    pub keyword: Option<String>,
    /// The value, if present.
    pub value: Option<CardValue>,
    /// The comment, if present.
    pub comment: Option<String>,
}

/// The data of an HDU.
#[derive(Debug, Clone, PartialEq)]
pub enum HduData {
    /// An image (ndarray).
    Array(Array),
    /// A table (`table/table`), with its tag.
    Table(AstroTable, String),
    /// `data: null`.
    Null,
}

/// One header-data unit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hdu {
    /// The header cards, in order.
    pub header: Vec<Card>,
    /// The data, if the HDU has a `data` key.
    pub data: Option<HduData>,
}

/// `fits/fits-1.x`: a FITS file as a list of HDUs, with header cards and data as ndarrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fits(pub Vec<Hdu>);

fn card_from(n: &Node) -> Result<Card, TypedError> {
    let bad = TypedError::Type {
        tag: Fits::NAME,
        key: "header",
        expected: "cards of up to 3 items: [keyword, value, comment]",
    };
    let items = &n.as_sequence().ok_or(bad.clone())?.items;
    if items.len() > 3 {
        return Err(bad);
    }
    let text = |n: &Node| n.as_scalar().map(|s| s.text.to_string());
    let value = match items.get(1) {
        None => None,
        Some(v) => Some(match v.as_scalar().map(|s| &s.value) {
            Some(Value::Bool(b)) => CardValue::Bool(*b),
            Some(Value::Int(_) | Value::Float(_)) => CardValue::Number(Number::from_node(v).ok_or(bad.clone())?),
            Some(_) => CardValue::Text(text(v).unwrap_or_default()),
            None => return Err(bad),
        }),
    };
    Ok(Card {
        keyword: items.first().map(|k| text(k).ok_or(bad.clone())).transpose()?,
        value,
        comment: items.get(2).map(|c| text(c).ok_or(bad.clone())).transpose()?,
    })
}

fn card_node(c: &Card) -> Node {
    let mut items = Vec::new();
    if let Some(k) = &c.keyword {
        items.push(Node::str(k));
    }
    if let Some(v) = &c.value {
        items.push(match v {
            CardValue::Text(s) => Node::str(s),
            CardValue::Number(x) => x.to_node(),
            CardValue::Bool(b) => Node::bool(*b),
        });
    }
    if let Some(cm) = &c.comment {
        items.push(Node::str(cm));
    }
    Node::seq(items)
}

impl Typed for Fits {
    const NAME: &'static str = "fits/fits";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let hdus = n.as_sequence().ok_or(TypedError::Kind {
            tag: Self::NAME,
            expected: "a list of HDUs",
        })?;
        let mut out = Vec::with_capacity(hdus.items.len());
        for h in &hdus.items {
            let o = Obj::new(Self::NAME, h)?;
            let header = o
                .get("header")
                .ok_or(TypedError::Missing {
                    tag: Self::NAME,
                    key: "header",
                })?
                .as_sequence()
                .ok_or(TypedError::Type {
                    tag: Self::NAME,
                    key: "header",
                    expected: "a list of cards",
                })?
                .items
                .iter()
                .map(card_from)
                .collect::<Result<_, _>>()?;
            let data = match o.get("data") {
                None => None,
                Some(d) if d.is_null() => Some(HduData::Null),
                Some(d) if d.tag.as_deref().is_some_and(|t| t.contains("/table/table-")) => Some(HduData::Table(
                    AstroTable::from_node(d)?,
                    d.tag.as_deref().map(str::to_owned).unwrap_or_default(),
                )),
                Some(d) => Some(HduData::Array(Array::from_node(d, Self::NAME, "data")?)),
            };
            out.push(Hdu { header, data });
        }
        Ok(Fits(out))
    }

    fn to_node(&self, tag: &str) -> Node {
        let hdus = self
            .0
            .iter()
            .map(|h| {
                let data = h.data.as_ref().map(|d| match d {
                    HduData::Array(a) => a.to_node(),
                    HduData::Table(t, tag) => t.to_node(tag),
                    HduData::Null => Node::null(),
                });
                object(
                    "",
                    vec![
                        ("header", Some(Node::seq(h.header.iter().map(card_node).collect()))),
                        ("data", data),
                    ],
                    &[],
                )
            })
            .collect();
        Node::seq(hdus).with_tag(tag)
    }
}
