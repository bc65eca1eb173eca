//! Schema documents by URI, the `id`s declared inside them, and `$ref` resolution.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use asdf_yaml::{Node, NodeKind};

use crate::error::SchemaError;
use crate::uri::{join, pointer_tokens, split_fragment};

/// Loads a document the registry does not have (for `$ref`s to other schemas).
pub type Retriever = Arc<dyn Fn(&str) -> Option<Node> + Send + Sync>;

/// A place inside a document: its URI and the pointer tokens from its root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// URI of the document (no fragment).
    pub doc: String,
    /// Path from the document root.
    pub tokens: Vec<String>,
}

impl Location {
    /// `uri#/pointer`.
    #[must_use]
    pub fn display(&self) -> String {
        format!("{}#{}", self.doc, crate::uri::pointer_string(&self.tokens))
    }
}

/// A parsed document and the ids it declares.
type Parsed = (Arc<Node>, Vec<(String, Location)>);

/// Parses a document's text and lists the ids it declares (`None`: it does not parse).
fn parse_text(uri: &str, text: &[u8]) -> Option<Parsed> {
    let root = asdf_yaml::parse_yaml(text, &asdf_yaml::Limits::default())
        .ok()?
        .document
        .root;
    let ids = declared_ids(uri, &root);
    Some((Arc::new(root), ids))
}

/// A document held as YAML text until something needs it (parsed at most once, shared by
/// every clone of the registry).
struct Deferred {
    text: &'static [u8],
    /// The parsed root and the ids it declares (`None`: the text does not parse).
    parsed: OnceLock<Option<Parsed>>,
}

impl Deferred {
    fn get(&self, uri: &str) -> Option<&Parsed> {
        self.parsed.get_or_init(|| parse_text(uri, self.text)).as_ref()
    }
}

/// This crate's own schemas: a static table of (URI, index in `files`) sorted by URI, each
/// document parsed on first use. Nothing is allocated per document until then, and their
/// patterns are known to be valid (a test checks every one).
struct StaticDocs {
    ids: &'static [(&'static str, usize)],
    files: &'static [(&'static str, &'static [u8])],
    parsed: Box<[OnceLock<Option<Parsed>>]>,
}

impl StaticDocs {
    fn position(&self, uri: &str) -> Option<usize> {
        self.ids.binary_search_by(|(k, _)| (*k).cmp(uri)).ok()
    }

    fn get(&self, i: usize) -> Option<&Parsed> {
        let (uri, file) = self.ids[i];
        self.parsed[i]
            .get_or_init(|| parse_text(uri, self.files.get(file)?.1))
            .as_ref()
    }
}

/// A map keyed by schema URIs and ids: the user's and the standard's schemas, never an
/// ASDF file's contents, so a fixed hasher serves (a randomly keyed one costs a system call
/// at the first open of a process).
pub(crate) type UriMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<std::hash::DefaultHasher>>;

/// Schema documents and the identifiers they declare.
#[derive(Clone, Default)]
pub struct Registry {
    docs: UriMap<Arc<Node>>,
    /// Documents added with [`Registry::add_deferred`], parsed on first use.
    deferred: UriMap<Arc<Deferred>>,
    /// Documents of [`Registry::set_static_docs`] (after `docs` and `deferred`).
    statics: Option<Arc<StaticDocs>>,
    /// Absolute id (with fragment for plain-name ids) -> location.
    ids: UriMap<Location>,
    retriever: Option<Retriever>,
    anonymous: usize,
    /// Other names of documents (ASDF lets `$ref` name a schema by its tag).
    aliases: UriMap<String>,
    /// More of them in a static table sorted by name (consulted after `aliases`).
    static_aliases: &'static [(&'static str, &'static str)],
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field(
                "documents",
                &(self.docs.len() + self.deferred.len() + self.statics.as_ref().map_or(0, |s| s.ids.len())),
            )
            .finish_non_exhaustive()
    }
}

/// Keywords whose value is a schema, an array of schemas, or a map of schemas (draft 4).
pub(crate) fn schema_children(node: &Node) -> Vec<(Vec<String>, &Node)> {
    let mut out = Vec::new();
    let Some(m) = node.as_mapping() else {
        return out;
    };
    for (k, v) in &m.entries {
        let Some(key) = k.as_str() else { continue };
        match key {
            "items" | "additionalItems" | "additionalProperties" | "not" => match &v.kind {
                NodeKind::Sequence(s) => {
                    for (i, it) in s.items.iter().enumerate() {
                        out.push((vec![key.to_owned(), i.to_string()], it));
                    }
                }
                NodeKind::Mapping(_) => out.push((vec![key.to_owned()], v)),
                _ => {}
            },
            "allOf" | "anyOf" | "oneOf" => {
                if let Some(s) = v.as_sequence() {
                    for (i, it) in s.items.iter().enumerate() {
                        out.push((vec![key.to_owned(), i.to_string()], it));
                    }
                }
            }
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                if let Some(mm) = v.as_mapping() {
                    for (pk, pv) in &mm.entries {
                        if matches!(pv.kind, NodeKind::Mapping(_))
                            && let Some(name) = pk.as_scalar()
                        {
                            out.push((vec![key.to_owned(), name.text.to_string()], pv));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Every id declared in schema positions of `root` (stored under `doc`), with its location:
/// absolute ids without fragment, plain-name ids with theirs. The first declaration wins.
fn declared_ids(doc: &str, root: &Node) -> Vec<(String, Location)> {
    let mut out: Vec<(String, Location)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<(Vec<String>, &Node, String)> = vec![(Vec::new(), root, doc.to_owned())];
    while let Some((tokens, node, base)) = stack.pop() {
        let mut base = base;
        if let Some(id) = id_of(node)
            && let Some(abs) = join(&base, id)
        {
            let (a, frag) = split_fragment(&abs);
            let key = if frag.is_empty() { a.to_owned() } else { abs.clone() };
            if seen.insert(key.clone()) {
                out.push((
                    key,
                    Location {
                        doc: doc.to_owned(),
                        tokens: tokens.clone(),
                    },
                ));
            }
            if frag.is_empty() {
                base = a.to_owned();
            }
        }
        for (sub, child) in schema_children(node) {
            let mut t = tokens.clone();
            t.extend(sub);
            stack.push((t, child, base.clone()));
        }
    }
    out
}

/// The `id` of a schema node, if it has a string one (ignored next to `$ref`, as draft 4
/// ignores every sibling of `$ref`).
pub(crate) fn id_of(node: &Node) -> Option<&str> {
    if node.get("$ref").is_some() {
        return None;
    }
    node.get("id").and_then(Node::as_str)
}

impl Registry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the function called for URIs the registry does not hold.
    pub fn set_retriever(&mut self, r: Retriever) {
        self.retriever = Some(r);
    }

    /// Adds a document under `uri` (or its top-level `id` when `uri` is `None`), indexing
    /// every `id` declared in schema positions. Returns the URI it is stored under.
    pub fn add(&mut self, uri: Option<&str>, root: Node) -> String {
        let uri = match uri
            .map(str::to_owned)
            .or_else(|| id_of(&root).map(|s| split_fragment(s).0.to_owned()))
        {
            Some(u) => u,
            None => {
                self.anonymous += 1;
                format!("urn-anonymous://schema/{}", self.anonymous)
            }
        };
        let uri = split_fragment(&uri).0.to_owned();
        for (key, loc) in declared_ids(&uri, &root) {
            self.ids.entry(key).or_insert(loc);
        }
        self.deferred.remove(&uri);
        self.docs.insert(uri.clone(), Arc::new(root));
        uri
    }

    /// Adds a document under `uri` as YAML text, parsed (and its ids indexed) only when a
    /// lookup first needs it: `uri` must be the document's own top-level `id` (without
    /// fragment). Until then, ids declared deeper inside it are found by a lookup that
    /// finds them nowhere else (which then parses every deferred document). A text that
    /// does not parse is treated as absent (`$ref`s to it are unresolvable).
    pub fn add_deferred(&mut self, uri: &str, text: &'static [u8]) {
        self.add_text(uri, text);
    }

    /// Adds this crate's embedded schemas: `ids` lists (URI, index in `files`) sorted by URI
    /// (each URI the document's own top-level id), `files` (path, text). Each is parsed when
    /// first needed, as with [`Registry::add_deferred`], and its patterns are not checked
    /// again when compiled (a test checks them all).
    pub(crate) fn set_static_docs(
        &mut self,
        ids: &'static [(&'static str, usize)],
        files: &'static [(&'static str, &'static [u8])],
    ) {
        debug_assert!(ids.windows(2).all(|w| w[0].0 < w[1].0), "sorted by id");
        self.statics = Some(Arc::new(StaticDocs {
            ids,
            files,
            parsed: ids.iter().map(|_| OnceLock::new()).collect(),
        }));
    }

    /// The static table's entry for `uri`, unless another document is stored under it.
    fn static_entry(&self, uri: &str) -> Option<(&StaticDocs, usize)> {
        if self.docs.contains_key(uri) || self.deferred.contains_key(uri) {
            return None;
        }
        let s = self.statics.as_deref()?;
        Some((s, s.position(uri)?))
    }

    /// Whether the patterns of the document under `uri` are known to be valid.
    pub(crate) fn patterns_checked(&self, uri: &str) -> bool {
        self.static_entry(uri).is_some()
    }

    fn add_text(&mut self, uri: &str, text: &'static [u8]) {
        let uri = split_fragment(uri).0.to_owned();
        if self.docs.contains_key(&uri) {
            return;
        }
        self.deferred.insert(
            uri,
            Arc::new(Deferred {
                text,
                parsed: OnceLock::new(),
            }),
        );
    }

    /// The document stored under `uri` (without fragment), parsing a deferred one.
    fn doc(&self, uri: &str) -> Option<&Arc<Node>> {
        match self.docs.get(uri) {
            Some(d) => Some(d),
            None => match self.deferred.get(uri) {
                Some(d) => d.get(uri).map(|(root, _)| root),
                None => {
                    let (s, i) = self.static_entry(uri)?;
                    s.get(i).map(|(root, _)| root)
                }
            },
        }
    }

    fn holds(&self, uri: &str) -> bool {
        self.docs.contains_key(uri) || self.deferred.contains_key(uri) || self.static_entry(uri).is_some()
    }

    /// The location of an id: the index of eagerly added documents, then the ids of the
    /// deferred documents already parsed, then (for an id found nowhere) those of all.
    fn find_id(&self, key: &str) -> Option<Location> {
        if let Some(l) = self.ids.get(key) {
            return Some(l.clone());
        }
        // Every deferred and static document in URI order: those already parsed first, then
        // (for an id found nowhere) all of them.
        enum Src<'a> {
            Deferred(&'a str, &'a Deferred),
            Static(&'a StaticDocs, usize),
        }
        let mut all: Vec<(&str, Src<'_>)> = self
            .deferred
            .iter()
            .map(|(u, d)| (u.as_str(), Src::Deferred(u, d)))
            .collect();
        if let Some(s) = self.statics.as_deref() {
            for (i, (u, _)) in s.ids.iter().enumerate() {
                if !self.docs.contains_key(*u) && !self.deferred.contains_key(*u) {
                    all.push((u, Src::Static(s, i)));
                }
            }
        }
        all.sort_by(|a, b| a.0.cmp(b.0));
        fn parsed<'a>(src: &Src<'a>, force: bool) -> Option<&'a Parsed> {
            match *src {
                Src::Deferred(u, d) if force => d.get(u),
                Src::Deferred(_, d) => d.parsed.get()?.as_ref(),
                Src::Static(s, i) if force => s.get(i),
                Src::Static(s, i) => s.parsed[i].get()?.as_ref(),
            }
        }
        let in_parsed = |force: bool| {
            all.iter().find_map(|(_, src)| {
                parsed(src, force)?
                    .1
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, l)| l.clone())
            })
        };
        in_parsed(false).or_else(|| in_parsed(true))
    }

    /// Makes `name` (such as a tag URI) another name of the document stored under `uri`.
    pub fn alias(&mut self, name: &str, uri: &str) {
        self.aliases.insert(name.to_owned(), split_fragment(uri).0.to_owned());
    }

    /// Adds a static table of (name, document URI) aliases, sorted by name; names given to
    /// [`Registry::alias`] take precedence.
    pub fn set_static_aliases(&mut self, table: &'static [(&'static str, &'static str)]) {
        debug_assert!(table.windows(2).all(|w| w[0].0 < w[1].0), "sorted by name");
        self.static_aliases = table;
    }

    fn alias_of(&self, name: &str) -> Option<&str> {
        self.aliases.get(name).map(String::as_str).or_else(|| {
            let t = self.static_aliases;
            t.binary_search_by(|(k, _)| (*k).cmp(name))
                .ok()
                .map(|i| split_fragment(t[i].1).0)
        })
    }

    fn unalias(&self, abs: String) -> String {
        let (doc, frag) = split_fragment(&abs);
        match self.alias_of(doc) {
            Some(target) if frag.is_empty() => target.to_owned(),
            Some(target) => format!("{target}#{frag}"),
            None => abs,
        }
    }

    /// Whether a document is stored under `uri`.
    #[must_use]
    pub fn contains(&self, uri: &str) -> bool {
        self.holds(split_fragment(uri).0)
    }

    /// The document stored under `uri`.
    #[must_use]
    pub fn document(&self, uri: &str) -> Option<&Arc<Node>> {
        self.doc(split_fragment(uri).0)
    }

    /// URIs of every stored document.
    pub fn uris(&self) -> impl Iterator<Item = &str> {
        let statics = self.statics.iter().flat_map(|s| s.ids.iter().map(|(u, _)| *u));
        self.docs
            .keys()
            .chain(self.deferred.keys())
            .map(String::as_str)
            .chain(statics.filter(|u| !self.docs.contains_key(*u) && !self.deferred.contains_key(*u)))
    }

    /// The URIs of the documents held, without the anonymous ones (the roots a validator of
    /// every schema is compiled for, at run time and by the build script).
    pub(crate) fn schema_uris(&self) -> Vec<String> {
        self.uris()
            .filter(|u| !u.starts_with("urn-anonymous"))
            .map(str::to_owned)
            .collect()
    }

    /// The node at a location.
    #[must_use]
    pub fn node(&self, loc: &Location) -> Option<&Node> {
        let mut n: &Node = self.doc(&loc.doc)?;
        for t in &loc.tokens {
            n = match &n.kind {
                NodeKind::Mapping(_) => n.get(t)?,
                NodeKind::Sequence(s) => s.items.get(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(n)
    }

    /// The base URI in effect at a location (its document URI changed by the `id`s on the way).
    #[must_use]
    pub fn base_at(&self, loc: &Location) -> String {
        let mut base = loc.doc.clone();
        let Some(mut n) = self.doc(&loc.doc).map(|d| &**d) else {
            return base;
        };
        let apply = |n: &Node, base: &mut String| {
            if let Some(id) = id_of(n)
                && let Some(abs) = join(base, id)
            {
                let (a, f) = split_fragment(&abs);
                if f.is_empty() {
                    *base = a.to_owned();
                }
            }
        };
        apply(n, &mut base);
        for t in &loc.tokens {
            let next = match &n.kind {
                NodeKind::Mapping(_) => n.get(t),
                NodeKind::Sequence(s) => t.parse::<usize>().ok().and_then(|i| s.items.get(i)),
                _ => None,
            };
            let Some(next) = next else { break };
            n = next;
            apply(n, &mut base);
        }
        base
    }

    /// Resolves `reference` against `base` among the documents already held (no retrieval).
    #[must_use]
    pub fn lookup(&self, base: &str, reference: &str) -> Option<Location> {
        let abs = self.unalias(join(base, reference)?);
        let (doc, frag) = split_fragment(&abs);
        if !frag.is_empty() && !frag.starts_with('/') {
            return self.find_id(&abs);
        }
        let mut start = match self.ids.get(doc) {
            Some(l) => l.clone(),
            None if self.holds(doc) => Location {
                doc: doc.to_owned(),
                tokens: Vec::new(),
            },
            None => self.find_id(doc)?,
        };
        start.tokens.extend(pointer_tokens(frag)?);
        self.node(&start).is_some().then_some(start)
    }

    /// Resolves `reference` (a `$ref` value) found where the base URI is `base`.
    ///
    /// # Errors
    /// [`SchemaError::Unresolvable`] when no document or id matches.
    pub fn resolve(&mut self, base: &str, reference: &str) -> Result<Location, SchemaError> {
        let unresolvable = || SchemaError::Unresolvable {
            reference: reference.to_owned(),
            base: base.to_owned(),
        };
        let abs = self.unalias(join(base, reference).ok_or_else(unresolvable)?);
        let (doc, frag) = split_fragment(&abs);
        let (doc, frag) = (doc.to_owned(), frag.to_owned());
        // A plain-name fragment: an id `#name`.
        if !frag.is_empty() && !frag.starts_with('/') {
            return self.find_id(&abs).ok_or_else(unresolvable);
        }
        let found = match self.ids.get(&doc) {
            Some(l) => Some(l.clone()),
            None if self.holds(&doc) => None,
            None => self.find_id(&doc),
        };
        let mut start = match found {
            Some(l) => l,
            None => {
                if !self.holds(&doc) {
                    let retrieved = self.retriever.as_ref().and_then(|r| r(&doc)).ok_or_else(unresolvable)?;
                    self.add(Some(&doc), retrieved);
                }
                Location {
                    doc: doc.clone(),
                    tokens: Vec::new(),
                }
            }
        };
        start.tokens.extend(pointer_tokens(&frag).ok_or_else(unresolvable)?);
        if self.node(&start).is_none() {
            return Err(unresolvable());
        }
        Ok(start)
    }
}
