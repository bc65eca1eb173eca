//! Reading transforms from the tree, tag by tag, as asdf-astropy and gwcs read them (the same
//! defaults where a key is left out).

use asdf::{AsdfFile, Node, NodeKind, Value};

use crate::error::Error;
use crate::model::{Interval, Kind, Op, Q, Table, Transform};
use crate::sky::{self, Projection};
use crate::units::Unit;

/// An array's values (C order), shape and unit.
pub(crate) type Values = (Vec<f64>, Vec<usize>, Option<Unit>);

/// Nesting deeper than this is refused (a pipeline of real files is a few dozen deep).
const MAX_DEPTH: usize = 256;

/// The most coordinates a transform takes or gives (gwcs's have a handful; a count beyond
/// this is refused before anything is allocated for it).
pub(crate) const MAX_AXES: usize = 64;

/// The transform tags' prefix.
const TRANSFORM: &str = "tag:stsci.edu:asdf/transform/";
/// gwcs's tags' prefix.
pub(crate) const GWCS: &str = "tag:stsci.edu:gwcs/";

/// A node of the file with its JSON pointer.
#[derive(Clone, Copy)]
pub(crate) struct At<'f> {
    pub(crate) file: &'f AsdfFile,
    pub(crate) node: &'f Node,
    pub(crate) depth: usize,
}

/// Whether a tag's version is of a major version this library knows (1.x: every version the
/// transform and gwcs schemas have had); a later one is refused, as Python asdf does not read
/// it either.
pub(crate) fn known_major(version: &str) -> bool {
    version.split('.').next() == Some("1")
}

/// Splits `tag` after `prefix` into its name and version (`shift`, `1.2.0`).
pub(crate) fn tag_parts<'t>(tag: &'t str, prefix: &str) -> Option<(&'t str, &'t str)> {
    tag.strip_prefix(prefix)?.rsplit_once('-')
}

impl<'f> At<'f> {
    pub(crate) fn new(file: &'f AsdfFile, node: &'f Node) -> At<'f> {
        At {
            file,
            node: file.document().resolve(node),
            depth: 0,
        }
    }

    pub(crate) fn tag(&self) -> &'f str {
        self.node.tag.as_deref().unwrap_or("")
    }

    /// The child `key` of a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<At<'f>> {
        self.node.get(key).map(|n| At {
            file: self.file,
            node: self.file.document().resolve(n),
            depth: self.depth + 1,
        })
    }

    /// The items of a sequence.
    pub(crate) fn items(&self) -> Option<Vec<At<'f>>> {
        let s = self.node.as_sequence()?;
        Some(
            s.items
                .iter()
                .map(|n| At {
                    file: self.file,
                    node: self.file.document().resolve(n),
                    depth: self.depth + 1,
                })
                .collect(),
        )
    }

    pub(crate) fn pointer(&self) -> String {
        self.file
            .document()
            .root
            .find(&|n| std::ptr::eq(n, self.node))
            .map(|steps| steps_to_pointer(self.file, &steps))
            .unwrap_or_default()
    }

    pub(crate) fn malformed(&self, reason: impl Into<String>) -> Error {
        let reason = reason.into();
        Error::Malformed {
            pointer: self.pointer(),
            reason: match self.node.tag.as_deref() {
                Some(t) => format!("{} ({t})", reason),
                None => reason,
            },
        }
    }

    pub(crate) fn unsupported(&self, what: impl Into<String>) -> Error {
        Error::Unsupported {
            pointer: self.pointer(),
            what: what.into(),
        }
    }

    pub(crate) fn str(&self) -> Option<&'f str> {
        match &self.node.kind {
            NodeKind::Scalar(s) if matches!(s.value, Value::Str) => Some(s.text.as_str()),
            _ => None,
        }
    }

    pub(crate) fn key_str(&self, key: &str) -> Option<&'f str> {
        self.get(key).and_then(|a| a.str())
    }

    /// A unit node (`!unit/unit-1.0.0 arcsec`, or the unit as a plain string).
    pub(crate) fn unit(&self) -> Result<Unit, Error> {
        let text = match &self.node.kind {
            NodeKind::Scalar(s) => s.text.as_str(),
            _ => return Err(self.malformed("a unit must be a string")),
        };
        Unit::parse(text).map_err(|source| Error::Unit {
            pointer: self.pointer(),
            source,
        })
    }

    fn is_quantity(&self) -> bool {
        let t = self.tag();
        t.starts_with("tag:stsci.edu:asdf/unit/quantity-") || t.starts_with("tag:astropy.org:astropy/units/quantity-")
    }

    /// A quantity's value node and unit (`None` when the node is no quantity).
    fn quantity(&self) -> Result<Option<(At<'f>, Unit)>, Error> {
        if !self.is_quantity() {
            return Ok(None);
        }
        let v = self
            .get("value")
            .ok_or_else(|| self.malformed("a quantity without a value"))?;
        let u = self
            .get("unit")
            .ok_or_else(|| self.malformed("a quantity without a unit"))?;
        Ok(Some((v, u.unit()?)))
    }

    /// A number, or a quantity of one value.
    pub(crate) fn number(&self) -> Result<Q, Error> {
        if let Some((v, u)) = self.quantity()? {
            return Ok((v.number()?.0, Some(u)));
        }
        match self.node.as_f64() {
            Some(v) => Ok((v, None)),
            None => Err(self.malformed("expected a number")),
        }
    }

    pub(crate) fn key_number(&self, key: &str, default: Option<f64>) -> Result<Q, Error> {
        match self.get(key) {
            Some(a) => a.number(),
            None => default
                .map(|d| (d, None))
                .ok_or_else(|| self.malformed(format!("`{key}` is missing"))),
        }
    }

    /// An array: nested lists, an ndarray (inline or in a block), or a quantity of one. The
    /// values in C order, the shape, the unit.
    pub(crate) fn array(&self) -> Result<Values, Error> {
        if self.depth > MAX_DEPTH {
            return Err(self.malformed("nested too deeply"));
        }
        if let Some((v, u)) = self.quantity()? {
            let (vals, shape, _) = v.array()?;
            return Ok((vals, shape, Some(u)));
        }
        let tag = self.tag();
        if tag.starts_with("tag:stsci.edu:asdf/core/ndarray-") {
            let arr = self.file.array(&self.pointer())?;
            let values = arr.values()?;
            let mut out = Vec::with_capacity(values.elements.len());
            for e in &values.elements {
                out.push(match e {
                    asdf::Element::Float(f) => *f,
                    #[allow(clippy::cast_precision_loss)]
                    asdf::Element::Int(i) => *i as f64,
                    #[allow(clippy::cast_precision_loss)]
                    asdf::Element::UInt(u) => *u as f64,
                    asdf::Element::Bool(b) => f64::from(u8::from(*b)),
                    _ => return Err(self.malformed("an array of numbers was expected")),
                });
            }
            if let Some(mask) = &values.mask {
                for (v, m) in out.iter_mut().zip(mask) {
                    if *m {
                        *v = f64::NAN;
                    }
                }
            }
            return Ok((out, values.shape, None));
        }
        if let Some(items) = self.items() {
            let mut out = Vec::new();
            let mut inner: Option<Vec<usize>> = None;
            for it in &items {
                if it.node.as_sequence().is_some() || it.tag().contains("ndarray") {
                    let (v, s, _) = it.array()?;
                    if inner.as_ref().is_some_and(|i| *i != s) {
                        return Err(self.malformed("the rows of an array differ in length"));
                    }
                    inner = Some(s);
                    out.extend(v);
                } else {
                    out.push(it.number()?.0);
                }
            }
            let mut shape = vec![items.len()];
            shape.extend(inner.unwrap_or_default());
            return Ok((out, shape, None));
        }
        let (v, u) = self.number()?;
        Ok((vec![v], Vec::new(), u))
    }

    /// A list of strings (a transform's input names).
    pub(crate) fn names(&self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(|a| a.items())
            .map(|it| it.iter().filter_map(|a| a.str().map(str::to_owned)).collect())
            .unwrap_or_default()
    }
}

fn steps_to_pointer(file: &AsdfFile, steps: &[asdf::Step]) -> String {
    let mut node = &file.document().root;
    let mut out = String::new();
    for s in steps {
        match (*s, &node.kind) {
            (asdf::Step::Item(i), NodeKind::Sequence(seq)) => {
                out.push('/');
                out.push_str(&i.to_string());
                match seq.items.get(i) {
                    Some(n) => node = n,
                    None => break,
                }
            }
            (asdf::Step::Entry(i), NodeKind::Mapping(m)) => {
                let Some((k, v)) = m.entries.get(i) else { break };
                out.push('/');
                out.push_str(&asdf::escape_pointer_token(
                    k.as_scalar().map_or("", |s| s.text.as_str()),
                ));
                node = v;
            }
            _ => break,
        }
    }
    out
}

/// The most transforms one WCS may hold (aliases can make a small file name millions).
pub(crate) const MAX_TRANSFORMS: usize = 100_000;

thread_local! {
    /// Transforms read so far for the WCS being read on this thread.
    pub(crate) static READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Reads the transform at `at`.
pub(crate) fn transform(at: At<'_>) -> Result<Transform, Error> {
    let count = READ.get() + 1;
    READ.set(count);
    if count > MAX_TRANSFORMS {
        return Err(at.malformed(format!(
            "more than {MAX_TRANSFORMS} transforms (aliases repeating one?)"
        )));
    }
    if at.depth > MAX_DEPTH {
        return Err(at.malformed("transforms nested too deeply"));
    }
    let tag = at.tag();
    if at.node.as_mapping().is_none() {
        return Err(at.malformed(format!("a transform must be a mapping (tag {tag:?})")));
    }
    let (name, family) = if let Some((n, _)) = tag_parts(tag, TRANSFORM).filter(|(_, v)| known_major(v)) {
        (n, "transform")
    } else if let Some((n, _)) = tag_parts(tag, GWCS).filter(|(_, v)| known_major(v)) {
        (n, "gwcs")
    } else {
        return Err(at.unsupported(if tag.is_empty() {
            "an untagged node where a transform belongs".to_owned()
        } else {
            format!("the transform {tag}")
        }));
    };
    for key in ["input_units_equivalencies"] {
        if at.get(key).is_some() {
            return Err(at.unsupported(format!("{tag} with {key}")));
        }
    }
    let pair = |at: &At<'_>| -> Result<(Transform, Transform), Error> {
        let f = at
            .get("forward")
            .and_then(|f| f.items())
            .ok_or_else(|| at.malformed("`forward` must list two transforms"))?;
        if f.len() != 2 {
            return Err(at.malformed("`forward` must list two transforms"));
        }
        Ok((transform(f[0])?, transform(f[1])?))
    };
    let mut quantity_params = None;
    let mut q = |x: Q| {
        let is_q = x.1.is_some();
        quantity_params = Some(quantity_params.unwrap_or(false) | is_q);
        x
    };
    let angle = |x: Q| -> Result<f64, Error> {
        match x.1 {
            None => Ok(x.0.to_radians()),
            Some(u) => u
                .factor_to(&Unit::parse("rad").unwrap_or(Unit::DEGREE))
                .map(|f| x.0 * f)
                .ok_or_else(|| at.malformed("an angle must be in units of angle")),
        }
    };
    let (kind, n_in, n_out) = match (family, name) {
        ("transform", "compose") => {
            let (a, b) = pair(&at)?;
            if a.n_out != b.n_in {
                return Err(at.malformed(format!(
                    "compose: the first gives {} coordinates, the second takes {}",
                    a.n_out, b.n_in
                )));
            }
            let (i, o) = (a.n_in, b.n_out);
            (Kind::Compose(Box::new(a), Box::new(b)), i, o)
        }
        ("transform", "concatenate") => {
            let (a, b) = pair(&at)?;
            let (i, o) = (a.n_in + b.n_in, a.n_out + b.n_out);
            if i > MAX_AXES || o > MAX_AXES {
                return Err(at.malformed(format!("a concatenation of more than {MAX_AXES} coordinates")));
            }
            (Kind::Concat(Box::new(a), Box::new(b)), i, o)
        }
        ("transform", op @ ("add" | "subtract" | "multiply" | "divide" | "power")) => {
            let (a, b) = pair(&at)?;
            if a.n_in != b.n_in || a.n_out != b.n_out {
                return Err(at.malformed(format!("{op}: the two transforms differ in inputs or outputs")));
            }
            let op = match op {
                "add" => Op::Add,
                "subtract" => Op::Sub,
                "multiply" => Op::Mul,
                "divide" => Op::Div,
                _ => Op::Pow,
            };
            let (i, o) = (a.n_in, a.n_out);
            (Kind::Arith(op, Box::new(a), Box::new(b)), i, o)
        }
        ("transform", "fix_inputs") => {
            let f = at
                .get("forward")
                .and_then(|f| f.items())
                .filter(|f| f.len() == 2)
                .ok_or_else(|| at.malformed("`forward` must hold a transform and the fixed inputs"))?;
            let model = transform(f[0])?;
            let names = f[0].names("inputs");
            let keys = f[1].get("keys").and_then(|k| k.items()).unwrap_or_default();
            let values = f[1].get("values").and_then(|k| k.items()).unwrap_or_default();
            if keys.len() != values.len() {
                return Err(at.malformed("fix_inputs: keys and values differ in length"));
            }
            let mut fixed = Vec::new();
            for (k, v) in keys.iter().zip(&values) {
                let i = match (k.node.as_i64(), k.str()) {
                    (Some(i), _) => usize::try_from(i).ok(),
                    (None, Some(s)) => names.iter().position(|n| n == s),
                    _ => None,
                }
                .filter(|i| *i < model.n_in)
                .ok_or_else(|| k.malformed("fix_inputs: a key that is not an input of the transform"))?;
                let (val, unit) = v.number()?;
                if unit.is_some() {
                    return Err(v.unsupported("fix_inputs with a quantity"));
                }
                if fixed.iter().any(|(j, _)| *j == i) {
                    return Err(k.malformed("fix_inputs: an input fixed twice"));
                }
                fixed.push((i, val));
            }
            let (i, o) = (model.n_in - fixed.len(), model.n_out);
            (Kind::FixInputs(Box::new(model), fixed), i, o)
        }
        ("transform", "remap_axes") => {
            let items = at
                .get("mapping")
                .and_then(|m| m.items())
                .ok_or_else(|| at.malformed("`mapping` must be a list"))?;
            let mut map = Vec::new();
            for it in &items {
                let i = it
                    .node
                    .as_i64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| it.unsupported("a mapping entry that is not an input index"))?;
                map.push(i);
            }
            let n = match at.get("n_inputs") {
                Some(n) => n
                    .node
                    .as_i64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| n.malformed("`n_inputs` must be a count"))?,
                None => map.iter().max().map_or(0, |m| m + 1),
            };
            if map.iter().any(|m| *m >= n) {
                return Err(at.malformed("the mapping names an input beyond n_inputs"));
            }
            if n > MAX_AXES || map.len() > MAX_AXES {
                return Err(at.malformed(format!("a mapping of more than {MAX_AXES} coordinates")));
            }
            let o = map.len();
            (Kind::Mapping(map), n, o)
        }
        ("transform", "identity") => {
            let n = match at.get("n_dims") {
                Some(n) => n
                    .node
                    .as_i64()
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(|| n.malformed("`n_dims` must be a count"))?,
                None => 1,
            };
            if n > MAX_AXES {
                return Err(at.malformed(format!("`n_dims` beyond {MAX_AXES}")));
            }
            (Kind::Identity, n, n)
        }
        ("transform", "constant") => {
            let a = q(at.key_number("value", None)?);
            let dims = at.get("dimensions").and_then(|d| d.node.as_i64()).unwrap_or(1);
            let dims = usize::try_from(dims).ok().filter(|d| (1..=2).contains(d));
            let dims = dims.ok_or_else(|| at.malformed("`dimensions` must be 1 or 2"))?;
            (Kind::Constant(a), dims, 1)
        }
        ("transform", "shift") => (Kind::Shift(q(at.key_number("offset", None)?)), 1, 1),
        ("transform", "scale") => (Kind::Scale(q(at.key_number("factor", None)?)), 1, 1),
        ("transform", "multiplyscale") => (Kind::MultiplyScale(q(at.key_number("factor", None)?)), 1, 1),
        ("transform", "linear1d") => {
            let slope = q(at.key_number("slope", Some(1.0))?);
            let intercept = q(at.key_number("intercept", Some(0.0))?);
            (Kind::Linear1d { slope, intercept }, 1, 1)
        }
        ("transform", "affine") => {
            let (m, ms, mu) = at
                .get("matrix")
                .ok_or_else(|| at.malformed("`matrix` is missing"))?
                .array()?;
            let (t, ts, tu) = match at.get("translation") {
                Some(t) => t.array()?,
                None => (vec![0.0, 0.0], vec![2], None),
            };
            if ms != [2, 2] || ts != [2] {
                return Err(at.unsupported("an affine transform other than 2-D"));
            }
            let unit = match (mu, tu) {
                (None, None) => None,
                (Some(a), Some(b)) if a.factor_to(&b) == Some(1.0) => Some(b),
                _ => return Err(at.malformed("matrix and translation must both have the same unit, or none")),
            };
            quantity_params = Some(unit.is_some());
            (
                Kind::Affine {
                    m: [m[0], m[1], m[2], m[3]],
                    t: [t[0], t[1]],
                    unit,
                },
                2,
                2,
            )
        }
        ("transform", "rotate2d") => {
            let a = q(at.key_number("angle", Some(0.0))?);
            (Kind::Rotate2d(angle(a)?), 2, 2)
        }
        ("transform", "polynomial") => polynomial(&at, &mut quantity_params)?,
        ("transform", "rotate3d") => {
            let phi = angle(q(at.key_number("phi", None)?))?;
            let theta = angle(q(at.key_number("theta", None)?))?;
            let psi = angle(q(at.key_number("psi", None)?))?;
            let dir = at.key_str("direction").unwrap_or("native2celestial");
            let half = std::f64::consts::FRAC_PI_2;
            let kind = match dir {
                "native2celestial" => Kind::Euler {
                    m: sky::sequence(&[psi - half, -(half - theta), -(half + phi)], b"zxz"),
                    wrap: true,
                },
                "celestial2native" => Kind::Euler {
                    m: sky::sequence(&[half + phi, half - theta, -(psi - half)], b"zxz"),
                    wrap: true,
                },
                axes if axes.len() == 3 && axes.bytes().all(|c| b"xyz".contains(&c)) => Kind::Euler {
                    m: sky::sequence(&[phi, theta, psi], axes.as_bytes()),
                    wrap: false,
                },
                other => return Err(at.malformed(format!("rotate3d: unknown direction {other:?}"))),
            };
            (kind, 2, 2)
        }
        ("transform", "rotate_sequence_3d") => {
            let (angles, _, u) = at
                .get("angles")
                .ok_or_else(|| at.malformed("`angles` is missing"))?
                .array()?;
            quantity_params = Some(u.is_some());
            let f = match u {
                None => std::f64::consts::PI / 180.0,
                Some(u) => u
                    .factor_to(&Unit::DEGREE)
                    .map(|f| f * std::f64::consts::PI / 180.0)
                    .ok_or_else(|| at.malformed("angles must be in units of angle"))?,
            };
            let angles: Vec<f64> = angles.iter().map(|a| a * f).collect();
            let axes = at.key_str("axes_order").unwrap_or("");
            if axes.len() != angles.len() || !axes.bytes().all(|c| b"xyz".contains(&c)) {
                return Err(at.malformed("axes_order must name one axis (x, y, z) per angle"));
            }
            let m = sky::sequence(&angles, axes.as_bytes());
            match at.key_str("rotation_type").unwrap_or("cartesian") {
                "cartesian" => (Kind::RotSeq { m, spherical: false }, 3, 3),
                "spherical" => (Kind::RotSeq { m, spherical: true }, 2, 2),
                other => return Err(at.malformed(format!("unknown rotation_type {other:?}"))),
            }
        }
        ("transform", proj) if projection(&at, proj)?.is_some() => {
            let p = projection(&at, proj)?.ok_or_else(|| at.unsupported(tag))?;
            let pix2sky = match at.key_str("direction").unwrap_or("pix2sky") {
                "pix2sky" => true,
                "sky2pix" => false,
                other => return Err(at.malformed(format!("unknown projection direction {other:?}"))),
            };
            quantity_params = match proj {
                "gnomonic"
                | "zenithal_equidistant"
                | "stereographic"
                | "zenithal_equal_area"
                | "plate_carree"
                | "mercator"
                | "sanson_flamsteed"
                | "hammer_aitoff" => None,
                _ => Some(false),
            };
            (Kind::Proj { p, pix2sky }, 2, 2)
        }
        ("transform", "tabular") => tabular(&at)?,
        ("gwcs", "spherical_cartesian") => {
            let wrap = at.get("wrap_lon_at").and_then(|w| w.node.as_i64()).unwrap_or(360);
            let wrap180 = match wrap {
                180 => true,
                360 => false,
                _ => return Err(at.malformed("wrap_lon_at must be 180 or 360")),
            };
            match at.key_str("transform_type").unwrap_or("spherical_to_cartesian") {
                "spherical_to_cartesian" => (Kind::SphToCart { wrap180 }, 2, 3),
                "cartesian_to_spherical" => (Kind::CartToSph { wrap180 }, 3, 2),
                other => return Err(at.malformed(format!("unknown transform_type {other:?}"))),
            }
        }
        _ => return Err(at.unsupported(format!("the transform {tag}"))),
    };
    let mut t = Transform {
        kind,
        n_in,
        n_out,
        inverse: None,
        bbox: None,
        pointer: at.pointer(),
        tag: tag.to_owned(),
        quantity_params,
    };
    if let Some(inv) = at.get("inverse") {
        // Not checked against the transform here: astropy accepts any inverse (gwcs's MIRI LRS
        // file gives a mapping of 2 to 4 coordinates the identity of 2 as its inverse); one
        // that does not fit is an error where it is used. One that cannot be read is an error
        // only when the inverse is asked for (gwcs evaluates the forward direction).
        t.inverse = Some(match transform(inv) {
            Ok(i) => Ok(Box::new(i)),
            Err(e) => Err(crate::model::BadInverse {
                pointer: inv.pointer(),
                unsupported: matches!(e, Error::Unsupported { .. }),
                message: e.to_string(),
            }),
        });
    }
    if let Some(bb) = at.get("bounding_box") {
        t.bbox = Some(bounding_box(&bb, &at, n_in)?);
    }
    Ok(t)
}

fn polynomial(at: &At<'_>, quantity_params: &mut Option<bool>) -> Result<(Kind, usize, usize), Error> {
    let (c, shape, u) = at
        .get("coefficients")
        .ok_or_else(|| at.malformed("`coefficients` is missing"))?
        .array()?;
    if u.is_some() {
        return Err(at.unsupported("a polynomial with coefficients in units"));
    }
    *quantity_params = Some(false);
    let interval = |a: Option<At<'_>>| -> Result<Option<(f64, f64)>, Error> {
        match a {
            None => Ok(None),
            Some(a) if a.node.is_null() => Ok(None),
            Some(a) => {
                let (v, s, _) = a.array()?;
                if s != [2] {
                    return Err(a.malformed("a domain or window must be two numbers"));
                }
                Ok(Some((v[0], v[1])))
            }
        }
    };
    let map = |domain: Option<(f64, f64)>, window: Option<(f64, f64)>| {
        domain.map(|d| {
            let w = window.unwrap_or((-1.0, 1.0));
            let scl = (w.1 - w.0) / (d.1 - d.0);
            let off = (w.0 * d.1 - w.1 * d.0) / (d.1 - d.0);
            (off, scl)
        })
    };
    match shape.len() {
        1 => {
            let d = interval(at.get("domain"))?;
            let w = interval(at.get("window"))?;
            Ok((Kind::Poly1d { c, map: map(d, w) }, 1, 1))
        }
        2 => {
            if shape[0] != shape[1] || shape[0] == 0 {
                return Err(at.malformed("2-D coefficients must be an (n+1) x (n+1) matrix"));
            }
            let pairs = |key: &str| -> Result<[Option<(f64, f64)>; 2], Error> {
                match at.get(key).and_then(|a| a.items()) {
                    None => Ok([None, None]),
                    Some(items) if items.len() == 2 => Ok([interval(Some(items[0]))?, interval(Some(items[1]))?]),
                    Some(_) => Err(at.malformed(format!("`{key}` must hold the x and the y interval"))),
                }
            };
            let [xd, yd] = pairs("domain")?;
            let [xw, yw] = pairs("window")?;
            Ok((
                Kind::Poly2d {
                    degree: shape[0] - 1,
                    c,
                    xmap: map(xd, xw),
                    ymap: map(yd, yw),
                },
                2,
                1,
            ))
        }
        _ => Err(at.unsupported("a polynomial of more than two inputs")),
    }
}

/// The projection a tag names, when it is one evaluated (`None` for other tags; a projection
/// not evaluated is refused by name).
fn projection(at: &At<'_>, name: &str) -> Result<Option<Projection>, Error> {
    Ok(Some(match name {
        "gnomonic" => Projection::Tan,
        "zenithal_equidistant" => Projection::Arc,
        "stereographic" => Projection::Stg,
        "zenithal_equal_area" => Projection::Zea,
        "plate_carree" => Projection::Car,
        "mercator" => Projection::Mer,
        "sanson_flamsteed" => Projection::Sfl,
        "hammer_aitoff" => Projection::Ait,
        "slant_orthographic" => {
            let xi = at.key_number("xi", Some(0.0))?.0;
            let eta = at.key_number("eta", Some(0.0))?.0;
            if xi != 0.0 || eta != 0.0 {
                return Err(at.unsupported("slant_orthographic (SIN) with xi or eta other than 0"));
            }
            Projection::Sin
        }
        "cylindrical_equal_area" => {
            // asdf-astropy writes astropy's parameter name, `lam`; the schema names it `lambda`.
            let lambda = match at.get("lam") {
                Some(_) => at.key_number("lam", None)?.0,
                None => at.key_number("lambda", Some(1.0))?.0,
            };
            if lambda == 0.0 {
                return Err(at.malformed("cylindrical_equal_area: lambda must not be 0"));
            }
            Projection::Cea { lambda }
        }
        "zenithal_perspective"
        | "slant_zenithal_perspective"
        | "airy"
        | "cylindrical_perspective"
        | "parabolic"
        | "molleweide"
        | "conic_perspective"
        | "conic_equal_area"
        | "conic_equidistant"
        | "conic_orthomorphic"
        | "bonne_equal_area"
        | "polyconic"
        | "tangential_spherical_cube"
        | "cobe_quad_spherical_cube"
        | "quad_spherical_cube"
        | "healpix"
        | "healpix_polar" => {
            return Err(at.unsupported(format!("the projection {}", at.tag())));
        }
        _ => return Ok(None),
    }))
}

fn tabular(at: &At<'_>) -> Result<(Kind, usize, usize), Error> {
    let (values, shape, values_unit) = at
        .get("lookup_table")
        .ok_or_else(|| at.malformed("`lookup_table` is missing"))?
        .array()?;
    if shape.is_empty() || shape.len() > 2 {
        return Err(at.unsupported("a table of more than two dimensions"));
    }
    if shape.contains(&0) {
        return Err(at.malformed("an empty table"));
    }
    let mut points = Vec::new();
    let mut points_unit = None;
    match at.get("points").and_then(|p| p.items()) {
        Some(items) => {
            if items.len() != shape.len() {
                return Err(at.malformed("`points` must hold one grid per table dimension"));
            }
            for (k, it) in items.iter().enumerate() {
                let (p, s, u) = it.array()?;
                if s.len() != 1 || s[0] != shape[k] {
                    return Err(it.malformed("a grid's length differs from the table's"));
                }
                if k > 0 && u.map(|u| u.dims) != points_unit.map(|u: Unit| u.dims) {
                    return Err(it.unsupported("a table whose grids differ in unit"));
                }
                points_unit = u;
                points.push(p);
            }
        }
        None => {
            for n in &shape {
                #[allow(clippy::cast_precision_loss)]
                points.push((0..*n).map(|i| i as f64).collect());
            }
        }
    }
    // scipy takes strictly ascending grids (a descending one is flipped, values with it).
    let mut values = values;
    for (d, grid) in points.iter_mut().enumerate() {
        if grid.len() > 1 && grid.windows(2).all(|w| w[1] < w[0]) {
            grid.reverse();
            values = flip_axis(&values, &shape, d);
        } else if !grid.windows(2).all(|w| w[1] > w[0]) {
            return Err(at.malformed("a grid of `points` must be strictly ascending or descending"));
        }
    }
    let nearest = match at.key_str("method").unwrap_or("linear") {
        "linear" => false,
        "nearest" => true,
        other => return Err(at.unsupported(format!("tabular with method {other:?}"))),
    };
    let bounds_error = at.get("bounds_error").and_then(|b| b.node.as_bool()).unwrap_or(true);
    let fill = match at.get("fill_value") {
        None => None,
        Some(f) if f.node.is_null() => None,
        Some(f) => {
            let (v, u) = f.number()?;
            match (u, values_unit) {
                (Some(u), Some(vu)) => Some(
                    v * u
                        .factor_to(&vu)
                        .ok_or_else(|| f.malformed("fill_value's unit is not the table's"))?,
                ),
                (None, _) => Some(v),
                (Some(_), None) => return Err(f.malformed("fill_value has a unit and the table none")),
            }
        }
    };
    let n = shape.len();
    Ok((
        Kind::Tabular(Box::new(Table {
            points,
            points_unit,
            values,
            values_unit,
            nearest,
            bounds_error,
            fill,
        })),
        n,
        1,
    ))
}

fn flip_axis(values: &[f64], shape: &[usize], axis: usize) -> Vec<f64> {
    if shape.len() == 1 {
        return values.iter().rev().copied().collect();
    }
    let (r, c) = (shape[0], shape[1]);
    let mut out = vec![0.0; values.len()];
    for i in 0..r {
        for j in 0..c {
            let (si, sj) = if axis == 0 { (r - 1 - i, j) } else { (i, c - 1 - j) };
            out[i * c + j] = values[si * c + sj];
        }
    }
    out
}

/// A bounding box: the tagged form (intervals by input name) or the older list (C order).
fn bounding_box(bb: &At<'_>, t: &At<'_>, n_in: usize) -> Result<Vec<Option<Interval>>, Error> {
    let interval = |a: &At<'_>| -> Result<Interval, Error> {
        let items = a
            .items()
            .filter(|i| i.len() == 2)
            .ok_or_else(|| a.malformed("an interval must be two numbers"))?;
        let lo = items[0].number()?.0;
        let hi = items[1].number()?.0;
        Ok((lo, hi))
    };
    let tag = bb.tag();
    if tag.starts_with("tag:stsci.edu:asdf/transform/property/bounding_box-") {
        let intervals = bb
            .get("intervals")
            .ok_or_else(|| bb.malformed("a bounding box without intervals"))?;
        let m = intervals
            .node
            .as_mapping()
            .ok_or_else(|| intervals.malformed("intervals must be a mapping"))?;
        let names = t.names("inputs");
        let defaults: Vec<String> = if n_in == 1 {
            vec!["x".into()]
        } else if n_in == 2 && names.is_empty() {
            vec!["x".into(), "y".into()]
        } else {
            (0..n_in).map(|i| format!("x{i}")).collect()
        };
        let names = if names.len() == n_in { names } else { defaults };
        match bb.key_str("order") {
            None | Some("F" | "C") => {}
            Some(o) => return Err(bb.malformed(format!("a bounding box's order must be F or C, not {o:?}"))),
        }
        let ignored: Vec<String> = bb.names("ignore");
        for i in &ignored {
            if !names.contains(i) {
                return Err(bb.malformed(format!(
                    "the bounding box ignores {i:?}, which is no input of the transform"
                )));
            }
            if intervals.get(i).is_some() {
                return Err(bb.malformed(format!("the bounding box both ignores {i:?} and gives it an interval")));
            }
        }
        let mut out = vec![None; n_in];
        let mut unplaced = Vec::new();
        for (k, _) in &m.entries {
            let key = k.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
            let Some(v) = intervals.get(&key) else { continue };
            let iv = interval(&v)?;
            match names.iter().position(|n| *n == key) {
                Some(i) => out[i] = Some(iv),
                None => unplaced.push(iv),
            }
        }
        if !unplaced.is_empty() {
            return Err(bb.malformed("a bounding box interval names no input of the transform"));
        }
        if let Some((i, _)) = out
            .iter()
            .enumerate()
            .find(|(i, iv)| iv.is_none() && !ignored.contains(&names[*i]))
        {
            return Err(bb.malformed(format!("the bounding box gives no interval for input {:?}", names[i])));
        }
        return Ok(out);
    }
    if !tag.is_empty() {
        return Err(bb.unsupported(format!("the bounding box {tag}")));
    }
    let items = bb
        .items()
        .ok_or_else(|| bb.malformed("a bounding box must be a list of intervals"))?;
    if n_in == 1 && items.len() == 2 && items[0].node.as_sequence().is_none() {
        return Ok(vec![Some(interval(bb)?)]);
    }
    if items.len() != n_in {
        return Err(bb.malformed("the bounding box must hold one interval per input"));
    }
    // The older form lists the intervals in C order: the last input first.
    let mut out = Vec::with_capacity(n_in);
    for it in items.iter().rev() {
        out.push(Some(interval(it)?));
    }
    Ok(out)
}

/// The pointers of the nodes tagged as a gwcs WCS.
pub(crate) fn wcs_pointers(file: &AsdfFile) -> Vec<String> {
    let root = &file.document().root;
    let mut out = Vec::new();
    root.walk_with(&mut |path, n| {
        if n.tag
            .as_deref()
            .and_then(|t| tag_parts(t, GWCS))
            .is_some_and(|(name, _)| name == "wcs")
        {
            out.push(steps_to_pointer(file, path));
            return asdf::Visit::SkipChildren;
        }
        asdf::Visit::Continue
    });
    out
}
