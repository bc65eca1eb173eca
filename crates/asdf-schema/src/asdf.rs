//! The ASDF Standard's schemas and manifests (embedded from `schemas/`), tag -> schema
//! resolution, and tag-driven validation of a whole tree.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use asdf_yaml::{Document, Limits, Node, NodeKind, Span, parse_yaml};

use crate::error::{SchemaError, Violation};
use crate::registry::Registry;
use crate::validator::{CompileOptions, Validator};

/// What the build script found in `schemas/` (see `build.rs`).
mod embedded {
    /// A manifest the build script read.
    pub(crate) struct StaticManifest {
        pub id: &'static str,
        pub extension_uri: &'static str,
        pub standard: Option<&'static str>,
        pub standard_range: (Option<&'static str>, Option<&'static str>),
        pub tags: &'static [(&'static str, &'static str)],
    }
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// A `major.minor.patch` version of a tag, schema or standard.
pub type Version = (u32, u32, u32);

/// Parses `x.y.z`.
#[must_use]
pub fn parse_version(s: &str) -> Option<Version> {
    let mut p = s.split('.').map(|x| x.parse::<u32>().ok());
    let v = (p.next()??, p.next()??, p.next()??);
    p.next().is_none().then_some(v)
}

/// Splits a versioned URI `...name-1.2.3` into (`...name`, version).
#[must_use]
pub fn split_versioned(uri: &str) -> Option<(&str, Version)> {
    let (name, v) = uri.rsplit_once('-')?;
    Some((name, parse_version(v)?))
}

/// One tag of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagDef {
    /// `tag:stsci.edu:asdf/core/ndarray-1.1.0`
    pub tag: String,
    /// `http://stsci.edu/schemas/asdf/core/ndarray-1.1.0`
    pub schema: String,
}

/// An extension manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Its id.
    pub id: String,
    /// The extension it describes.
    pub extension_uri: String,
    /// The ASDF Standard version it belongs to (core manifests).
    pub standard: Option<Version>,
    /// The range of ASDF Standard versions it may be used with (`asdf_standard_requirement`
    /// as a mapping: `gte`, `lt`), as the astronomy manifests give it.
    pub standard_range: (Option<Version>, Option<Version>),
    /// Its tags.
    pub tags: Vec<TagDef>,
}

impl Manifest {
    fn from_node(n: &Node) -> Option<Self> {
        let s = |k: &str| n.get(k).and_then(Node::as_scalar).map(|s| s.text.to_string());
        let tags = n
            .get("tags")?
            .as_sequence()?
            .items
            .iter()
            .filter_map(|t| {
                Some(TagDef {
                    tag: t.get("tag_uri")?.as_str()?.to_owned(),
                    schema: t.get("schema_uri")?.as_str()?.to_owned(),
                })
            })
            .collect();
        Some(Manifest {
            id: s("id")?,
            extension_uri: s("extension_uri").unwrap_or_default(),
            standard: s("asdf_standard_requirement").and_then(|v| parse_version(&v)),
            standard_range: n.get("asdf_standard_requirement").map_or((None, None), |r| {
                let bound = |k: &str| r.get(k).and_then(Node::as_scalar).and_then(|s| parse_version(&s.text));
                (bound("gte"), bound("lt"))
            }),
            tags,
        })
    }

    /// Whether the manifest may be used in a file of standard `version`: its own standard,
    /// or within its range (a manifest that states neither: any).
    #[must_use]
    pub fn allows_standard(&self, version: Version) -> bool {
        match (self.standard, self.standard_range) {
            (Some(v), _) => v == version,
            (None, (gte, lt)) => gte.is_none_or(|g| version >= g) && lt.is_none_or(|l| version < l),
        }
    }
}

/// How a tag found in a file maps to a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TagResolution {
    /// The tag is known; validate with this schema.
    Known(String),
    /// A newer patch version of a known tag: validated with the latest known, silently.
    NewerPatch {
        /// Schema of the latest known version.
        schema: String,
    },
    /// A newer minor version: validated with the latest known, with a warning.
    NewerMinor {
        /// Schema of the latest known version.
        schema: String,
        /// The latest known tag.
        known: String,
    },
    /// A newer major version: an error.
    NewerMajor {
        /// The latest known tag.
        known: String,
    },
    /// A tag this build does not know (kept as is, with a warning).
    Unknown,
}

/// A problem found by [`AsdfSchemas::validate_document`] that is not a violation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TagWarning {
    /// A tag nobody registered a schema for (once per distinct tag).
    Unknown {
        /// The tag.
        tag: String,
        /// Where it first occurs.
        span: Span,
    },
    /// A newer minor version of a known tag, validated with the latest known schema.
    NewerMinor {
        /// The tag in the file.
        tag: String,
        /// The newest version this build knows.
        known: String,
    },
}

impl std::fmt::Display for TagWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TagWarning::Unknown { tag, span } => {
                write!(
                    f,
                    "{tag} is not recognized, converting to raw data structure (line {span})"
                )
            }
            TagWarning::NewerMinor { tag, known } => {
                write!(f, "{tag} is newer than {known}; validated with {known}")
            }
        }
    }
}

/// How a schema asks nodes with its tag to be written (YAML Schema `propertyOrder`,
/// `flowStyle`, `style`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteHints {
    /// Keys to write first, in this order (then the others, sorted).
    pub property_order: Vec<String>,
    /// `block` or `flow` for the node itself.
    pub flow_style: Option<String>,
    /// For strings: `inline`, `literal` or `folded`.
    pub style: Option<String>,
}

/// The outcome of validating a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Schema violations (empty: the tree is valid).
    pub violations: Vec<Violation>,
    /// Unknown or newer tags.
    pub warnings: Vec<TagWarning>,
}

impl Report {
    /// The report with its positions `lines` further down (a tree's lines as lines of the file
    /// holding it).
    #[must_use]
    pub fn shifted(mut self, lines: u64) -> Self {
        for v in &mut self.violations {
            v.span = v.span.shifted(lines);
        }
        for w in &mut self.warnings {
            if let TagWarning::Unknown { span, .. } = w {
                *span = span.shifted(lines);
            }
        }
        self
    }

    /// Whether there are no violations.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }
}

/// The standard's schemas and manifests, plus any the user added, compiled for validation.
#[derive(Debug)]
pub struct AsdfSchemas {
    registry: Registry,
    /// Whether the embedded manifests count (their tags are the static `embedded::TAGS`).
    embedded: bool,
    /// Manifests parsed at start-up or added.
    extra: Vec<Manifest>,
    /// Every manifest, embedded first, made when first asked for.
    all_manifests: std::sync::OnceLock<Vec<Manifest>>,
    /// tag -> schema over the `extra` manifests, for tags the embedded ones do not list.
    tags: BTreeMap<String, String>,
    /// Every schema compiled: made at once when schemas are added (so that errors show
    /// there), otherwise on the first call of [`AsdfSchemas::validator`].
    full: std::sync::OnceLock<Validator>,
    /// The build script's compiled table serves `full` (the embedded schemas alone): it is
    /// read when validation first needs it (`precompiled_tried`), so that an open that only
    /// checks tags never touches it.
    precompiled: bool,
    precompiled_tried: std::sync::OnceLock<()>,
    /// Until then, one validator per schema met in documents, compiled when first needed
    /// (a file uses a handful of the standard's 64 schemas).
    per_schema: std::sync::Mutex<crate::registry::UriMap<Arc<Validator>>>,
    options: CompileOptions,
    /// Files [`AsdfSchemas::add_dir`] skipped: their id was already known.
    shadowed: Vec<(std::path::PathBuf, String)>,
}

/// Removes the prose (`title`, `description`) of every schema object in a schema, and of a
/// manifest and its tag entries, leaving every normative keyword, example and default as is.
/// `schemas/` holds the standard's schemas with their prose removed this way and a short title
/// of our own added.
pub fn strip_prose(node: &mut Node) {
    let is_manifest = node.get("extension_uri").is_some() && node.get("tags").is_some();
    if is_manifest && let Some(tags) = node.get_mut("tags").and_then(Node::as_sequence_mut) {
        for t in &mut tags.items {
            if let Some(m) = t.as_mapping_mut() {
                m.entries
                    .retain(|(k, _)| !matches!(k.as_str(), Some("title" | "description")));
            }
        }
    }
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let Some(m) = n.as_mapping_mut() else {
            continue;
        };
        m.entries
            .retain(|(k, _)| !matches!(k.as_str(), Some("title" | "description")));
        for (k, v) in &mut m.entries {
            match k.as_str().unwrap_or_default() {
                "items" | "additionalItems" | "additionalProperties" | "not" | "allOf" | "anyOf" | "oneOf" => {
                    if matches!(v.kind, NodeKind::Mapping(_)) {
                        stack.push(v);
                    } else if let NodeKind::Sequence(s) = &mut v.kind {
                        stack.extend(s.items.iter_mut());
                    }
                }
                "properties" | "patternProperties" | "definitions" | "dependencies" => {
                    if let Some(mm) = v.as_mapping_mut() {
                        stack.extend(mm.entries.iter_mut().map(|(_, pv)| pv));
                    }
                }
                _ => {}
            }
        }
    }
}

/// Every embedded file: (path under `schemas/`, text).
#[must_use]
pub fn embedded_files() -> Vec<(String, &'static [u8])> {
    embedded::FILES.iter().map(|(p, t)| ((*p).to_owned(), *t)).collect()
}

/// The embedded schemas of the drafts before ASDF 1.0.0 (`schemas/legacy/`): (path, text).
#[must_use]
pub fn legacy_files() -> Vec<(String, &'static [u8])> {
    embedded::LEGACY_FILES
        .iter()
        .map(|(p, t)| ((*p).to_owned(), *t))
        .collect()
}

impl AsdfSchemas {
    /// The schemas of FINF 0.1.0 (FINF 0.1.0's era; `schemas/legacy/`), each tag mapped to the
    /// schema that declares it (FINF had no manifests): for validating a FINF tree as written,
    /// before it is mapped onto today's tags.
    ///
    /// # Errors
    /// An embedded schema that does not parse or compile (a build defect).
    pub fn finf() -> Result<Self, SchemaError> {
        let mut s = Self::empty(CompileOptions::default())?;
        let mut tags = String::new();
        for (path, text) in embedded::LEGACY_FILES {
            let doc = parse_yaml(text, &Limits::default())
                .map_err(|source| SchemaError::Parse {
                    uri: (*path).to_owned(),
                    source,
                })?
                .document;
            if let (Some(id), Some(tag)) = (
                doc.root.get("id").and_then(Node::as_str),
                doc.root.get("tag").and_then(Node::as_str),
            ) {
                tags.push_str(&format!("  - {{tag_uri: \"{tag}\", schema_uri: \"{id}\"}}\n"));
            }
            s.registry.add(None, doc.root);
        }
        let manifest = format!("id: asdf-rs://finf-0.1.0\nextension_uri: asdf-rs://finf-0.1.0\ntags:\n{tags}");
        s.add_manifest(manifest.as_bytes())?;
        Ok(s)
    }

    /// The embedded schemas and manifests, with default options.
    ///
    /// # Errors
    /// An embedded schema that does not parse or compile (a build defect).
    pub fn embedded() -> Result<Self, SchemaError> {
        Self::with_options(CompileOptions::default())
    }

    /// No schemas at all (add them with [`AsdfSchemas::add_dir`]).
    ///
    /// # Errors
    /// Never in practice (compiling nothing).
    pub fn empty(options: CompileOptions) -> Result<Self, SchemaError> {
        Ok(AsdfSchemas {
            registry: Registry::new(),
            embedded: false,
            extra: Vec::new(),
            all_manifests: std::sync::OnceLock::new(),
            tags: BTreeMap::new(),
            full: std::sync::OnceLock::from(Validator::compile(&mut Registry::new(), &[], &options)?),
            precompiled: false,
            precompiled_tried: std::sync::OnceLock::new(),
            per_schema: std::sync::Mutex::default(),
            options,
            shadowed: Vec::new(),
        })
    }

    /// The embedded schemas and manifests, compiled with `options` (for extra keywords).
    ///
    /// # Errors
    /// As [`AsdfSchemas::embedded`].
    pub fn with_options(options: CompileOptions) -> Result<Self, SchemaError> {
        // Start-up reads the build script's tables: each schema is parsed when a document or
        // a `$ref` first needs it, and the manifests' tags are a static sorted table. Only
        // files the build-time scans did not understand are parsed here (none today; the
        // tests check the scans against full parses).
        let mut registry = Registry::new();
        registry.set_static_docs(embedded::SCHEMA_IDS, embedded::FILES);
        registry.set_static_aliases(embedded::TAGS);
        let mut extra = Vec::new();
        for &file in embedded::UNSCANNED {
            let (path, text) = embedded::FILES[file];
            let doc = parse_yaml(text, &Limits::default())
                .map_err(|source| SchemaError::Parse {
                    uri: path.to_owned(),
                    source,
                })?
                .document;
            if path.contains("manifests") {
                if let Some(m) = Manifest::from_node(&doc.root) {
                    extra.push(m);
                }
            } else {
                registry.add(None, doc.root);
            }
        }
        let extra_empty = extra.is_empty();
        let mut s = AsdfSchemas {
            registry,
            embedded: true,
            extra,
            all_manifests: std::sync::OnceLock::new(),
            tags: BTreeMap::new(),
            full: std::sync::OnceLock::new(),
            // The build script compiled every embedded schema (`compiled.rs`): its table is
            // read when validation first needs it, each compiled node when validation first
            // reaches it. Without it (extra files, or options it cannot serve) the schemas
            // are compiled as documents need them.
            precompiled: extra_empty,
            precompiled_tried: std::sync::OnceLock::new(),
            per_schema: std::sync::Mutex::default(),
            options,
            shadowed: Vec::new(),
        };
        s.index();
        Ok(s)
    }

    /// Tag -> schema table and tag aliases in the registry.
    fn index(&mut self) {
        self.tags.clear();
        self.all_manifests = std::sync::OnceLock::new();
        // A tag that several manifests list (dkist's dataset-1.2.0 is in dkist-1.2.0 ... 1.6.0,
        // with two different schemas) takes the schema of the manifest with the newest version
        // in its id; at equal versions the first added wins. Python asdf takes the first
        // extension its packages register, and packages register their newest first.
        let mut from: BTreeMap<&str, Option<Version>> = BTreeMap::new();
        for m in &self.extra {
            let version = split_versioned(&m.id).map(|(_, v)| v);
            for t in &m.tags {
                if self.embedded_tag(&t.tag).is_some() {
                    continue;
                }
                let newer = match from.get(t.tag.as_str()) {
                    None => true,
                    Some(old) => version > *old,
                };
                if newer {
                    from.insert(&t.tag, version);
                    self.tags.insert(t.tag.clone(), t.schema.clone());
                }
            }
        }
        for (tag, schema) in &self.tags {
            self.registry.alias(tag, schema);
        }
    }

    /// The schema an embedded manifest gives `tag`.
    fn embedded_tag(&self, tag: &str) -> Option<&'static str> {
        if !self.embedded {
            return None;
        }
        let t = embedded::TAGS;
        t.binary_search_by(|(k, _)| (*k).cmp(tag)).ok().map(|i| t[i].1)
    }

    /// Every (tag, schema) known: the embedded manifests', then the others'.
    fn all_tags(&self) -> impl Iterator<Item = (&str, &str)> {
        let embedded: &[(&str, &str)] = if self.embedded { embedded::TAGS } else { &[] };
        embedded
            .iter()
            .copied()
            .chain(self.tags.iter().map(|(t, s)| (t.as_str(), s.as_str())))
    }

    fn all_uris(&self) -> Vec<String> {
        self.registry.schema_uris()
    }

    /// Re-indexes and compiles everything now (after schemas or manifests were added).
    fn rebuild(&mut self) -> Result<(), SchemaError> {
        self.index();
        let uris = self.all_uris();
        let refs: Vec<&str> = uris.iter().map(String::as_str).collect();
        let v = Validator::compile(&mut self.registry, &refs, &self.options)?;
        self.full = std::sync::OnceLock::from(v);
        self.precompiled = false;
        self.cache().clear();
        Ok(())
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, crate::registry::UriMap<Arc<Validator>>> {
        self.per_schema
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Validates `node` against schema `uri`: with the full validator once there is one,
    /// otherwise with that schema's own, compiled on first use.
    fn validate_with_schema(
        &self,
        uri: &str,
        node: &Node,
        doc: &Document,
        pointer: &str,
    ) -> Result<Vec<Violation>, SchemaError> {
        if let Some(v) = self.full()
            && v.has(uri)
        {
            return v.validate(uri, node, doc, pointer);
        }
        let found = self.cache().get(uri).cloned();
        let v = match found {
            Some(v) => v,
            None => {
                let v = Arc::new(Validator::compile(&mut self.registry.clone(), &[uri], &self.options)?);
                self.cache().insert(uri.to_owned(), v.clone());
                v
            }
        };
        v.validate(uri, node, doc, pointer)
    }

    /// Adds a schema (YAML text) and recompiles.
    ///
    /// # Errors
    /// The schema does not parse, or it (or what it references) does not compile.
    pub fn add_schema(&mut self, text: &[u8]) -> Result<String, SchemaError> {
        let doc = parse_yaml(text, &Limits::default())
            .map_err(|source| SchemaError::Parse {
                uri: "<added schema>".to_owned(),
                source,
            })?
            .document;
        let uri = self.registry.add(None, doc.root);
        self.rebuild()?;
        Ok(uri)
    }

    /// Adds a manifest (YAML text) mapping tags to schemas.
    ///
    /// # Errors
    /// The manifest does not parse or lacks `id`/`tags`.
    pub fn add_manifest(&mut self, text: &[u8]) -> Result<(), SchemaError> {
        let doc = parse_yaml(text, &Limits::default())
            .map_err(|source| SchemaError::Parse {
                uri: "<added manifest>".to_owned(),
                source,
            })?
            .document;
        let m = Manifest::from_node(&doc.root).ok_or(SchemaError::Invalid {
            location: "<added manifest>".to_owned(),
            problem: "a manifest needs `id` and a list of `tags` with `tag_uri` and `schema_uri`",
        })?;
        self.extra.push(m);
        self.rebuild()
    }

    /// Adds every `.yaml` schema under `dir` (recursively), and every manifest (a file with
    /// `tags` and `extension_uri`).
    ///
    /// # Errors
    /// I/O errors are reported as unresolvable; parse and compile errors as such.
    pub fn add_dir(&mut self, dir: &std::path::Path) -> Result<usize, SchemaError> {
        let mut stack = vec![dir.to_path_buf()];
        let mut docs = Vec::new();
        while let Some(d) = stack.pop() {
            let rd = std::fs::read_dir(&d).map_err(|_| SchemaError::Unresolvable {
                reference: d.display().to_string(),
                base: String::new(),
            })?;
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if !matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml" | "json")) {
                    continue;
                }
                let text = std::fs::read(&p).map_err(|_| SchemaError::Unresolvable {
                    reference: p.display().to_string(),
                    base: String::new(),
                })?;
                docs.push((p, text));
            }
        }
        self.add_documents(docs.iter().map(|(p, t)| (p.clone(), t.as_slice())))
    }

    /// Adds schema and manifest documents held in memory (a name for each, for messages: a
    /// path, or the URI a resource manager serves it under), as [`AsdfSchemas::add_dir`]
    /// adds a folder's; returns how many were added.
    ///
    /// # Errors
    /// Parse errors, naming the document.
    pub fn add_documents<'t>(
        &mut self,
        docs: impl IntoIterator<Item = (std::path::PathBuf, &'t [u8])>,
    ) -> Result<usize, SchemaError> {
        let mut n = 0;
        for (p, text) in docs {
            let doc = parse_yaml(text, &Limits::default())
                .map_err(|source| SchemaError::Parse {
                    uri: p.display().to_string(),
                    source,
                })?
                .document;
            if doc.root.get("extension_uri").is_some() && doc.root.get("tags").is_some() {
                if let Some(m) = Manifest::from_node(&doc.root) {
                    self.extra.push(m);
                }
            } else {
                // A schema claiming an id that is already known (dkist ships
                // `level_1_dataset_schema.yaml` with the id of core/asdf-1.1.0, for use as
                // a custom schema) does not replace it: skipped, and reported.
                let id = crate::registry::id_of(&doc.root).map(str::to_owned);
                if let Some(id) = id.filter(|id| self.registry.contains(id)) {
                    self.shadowed.push((p.clone(), id));
                    continue;
                }
                self.registry.add(None, doc.root);
            }
            n += 1;
        }
        // Compiled when first needed, schema by schema: a folder of an extension's ~1,400
        // schemas costs its parse, not their compilation.
        self.index();
        self.full = std::sync::OnceLock::new();
        self.precompiled = false;
        self.cache().clear();
        Ok(n)
    }

    /// Schemas that [`AsdfSchemas::add_dir`] skipped because their id was already known (the
    /// file and the id).
    #[must_use]
    pub fn shadowed(&self) -> &[(std::path::PathBuf, String)] {
        &self.shadowed
    }

    /// The manifests.
    #[must_use]
    pub fn manifests(&self) -> &[Manifest] {
        self.all_manifests.get_or_init(|| {
            let embedded: &[embedded::StaticManifest] = if self.embedded { embedded::MANIFESTS } else { &[] };
            embedded
                .iter()
                .map(|m| Manifest {
                    id: m.id.to_owned(),
                    extension_uri: m.extension_uri.to_owned(),
                    standard: m.standard.and_then(parse_version),
                    standard_range: (
                        m.standard_range.0.and_then(parse_version),
                        m.standard_range.1.and_then(parse_version),
                    ),
                    tags: m
                        .tags
                        .iter()
                        .map(|(t, s)| TagDef {
                            tag: (*t).to_owned(),
                            schema: (*s).to_owned(),
                        })
                        .collect(),
                })
                .chain(self.extra.iter().cloned())
                .collect()
        })
    }

    /// The schema registry.
    #[must_use]
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The validator of every schema when there is one yet (the build script's, read on
    /// first use).
    fn full(&self) -> Option<&Validator> {
        if self.precompiled {
            self.precompiled_tried.get_or_init(|| {
                if let Some(v) = Validator::from_bytes(embedded::COMPILED, &self.options) {
                    let _ = self.full.set(v);
                }
            });
        }
        self.full.get()
    }

    /// The validator of every schema (compiled on first call for the embedded schemas; a
    /// defect there leaves a validator that knows no schema, and
    /// `cargo xtask validate-schemas` reports it).
    #[must_use]
    pub fn validator(&self) -> &Validator {
        let _ = self.full();
        self.full.get_or_init(|| {
            let uris = self.all_uris();
            let refs: Vec<&str> = uris.iter().map(String::as_str).collect();
            Validator::compile(&mut self.registry.clone(), &refs, &self.options)
                .unwrap_or_else(|_| Validator::empty(&self.options))
        })
    }

    /// The tags the core manifest of standard `version` lists, with the tags of the astronomy
    /// manifests whose `asdf_standard_requirement` allows `version` (1.6.0 and later: before
    /// it, the core manifests list `time` and `quantity` themselves).
    #[must_use]
    pub fn tags_for_standard(&self, version: Version) -> Vec<TagDef> {
        let mut out: Vec<TagDef> = self
            .manifests()
            .iter()
            .filter(|m| {
                m.standard == Some(version)
                    || (m.standard.is_none() && m.id.contains("/astronomy/") && m.allows_standard(version))
            })
            .flat_map(|m| m.tags.iter().cloned())
            .collect();
        out.sort_by(|a, b| a.tag.cmp(&b.tag));
        out.dedup();
        out
    }

    /// How `tag` maps to a schema.
    #[must_use]
    pub fn resolve_tag(&self, tag: &str) -> TagResolution {
        if let Some(s) = self.embedded_tag(tag) {
            return TagResolution::Known(s.to_owned());
        }
        if let Some(s) = self.tags.get(tag) {
            return TagResolution::Known(s.clone());
        }
        // Naming convention for tags no manifest lists.
        if let Some(rest) = tag.strip_prefix("tag:stsci.edu:asdf/") {
            let uri = format!("http://stsci.edu/schemas/asdf/{rest}");
            if self.registry.contains(&uri) {
                return TagResolution::Known(uri);
            }
        }
        let Some((name, v)) = split_versioned(tag) else {
            return TagResolution::Unknown;
        };
        let known: Vec<(Version, &str, &str)> = self
            .all_tags()
            .filter_map(|(t, s)| {
                let (n, kv) = split_versioned(t)?;
                (n == name).then_some((kv, t, s))
            })
            .collect();
        let newest =
            |f: &dyn Fn(&Version) -> bool| known.iter().filter(|(kv, _, _)| f(kv)).max_by_key(|(kv, _, _)| *kv);
        if let Some((kv, _, schema)) = newest(&|kv| kv.0 == v.0 && kv.1 == v.1)
            && v.2 > kv.2
        {
            return TagResolution::NewerPatch {
                schema: (*schema).to_owned(),
            };
        }
        if let Some((kv, known, schema)) = newest(&|kv| kv.0 == v.0)
            && v > *kv
        {
            return TagResolution::NewerMinor {
                schema: (*schema).to_owned(),
                known: (*known).to_owned(),
            };
        }
        match newest(&|_| true) {
            Some((kv, known, _)) if v.0 > kv.0 => TagResolution::NewerMajor {
                known: (*known).to_owned(),
            },
            _ => TagResolution::Unknown,
        }
    }

    /// Fills schema defaults into `doc`, as readers of ASDF Standard < 1.6.0 are expected to
    /// (1.6.0 dropped default filling: do not call this for 1.6.0 files). The rule is Python
    /// asdf 6.0's (`schema.fill_defaults`, a validator with only `properties`, `allOf` and
    /// `items`): every node whose tag a manifest lists exactly gets, for each property its
    /// tag's schema gives a `default` (directly or through inline `allOf` members; `$ref`,
    /// `anyOf` and `oneOf` are not followed) and that the node lacks, that default; present
    /// properties (and the items of present arrays) are filled the same way from their
    /// sub-schemas. Each added key and value carries [`asdf_yaml::Span::FILLED`], so that a
    /// writer can tell the defaults from what was read or set (defaults live in memory only,
    /// as in Python asdf). Returns how many values were added.
    pub fn fill_defaults(&self, doc: &mut Document) -> usize {
        let mut added = 0;
        let mut stack: Vec<&mut Node> = vec![&mut doc.root];
        while let Some(node) = stack.pop() {
            if let Some(tag) = node.tag.as_deref()
                && let Some(schema) = self.manifest_schema(tag)
                && let Some(loc) = self.registry.lookup(&schema, &schema)
            {
                added += self.fill_node(node, &loc, 0);
            } else if let Some(tag) = node.tag.as_deref()
                && let Some(defaults) = ecosystem_defaults(tag)
                && let NodeKind::Mapping(m) = &mut node.kind
            {
                for (name, value) in defaults {
                    if m.get(name).is_none() {
                        let mut key = Node::str(*name);
                        key.span = asdf_yaml::Span::FILLED;
                        let mut value = value();
                        value.span = asdf_yaml::Span::FILLED;
                        m.entries.push((key, value));
                        added += 1;
                    }
                }
            }
            match &mut node.kind {
                NodeKind::Sequence(s) => stack.extend(s.items.iter_mut()),
                NodeKind::Mapping(m) => stack.extend(m.entries.iter_mut().map(|(_, v)| v)),
                _ => {}
            }
        }
        added
    }

    /// The schema a manifest lists for exactly `tag` (no version fallback, no naming
    /// convention): the tags Python asdf has a tag definition for.
    fn manifest_schema(&self, tag: &str) -> Option<String> {
        self.embedded_tag(tag)
            .map(str::to_owned)
            .or_else(|| self.tags.get(tag).cloned())
    }

    /// The write hints of the schema for `tag` (looked up in the schema, its `$ref` target and
    /// its `allOf`/`anyOf`/`oneOf` members; the first value found wins).
    #[must_use]
    pub fn write_hints(&self, tag: &str) -> WriteHints {
        let mut hints = WriteHints::default();
        let (TagResolution::Known(schema)
        | TagResolution::NewerPatch { schema }
        | TagResolution::NewerMinor { schema, .. }) = self.resolve_tag(tag)
        else {
            return hints;
        };
        let Some(loc) = self.registry.lookup(&schema, &schema) else {
            return hints;
        };
        let mut locs = Vec::new();
        self.applicable(&loc, 0, &mut locs);
        for l in locs {
            let Some(n) = self.registry.node(&l) else {
                continue;
            };
            if hints.property_order.is_empty()
                && let Some(order) = n.get("propertyOrder").and_then(Node::as_sequence)
            {
                hints.property_order = order
                    .items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect();
            }
            if hints.flow_style.is_none() {
                hints.flow_style = n.get("flowStyle").and_then(Node::as_str).map(str::to_owned);
            }
            if hints.style.is_none() {
                hints.style = n.get("style").and_then(Node::as_str).map(str::to_owned);
            }
        }
        hints
    }

    /// The schema nodes that apply at `loc`: itself, its `$ref` target, its `allOf` members.
    fn applicable(&self, loc: &crate::registry::Location, depth: usize, out: &mut Vec<crate::registry::Location>) {
        if depth > 16 {
            return;
        }
        let Some(n) = self.registry.node(loc) else {
            return;
        };
        if let Some(r) = n.get("$ref").and_then(Node::as_str) {
            if let Some(t) = self.registry.lookup(&self.registry.base_at(loc), r) {
                self.applicable(&t, depth + 1, out);
            }
            return;
        }
        out.push(loc.clone());
        // allOf members always apply; anyOf/oneOf members are followed too (Python asdf's old
        // default filling applied the defaults of every branch it evaluated), but only object
        // properties are filled.
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(all) = n.get(key).and_then(Node::as_sequence) {
                for i in 0..all.items.len() {
                    let mut l = loc.clone();
                    l.tokens.extend([key.to_owned(), i.to_string()]);
                    self.applicable(&l, depth + 1, out);
                }
            }
        }
    }

    /// `loc` and its inline `allOf` members, recursively: where Python asdf's default filling
    /// looks for `properties`.
    fn fill_schemas(&self, loc: &crate::registry::Location, depth: usize, out: &mut Vec<crate::registry::Location>) {
        let Some(n) = self.registry.node(loc) else {
            return;
        };
        if depth > 16 || n.get("$ref").is_some() {
            return;
        }
        out.push(loc.clone());
        if let Some(all) = n.get("allOf").and_then(Node::as_sequence) {
            for i in 0..all.items.len() {
                let mut l = loc.clone();
                l.tokens.extend(["allOf".to_owned(), i.to_string()]);
                self.fill_schemas(&l, depth + 1, out);
            }
        }
    }

    fn fill_node(&self, node: &mut Node, loc: &crate::registry::Location, depth: usize) -> usize {
        if depth > 16 {
            return 0;
        }
        let mut schemas = Vec::new();
        self.fill_schemas(loc, 0, &mut schemas);
        let mut added = 0;
        for s in schemas {
            let Some(schema) = self.registry.node(&s) else { continue };
            match &mut node.kind {
                NodeKind::Sequence(seq) => {
                    // `items` as one schema for every item (a list of schemas: item by item).
                    let Some(items) = schema.get("items") else { continue };
                    let per_item = items.as_sequence().is_some();
                    for (i, item) in seq.items.iter_mut().enumerate() {
                        let mut l = s.clone();
                        l.tokens.push("items".to_owned());
                        if per_item {
                            l.tokens.push(i.to_string());
                        }
                        added += self.fill_node(item, &l, depth + 1);
                    }
                }
                NodeKind::Mapping(m) => {
                    let Some(props) = schema.get("properties").and_then(Node::as_mapping) else {
                        continue;
                    };
                    for (k, p) in &props.entries {
                        let Some(name) = k.as_str() else { continue };
                        if m.get(name).is_none()
                            && let Some(d) = p.get("default")
                        {
                            // Marked as filled (key and value), so that writers can leave it out.
                            let mut value = d.clone();
                            value.span = asdf_yaml::Span::FILLED;
                            let mut key = Node::str(name);
                            key.span = asdf_yaml::Span::FILLED;
                            m.entries.push((key, value));
                            added += 1;
                        }
                        if let Some(child) = m.get_mut(name)
                            && matches!(child.kind, NodeKind::Mapping(_) | NodeKind::Sequence(_))
                        {
                            let mut l = s.clone();
                            l.tokens.extend(["properties".to_owned(), name.to_owned()]);
                            added += self.fill_node(child, &l, depth + 1);
                        }
                    }
                }
                _ => {}
            }
        }
        added
    }

    /// Validates every tagged node of `doc` against its tag's schema.
    #[must_use]
    pub fn validate_document(&self, doc: &Document) -> Report {
        self.walk_document(doc, true)
    }

    /// Only resolves the tags of `doc`: the warnings of [`Self::validate_document`] (unknown
    /// tags, newer minor versions) and its violations for newer major versions, with no
    /// schema validation.
    #[must_use]
    pub fn check_tags(&self, doc: &Document) -> Report {
        self.walk_document(doc, false)
    }

    fn walk_document(&self, doc: &Document, validate: bool) -> Report {
        let mut report = Report::default();
        // Made on first use (tags come from the file: randomly keyed sets).
        let mut unknown: Option<HashSet<String>> = None;
        let mut seen: Option<HashSet<(String, String, String)>> = None;
        // Aliases are not followed (their targets are validated where they are); pointers
        // are built only for tagged nodes. The tagged nodes are collected first (document
        // order), then resolved and validated.
        struct Tagged<'a>(Vec<(&'a Node, String)>);
        impl<'a> asdf_yaml::Visitor<'a> for Tagged<'a> {
            fn enter(&mut self, at: &asdf_yaml::At<'_, 'a>) -> asdf_yaml::Visit {
                let n = at.node();
                if n.tag.is_some() {
                    self.0.push((n, at.pointer()));
                }
                asdf_yaml::Visit::Continue
            }
        }
        let mut tagged = Tagged(Vec::new());
        asdf_yaml::Walker::new(asdf_yaml::Aliases::Never)
            .max_depth(usize::MAX)
            .walk(doc, &mut tagged);
        for (node, ptr) in tagged.0 {
            let Some(tag) = node.tag.as_deref() else {
                continue;
            };
            if tag == "!" || tag.starts_with(asdf_yaml::node::tags::YAML) {
                continue;
            }
            let schema = match self.resolve_tag(tag) {
                TagResolution::Known(s) | TagResolution::NewerPatch { schema: s } => s,
                TagResolution::NewerMinor { schema, known } => {
                    report.warnings.push(TagWarning::NewerMinor {
                        tag: tag.to_owned(),
                        known,
                    });
                    schema
                }
                TagResolution::NewerMajor { known } => {
                    report.violations.push(Violation {
                        instance: ptr.clone(),
                        span: node.span,
                        schema: known.clone(),
                        keyword: "tag".to_owned(),
                        message: format!("{tag} is a newer major version than {known}, which this build supports"),
                    });
                    continue;
                }
                _ => {
                    if unknown.get_or_insert_with(HashSet::new).insert(tag.to_owned()) {
                        report.warnings.push(TagWarning::Unknown {
                            tag: tag.to_owned(),
                            span: node.span,
                        });
                    }
                    continue;
                }
            };
            if !validate {
                continue;
            }
            match self.validate_with_schema(&schema, node, doc, &ptr) {
                Ok(vs) => {
                    for v in vs {
                        if seen.get_or_insert_with(HashSet::new).insert((
                            v.instance.clone(),
                            v.schema.clone(),
                            v.message.clone(),
                        )) {
                            report.violations.push(v);
                        }
                    }
                }
                Err(e) => report.violations.push(Violation {
                    instance: ptr.clone(),
                    span: node.span,
                    schema,
                    keyword: "tag".to_owned(),
                    message: e.to_string(),
                }),
            }
        }
        report
    }
}

/// The build script's compiled table of the embedded schemas.
#[cfg(test)]
pub(crate) fn embedded_compiled() -> &'static [u8] {
    embedded::COMPILED
}

/// The top-level defaults of the ecosystem's tags most often met in files of standards before
/// 1.6.0 whose schemas are not the standard's: what Python asdf 6.0's default open fills with
/// those packages installed (asdf-astropy's `table` schemas 1.0.0 to 1.3.0 give `qtable:
/// false` and `meta: {}`; DKIST datasets hold such tables). Only the top-level properties: the
/// defaults of these schemas are all there.
type DefaultValue = fn() -> Node;
fn ecosystem_defaults(tag: &str) -> Option<&'static [(&'static str, DefaultValue)]> {
    const TABLE: &[(&str, DefaultValue)] = &[("qtable", || Node::bool(false)), ("meta", || Node::map(Vec::new()))];
    matches!(
        tag,
        "tag:astropy.org:astropy/table/table-1.0.0"
            | "tag:astropy.org:astropy/table/table-1.1.0"
            | "tag:astropy.org:astropy/table/table-1.2.0"
            | "tag:astropy.org:astropy/table/table-1.3.0"
    )
    .then_some(TABLE)
}

#[cfg(test)]
mod tests;
