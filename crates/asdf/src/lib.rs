//! Read and write ASDF files: the tree, arrays decoded lazily from their blocks, validation
//! against the standard's schemas (on by default), writing (atomic, per-array compression),
//! updating in place, streamed and exploded forms, references.
//!
//! Where things are: [`open`] and [`OpenOptions`] (reading); [`AsdfFile::array`] and
//! [`Array`] (typed array handles), [`AsdfFile::blocks`] and [`Block`] (block handles);
//! [`AsdfFile::get`], [`AsdfFile::set`], [`AsdfFile::remove`], [`AsdfFile::move_node`]
//! (the tree by JSON pointer, aliases kept true); [`AsdfFile::put_array`] with [`NewArray`],
//! [`AsdfFile::write_to`] and [`WriteOptions`] (writing); [`AsdfFile::update`] (in place);
//! [`Error::kind`] for callers who branch on errors. docs/ARCHITECTURE.md draws the crates.
//!
//! ```no_run
//! let file = asdf::open("obs.asdf")?;
//! for w in file.warnings() {
//!     eprintln!("{w}");
//! }
//! let data = file.array("/sci/data")?;
//! println!("{:?} {} {:?}", data.shape(), data.datatype(), data.compression());
//! let pixels: Vec<f32> = data.read()?;
//! # Ok::<(), asdf::Error>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

#[doc(inline)]
pub use array::{Array, Block, Chunks, Storage};
pub use asdf_core_types::is_ndarray_tag;
#[doc(inline)]
pub use asdf_core_types::{
    Complex, Datatype, Decoded, Dim, Element, NdArray, NdArrayError, Scalar, ScalarType, View, complex,
};
#[doc(inline)]
pub use asdf_layout::Limits as LayoutLimits;
#[doc(inline)]
pub use asdf_layout::{ReadAt, Version};
#[doc(inline)]
pub use asdf_schema::{AsdfSchemas, Manifest, Report, TagDef, TagWarning, Violation};
#[doc(inline)]
pub use asdf_yaml::Limits as YamlLimits;
#[doc(inline)]
pub use asdf_yaml::pointer::escape as escape_pointer_token;
pub use asdf_yaml::{Alias, Anchor, Document, Node, NodeKind, Span, Step, Value};
pub use builder::{NewArray, NewStorage};
/// The layer crates, for what the facade does not wrap.
pub use {asdf_core_types as core_types, asdf_layout as layout, asdf_schema as schema, asdf_yaml as yaml};

use asdf_core_types::Source;

/// Re-exported for [`AsdfFile::array_slice`]'s `Pod` bound.
pub use bytemuck;
/// Re-exported for [`AsdfFile::array_nd`] (feature `ndarray`).
#[cfg(feature = "ndarray")]
pub use ndarray;

mod array;
mod atomic;
pub mod budget;
mod builder;
mod edit;
mod error;
mod fits;
mod fits_write;
mod guard;
pub mod json;
mod lazy;
pub use lazy::LazyFile;
pub mod legacy;
mod options;
mod refs;
pub use guard::same_file;
mod update;
mod verify;
pub use verify::VerifyReport;
mod write;
#[doc(inline)]
pub use asdf_core_types::ByteOrder;
#[doc(inline)]
pub use asdf_layout::Label;
/// The block codecs (for [`WriteOptions::codec`]: a `bls2` frame's chunk size, compressor, filter).
pub use asdf_layout::compression;
use asdf_layout::{ReadOptions, Reader};
#[cfg(feature = "remote")]
pub use asdf_remote::{self as remote, RemoteOptions, Stats as RemoteStats, is_url};
pub use atomic::write_atomically;
pub use error::{Error, ErrorKind, ReferenceProblem, Warning};
pub use fits_write::{AsdfHdu, FITS_KEY, FitsWriteOptions};
pub use options::{OpenOptions, ReferencePolicy};
pub use update::{RewriteReason, Update};
pub use write::{Compression, Progress, StreamingWriter, WriteOptions};

/// The schemas and manifests this build carries (the standard's, with the `datatype` and `ndim`
/// keywords), loaded once.
///
/// # Errors
/// [`Error::Schema`] when the embedded schemas cannot be loaded (a build defect).
pub fn schemas() -> Result<std::sync::Arc<AsdfSchemas>, Error> {
    asdf_core_types::schemas().map_err(Error::BuiltinSchemas)
}

/// A fresh copy of this build's schemas that you can extend: an extension's schemas and
/// manifests with [`AsdfSchemas::add_dir`], a custom schema with [`AsdfSchemas::add_schema`];
/// then [`AsdfFile::validate_with`].
///
/// # Errors
/// [`Error::Schema`] when the embedded schemas cannot be loaded (a build defect).
pub fn schemas_to_extend() -> Result<AsdfSchemas, Error> {
    Ok(AsdfSchemas::with_options(asdf_core_types::compile_options())?)
}

/// Elements per slice handed over by [`AsdfFile::array_chunks`] (64 KiB of `f64`).
pub const CHUNK_ELEMENTS: usize = 8192;

/// What [`AsdfFile::array_for_each`] and [`AsdfFile::array_chunks`] are handed internally.
enum Piece<'a, T> {
    /// The bytes of whole elements in this byte order.
    Bytes(&'a [u8], ByteOrder),
    /// One element.
    One(T),
}

/// ASDF Standard versions this library reads.
pub const SUPPORTED_STANDARDS: [Version; 7] = [
    Version::new(1, 0, 0),
    Version::new(1, 1, 0),
    Version::new(1, 2, 0),
    Version::new(1, 3, 0),
    Version::new(1, 4, 0),
    Version::new(1, 5, 0),
    Version::new(1, 6, 0),
];

/// ASDF Standard versions not final yet (asdf-standard's development version, ASDF Standard
/// 1.7.0 as it stands: `ndarray-1.2.0`, `integer-1.2.0`): read and validated (with a
/// [`Warning::UnstableStandard`]), written only on explicit opt-in
/// ([`WriteOptions::unstable_standard`], or the environment variable
/// `ASDF_UNSTABLE_CORE_SCHEMAS` set, as Python asdf asks).
pub const UNSTABLE_STANDARDS: [Version; 1] = [Version::new(1, 7, 0)];

/// Whether this library reads files of `v` (a supported or an unstable standard).
#[must_use]
pub fn reads_standard(v: Version) -> bool {
    SUPPORTED_STANDARDS.contains(&v) || UNSTABLE_STANDARDS.contains(&v)
}

/// An array's values as dynamically typed elements ([`AsdfFile::array_values`]): for callers
/// that do not know the datatype (a viewer, a diff). Typed reads go through [`Array`], which
/// costs the array's own size, not 32 bytes per element.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayValues {
    /// The element type.
    pub datatype: Datatype,
    /// The shape.
    pub shape: Vec<usize>,
    /// The elements, C order.
    pub elements: Vec<Element>,
    /// True for masked elements.
    pub mask: Option<Vec<bool>>,
}

/// Turns an ndarray problem into an [`Error::Array`] at `pointer`.
fn array_error(pointer: &str) -> impl Fn(NdArrayError) -> Error + Copy + '_ {
    move |source| Error::Array {
        pointer: pointer.to_owned(),
        source,
    }
}

/// The decoded elements of an inline array as `T` (which must be its datatype).
fn typed_elements<T: Scalar>(d: &Decoded, pointer: &str) -> Result<Vec<T>, Error> {
    let err = array_error(pointer);
    if d.datatype != Datatype::Scalar(T::TYPE) {
        return Err(err(NdArrayError::TypeMismatch {
            want: T::TYPE,
            have: d.datatype.to_string(),
        }));
    }
    d.elements
        .iter()
        .map(|e| T::from_element(e).ok_or_else(|| err(NdArrayError::Invalid("data"))))
        .collect()
}

/// Elements handed over in pieces (see [`Array::for_each_chunk`]) as slices of up to
/// [`CHUNK_ELEMENTS`], native byte order.
fn chunks_from_pieces<T: Scalar>(
    pieces: impl FnOnce(&mut dyn FnMut(Piece<'_, T>)) -> Result<(), Error>,
    mut f: impl FnMut(&[T]),
) -> Result<(), Error> {
    let size = std::mem::size_of::<T>();
    let mut buf: Vec<T> = Vec::with_capacity(CHUNK_ELEMENTS);
    pieces(&mut |p| match p {
        Piece::Bytes(mut bytes, order) => {
            // Whole chunks straight from the bytes where they need no conversion (native
            // order, aligned: a mapped block usually is), without a copy.
            if buf.is_empty()
                && let Some(all) = T::as_native(bytes, order)
            {
                let mut it = all.chunks_exact(CHUNK_ELEMENTS);
                for c in &mut it {
                    f(c);
                }
                let rest = it.remainder();
                buf.extend_from_slice(rest);
                bytes = &[];
            }
            while !bytes.is_empty() {
                let n = (CHUNK_ELEMENTS - buf.len()).min(bytes.len() / size);
                T::extend_from_bytes(&mut buf, &bytes[..n * size], order);
                bytes = &bytes[n * size..];
                if buf.len() == CHUNK_ELEMENTS {
                    f(&buf);
                    buf.clear();
                }
            }
        }
        Piece::One(x) => {
            buf.push(x);
            if buf.len() == CHUNK_ELEMENTS {
                f(&buf);
                buf.clear();
            }
        }
    })?;
    if !buf.is_empty() {
        f(&buf);
    }
    Ok(())
}

/// Where an array's data lives.
#[derive(Debug, Clone)]
enum BlockRef {
    /// Block `i` of the file read.
    File(usize),
    /// Data added since opening.
    Pending(usize),
    /// Block 0 of an external file (exploded form).
    External(String),
    /// Such a block, already read.
    Loaded(Vec<u8>),
    /// The data of HDU `i` of the FITS file this file was read from (`fits:` sources).
    Fits(usize),
}

/// The block of an array added since opening.
#[derive(Debug, Clone)]
struct NewBlock {
    /// The decoded bytes.
    data: Vec<u8>,
    /// Its own compression (`None`: as the write options say).
    compression: Option<asdf_layout::Label>,
}

/// An open ASDF file.
pub struct AsdfFile {
    reader: Reader<Box<dyn ReadAt>>,
    doc: Document,
    /// The path opened (for updates in place).
    path: Option<PathBuf>,
    dir: Option<PathBuf>,
    warnings: Vec<Warning>,
    standard: Version,
    options: OpenOptions,
    /// Line of the file where the tree starts (to report positions as file lines).
    tree_line: u64,
    /// Blocks of arrays added since opening, not yet written.
    pending: Vec<NewBlock>,
    /// What the file at `path` looked like when it was opened (for writes over it).
    opened: Option<guard::Fingerprint>,
    /// The FITS file this ASDF file was read from (ASDF embedded in FITS).
    fits: Option<std::sync::Arc<fits::FitsFile>>,
    /// What a remote file's source has fetched.
    #[cfg(feature = "remote")]
    remote: Option<std::sync::Arc<asdf_remote::Stats>>,
}

impl fmt::Debug for AsdfFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsdfFile")
            .field("standard", &self.standard)
            .field("blocks", &self.reader.block_count())
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// Opens the file at `path` with default options (validation on).
///
/// # Errors
/// See [`Error`].
pub fn open(path: impl AsRef<Path>) -> Result<AsdfFile, Error> {
    open_with(path, OpenOptions::default())
}

/// Opens the file at `path`.
///
/// # Errors
/// See [`Error`].
pub fn open_with(path: impl AsRef<Path>, options: OpenOptions) -> Result<AsdfFile, Error> {
    open_path_shell(path.as_ref(), options)?.finish()
}

/// Opens the file at `path` without parsing its tree: see [`LazyFile`]. `options` apply as in
/// [`open_with`]; validation (and every check of the tree) happens in [`LazyFile::into_file`].
///
/// # Errors
/// As [`open_with`] for the file's header and block index; errors in the tree come later.
pub fn open_lazy(path: impl AsRef<Path>, options: OpenOptions) -> Result<LazyFile, Error> {
    LazyFile::new(open_path_shell(path.as_ref(), options)?)
}

fn open_path_shell(path: &Path, options: OpenOptions) -> Result<Shell, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    // Opened without waiting (a FIFO would block until a writer comes), then checked: only
    // regular files, whose length the one `fstat` gives (no `stat` of the path first).
    let file = open_nonblocking(path).map_err(io)?;
    let opened = file.metadata().map_err(io)?;
    if !opened.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    let len = opened.len();
    let source: Box<dyn ReadAt> = if options.memmap {
        Box::new(asdf_layout::MmapSource::from_file_len(file, len).map_err(io)?)
    } else {
        Box::new(file)
    };
    let source = asdf_layout::Prefetched::with_len(source, len);
    let mut shell = open_shell(source, path.parent().map(Path::to_path_buf), options)?;
    let f = shell.file_mut();
    f.path = Some(path.to_path_buf());
    f.opened = Some(guard::Fingerprint::of(&opened));
    Ok(shell)
}

/// Opens a remote file (`http(s)://`, `s3://`) with ranged reads (feature `remote`): the
/// header and tree in one or two requests, the block index from the tail, then only the
/// blocks, elements or rows asked for. See [`asdf_remote`] for the cache and read-ahead.
///
/// ```no_run
/// let f = asdf::open_url("s3://bucket/obs.asdf", asdf::OpenOptions::default(), &asdf::RemoteOptions::default())?;
/// let x = f.element("/data", &[0, 0])?;
/// println!("{x:?} after {} requests", f.remote_stats().map_or(0, |s| s.requests()));
/// # Ok::<(), asdf::Error>(())
/// ```
///
/// # Errors
/// [`Error::Remote`] when the file cannot be reached; then as [`open`].
#[cfg(feature = "remote")]
pub fn open_url(url: &str, options: OpenOptions, remote: &RemoteOptions) -> Result<AsdfFile, Error> {
    let src = asdf_remote::RemoteSource::open(url, remote).map_err(|e| Error::Remote(Box::new(e)))?;
    let stats = src.stats();
    let mut f = open_source(Box::new(src), None, options)?;
    f.remote = Some(stats);
    Ok(f)
}

/// Opens a local path or, with feature `remote`, a URL ([`open_url`] with default remote
/// options): what a command line that takes either needs.
///
/// # Errors
/// As [`open_with`] and [`open_url`].
pub fn open_path_or_url(target: impl AsRef<Path>, options: OpenOptions) -> Result<AsdfFile, Error> {
    #[cfg(feature = "remote")]
    if let Some(url) = target.as_ref().to_str().filter(|s| asdf_remote::is_url(s)) {
        return open_url(url, options, &RemoteOptions::default());
    }
    open_with(target, options)
}

/// Opens an ASDF file held in memory.
///
/// # Errors
/// See [`Error`].
pub fn open_bytes(bytes: Vec<u8>, options: OpenOptions) -> Result<AsdfFile, Error> {
    open_source(Box::new(bytes), None, options)
}

/// Opens an ASDF file from any `Read + Seek` (read on demand; nothing is mapped).
///
/// # Errors
/// See [`Error`].
pub fn open_reader<R: std::io::Read + std::io::Seek + Send + 'static>(
    reader: R,
    options: OpenOptions,
) -> Result<AsdfFile, Error> {
    let src = asdf_layout::SeekSource::new(reader).map_err(|source| Error::Io {
        path: PathBuf::from("<reader>"),
        source,
    })?;
    open_source(Box::new(src), None, options)
}

fn shift(span: Span, lines: u64) -> Span {
    Span {
        line: span.line.saturating_add(u32::try_from(lines).unwrap_or(u32::MAX)),
        ..span
    }
}

/// Opens `path` for reading without blocking on a FIFO and without making a terminal the
/// controlling one (reads of a regular file ignore `O_NONBLOCK`). The caller then refuses
/// anything but a regular file: a device the user names is opened, then closed unread.
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK | libc::O_NOCTTY);
    o.open(path)
}

fn open_source(source: Box<dyn ReadAt>, dir: Option<PathBuf>, options: OpenOptions) -> Result<AsdfFile, Error> {
    let source = asdf_layout::Prefetched::new(source).map_err(asdf_layout::Error::from)?;
    open_prefetched(source, dir, options)
}

fn open_prefetched(
    source: asdf_layout::Prefetched<Box<dyn ReadAt>>,
    dir: Option<PathBuf>,
    options: OpenOptions,
) -> Result<AsdfFile, Error> {
    open_shell(source, dir, options)?.finish()
}

/// The header and block index read; the tree not yet parsed (FITS files open in full).
fn open_shell(
    source: asdf_layout::Prefetched<Box<dyn ReadAt>>,
    dir: Option<PathBuf>,
    options: OpenOptions,
) -> Result<Shell, Error> {
    // The FITS check reads through the reader's head cache: one read for both.
    if fits::is_fits(&source) {
        return fits::open(source.into_inner(), dir, options).map(Shell::Done);
    }
    let ro = ReadOptions::default()
        .registry(legacy::read_registry())
        .limits(options.layout_limits)
        .verify_checksums(options.verify_checksums);
    let reader = Reader::open_prefetched(source, ro)?;
    // A pre-1.0 file's tree is mapped onto the 1.0.0 tags (whatever its `#ASDF_STANDARD`
    // says, 0.1.0 in the last drafts): it is read as 1.0.0.
    let standard = if reader.file_header().dialect.is_legacy() {
        Version::STANDARD_DEFAULT
    } else {
        reader.file_header().standard_version
    };
    if !reads_standard(standard) {
        return Err(Error::UnsupportedStandard(standard));
    }
    let mut warnings: Vec<Warning> = reader.warnings().iter().cloned().map(Warning::Layout).collect();
    if UNSTABLE_STANDARDS.contains(&standard) {
        warnings.push(Warning::UnstableStandard(standard));
    }
    let tree_line = reader.file_header().comments.len() as u64 + 1;
    Ok(Shell::Tree(AsdfFile {
        reader,
        doc: Document::new(Node::map(Vec::new())),
        path: None,
        dir,
        warnings,
        standard,
        options,
        tree_line,
        pending: Vec::new(),
        opened: None,
        #[cfg(feature = "remote")]
        remote: None,
        fits: None,
    }))
}

/// A file whose header and block index are read, and whose tree is still to be parsed.
enum Shell {
    /// Opened in full already (FITS).
    Done(AsdfFile),
    /// Its `doc` is an empty placeholder until [`AsdfFile::finish_open`].
    Tree(AsdfFile),
}

impl Shell {
    fn file_mut(&mut self) -> &mut AsdfFile {
        match self {
            Shell::Done(f) | Shell::Tree(f) => f,
        }
    }

    fn finish(self) -> Result<AsdfFile, Error> {
        match self {
            Shell::Done(f) => Ok(f),
            Shell::Tree(f) => f.finish_open(),
        }
    }
}

impl AsdfFile {
    /// The tree of the file's text, parsed (errors and warnings at lines of the file).
    fn parse_tree(&self) -> Result<(Document, Vec<asdf_yaml::Warning>), Error> {
        let tree_line = self.tree_line;
        Ok(match self.reader.tree_bytes() {
            Some(t) => {
                let parsed = asdf_yaml::parse(t, &self.options.yaml_limits).map_err(|e| shift_error(e, tree_line))?;
                let warnings = parsed
                    .warnings
                    .into_iter()
                    .map(|w| shift_warning(w, tree_line))
                    .collect();
                (parsed.document, warnings)
            }
            None => (Document::new(Node::map(Vec::new())), Vec::new()),
        })
    }

    /// The rest of an open: the tree parsed, mapped from older eras, its tags checked and
    /// (when asked) validated.
    fn finish_open(mut self) -> Result<AsdfFile, Error> {
        let (mut doc, yaml_warnings) = self.parse_tree()?;
        self.warnings.extend(yaml_warnings.into_iter().map(Warning::Yaml));
        // A FINF tree is validated as written against FINF's own schemas, then mapped.
        let era = if self.options.validate {
            legacy::validate_era(&doc, &self.reader)?
        } else {
            None
        };
        legacy::normalize(&mut doc, &self.reader);
        self.doc = doc;
        let mut file = self;
        let tree_line = file.tree_line;
        let schemas = match &file.options.schemas {
            Some(s) => s.clone(),
            None => asdf_core_types::schemas().map_err(Error::BuiltinSchemas)?,
        };
        if file.standard < Version::new(1, 6, 0) {
            schemas.fill_defaults(&mut file.doc);
        }
        let mut report = if file.options.validate {
            schemas.validate_document(&file.doc)
        } else {
            schemas.check_tags(&file.doc)
        };
        if let Some(era) = era {
            report.violations.extend(era.violations);
        }
        file.warnings.extend(report.warnings.into_iter().map(|w| {
            Warning::Tag(match w {
                TagWarning::Unknown { tag, span } => TagWarning::Unknown {
                    tag,
                    span: shift(span, tree_line),
                },
                other => other,
            })
        }));
        if file.options.validate && !report.violations.is_empty() {
            let violations = report.violations.into_iter().map(|mut v| {
                v.span = shift(v.span, tree_line);
                v
            });
            if file.options.strict {
                return Err(Error::Invalid(violations.collect()));
            }
            file.warnings.extend(violations.map(Warning::Invalid));
        }
        Ok(file)
    }
}

/// The node at a JSON pointer of `doc` (aliases followed).
#[must_use]
pub fn get_node<'a>(doc: &'a Document, pointer: &str) -> Option<&'a Node> {
    asdf_yaml::pointer::get(doc, pointer).ok()
}

/// Sets the node at a JSON pointer of `doc`; returns the node replaced.
///
/// # Errors
/// [`Error::NotFound`] when the parent does not exist.
pub fn set_node(doc: &mut Document, pointer: &str, node: Node) -> Result<Option<Node>, Error> {
    asdf_yaml::pointer::set(doc, pointer, node).map_err(|_| Error::NotFound(pointer.to_owned()))
}

/// The YAML text of a document, written as Python asdf writes trees.
///
/// # Errors
/// [`Error::Yaml`] when the emitter refuses the tree.
pub fn emit_yaml(doc: &Document) -> Result<Vec<u8>, Error> {
    Ok(asdf_yaml::emit(doc, &asdf_yaml::EmitOptions::default())?)
}

fn shift_error(e: asdf_yaml::Error, lines: u64) -> Error {
    use asdf_yaml::Error as Y;
    Error::Yaml(match e {
        Y::Syntax { span, problem, context } => Y::Syntax {
            span: shift(span, lines),
            problem,
            context,
        },
        Y::Construct { span, kind } => Y::Construct {
            span: shift(span, lines),
            kind,
        },
        Y::Subset { span, kind } => Y::Subset {
            span: shift(span, lines),
            kind,
        },
        Y::Limits { span, kind } => Y::Limits {
            span: shift(span, lines),
            kind,
        },
        other => other,
    })
}

fn shift_warning(w: asdf_yaml::Warning, lines: u64) -> asdf_yaml::Warning {
    use asdf_yaml::Warning as W;
    match w {
        W::IntOutOfRange { span, text } => W::IntOutOfRange {
            span: shift(span, lines),
            text,
        },
        W::DuplicateKey { span, key } => W::DuplicateKey {
            span: shift(span, lines),
            key,
        },
        other => other,
    }
}

impl AsdfFile {
    /// A new, empty file for ASDF Standard `standard` (use [`Version::STANDARD_LATEST`], 1.6.0,
    /// unless a reader needs an older one): the root tagged `core/asdf` of that version.
    ///
    /// # Errors
    /// [`Error::UnsupportedStandard`].
    pub fn new(standard: Version) -> Result<Self, Error> {
        if !reads_standard(standard) {
            return Err(Error::UnsupportedStandard(standard));
        }
        let root_tag = write::standard_tag(standard, "core/asdf")?.ok_or(Error::UnsupportedStandard(standard))?;
        let mut w = asdf_layout::Writer::new(Vec::new(), standard)?;
        let doc = Document::new(Node::map(Vec::new()).with_tag(root_tag));
        w.write_tree(&asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?)?;
        let reader = Reader::open(Box::new(w.finish(false)?) as Box<dyn ReadAt>)?;
        Ok(AsdfFile {
            reader,
            doc,
            path: None,
            dir: None,
            warnings: Vec::new(),
            standard,
            options: OpenOptions::default(),
            tree_line: 3,
            pending: Vec::new(),
            opened: None,
            #[cfg(feature = "remote")]
            remote: None,
            fits: None,
        })
    }

    /// Whether the file opened from a path is still the file that was opened (same device,
    /// inode, length and modification time): `false` once another writer has replaced or
    /// changed it, and for files not opened from a path.
    #[must_use]
    pub fn unchanged_on_disk(&self) -> bool {
        match (&self.path, &self.opened) {
            (Some(p), Some(fp)) => std::fs::metadata(p).is_ok_and(|m| guard::Fingerprint::of(&m) == *fp),
            _ => false,
        }
    }

    /// What this file's remote source has fetched (requests, bytes, ranges); `None` for a
    /// local file (feature `remote`).
    #[cfg(feature = "remote")]
    #[must_use]
    pub fn remote_stats(&self) -> Option<std::sync::Arc<asdf_remote::Stats>> {
        self.remote.clone()
    }

    /// The root of the tree.
    #[must_use]
    pub fn tree(&self) -> &Node {
        &self.doc.root
    }

    /// The parsed YAML document.
    #[must_use]
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// The node at a JSON pointer (`/sci/data`), aliases followed.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub fn get(&self, pointer: &str) -> Result<&Node, Error> {
        asdf_yaml::pointer::get(&self.doc, pointer).map_err(|e| edit::pointer_error(pointer, e))
    }

    /// Warnings met while opening.
    #[must_use]
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The schema violations found on open ([`Warning::Invalid`]; empty when the file was
    /// opened without validation, or strictly).
    pub fn violations(&self) -> impl Iterator<Item = &asdf_schema::Violation> {
        self.warnings.iter().filter_map(|w| match w {
            Warning::Invalid(v) => Some(v),
            _ => None,
        })
    }

    /// The file's ASDF Standard version.
    #[must_use]
    pub fn standard_version(&self) -> Version {
        self.standard
    }

    /// The byte-layout reader underneath (every block header and raw access); most callers
    /// want [`AsdfFile::blocks`].
    #[must_use]
    pub fn layout(&self) -> &Reader<Box<dyn ReadAt>> {
        &self.reader
    }

    /// Validates the tree again (for example after `validate(false)` at open).
    ///
    /// # Errors
    /// [`Error::Schema`] when the schemas cannot be loaded.
    pub fn validate(&self) -> Result<Report, Error> {
        self.validate_with(&*schemas()?, None)
    }

    /// Validates the tree with `schemas` (see [`schemas_to_extend`]) and, when `custom` names a
    /// schema in them, the whole tree against that schema as well (Python asdf's
    /// `custom_schema`).
    ///
    /// # Errors
    /// [`Error::Schema`] when `custom` is not one of `schemas`.
    pub fn validate_with(&self, schemas: &AsdfSchemas, custom: Option<&str>) -> Result<Report, Error> {
        // Before 1.6.0, the defaults of these schemas (an extension's too) are filled in
        // before validating, as Python asdf does: a required property with a default is not
        // missing. (In a copy: the file's tree is not changed.)
        let filled;
        let doc = if self.standard < Version::new(1, 6, 0) {
            let mut d = self.doc.clone();
            schemas.fill_defaults(&mut d);
            filled = d;
            &filled
        } else {
            &self.doc
        };
        let mut r = schemas.validate_document(doc);
        if let Some(uri) = custom {
            let vs = schemas.validator().validate(uri, &doc.root, doc, "")?;
            r.violations.extend(vs);
        }
        for v in &mut r.violations {
            v.span = shift(v.span, self.tree_line);
        }
        Ok(r)
    }

    /// Replaces the tree with `yaml`, a complete YAML document (`%YAML 1.1` through `...`), as
    /// after editing the tree by hand; the blocks stay as they are. It is parsed with the limits
    /// the file was opened with, and not validated (call [`AsdfFile::validate`]). From here on,
    /// lines in errors and reports are lines of `yaml`. Returns the parser's warnings.
    ///
    /// # Errors
    /// [`Error::Yaml`] with the line and column in `yaml`; the tree is then left unchanged.
    pub fn set_tree_yaml(&mut self, yaml: &[u8]) -> Result<Vec<Warning>, Error> {
        let parsed = asdf_yaml::parse(yaml, &self.options.yaml_limits)?;
        self.doc = parsed.document;
        self.tree_line = 0;
        Ok(parsed.warnings.into_iter().map(Warning::Yaml).collect())
    }

    /// The absolute index, among the file's blocks and those added since, of a block
    /// source (`-1` is the last block): the one place negative sources are counted.
    fn block_index(&self, source: i64) -> Option<usize> {
        let total = self.reader.block_count() + self.pending.len();
        let abs = if source < 0 {
            i64::try_from(total).ok()?.checked_add(source)?
        } else {
            source
        };
        usize::try_from(abs).ok().filter(|i| *i < total)
    }

    /// Where block `source` lives (`None` past the end).
    fn block_ref(&self, source: i64) -> Option<BlockRef> {
        let idx = self.block_index(source)?;
        Some(match idx.checked_sub(self.reader.block_count()) {
            None => BlockRef::File(idx),
            Some(k) => BlockRef::Pending(k),
        })
    }

    /// Where the data of `a` (an ndarray of this file at `pointer`) lives.
    fn locate(&self, a: &NdArray, pointer: &str) -> Result<Option<BlockRef>, Error> {
        match &a.source {
            None => Ok(None),
            Some(Source::Block(i)) => self.block_ref(*i).map(Some).ok_or_else(|| Error::Array {
                pointer: pointer.to_owned(),
                source: NdArrayError::MissingBlock,
            }),
            Some(Source::Uri(u)) if u.starts_with("fits:") => Ok(Some(BlockRef::Fits(self.fits_hdu(u, pointer)?))),
            Some(Source::Uri(u)) => Ok(Some(BlockRef::External(u.clone()))),
        }
    }

    /// The decoded bytes of a block: borrowed from the memory map for uncompressed blocks.
    fn block_data(&self, at: BlockRef, pointer: &str) -> Result<std::borrow::Cow<'_, [u8]>, Error> {
        use std::borrow::Cow;
        match at {
            BlockRef::File(i) => Ok(self.reader.read_data(i)?),
            BlockRef::Pending(k) => Ok(Cow::Borrowed(self.pending[k].data.as_slice())),
            BlockRef::External(u) => Ok(Cow::Owned(self.external_block(&u, pointer)?)),
            BlockRef::Loaded(data) => Ok(Cow::Owned(data)),
            BlockRef::Fits(i) => self.fits_bytes(i, None),
        }
    }

    /// The bytes `view` reads from its block: for a compressed block of this file of which the
    /// view touches at most half, only the range it touches is decoded (Blosc2 frames decode
    /// just the chunks it spans, streaming codecs stop at its end; special chunks need no
    /// buffer), and `view` is rebased onto that range. A 4-element view over a block that
    /// decodes to gigabytes costs its 4 elements' chunk, not the block.
    fn view_data(&self, view: &mut View, at: BlockRef, pointer: &str) -> Result<std::borrow::Cow<'_, [u8]>, Error> {
        if let BlockRef::File(i) = at {
            let b = self.reader.block(i)?;
            let range = view.byte_range();
            if !b.header.compression.is_none() && (range.end - range.start) <= b.data_len() / 2 {
                let data = self.reader.read_range(i, range.clone())?;
                view.offset -= range.start;
                return Ok(data);
            }
        }
        self.block_data(at, pointer)
    }

    fn ndarray_at(&self, pointer: &str) -> Result<NdArray, Error> {
        let node = self.get(pointer)?;
        NdArray::from_node(node, &self.doc).map_err(array_error(pointer))
    }

    /// The byte layout of the block-backed ndarray at `pointer` (shape, strides, offset,
    /// datatype, byte order), checked against its block, and where its block is; no data is
    /// read for blocks of this file.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Array`] for inline arrays (`MissingBlock`) and views
    /// outside their block.
    pub fn view(&self, pointer: &str) -> Result<View, Error> {
        let a = self.ndarray_at(pointer)?;
        self.view_of(&a, pointer).map(|(v, _)| v)
    }

    fn view_of(&self, a: &NdArray, pointer: &str) -> Result<(View, BlockRef), Error> {
        let err = array_error(pointer);
        let at = self
            .locate(a, pointer)?
            .ok_or_else(|| err(NdArrayError::MissingBlock))?;
        // An external file's block has to be read for its length: keep what was read.
        let at = match at {
            BlockRef::External(u) => BlockRef::Loaded(self.external_block(&u, pointer)?),
            other => other,
        };
        let len = match &at {
            BlockRef::File(i) => self.reader.block(*i)?.data_len(),
            BlockRef::Pending(k) => self.pending[*k].data.len() as u64,
            BlockRef::External(_) => 0,
            BlockRef::Loaded(data) => data.len() as u64,
            BlockRef::Fits(i) => self.fits_hdus().and_then(|h| h.get(*i)).map_or(0, |h| h.data_len),
        };
        Ok((View::new(a, len).map_err(err)?, at))
    }

    /// One element of the ndarray at `pointer`, by index (one per dimension). For an
    /// uncompressed block of this file only that element's bytes are read (a few pages of a
    /// memory-mapped file); a compressed block is decoded whole.
    ///
    /// # Errors
    /// [`Error::Array`] for an index out of range; as [`AsdfFile::array`].
    pub fn element(&self, pointer: &str, index: &[usize]) -> Result<Element, Error> {
        self.array(pointer)?.element(index)
    }

    /// One element of an inline array's decoded elements.
    fn inline_element(d: &Decoded, pointer: &str, index: &[usize]) -> Result<Element, Error> {
        let err = array_error(pointer);
        if index.len() != d.shape.len() || index.iter().zip(&d.shape).any(|(i, n)| i >= n) {
            return Err(err(NdArrayError::Invalid("index")));
        }
        let flat = index.iter().zip(&d.shape).fold(0usize, |acc, (i, n)| acc * n + i);
        d.elements
            .get(flat)
            .cloned()
            .ok_or_else(|| err(NdArrayError::Invalid("index")))
    }

    /// One element of the block-backed array `view` at `at` describes.
    fn element_at(&self, view: &View, at: BlockRef, pointer: &str, index: &[usize]) -> Result<Element, Error> {
        let err = array_error(pointer);
        let off = view.element_offset(index).map_err(err)?;
        let size = view.datatype.size() as u64;
        let bytes = match at {
            BlockRef::File(i) => self.reader.read_range(i, off..off + size)?,
            BlockRef::Fits(i) => self.fits_bytes(i, Some(off..off + size))?,
            other => {
                let all = self.block_data(other, pointer)?;
                let (s, e) = (
                    usize::try_from(off).unwrap_or(usize::MAX),
                    usize::try_from(off + size).unwrap_or(usize::MAX),
                );
                std::borrow::Cow::Owned(
                    all.get(s..e)
                        .ok_or_else(|| err(NdArrayError::Invalid("index")))?
                        .to_vec(),
                )
            }
        };
        view.decode_one(&bytes).map_err(err)
    }

    /// The elements of the ndarray at `pointer` as `Vec<T>` in native byte order, C order
    /// (the datatype must be exactly `T`'s: `f64` for float64, ...).
    ///
    /// # Errors
    /// [`Error::Array`] with `TypeMismatch`; as [`AsdfFile::array`].
    pub fn array_as<T: Scalar>(&self, pointer: &str) -> Result<Vec<T>, Error> {
        self.array(pointer)?.read()
    }

    /// The ndarray at `pointer` as an `ndarray::ArrayD<T>` (feature `ndarray`; the datatype
    /// must be exactly `T`'s).
    ///
    /// # Errors
    /// As [`AsdfFile::array_as`].
    #[cfg(feature = "ndarray")]
    pub fn array_nd<T: Scalar>(&self, pointer: &str) -> Result<ndarray::ArrayD<T>, Error> {
        let a = self.ndarray_at(pointer)?;
        let shape = match a.source {
            None => a.decode(None).map(|d| d.shape),
            Some(_) => self.view_of(&a, pointer).map(|(v, _)| Ok(v.shape))?,
        }
        .map_err(array_error(pointer))?;
        let v = self.array_as::<T>(pointer)?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v).map_err(|_| Error::Array {
            pointer: pointer.to_owned(),
            source: NdArrayError::ShapeMismatch,
        })
    }

    /// The elements of the block-backed ndarray at `pointer` as a slice of `T`: borrowed
    /// straight from the memory-mapped file when the block is uncompressed, the byte order
    /// native, the layout C-contiguous and the data aligned; a copy otherwise.
    ///
    /// # Errors
    /// As [`AsdfFile::array_as`].
    pub fn array_slice<T: Scalar + bytemuck::Pod>(&self, pointer: &str) -> Result<std::borrow::Cow<'_, [T]>, Error> {
        use std::borrow::Cow;
        let err = array_error(pointer);
        let a = self.ndarray_at(pointer)?;
        if a.source.is_none() {
            return self.array_as(pointer).map(Cow::Owned);
        }
        let (mut view, at) = self.view_of(&a, pointer)?;
        match self.view_data(&mut view, at, pointer)? {
            Cow::Borrowed(b) => match view.as_slice::<T>(b) {
                Some(s) => Ok(Cow::Borrowed(s)),
                None => view.to_vec(b).map(Cow::Owned).map_err(err),
            },
            Cow::Owned(b) => view.to_vec(&b).map(Cow::Owned).map_err(err),
        }
    }

    /// The elements of the block-backed ndarray at `pointer`, one by one as `T` (native byte
    /// order, C order), read straight from the memory-mapped block: no copy of the array
    /// whatever its alignment or byte order (`f.array_iter::<f64>("/data")?.sum()`).
    ///
    /// # Errors
    /// As [`AsdfFile::array_as`]; [`Error::Array`] (`MissingBlock`) for inline arrays.
    pub fn array_iter<T: Scalar>(&self, pointer: &str) -> Result<asdf_core_types::Elements<'_, T>, Error> {
        self.array(pointer)?.iter()
    }

    /// The elements of the block-backed array `view` at `at` describes, one by one.
    fn iter_at<T: Scalar>(
        &self,
        mut view: View,
        at: BlockRef,
        pointer: &str,
    ) -> Result<asdf_core_types::Elements<'_, T>, Error> {
        let data = self.view_data(&mut view, at, pointer)?;
        view.iter(data).map_err(array_error(pointer))
    }

    /// Calls `f` on every element of the ndarray at `pointer`, in C order, as `T` in native
    /// byte order, with bounded memory: a compressed block is decoded piece by piece (about
    /// 1 MiB at a time) and never held whole, an uncompressed one is read in pieces of the
    /// file. For views that are not C-contiguous the block is read whole, as
    /// [`AsdfFile::array_iter`] does.
    ///
    /// ```no_run
    /// let f = asdf::open("big.asdf")?;
    /// let mut total = 0i64;
    /// f.array_for_each::<i32>("/counts", |x| total += i64::from(x))?;
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`AsdfFile::array_as`]; a decoding error may come after `f` saw some elements.
    pub fn array_for_each<T: Scalar>(&self, pointer: &str, mut f: impl FnMut(T)) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        self.array(pointer)?.pieces::<T>(&mut |p| match p {
            Piece::Bytes(bytes, order) => {
                for c in bytes.chunks_exact(size) {
                    f(T::read(c, order));
                }
            }
            Piece::One(x) => f(x),
        })
    }

    /// Calls `f` on the elements of the ndarray at `pointer` in C order, a slice of up to
    /// [`CHUNK_ELEMENTS`] at a time, as `T` in native byte order, with the bounded memory of
    /// [`AsdfFile::array_for_each`]: for reductions written over slices, which the compiler can
    /// vectorise (a sum with several accumulators, a min/max, a histogram).
    ///
    /// ```no_run
    /// let f = asdf::open("big.asdf")?;
    /// let mut lanes = [0.0f64; 8];
    /// f.array_chunks::<f64>("/data", |c| {
    ///     for (i, x) in c.iter().enumerate() {
    ///         lanes[i % 8] += x;
    ///     }
    /// })?;
    /// let total: f64 = lanes.iter().sum();
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`AsdfFile::array_for_each`].
    pub fn array_chunks<T: Scalar>(&self, pointer: &str, f: impl FnMut(&[T])) -> Result<(), Error> {
        self.array(pointer)?.for_each_chunk(f)
    }

    /// Hands `g` the elements of the block-backed array `view` at `at` describes, in C order:
    /// the bytes of whole elements with their byte order, or (strided views, blocks not in
    /// this file) elements one by one; bounded memory as [`AsdfFile::array_for_each`] says.
    fn pieces_at<T: Scalar>(
        &self,
        view: &View,
        at: &BlockRef,
        pointer: &str,
        g: &mut dyn FnMut(Piece<'_, T>),
    ) -> Result<(), Error> {
        let err = array_error(pointer);
        let size = std::mem::size_of::<T>();
        let mut one_by_one = |xs: &mut dyn Iterator<Item = T>| {
            for x in xs {
                g(Piece::One(x));
            }
        };
        let BlockRef::File(block) = *at else {
            one_by_one(&mut self.iter_at::<T>(view.clone(), at.clone(), pointer)?);
            return Ok(());
        };
        if view.datatype != Datatype::Scalar(T::TYPE) {
            return Err(err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: view.datatype.to_string(),
            }));
        }
        if !view.is_c_contiguous() {
            one_by_one(&mut self.iter_at::<T>(view.clone(), at.clone(), pointer)?);
            return Ok(());
        }
        let range = view.byte_range();
        let order = view.byteorder;
        // Position in the decoded block, and the bytes of an element split between pieces.
        let (mut pos, mut carry) = (0u64, Vec::<u8>::with_capacity(size));
        self.reader.read_data_pieces(block, &mut |piece: &[u8]| {
            let start = pos;
            pos += piece.len() as u64;
            let lo = usize::try_from(range.start.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
            let hi = usize::try_from(range.end.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
            let mut part = &piece[lo..hi.max(lo)];
            if !carry.is_empty() {
                let take = (size - carry.len()).min(part.len());
                carry.extend_from_slice(&part[..take]);
                part = &part[take..];
                if carry.len() == size {
                    g(Piece::Bytes(&carry, order));
                    carry.clear();
                }
            }
            let whole = part.len() - part.len() % size;
            if whole > 0 {
                g(Piece::Bytes(&part[..whole], order));
            }
            carry.extend_from_slice(&part[whole..]);
        })?;
        Ok(())
    }

    fn block_bytes(&self, a: &NdArray, pointer: &str) -> Result<Option<Vec<u8>>, Error> {
        match self.locate(a, pointer)? {
            None => Ok(None),
            Some(at) => Ok(Some(self.block_data(at, pointer)?.into_owned())),
        }
    }

    /// Hands `f` the elements of the ndarray at `pointer` in C order, decoded one at a time
    /// and never held together (a zero-strided view of 10^9 elements costs nothing to walk);
    /// only the array's block is held, as [`AsdfFile::array_iter`] holds it. Masks are not
    /// applied (read them with [`AsdfFile::array`]).
    ///
    /// # Errors
    /// As [`AsdfFile::array`].
    pub fn with_elements<R>(
        &self,
        pointer: &str,
        f: impl FnOnce(&[usize], &mut dyn Iterator<Item = Element>) -> R,
    ) -> Result<R, Error> {
        let err = array_error(pointer);
        let a = self.ndarray_at(pointer)?;
        if a.source.is_none() {
            let d = a.decode(None).map_err(err)?;
            return Ok(f(&d.shape, &mut d.elements.into_iter()));
        }
        let (mut view, at) = self.view_of(&a, pointer)?;
        let data = self.view_data(&mut view, at, pointer)?;
        let mut it = view.elements(&data).map_err(err)?;
        Ok(f(&view.shape, &mut it))
    }

    /// Decodes the ndarray at `pointer` into dynamically typed elements, with its mask (its
    /// block is read now, and only its block). For typed reads use [`AsdfFile::array`].
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Array`], block errors.
    pub fn array_values(&self, pointer: &str) -> Result<ArrayValues, Error> {
        let node = self.get(pointer)?;
        let err = array_error(pointer);
        let a = NdArray::from_node(node, &self.doc).map_err(err)?;
        let block = self.block_bytes(&a, pointer)?;
        let d = a.decode(block.as_deref()).map_err(err)?;
        let mask = match &a.mask {
            None => None,
            Some(asdf_core_types::Mask::Array(m)) => {
                let mb = self.block_bytes(m, pointer)?;
                a.mask_flags(&d, mb.as_deref()).map_err(err)?
            }
            Some(asdf_core_types::Mask::Value(_)) => a.mask_flags(&d, None).map_err(err)?,
        };
        Ok(ArrayValues {
            datatype: d.datatype,
            shape: d.shape,
            elements: d.elements,
            mask,
        })
    }
}
