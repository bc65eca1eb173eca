//! References: `$ref`s into this file and others, and the external files of the exploded form,
//! opened as the [`ReferencePolicy`] allows.

use crate::error::{Error, ReferenceProblem, array_error};
use crate::file::{AsdfFile, Core};
use asdf_core_types::references::{RefProblem, find_references, local_path, put_references};
use asdf_core_types::{NdArray, NdArrayError};
use asdf_yaml::{Node, NodeKind};
use std::path::PathBuf;

impl Core {
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
        let found = find_references(self.doc());
        let count = found.len();
        // Other files' nodes, copied with their arrays made inline.
        let mut externals: std::collections::HashMap<&str, AsdfFile> = std::collections::HashMap::new();
        let mut copied = Vec::new();
        for f in found.iter().filter(|f| !f.file.is_empty()) {
            let bad = |problem: ReferenceProblem| Error::Reference {
                pointer: f.pointer.clone(),
                reference: f.reference.clone(),
                problem,
            };
            if !externals.contains_key(f.file.as_str()) {
                let target = self
                    .referenced_path(&f.file)
                    .map_err(&bad)?
                    .ok_or_else(|| bad(ReferenceProblem::NoDirectory))?;
                let ext = crate::Open::path(target)
                    .options(self.options.clone().validate(false))
                    .open()
                    .map_err(|e| bad(ReferenceProblem::Open(Box::new(e))))?;
                externals.insert(&f.file, ext);
            }
            let ext = &externals[f.file.as_str()];
            let target =
                asdf_yaml::pointer::get(ext.doc(), &f.fragment).map_err(|e| bad(ReferenceProblem::Fragment(e)))?;
            copied.push(ext.inline_arrays(target, &f.fragment)?);
        }
        drop(externals);
        put_references(self.doc_mut(), found, copied).map_err(|u| Error::Reference {
            pointer: u.pointer,
            reference: u.reference,
            problem: match u.problem {
                RefProblem::Fragment(e) => ReferenceProblem::Fragment(e),
                RefProblem::Moved => ReferenceProblem::Moved,
                RefProblem::NoSuchNode => ReferenceProblem::NoSuchNode,
                RefProblem::Cycle(names) => ReferenceProblem::Cycle(names),
            },
        })?;
        Ok(count)
    }

    /// A copy of `node` (from this file) with every ndarray that lives in a block turned into
    /// inline data, so that it can be placed in another file's tree.
    pub(crate) fn inline_arrays(&self, node: &Node, pointer: &str) -> Result<Node, Error> {
        let node = self.doc().resolve(node);
        if node.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag) {
            let a = NdArray::from_node(node, self.doc()).map_err(array_error(pointer))?;
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
}

impl Core {
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
        self.block_zero(crate::Open::path(&file), file, pointer)
    }

    /// Block 0 of the other file `open` opens (named `file` in errors), decoded.
    fn block_zero(&self, open: crate::Open, file: PathBuf, pointer: &str) -> Result<Vec<u8>, Error> {
        let external = |source| Error::External {
            pointer: pointer.to_owned(),
            file: file.clone(),
            source: Box::new(source),
        };
        let ext = open
            .options(self.options.clone().validate(false))
            .open()
            .map_err(external)?;
        let d = ext.reader.read_data(0).map_err(|e| external(Error::Layout(e)))?;
        Ok(d.into_owned())
    }
}

impl Core {
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
            let open = crate::Open::url(&other).storage_options(remote.clone());
            self.block_zero(open, PathBuf::from(&other), pointer)
        })())
    }
}
