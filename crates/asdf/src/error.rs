//! What can go wrong ([`Error`], [`ErrorKind`]) and what did not stop reading ([`Warning`]).

use asdf_core_types::NdArrayError;
use asdf_layout::Version;
use asdf_schema::{TagWarning, Violation};
use asdf_yaml::pointer::PointerError;
use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong opening or reading a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes of the file (header, blocks, index, compression).
    #[error(transparent)]
    Layout(#[from] asdf_layout::Error),
    /// The YAML tree (positions are lines of the file).
    #[error("{0}")]
    Yaml(#[from] asdf_yaml::Error),
    /// A schema or manifest that cannot be loaded or compiled (an extension's, a custom
    /// schema), or a schema asked for that is not there.
    #[error("schemas: {0}")]
    Schema(#[from] asdf_schema::SchemaError),
    /// A schema file or folder that cannot be loaded.
    #[error("{}: {source}", path.display())]
    SchemaFile {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: asdf_schema::SchemaError,
    },
    /// The schemas built into this library could not be loaded (a build defect).
    #[error("the built-in schemas: {0}")]
    BuiltinSchemas(&'static asdf_schema::SchemaError),
    /// The tree fails schema validation.
    #[error("the tree is invalid: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Violation>),
    /// An ASDF Standard version this library does not know.
    #[error("ASDF Standard version {0} is not supported (this library reads 1.0.0 to 1.6.0, and 1.7.0 as it stands)")]
    UnsupportedStandard(Version),
    /// Writing a file of an ASDF Standard version that is not final, without opting in.
    #[error(
        "ASDF Standard {0} is not final: writing it needs WriteOptions::unstable_standard(true) (or ASDF_UNSTABLE_CORE_SCHEMAS set)"
    )]
    UnstableStandard(Version),
    /// No node at this JSON pointer.
    #[error("no node at {0}")]
    NotFound(String),
    /// A remote file (`http(s)://`, `s3://`) that cannot be reached or written, or a URL
    /// given to a build without the feature `remote`.
    #[error(transparent)]
    Remote(Box<crate::net::RemoteError>),
    /// A JSON pointer that is not one (syntax, escapes), or that passes through an alias whose
    /// node was removed.
    #[error(transparent)]
    Pointer(asdf_yaml::pointer::PointerError),
    /// A FITS file's structure (ASDF embedded in FITS), or a `fits:` source of an ndarray at
    /// `pointer` (empty: the file itself).
    #[error("{}{source}", if pointer.is_empty() { String::new() } else { format!("{pointer}: ") })]
    Fits {
        /// Where the ndarray is (empty for the file).
        pointer: String,
        /// Why.
        #[source]
        source: asdf_fits::FitsError,
    },
    /// An ndarray that cannot be decoded.
    #[error("{pointer}: {source}")]
    Array {
        /// Where the ndarray is.
        pointer: String,
        /// Why.
        #[source]
        source: NdArrayError,
    },
    /// A chunked array (asdf-zarr) that cannot be read or written (or, built without the
    /// feature `zarr`, one asked to be written).
    #[error("{pointer}: {source}")]
    Chunked {
        /// Where the array is.
        pointer: String,
        /// Why.
        #[source]
        source: asdf_chunked::ChunkedError,
    },
    /// The storage of an array's bytes failed with an error of a kind not listed here (the
    /// storage trait's owner errors are boxed: FITS's and chunked arrays' are given as
    /// [`Error::Fits`] and [`Error::Chunked`]).
    #[error("{pointer}: {source}")]
    Storage {
        /// Where the array is.
        pointer: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A region (numpy's basic slicing) that does not fit the array.
    #[error("{pointer}: {source}")]
    Region {
        /// Where the array is.
        pointer: String,
        /// Why.
        #[source]
        source: asdf_core_types::region::RegionError,
    },
    /// A read of more bytes than the limit of a decoded block (`Limits::max_block_bytes`):
    /// a view whose strides overlap claims more elements than its block holds, and is held to
    /// what a file can really hold.
    #[error(
        "{pointer}: the region read is {bytes} bytes, more than the limit of {limit} (read a smaller region, or raise Limits::max_block_bytes)"
    )]
    ReadTooLarge {
        /// Where the array is.
        pointer: String,
        /// The bytes the read would make.
        bytes: u128,
        /// The limit.
        limit: u64,
    },
    /// A view whose strides (zero or overlapping) repeat its data far beyond what it spans, refused
    /// where its elements would be written out one by one ([`crate::Array::refuse_repeated`]).
    #[error(
        "{pointer}: the array is {bytes} bytes written out, from {data} bytes of data that its strides repeat (zero or overlapping strides; numpy keeps such a view as strides); read a region of it"
    )]
    Repeated {
        /// Where the array is.
        pointer: String,
        /// The bytes its elements make.
        bytes: u128,
        /// The bytes of data it views.
        data: u128,
    },
    /// A node read as a typed value ([`crate::AsdfFile::get_as`]) that is not one: another
    /// tag, or a key missing or of the wrong type.
    #[error("{pointer}: {source}")]
    Typed {
        /// Where the node is.
        pointer: String,
        /// Why.
        #[source]
        source: asdf_core_types::typed::TypedError,
    },
    /// An external file (exploded form) that cannot be read.
    #[error("{pointer}: external array file {file}: {source}")]
    External {
        /// Where the ndarray is.
        pointer: String,
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// A `$ref` that cannot be resolved.
    #[error("{pointer}: unresolvable reference `{reference}`: {problem}")]
    Reference {
        /// Where the `$ref` is.
        pointer: String,
        /// Its value.
        reference: String,
        /// Why.
        #[source]
        problem: ReferenceProblem,
    },
    /// A write over a file that another writer changed since it was opened (nothing was
    /// written; open the file again and redo the change).
    #[error("{path}: not written: the file changed since it was opened ({what}); open it again and redo the change")]
    Changed {
        /// The file.
        path: PathBuf,
        /// What changed.
        what: &'static str,
    },
    /// An output that is one of the files being read (it would be replaced before it was read).
    #[error("{output}: refusing to write over {input}, which is being read")]
    OutputIsInput {
        /// The output.
        output: PathBuf,
        /// The input it names.
        input: PathBuf,
    },
    /// Blocks that no ndarray names, which a write could not keep (exploded form has no place
    /// for them): nothing was written.
    #[error(
        "blocks {blocks:?} are not named by any ndarray (an extension may refer to them by index); refusing to drop them"
    )]
    UnnamedBlocks {
        /// Their indices in the file read.
        blocks: Vec<usize>,
    },
    /// What the array at `pointer` cannot do as asked: the bytes of an inline array (its
    /// elements are in the tree: read them typed or with `values`), a chunked array in the
    /// exploded form.
    #[error("{pointer}: {problem}")]
    NotSupported {
        /// Where the array is.
        pointer: String,
        /// What cannot be done.
        problem: &'static str,
    },
    /// [`crate::AsdfFile::update`] on a file that was not opened from a path.
    #[error("this file was not opened from a path: write it with `write` to a path")]
    NoPath,
    /// A call this library cannot carry out as asked (an argument out of its range).
    #[error("{0}")]
    Usage(&'static str),
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Why a reference (a `$ref`, an exploded file's array source) cannot be followed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceProblem {
    /// `http(s)://` is never fetched.
    #[error("http(s) references are not fetched")]
    Remote,
    /// [`crate::ReferencePolicy::None`].
    #[error("the reference policy allows no other file")]
    NoneAllowed,
    /// An absolute path, `..` or `file://` under [`crate::ReferencePolicy::RelativeOnly`].
    #[error(
        "only relative paths inside the file's directory are followed (the policy of any local path follows others: `--references any` in asdf-cli, `references=\"any\"` in asdf_rs, `ReferencePolicy::AnyLocalPath` in Rust)"
    )]
    NotRelative,
    /// A URI scheme other than `file://`.
    #[error("unsupported URI scheme")]
    Scheme,
    /// A relative path that a symbolic link takes outside the file's directory.
    #[error("it leads outside the file's directory (to {}) through a symbolic link", .0.display())]
    OutsideDirectory(PathBuf),
    /// The file was opened from memory: relative paths mean nothing.
    #[error("the file has no directory (opened from memory)")]
    NoDirectory,
    /// The other file cannot be opened.
    #[error("{0}")]
    Open(Box<Error>),
    /// The fragment is not a pointer to a node of the file.
    #[error("{0}")]
    Fragment(asdf_yaml::pointer::PointerError),
    /// The reference's place changed while references were being resolved.
    #[error("the reference moved")]
    Moved,
    /// No node at the fragment.
    #[error("no such node")]
    NoSuchNode,
    /// References that lead to one another and never to a node (`a: {$ref: "#/b"}` and
    /// `b: {$ref: "#/a"}`), by their pointers in order.
    #[error("the references form a cycle that reaches no node: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
}

/// What kind of problem an [`Error`] is, for callers who branch on it (as image-tiff's
/// error categories): the variants carry the details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing the file system.
    Io,
    /// The file's bytes are not a readable ASDF file (header, blocks, index, codecs).
    Format,
    /// The YAML tree cannot be read or written.
    Yaml,
    /// A schema or manifest (an extension's, or a build defect).
    Schema,
    /// The tree is readable but violates its schemas.
    Invalid,
    /// Something this library does not do (a standard version, an unstable standard).
    Unsupported,
    /// No such node, block or array element.
    NotFound,
    /// An ndarray that cannot be decoded as asked (datatype, shape, missing block).
    Array,
    /// A reference or external file that cannot be followed.
    Reference,
    /// A write refused to keep data safe (a concurrent change, output over input, blocks that
    /// would be dropped).
    Refused,
    /// A call made the wrong way (bad JSON pointer syntax, no path to update, bad argument).
    Usage,
}

impl Error {
    /// What kind of problem this is.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Layout(asdf_layout::Error::Io { .. }) | Error::Io { .. } => ErrorKind::Io,
            Error::Layout(_) => ErrorKind::Format,
            Error::Yaml(_) => ErrorKind::Yaml,
            Error::Schema(_) | Error::SchemaFile { .. } | Error::BuiltinSchemas(_) => ErrorKind::Schema,
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::UnsupportedStandard(_) | Error::UnstableStandard(_) => ErrorKind::Unsupported,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Remote(e) if e.is_changed() => ErrorKind::Refused,
            Error::Remote(e) if e.is_usage() => ErrorKind::Usage,
            Error::Remote(_) => ErrorKind::Io,
            Error::Array { .. } | Error::Typed { .. } => ErrorKind::Array,
            Error::Region { .. } => ErrorKind::Usage,
            Error::ReadTooLarge { .. } | Error::Repeated { .. } => ErrorKind::Array,
            Error::Chunked { .. } => ErrorKind::Array,
            Error::Storage { .. } => ErrorKind::Io,
            Error::Fits {
                source: asdf_fits::FitsError::Io { .. },
                ..
            } => ErrorKind::Io,
            Error::Fits {
                source: asdf_fits::FitsError::Compressed { .. } | asdf_fits::FitsError::Scaled { .. },
                ..
            } => ErrorKind::Unsupported,
            Error::Fits { .. } => ErrorKind::Format,
            Error::External { .. } | Error::Reference { .. } => ErrorKind::Reference,
            Error::Changed { .. } | Error::OutputIsInput { .. } | Error::UnnamedBlocks { .. } => ErrorKind::Refused,
            Error::Pointer(_) | Error::NoPath | Error::Usage(_) | Error::NotSupported { .. } => ErrorKind::Usage,
        }
    }
}

/// A problem that did not stop reading.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// From the file's bytes (an ignored block index, trailing bytes, ...).
    Layout(asdf_layout::Warning),
    /// From the YAML tree (out-of-range integers, YAML version, duplicate keys).
    Yaml(asdf_yaml::Warning),
    /// From the tags (unknown tags, newer versions).
    Tag(TagWarning),
    /// The file's ASDF Standard is not final (1.7.0 as it stands today): what it means may
    /// still change.
    UnstableStandard(Version),
    /// The tree violates a schema of its tags (with the node's pointer and line, and the
    /// schema's location). Opening reports violations this way unless
    /// [`crate::OpenOptions::strict`] is set; writing refuses them.
    Invalid(asdf_schema::Violation),
    /// An ndarray with a `fits:` source whose datatype or shape differs from its HDU's
    /// (Appendix A does not force them to agree; the ndarray's are used).
    FitsMismatch {
        /// Where the ndarray is.
        pointer: String,
        /// What differs.
        problem: String,
    },
}

impl Warning {
    /// The schema violation this warning reports, if it is one ([`Warning::Invalid`]).
    #[must_use]
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Warning::Invalid(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Layout(w) => write!(f, "{w}"),
            Warning::Yaml(w) => write!(f, "{w}"),
            Warning::Tag(w) => write!(f, "{w}"),
            Warning::Invalid(v) => write!(f, "schema violation: {v}"),
            Warning::UnstableStandard(v) => write!(f, "ASDF Standard {v} is not final yet"),
            Warning::FitsMismatch { pointer, problem } => write!(f, "{pointer}: {problem}"),
        }
    }
}

/// Turns a pointer problem at `pointer` into the facade's error: a missing node is
/// [`Error::NotFound`], anything else (syntax, an orphaned alias) [`Error::Pointer`].
pub(crate) fn pointer_error(pointer: &str, e: PointerError) -> Error {
    match e {
        PointerError::NotFound { .. } | PointerError::NotAContainer { .. } => Error::NotFound(pointer.to_owned()),
        other => Error::Pointer(other),
    }
}

/// Turns an ndarray problem into an [`Error::Array`] at `pointer`.
pub(crate) fn array_error(pointer: &str) -> impl Fn(NdArrayError) -> Error + Copy + '_ {
    move |source| Error::Array {
        pointer: pointer.to_owned(),
        source,
    }
}

/// Turns a storage's error into the error of its kind at `pointer`: the layout's as
/// [`Error::Layout`], a FITS HDU's as [`Error::Fits`], a chunked array's as [`Error::Chunked`].
pub(crate) fn storage_error(pointer: &str) -> impl Fn(asdf_layout::storage::StorageError) -> Error + Copy + '_ {
    move |e| match e {
        asdf_layout::storage::StorageError::Layout(e) => Error::Layout(e),
        asdf_layout::storage::StorageError::Owner(b) => match b.downcast::<asdf_fits::FitsError>() {
            Ok(source) => Error::Fits {
                pointer: pointer.to_owned(),
                source: *source,
            },
            Err(b) => match b.downcast::<asdf_chunked::ChunkedError>() {
                Ok(source) => Error::Chunked {
                    pointer: pointer.to_owned(),
                    source: *source,
                },
                Err(source) => Error::Storage {
                    pointer: pointer.to_owned(),
                    source,
                },
            },
        },
    }
}

impl From<asdf_layout::guard::LockError> for Error {
    fn from(e: asdf_layout::guard::LockError) -> Self {
        match e {
            asdf_layout::guard::LockError::Changed { path, what } => Error::Changed { path, what },
            asdf_layout::guard::LockError::Io(e) => e.into(),
        }
    }
}

impl From<asdf_core_types::finish::FinishError> for Error {
    fn from(e: asdf_core_types::finish::FinishError) -> Self {
        use asdf_core_types::finish::FinishError as F;
        match e {
            F::Schemas(e) => Error::BuiltinSchemas(e),
            F::Invalid(v) => Error::Invalid(v),
            F::NoSoftwareTag(_) => Error::NotFound("tag core/software in this ASDF Standard".to_owned()),
            F::Yaml(e) => Error::Yaml(e),
        }
    }
}

impl From<asdf_layout::atomic::WriteError> for Error {
    fn from(e: asdf_layout::atomic::WriteError) -> Self {
        Error::Io {
            path: e.path,
            source: e.source,
        }
    }
}
