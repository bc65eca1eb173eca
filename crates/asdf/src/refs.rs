//! References: `$ref`s into this file and others, and the external files of the exploded form,
//! opened as the [`ReferencePolicy`] allows.

use crate::error::{Error, ReferenceProblem, array_error};
use crate::file::AsdfFile;
use asdf_core_types::references::local_path;
use asdf_core_types::{NdArray, NdArrayError};
use asdf_yaml::{Node, NodeKind};
use std::path::PathBuf;

impl AsdfFile {
    /// The file another file refers to by `uri`, as the reference policy allows: `Ok(None)`
    /// when this file has no directory (opened from memory).
    pub(crate) fn referenced_path(&self, uri: &str) -> Result<Option<PathBuf>, ReferenceProblem> {
        use asdf_core_types::references::Refused;
        local_path(uri, self.dir.as_deref(), self.options.references).map_err(|r| match r {
            Refused::Remote => ReferenceProblem::Remote,
            Refused::NoneAllowed => ReferenceProblem::NoneAllowed,
            Refused::NotRelative => ReferenceProblem::NotRelative,
            Refused::Scheme => ReferenceProblem::Scheme,
            Refused::OutsideDirectory(p) => ReferenceProblem::OutsideDirectory(p),
        })
    }
}

/// Every alias in `node` to a node of `redirect` (a reference, by path, that became an alias)
/// made that alias.
fn redirect_aliases(node: &mut Node, redirect: &std::collections::HashMap<Vec<asdf_yaml::Step>, asdf_yaml::Alias>) {
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

impl AsdfFile {
    /// Resolves every `{$ref: ...}` in the tree: references into this file become YAML aliases
    /// (cycles such as `{$ref: '#'}` are fine); references into other ASDF files (as
    /// [`crate::OpenOptions::references`] allows: by default relative paths inside the file's
    /// directory) are copied in, with their arrays made inline. Returns how many were resolved.
    ///
    /// # Errors
    /// [`Error::Reference`] for a missing file, a bad fragment, or a file the policy does not
    /// allow.
    pub fn resolve_references(&mut self) -> Result<usize, Error> {
        // (path, pointer text, reference), found by the one walk (aliases not followed).
        struct Refs(Vec<(Vec<asdf_yaml::Step>, String, String)>);
        impl<'a> asdf_yaml::Visitor<'a> for Refs {
            fn enter(&mut self, at: &asdf_yaml::At<'_, 'a>) -> asdf_yaml::Visit {
                // A mapping with a `$ref` string is a reference, its other members ignored (as
                // JSON Reference says, and Python asdf does).
                if let NodeKind::Mapping(m) = &at.node().kind
                    && let Some(r) = m
                        .entries
                        .iter()
                        .find(|(k, _)| k.as_str() == Some("$ref"))
                        .and_then(|(_, v)| v.as_str())
                {
                    self.0.push((at.path().to_vec(), at.pointer(), r.to_owned()));
                    return asdf_yaml::Visit::SkipChildren;
                }
                asdf_yaml::Visit::Continue
            }
        }
        let mut found = Refs(Vec::new());
        asdf_yaml::Walker::new(asdf_yaml::Aliases::Never)
            .max_depth(usize::MAX)
            .walk(self.doc()?, &mut found);
        let refs = found.0;
        let count = refs.len();
        // A fragment is percent-decoded, then read as a JSON pointer (RFC 6901, section 6:
        // `#/b%20c` is the key `b c`), as Python asdf reads it.
        let normalize = |frag: &str| {
            let frag = percent_encoding::percent_decode_str(frag)
                .decode_utf8()
                .map_or_else(|_| frag.to_owned(), std::borrow::Cow::into_owned);
            if frag.is_empty() || frag.starts_with('/') {
                frag
            } else {
                format!("/{frag}")
            }
        };
        let mut externals: std::collections::HashMap<String, AsdfFile> = std::collections::HashMap::new();
        let mut internal = Vec::new();
        for (path, ptr, r) in refs {
            let bad = |problem: ReferenceProblem| Error::Reference {
                pointer: ptr.clone(),
                reference: r.clone(),
                problem,
            };
            let (file, frag) = r.split_once('#').unwrap_or((r.as_str(), ""));
            let frag = normalize(frag);
            if file.is_empty() {
                internal.push((path, ptr.clone(), r.clone(), frag));
                continue;
            }
            let target = self
                .referenced_path(file)
                .map_err(&bad)?
                .ok_or_else(|| bad(ReferenceProblem::NoDirectory))?;
            if !externals.contains_key(file) {
                let ext = crate::Open::path(target)
                    .options(self.options.clone().validate(false))
                    .open()
                    .map_err(|e| bad(ReferenceProblem::Open(Box::new(e))))?;
                externals.insert(file.to_owned(), ext);
            }
            let ext = &externals[file];
            let target = asdf_yaml::pointer::get(ext.doc()?, &frag).map_err(|e| bad(ReferenceProblem::Fragment(e)))?;
            let copied = ext.inline_arrays(target, &frag)?;
            let slot = self
                .doc_mut()?
                .root
                .at_path_mut(&path)
                .ok_or_else(|| bad(ReferenceProblem::Moved))?;
            // Aliases of the reference (`a: &R {$ref: ...}`, `c: *R`) now mean what it copied.
            let mut copied = copied;
            copied.anchor = slot.anchor.take().or(copied.anchor);
            *slot = copied;
        }
        // A reference whose target is another reference takes that one's target: a chain
        // that comes back to itself reaches no node, and would be an alias to an alias (read
        // as null). (A target that does not resolve is reported by the loop below.)
        let at: std::collections::HashMap<&[asdf_yaml::Step], usize> =
            internal.iter().enumerate().map(|(i, r)| (r.0.as_slice(), i)).collect();
        let targets: Vec<Option<Vec<asdf_yaml::Step>>> = internal
            .iter()
            .map(|(.., frag)| asdf_yaml::pointer::resolve_path(self.doc().ok()?, frag).ok())
            .collect();
        // Where each reference's chain ends (itself when it points at a node).
        let mut ends = Vec::with_capacity(internal.len());
        for (i, (_, ptr, r, _)) in internal.iter().enumerate() {
            let mut chain = vec![i];
            let mut j = i;
            while let Some(&k) = targets[j].as_deref().and_then(|t| at.get(t)) {
                if chain.contains(&k) {
                    let mut names: Vec<String> = chain[chain.iter().position(|&c| c == k).unwrap_or(0)..]
                        .iter()
                        .map(|&c| {
                            if internal[c].1.is_empty() {
                                "/".to_owned()
                            } else {
                                internal[c].1.clone()
                            }
                        })
                        .collect();
                    if let Some(first) = names.first().cloned() {
                        names.push(first);
                    }
                    return Err(Error::Reference {
                        pointer: ptr.clone(),
                        reference: r.clone(),
                        problem: ReferenceProblem::Cycle(names),
                    });
                }
                chain.push(k);
                j = k;
            }
            ends.push(j);
        }
        // Internal references that had an anchor: the alias each became.
        let mut redirect = std::collections::HashMap::new();
        for (i, (path, ptr, r, _)) in internal.iter().enumerate() {
            let bad = |problem: ReferenceProblem| Error::Reference {
                pointer: ptr.clone(),
                reference: r.clone(),
                problem,
            };
            // The alias is to the node at the chain's end (an alias to a reference replaced
            // by an alias would lose its anchor).
            let end = ends.get(i).copied().unwrap_or(i);
            let target = match &targets[end] {
                Some(t) => t.clone(),
                None => asdf_yaml::pointer::resolve_path(self.doc()?, &internal[end].3)
                    .map_err(|e| bad(ReferenceProblem::Fragment(e)))?,
            };
            let anchor = {
                let t = self
                    .doc_mut()?
                    .root
                    .at_path_mut(&target)
                    .ok_or_else(|| bad(ReferenceProblem::NoSuchNode))?;
                t.anchor
                    .get_or_insert_with(|| asdf_yaml::Anchor::from(format!("ref{}", i + 1)))
                    .clone()
            };
            let slot = self
                .doc_mut()?
                .root
                .at_path_mut(path)
                .ok_or_else(|| bad(ReferenceProblem::Moved))?;
            let alias = asdf_yaml::Alias { anchor, target };
            if slot.anchor.is_some() {
                // Aliases of the reference itself are made aliases of its target below.
                redirect.insert(path.clone(), alias.clone());
            }
            *slot = Node {
                tag: None,
                anchor: None,
                span: slot.span,
                kind: NodeKind::Alias(alias),
            };
        }
        if !redirect.is_empty() {
            redirect_aliases(&mut self.doc_mut()?.root, &redirect);
        }
        Ok(count)
    }

    /// A copy of `node` (from this file) with every ndarray that lives in a block turned into
    /// inline data, so that it can be placed in another file's tree.
    pub(crate) fn inline_arrays(&self, node: &Node, pointer: &str) -> Result<Node, Error> {
        let node = self.doc()?.resolve(node);
        if node.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) {
            let a = NdArray::from_node(node, self.doc()?).map_err(array_error(pointer))?;
            if a.source.is_none() {
                return Ok(node.clone());
            }
            let arr = self.array(pointer)?.values()?;
            let tag = node.tag.as_deref().map(str::to_owned).unwrap_or_default();
            return Ok(NdArray::inline(arr.datatype, &arr.shape, &arr.elements).to_node(&tag));
        }
        let mut out = node.clone();
        match (&node.kind, &mut out.kind) {
            (NodeKind::Mapping(m), NodeKind::Mapping(om)) => {
                for (i, (k, v)) in m.entries.iter().enumerate() {
                    let key = k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
                    om.entries[i].1 =
                        self.inline_arrays(v, &format!("{pointer}/{}", asdf_yaml::pointer::escape(key)))?;
                }
            }
            (NodeKind::Sequence(s), NodeKind::Sequence(os)) => {
                for (i, v) in s.items.iter().enumerate() {
                    os.items[i] = self.inline_arrays(v, &format!("{pointer}/{i}"))?;
                }
            }
            _ => {}
        }
        Ok(out)
    }

    /// The data of the exploded array at `pointer` (block 0 of the file its `source` names,
    /// decoded), read as the reference policy allows.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Array`] when the node is not an ndarray whose source is
    /// another file; [`Error::Reference`] when the policy refuses the file; the other file's.
    pub fn external_data(&self, pointer: &str) -> Result<Vec<u8>, Error> {
        let nd = self.ndarray_at(pointer)?;
        match &nd.source {
            Some(asdf_core_types::Source::Uri(uri)) => self.external_block(uri, pointer),
            _ => Err(Error::Array {
                pointer: pointer.to_owned(),
                source: NdArrayError::MissingBlock,
            }),
        }
    }

    /// The decoded block 0 of the external ASDF file `uri` (exploded form; relative paths inside
    /// this file's directory only).
    pub(crate) fn external_block(&self, uri: &str, pointer: &str) -> Result<Vec<u8>, Error> {
        if uri.starts_with("fits:") {
            // A FITS HDU's data (ASDF embedded in FITS): read whole, to become a block.
            use asdf_layout::storage::ArrayBytes as _;
            let data = self.fits_data(uri, pointer)?;
            return Ok(data.read().map_err(crate::error::storage_error(pointer))?.into_owned());
        }
        let missing = || Error::Array {
            pointer: pointer.to_owned(),
            source: NdArrayError::MissingBlock,
        };
        // A remote file's exploded blocks: a plain relative name beside it, fetched with the
        // same store settings (the reference policy's rule for relative paths, applied to
        // the URL's folder).
        if let Some(block) = self.remote_external_block(uri, pointer) {
            return block;
        }
        let file = match self.referenced_path(uri) {
            Ok(Some(f)) => f,
            Ok(None) => return Err(missing()),
            Err(problem) => {
                return Err(Error::Reference {
                    pointer: pointer.to_owned(),
                    reference: uri.to_owned(),
                    problem,
                });
            }
        };
        let ext = crate::Open::path(&file)
            .options(self.options.clone().validate(false))
            .open()
            .map_err(|e| Error::External {
                pointer: pointer.to_owned(),
                file: file.clone(),
                source: Box::new(e),
            })?;
        let d = ext.reader.read_data(0).map_err(|e| Error::External {
            pointer: pointer.to_owned(),
            file,
            source: Box::new(Error::Layout(e)),
        })?;
        Ok(d.into_owned())
    }
}

impl AsdfFile {
    /// For a file read from a URL, block 0 of the exploded file `uri` beside it (`None` for a
    /// local file).
    pub(crate) fn remote_external_block(&self, uri: &str, pointer: &str) -> Option<Result<Vec<u8>, Error>> {
        let (url, remote) = self.remote_origin.as_ref()?;
        Some((|| {
            let missing = || Error::Array {
                pointer: pointer.to_owned(),
                source: asdf_core_types::NdArrayError::MissingBlock,
            };
            let plain =
                !uri.contains("://") && !uri.starts_with('/') && !uri.split('/').any(|c| c == ".." || c.is_empty());
            if !plain || self.options.references == crate::options::ReferencePolicy::None {
                return Err(Error::Reference {
                    pointer: pointer.to_owned(),
                    reference: uri.to_owned(),
                    problem: ReferenceProblem::NotRelative,
                });
            }
            let base = url.split(['?', '#']).next().unwrap_or(url);
            let Some(dir) = base.rfind('/').map(|i| &base[..=i]) else {
                return Err(missing());
            };
            let other = format!("{dir}{uri}");
            let ext = crate::Open::url(&other)
                .options(self.options.clone().validate(false))
                .storage_options(remote.clone())
                .open()
                .map_err(|e| Error::External {
                    pointer: pointer.to_owned(),
                    file: PathBuf::from(&other),
                    source: Box::new(e),
                })?;
            let d = ext.reader.read_data(0).map_err(|e| Error::External {
                pointer: pointer.to_owned(),
                file: PathBuf::from(&other),
                source: Box::new(Error::Layout(e)),
            })?;
            Ok(d.into_owned())
        })())
    }
}
