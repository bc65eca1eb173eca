//! Typed values of the core tags whose content is plain YAML: `core/software`,
//! `core/history_entry`, `core/extension_metadata`, `core/externalarray`, `core/constant`,
//! `core/subclass_metadata`, `unit/unit` and `unit/defunit`.
//!
//! Every type keeps the keys it does not model in `extra` (the schemas allow them), so
//! node -> typed -> node gives an equivalent node. [`Typed::to_node`] writes keys in sorted
//! order, as Python asdf writes these objects.
//!
//! ```
//! use asdf_core_types::typed::{Software, Typed};
//! let tag = "tag:stsci.edu:asdf/core/software-1.0.0";
//! let s = Software { name: "asdf-rs".into(), version: "0.1.0".into(), tag: Some(tag.into()), ..Software::default() };
//! let n = s.to_node(tag);
//! assert_eq!(Software::from_node(&n)?, s);
//! # Ok::<(), asdf_core_types::typed::TypedError>(())
//! ```

use asdf_yaml::{Node, NodeKind, Value};

/// A node that does not have the shape its tag requires.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypedError {
    /// The node is tagged with another tag than the type reads.
    #[error("tagged {have}, not {want}")]
    Tag {
        /// The type's tag name (`unit/quantity`).
        want: &'static str,
        /// The node's tag.
        have: String,
    },
    /// The node is not the kind of node the tag needs.
    #[error("{tag}: expected {expected}")]
    Kind {
        /// The tag's name (`core/software`).
        tag: &'static str,
        /// What was expected.
        expected: &'static str,
    },
    /// A required key is missing.
    #[error("{tag}: `{key}` is required")]
    Missing {
        /// The tag's name.
        tag: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A key holds the wrong kind of value.
    #[error("{tag}: `{key}` must be {expected}")]
    Type {
        /// The tag's name.
        tag: &'static str,
        /// The key.
        key: &'static str,
        /// What was expected.
        expected: &'static str,
    },
}

/// Whether the full tag `tag` (`tag:stsci.edu:asdf/unit/quantity-1.1.0`) is a version of the
/// tag named `name` (`unit/quantity`).
#[must_use]
pub fn tag_names(tag: &str, name: &str) -> bool {
    let base = tag.rsplit_once('-').map_or(tag, |(b, _)| b);
    base.strip_suffix(name)
        .is_some_and(|head| head.ends_with('/') || head.ends_with(':'))
}

/// A typed value of one tag.
pub trait Typed: Sized {
    /// The tag's name without prefix and version (`core/software`).
    const NAME: &'static str;

    /// Reads the value from its node (the tag itself is not checked).
    ///
    /// # Errors
    /// [`TypedError`] naming the key at fault.
    fn from_node(n: &Node) -> Result<Self, TypedError>;

    /// The node for this value, tagged `tag` (the full tag of the version to write).
    fn to_node(&self, tag: &str) -> Node;
}

/// Keys of a mapping node, read for one tag.
pub(crate) struct Obj<'a> {
    tag: &'static str,
    entries: &'a [(Node, Node)],
}

impl<'a> Obj<'a> {
    pub(crate) fn new(tag: &'static str, n: &'a Node) -> Result<Self, TypedError> {
        match &n.kind {
            NodeKind::Mapping(m) => Ok(Obj {
                tag,
                entries: &m.entries,
            }),
            _ => Err(TypedError::Kind {
                tag,
                expected: "a mapping",
            }),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    pub(crate) fn opt_str(&self, key: &'static str) -> Result<Option<String>, TypedError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_scalar() {
                Some(s) if matches!(s.value, Value::Str | Value::Timestamp) => Ok(Some(s.text.to_string())),
                _ => Err(TypedError::Type {
                    tag: self.tag,
                    key,
                    expected: "a string",
                }),
            },
        }
    }

    pub(crate) fn str(&self, key: &'static str) -> Result<String, TypedError> {
        self.opt_str(key)?.ok_or(TypedError::Missing { tag: self.tag, key })
    }

    fn opt<T: Typed>(&self, key: &'static str) -> Result<Option<T>, TypedError> {
        self.get(key).map(T::from_node).transpose()
    }

    /// Every entry whose key is not one of `known`.
    pub(crate) fn extra(&self, known: &[&str]) -> Vec<(Node, Node)> {
        self.entries
            .iter()
            .filter(|(k, _)| !k.as_str().is_some_and(|k| known.contains(&k)))
            .cloned()
            .collect()
    }
}

/// A mapping tagged `tag` from the modelled keys that are present and the extra entries,
/// sorted by key as Python asdf writes them.
pub(crate) fn object(tag: &str, known: Vec<(&str, Option<Node>)>, extra: &[(Node, Node)]) -> Node {
    let mut entries: Vec<(Node, Node)> = known
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (Node::str(k), v)))
        .chain(extra.iter().cloned())
        .collect();
    entries.sort_by(|(a, _), (b, _)| key_text(a).cmp(key_text(b)));
    let n = Node::map(entries);
    if tag.is_empty() { n } else { n.with_tag(tag) }
}

fn key_text(k: &Node) -> &str {
    k.as_scalar().map_or("", |s| s.text.as_str())
}

/// `core/software-1.0.0`: a program and its version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Software {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Who wrote it.
    pub author: Option<String>,
    /// Its home page (a URI).
    pub homepage: Option<String>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
    /// The tag it had when read (nested software is written with this tag, or untagged when
    /// `None`; Python asdf tags it `core/software-1.0.0`).
    pub tag: Option<String>,
}

impl Typed for Software {
    const NAME: &'static str = "core/software";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        Ok(Software {
            name: o.str("name")?,
            version: o.str("version")?,
            author: o.opt_str("author")?,
            homepage: o.opt_str("homepage")?,
            extra: o.extra(&["name", "version", "author", "homepage"]),
            tag: n.tag.as_deref().map(str::to_owned),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        object(
            tag,
            vec![
                ("name", Some(Node::str(&self.name))),
                ("version", Some(Node::str(&self.version))),
                ("author", self.author.as_deref().map(Node::str)),
                ("homepage", self.homepage.as_deref().map(Node::str)),
            ],
            &self.extra,
        )
    }
}

impl Software {
    /// The node of software inside another object: with its own tag, if it has one.
    fn nested(&self) -> Node {
        self.to_node(self.tag.as_deref().unwrap_or_default())
    }
}

/// `software` of a history entry: one program or a list.
#[derive(Debug, Clone, PartialEq)]
pub enum SoftwareList {
    /// A single mapping.
    One(Software),
    /// A list of them.
    Many(Vec<Software>),
}

/// `core/history_entry-1.0.0`: one step in a file's history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryEntry {
    /// What was done.
    pub description: String,
    /// When: the date-time node as written (Python asdf 6.0 writes `! '2024-03-01 12:30:00+00:00'`,
    /// a string with the non-specific tag, see [`HistoryEntry::time_node`]; others write a
    /// plain YAML timestamp). [`HistoryEntry::time_text`] gives its text.
    pub time: Option<Node>,
    /// With what.
    pub software: Option<SoftwareList>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Typed for HistoryEntry {
    const NAME: &'static str = "core/history_entry";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        let software = match o.get("software") {
            None => None,
            Some(s) => Some(match &s.kind {
                NodeKind::Sequence(seq) => {
                    SoftwareList::Many(seq.items.iter().map(Software::from_node).collect::<Result<_, _>>()?)
                }
                _ => SoftwareList::One(Software::from_node(s)?),
            }),
        };
        Ok(HistoryEntry {
            description: o.str("description")?,
            time: {
                o.opt_str("time")?;
                o.get("time").cloned()
            },
            software,
            extra: o.extra(&["description", "time", "software"]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let software = self.software.as_ref().map(|s| match s {
            SoftwareList::One(s) => s.nested(),
            SoftwareList::Many(v) => Node::seq(v.iter().map(Software::nested).collect()),
        });
        object(
            tag,
            vec![
                ("description", Some(Node::str(&self.description))),
                ("time", self.time.clone()),
                ("software", software),
            ],
            &self.extra,
        )
    }
}

impl HistoryEntry {
    /// The node of a date-time as Python asdf 6.0 writes it in a history entry: the text with
    /// the non-specific tag `!`, which asks for the plain resolution (a timestamp, when the
    /// text is one), as C libyaml reads it back.
    #[must_use]
    pub fn time_node(text: &str) -> Node {
        let mut n = Node::str(text).with_tag("!");
        if let asdf_yaml::NodeKind::Scalar(s) = &mut n.kind
            && let Ok(v) = asdf_yaml::resolve::resolve_plain(text)
        {
            s.value = v;
        }
        n
    }

    /// The text of `time`, if there is one.
    #[must_use]
    pub fn time_text(&self) -> Option<&str> {
        self.time.as_ref().and_then(Node::as_scalar).map(|s| s.text.as_str())
    }
}

/// `core/extension_metadata-1.0.0`: an extension used to write the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtensionMetadata {
    /// The class (in Python asdf) that implements it.
    pub extension_class: String,
    /// Its URI (`asdf://asdf-format.org/core/extensions/core-1.6.0`).
    pub extension_uri: Option<String>,
    /// The package that provides it.
    pub package: Option<Software>,
    /// The software of its manifest (Python asdf writes this).
    pub manifest_software: Option<Software>,
    /// The software that used it (Python asdf writes this).
    pub software: Option<Software>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Typed for ExtensionMetadata {
    const NAME: &'static str = "core/extension_metadata";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        Ok(ExtensionMetadata {
            extension_class: o.str("extension_class")?,
            extension_uri: o.opt_str("extension_uri")?,
            package: o.opt("package")?,
            manifest_software: o.opt("manifest_software")?,
            software: o.opt("software")?,
            extra: o.extra(&[
                "extension_class",
                "extension_uri",
                "package",
                "manifest_software",
                "software",
            ]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let sw = |s: &Option<Software>| s.as_ref().map(Software::nested);
        object(
            tag,
            vec![
                ("extension_class", Some(Node::str(&self.extension_class))),
                ("extension_uri", self.extension_uri.as_deref().map(Node::str)),
                ("package", sw(&self.package)),
                ("manifest_software", sw(&self.manifest_software)),
                ("software", sw(&self.software)),
            ],
            &self.extra,
        )
    }
}

/// `target` of an external array: an HDU index or name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An index.
    Index(i64),
    /// A name.
    Name(String),
}

/// `core/externalarray-1.0.0`: an array kept in another (non-ASDF) file.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalArray {
    /// The file's URI.
    pub fileuri: String,
    /// Which array in it.
    pub target: Target,
    /// Its datatype (as that file names it).
    pub datatype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Typed for ExternalArray {
    const NAME: &'static str = "core/externalarray";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        let bad = |key, expected| TypedError::Type {
            tag: Self::NAME,
            key,
            expected,
        };
        let target = match o.get("target").map(|t| t.as_scalar()) {
            None => {
                return Err(TypedError::Missing {
                    tag: Self::NAME,
                    key: "target",
                });
            }
            Some(Some(s)) => match s.value {
                Value::Int(i) => Target::Index(i),
                Value::Str => Target::Name(s.text.to_string()),
                _ => return Err(bad("target", "an integer or a string")),
            },
            Some(None) => return Err(bad("target", "an integer or a string")),
        };
        let shape = o
            .get("shape")
            .ok_or(TypedError::Missing {
                tag: Self::NAME,
                key: "shape",
            })?
            .as_sequence()
            .ok_or(bad("shape", "a list of sizes"))?
            .items
            .iter()
            .map(|d| {
                d.as_i64()
                    .and_then(|d| u64::try_from(d).ok())
                    .ok_or(bad("shape", "a list of sizes"))
            })
            .collect::<Result<_, _>>()?;
        Ok(ExternalArray {
            fileuri: o.str("fileuri")?,
            target,
            datatype: o.str("datatype")?,
            shape,
            extra: o.extra(&["fileuri", "target", "datatype", "shape"]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let target = match &self.target {
            Target::Index(i) => Node::int(*i),
            Target::Name(s) => Node::str(s),
        };
        let shape = self
            .shape
            .iter()
            .map(|d| Node::int(i64::try_from(*d).unwrap_or(i64::MAX)))
            .collect();
        object(
            tag,
            vec![
                ("fileuri", Some(Node::str(&self.fileuri))),
                ("target", Some(target)),
                ("datatype", Some(Node::str(&self.datatype))),
                ("shape", Some(Node::seq(shape))),
            ],
            &self.extra,
        )
    }
}

/// `core/constant-1.0.0`: a value that does not change (any YAML).
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// The value.
    pub value: Node,
}

impl Typed for Constant {
    const NAME: &'static str = "core/constant";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let mut value = n.clone();
        value.tag = None;
        Ok(Constant { value })
    }

    fn to_node(&self, tag: &str) -> Node {
        self.value.clone().with_tag(tag)
    }
}

/// `core/subclass_metadata-1.0.0`: the name of a subclass written with its parent's tag.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubclassMetadata {
    /// The subclass's name.
    pub name: String,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Typed for SubclassMetadata {
    const NAME: &'static str = "core/subclass_metadata";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        Ok(SubclassMetadata {
            name: o.str("name")?,
            extra: o.extra(&["name"]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        object(tag, vec![("name", Some(Node::str(&self.name)))], &self.extra)
    }
}

/// `unit/unit-1.0.0`: a unit as a VOUnit string (`"2.1798721 10-18kg m2 s-2"`, `"m/s"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unit(pub String);

impl Typed for Unit {
    const NAME: &'static str = "unit/unit";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        match n.as_scalar() {
            Some(s) => Ok(Unit(s.text.to_string())),
            None => Err(TypedError::Kind {
                tag: Self::NAME,
                expected: "a string",
            }),
        }
    }

    fn to_node(&self, tag: &str) -> Node {
        Node::str(&self.0).with_tag(tag)
    }
}

/// `unit/defunit-1.0.0`: a new unit, by name, optionally defined by another.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defunit {
    /// Its name.
    pub name: String,
    /// What it equals (`None`: a new base unit; an explicit null is kept as such).
    pub unit: Option<Unit>,
    /// Whether `unit: null` was written (rather than left out).
    pub explicit_null: bool,
    /// Other keys, as they were.
    pub extra: Vec<(Node, Node)>,
}

impl Typed for Defunit {
    const NAME: &'static str = "unit/defunit";

    fn from_node(n: &Node) -> Result<Self, TypedError> {
        let o = Obj::new(Self::NAME, n)?;
        let u = o.get("unit");
        let null = u.and_then(Node::as_scalar).is_some_and(|s| s.value == Value::Null);
        Ok(Defunit {
            name: o.str("name")?,
            unit: match u {
                Some(u) if !null => Some(Unit::from_node(u)?),
                _ => None,
            },
            explicit_null: null,
            extra: o.extra(&["name", "unit"]),
        })
    }

    fn to_node(&self, tag: &str) -> Node {
        let unit = match (&self.unit, self.explicit_null) {
            (Some(u), _) => Some(u.to_node("tag:stsci.edu:asdf/unit/unit-1.0.0")),
            (None, true) => Some(Node::null()),
            (None, false) => None,
        };
        object(
            tag,
            vec![("name", Some(Node::str(&self.name))), ("unit", unit)],
            &self.extra,
        )
    }
}
