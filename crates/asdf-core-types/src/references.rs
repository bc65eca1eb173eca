//! Which other files a file may make its reader open.

/// Which files references (`$ref` to other files, exploded-form array sources, Zarr stores
/// beside the file) may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReferencePolicy {
    /// Relative paths inside the file's directory only (the default): a file cannot make
    /// its reader open `/etc/passwd` or `../../secret.asdf`.
    #[default]
    RelativeOnly,
    /// Also absolute paths, `..`, and `file://` URIs. (`http(s)://` is never fetched.)
    AnyLocalPath,
    /// No other file is opened.
    None,
}

/// Why a reference to another file is not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `http(s)://` is never fetched.
    Remote,
    /// [`ReferencePolicy::None`].
    NoneAllowed,
    /// An absolute path, `..` or `file://` under [`ReferencePolicy::RelativeOnly`].
    NotRelative,
    /// A URI scheme other than `file://`.
    Scheme,
    /// A relative path that a symbolic link takes outside the file's directory.
    OutsideDirectory(std::path::PathBuf),
}

/// The local file a reference `uri` of a file in `dir` names, as `policy` allows (`Ok(None)`:
/// a relative reference of a file with no directory, opened from memory).
///
/// A reference is a URI: its path is percent-decoded, as Python asdf opens it (`my%20file.asdf`
/// is `my file.asdf`), and the policy applies to what is opened (`..%2Fx.asdf` is `../x.asdf`).
/// Under [`ReferencePolicy::RelativeOnly`], symbolic links are followed to where they lead,
/// which must still be inside `dir`.
///
/// # Errors
/// What the policy refuses.
pub fn local_path(
    uri: &str,
    dir: Option<&std::path::Path>,
    policy: ReferencePolicy,
) -> Result<Option<std::path::PathBuf>, Refused> {
    use std::path::{Component, PathBuf};
    if uri.starts_with("http://") || uri.starts_with("https://") {
        return Err(Refused::Remote);
    }
    if policy == ReferencePolicy::None {
        return Err(Refused::NoneAllowed);
    }
    let local = uri.strip_prefix("file://").unwrap_or(uri);
    // (Escapes that do not decode to UTF-8 leave the text as written.)
    let decoded = PathBuf::from(
        percent_encoding::percent_decode_str(local)
            .decode_utf8()
            .map_or_else(|_| local.to_owned(), std::borrow::Cow::into_owned),
    );
    let rel = decoded.as_path();
    let plain =
        !uri.contains("://") && !rel.is_absolute() && !rel.components().any(|c| matches!(c, Component::ParentDir));
    if !plain && policy != ReferencePolicy::AnyLocalPath {
        return Err(Refused::NotRelative);
    }
    if local.contains("://") {
        return Err(Refused::Scheme);
    }
    if rel.is_absolute() {
        return Ok(Some(rel.to_path_buf()));
    }
    let Some(dir) = dir else { return Ok(None) };
    let joined = dir.join(rel);
    if policy == ReferencePolicy::RelativeOnly {
        // (A path that does not resolve is left for the open to report.) The file's own folder
        // always resolves (it was opened from it); if it does not now, nothing is opened on its
        // behalf.
        let real_dir = dir
            .canonicalize()
            .map_err(|_| Refused::OutsideDirectory(dir.to_path_buf()))?;
        if let Ok(real) = joined.canonicalize() {
            if !real.starts_with(&real_dir) {
                return Err(Refused::OutsideDirectory(real));
            }
            // Opened where the link leads, as checked.
            return Ok(Some(real));
        }
    }
    Ok(Some(joined))
}

/// A `{$ref: ...}` of a tree.
#[derive(Debug, Clone)]
pub struct Found {
    /// Where it is.
    pub path: Vec<asdf_yaml::Step>,
    /// Where it is, as a JSON pointer.
    pub pointer: String,
    /// The reference as written.
    pub reference: String,
    /// Its file part (empty: this file).
    pub file: String,
    /// Its fragment, percent-decoded, as a JSON pointer (RFC 6901, section 6: `#/b%20c` is the
    /// key `b c`, as Python asdf reads it).
    pub fragment: String,
}

/// Why a reference cannot be followed inside the tree.
#[derive(Debug)]
pub enum RefProblem {
    /// The fragment is not a pointer to a node.
    Fragment(asdf_yaml::pointer::PointerError),
    /// The reference's place changed while references were being resolved.
    Moved,
    /// No node at the fragment.
    NoSuchNode,
    /// References that lead to one another and never to a node, by their pointers in order.
    Cycle(Vec<String>),
}

/// A reference that cannot be followed.
#[derive(Debug)]
pub struct Unresolved {
    /// Where it is.
    pub pointer: String,
    /// The reference as written.
    pub reference: String,
    /// Why.
    pub problem: RefProblem,
}

/// Every `{$ref: ...}` of `doc` (a mapping with a `$ref` string, its other members ignored, as
/// JSON Reference says and Python asdf does), in document order, aliases not followed.
#[must_use]
pub fn find_references(doc: &asdf_yaml::Document) -> Vec<Found> {
    use asdf_yaml::{At, NodeKind, Visit, Visitor};
    struct Refs(Vec<(Vec<asdf_yaml::Step>, String, String)>);
    impl<'a> Visitor<'a> for Refs {
        fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
            if let NodeKind::Mapping(m) = &at.node().kind
                && let Some(r) = m
                    .entries
                    .iter()
                    .find(|(k, _)| k.as_str() == Some("$ref"))
                    .and_then(|(_, v)| v.as_str())
            {
                self.0.push((at.path().to_vec(), at.pointer(), r.to_owned()));
                return Visit::SkipChildren;
            }
            Visit::Continue
        }
    }
    let mut found = Refs(Vec::new());
    asdf_yaml::Walker::new(asdf_yaml::Aliases::Never)
        .max_depth(usize::MAX)
        .walk(doc, &mut found);
    found
        .0
        .into_iter()
        .map(|(path, pointer, reference)| {
            let (file, frag) = reference.split_once('#').unwrap_or((reference.as_str(), ""));
            let frag = percent_encoding::percent_decode_str(frag)
                .decode_utf8()
                .map_or_else(|_| frag.to_owned(), std::borrow::Cow::into_owned);
            let fragment = if frag.is_empty() || frag.starts_with('/') {
                frag
            } else {
                format!("/{frag}")
            };
            Found {
                path,
                pointer,
                file: file.to_owned(),
                reference,
                fragment,
            }
        })
        .collect()
}

/// Puts the references `found` of `doc` in place: each of another file by its node in
/// `external` (in the order of `found`'s references with a file part), each into this file as
/// a YAML alias to the node its chain of references ends at (cycles such as `{$ref: '#'}` are
/// fine; a chain that comes back to itself reaching no node is not). Aliases of a reference
/// (`a: &R {$ref: ...}`, `c: *R`) come to mean what it resolved to.
///
/// # Errors
/// A fragment that names no node, a cycle of references, a tree changed on the way.
pub fn put_references(
    doc: &mut asdf_yaml::Document,
    found: Vec<Found>,
    external: Vec<asdf_yaml::Node>,
) -> Result<(), Unresolved> {
    use asdf_yaml::{Alias, Node, NodeKind, Step};
    use std::collections::HashMap;
    let bad = |f: &Found, problem: RefProblem| Unresolved {
        pointer: f.pointer.clone(),
        reference: f.reference.clone(),
        problem,
    };
    let (files, internal): (Vec<Found>, Vec<Found>) = found.into_iter().partition(|f| !f.file.is_empty());
    for (f, mut copied) in files.iter().zip(external) {
        let slot = doc.root.at_path_mut(&f.path).ok_or_else(|| bad(f, RefProblem::Moved))?;
        copied.anchor = slot.anchor.take().or(copied.anchor);
        *slot = copied;
    }
    // A reference whose target is another reference takes that one's target: a chain that
    // comes back to itself reaches no node, and would be an alias to an alias (read as null).
    let at: HashMap<&[Step], usize> = internal
        .iter()
        .enumerate()
        .map(|(i, r)| (r.path.as_slice(), i))
        .collect();
    let targets: Vec<Option<Vec<Step>>> = internal
        .iter()
        .map(|f| asdf_yaml::pointer::resolve_path(doc, &f.fragment).ok())
        .collect();
    // Where each reference's chain ends (itself when it points at a node).
    let mut ends = Vec::with_capacity(internal.len());
    for (i, f) in internal.iter().enumerate() {
        let mut chain = vec![i];
        let mut j = i;
        while let Some(&k) = targets[j].as_deref().and_then(|t| at.get(t)) {
            if let Some(from) = chain.iter().position(|&c| c == k) {
                let mut names: Vec<String> = chain[from..]
                    .iter()
                    .map(|&c| match internal[c].pointer.as_str() {
                        "" => "/".to_owned(),
                        p => p.to_owned(),
                    })
                    .collect();
                if let Some(first) = names.first().cloned() {
                    names.push(first);
                }
                return Err(bad(f, RefProblem::Cycle(names)));
            }
            chain.push(k);
            j = k;
        }
        ends.push(j);
    }
    // Internal references that had an anchor: the alias each became.
    let mut redirect = HashMap::new();
    for (i, f) in internal.iter().enumerate() {
        // The alias is to the node at the chain's end (an alias to a reference replaced by an
        // alias would lose its anchor).
        let end = ends.get(i).copied().unwrap_or(i);
        let target = match &targets[end] {
            Some(t) => t.clone(),
            None => asdf_yaml::pointer::resolve_path(doc, &internal[end].fragment)
                .map_err(|e| bad(f, RefProblem::Fragment(e)))?,
        };
        let anchor = doc
            .root
            .at_path_mut(&target)
            .ok_or_else(|| bad(f, RefProblem::NoSuchNode))?
            .anchor
            .get_or_insert_with(|| asdf_yaml::Anchor::from(format!("ref{}", i + 1)))
            .clone();
        let slot = doc.root.at_path_mut(&f.path).ok_or_else(|| bad(f, RefProblem::Moved))?;
        let alias = Alias { anchor, target };
        if slot.anchor.is_some() {
            // Aliases of the reference itself are made aliases of its target below.
            redirect.insert(f.path.clone(), alias.clone());
        }
        *slot = Node {
            tag: None,
            anchor: None,
            span: slot.span,
            kind: NodeKind::Alias(alias),
        };
    }
    if !redirect.is_empty() {
        redirect_aliases(&mut doc.root, &redirect);
    }
    Ok(())
}

/// Every alias in `node` to a node of `redirect` (a reference, by path, that became an alias)
/// made that alias.
fn redirect_aliases(
    node: &mut asdf_yaml::Node,
    redirect: &std::collections::HashMap<Vec<asdf_yaml::Step>, asdf_yaml::Alias>,
) {
    use asdf_yaml::NodeKind;
    match &mut node.kind {
        NodeKind::Alias(a) => {
            if let Some(to) = redirect.get(&a.target) {
                *a = to.clone();
            }
        }
        NodeKind::Mapping(m) => {
            for (k, v) in &mut m.entries {
                redirect_aliases(k, redirect);
                redirect_aliases(v, redirect);
            }
        }
        NodeKind::Sequence(s) => {
            for item in &mut s.items {
                redirect_aliases(item, redirect);
            }
        }
        _ => {}
    }
}
