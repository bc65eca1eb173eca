//! Read and write ASDF files: the tree, arrays decoded lazily from their blocks, validation
//! against the standard's schemas (on by default), writing (atomic, per-array compression),
//! updating in place, streamed and exploded forms, references.
//!
//! Where things are: [`open`] and [`Open`] (reading: paths, bytes, readers, URLs, lazy); [`AsdfFile::array`] and
//! [`Array`] (typed array handles), [`AsdfFile::source`] and [`Block`] (block handles);
//! [`AsdfFile::get`], [`AsdfFile::set`], [`AsdfFile::remove`], [`AsdfFile::move_node`]
//! (the tree by JSON pointer, aliases kept true); [`AsdfFile::put_array`] with [`NewArray`],
//! [`AsdfFile::write`] and [`WriteOptions`] (writing); [`AsdfFile::update`] (in place);
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

#[doc(inline)]
pub use asdf_core_types::region::{Region, RegionError};
pub use asdf_core_types::{
    ByteOrder, Complex, Datatype, Decoded, Dim, Element, NdArray, NdArrayError, Scalar, ScalarType, View, complex,
    is_ndarray_tag,
};
#[doc(inline)]
pub use asdf_layout::Limits as LayoutLimits;
/// The block codecs (for [`WriteOptions::codec`]: a `bls2` frame's chunk size, compressor, filter).
pub use asdf_layout::compression;
#[doc(inline)]
pub use asdf_layout::{Label, ReadAt, Version};
/// The remote layer (feature `remote`): HEAD, ranged fetches, uploads, listings.
#[cfg(feature = "remote")]
pub use asdf_remote as remote;
#[doc(inline)]
pub use asdf_schema::{AsdfSchemas, Manifest, Report, TagDef, TagWarning, Violation};
#[doc(inline)]
pub use asdf_yaml::Limits as YamlLimits;
pub use asdf_yaml::Warning as YamlWarning;
#[doc(inline)]
pub use asdf_yaml::pointer::escape as escape_pointer_token;
pub use asdf_yaml::{Alias, Anchor, Document, Node, NodeKind, Span, Step, Value, Visit, walk};
/// Re-exported for the `Pod` bounds of zero-copy reads.
pub use bytemuck;
/// Re-exported for reads as `ndarray::ArrayD` (feature `ndarray`; see [`FromRegion`]).
#[cfg(feature = "ndarray")]
pub use ndarray;
/// The layer crates, for what the facade does not wrap.
pub use {
    asdf_core_types as core_types, asdf_drafts as drafts, asdf_fits as fits, asdf_layout as layout,
    asdf_schema as schema, asdf_yaml as yaml,
};

mod array;
mod blocks;
mod builder;
mod draft_write;
mod edit;
mod error;
mod file;
mod fits_write;
mod lazy;
/// Files of the drafts before ASDF 1.0.0 mapped onto today's data model.
pub use asdf_drafts::legacy;
mod net;
mod open;
mod options;
mod read;
mod refs;
mod save;
mod source;
mod target;
mod update;
mod verify;
mod write;

pub use array::{Array, ArrayValues};
#[cfg(feature = "zarr")]
pub use asdf_chunked::{ChunkLayout, decode_zarr_chunk, zarr_compressor};
pub use asdf_chunked::{ChunkMap, ChunkedError, StoreObject};
pub use asdf_core_types::chunk_tags::{
    CHUNKED_NDARRAY_TAG_PREFIX, ZARR_TAG_PREFIX, is_chunked_array_tag, is_chunked_ndarray_tag, is_zarr_tag,
};
pub use asdf_core_types::view::CHUNK_ELEMENTS;
pub use asdf_fits::file::AsdfHdu;
pub use asdf_layout::atomic::remove_unfinished_temporaries;
pub use asdf_layout::guard::same_file;
pub use asdf_layout::storage::Storage;
pub use blocks::Block;
pub use builder::{NewArray, NewStorage, tag_for};
pub use error::{Error, ErrorKind, ReferenceProblem, Warning};
pub use file::AsdfFile;
pub use fits_write::FITS_KEY;
pub use lazy::LazyFile;
pub use net::{RemoteError, RemoteOptions, RemoteStats, is_url};
pub use open::{Open, open};
pub use options::{OpenOptions, ReferencePolicy};
pub use read::{FromRegion, RegionBytes};
pub use source::Source;
pub use target::{Compression, DraftChain, FitsWriteOptions, Form, Progress, Target, WriteOptions, Written};
pub use update::{RewriteReason, Update};
pub use verify::VerifyReport;
pub use write::StreamingWriter;
pub use write::write_atomically;

/// The schemas and manifests this build carries (the standard's, with the `datatype` and `ndim`
/// keywords), loaded once.
///
/// # Errors
/// [`Error::BuiltinSchemas`] when the embedded schemas cannot be loaded (a build defect).
pub fn schemas() -> Result<std::sync::Arc<AsdfSchemas>, Error> {
    asdf_core_types::schemas().map_err(Error::BuiltinSchemas)
}

/// A fresh copy of this build's schemas that you can extend: an extension's schemas and
/// manifests with [`AsdfSchemas::add_dir`], a custom schema with [`AsdfSchemas::add_schema`];
/// then [`AsdfFile::validate`] or [`OpenOptions::schemas`].
///
/// # Errors
/// [`Error::Schema`] when the embedded schemas cannot be loaded (a build defect).
pub fn schemas_to_extend() -> Result<AsdfSchemas, Error> {
    Ok(AsdfSchemas::with_options(asdf_core_types::compile_options())?)
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

/// The YAML text of a document, written as Python asdf writes trees.
///
/// # Errors
/// [`Error::Yaml`] when the emitter refuses the tree.
pub fn emit_yaml(doc: &Document) -> Result<Vec<u8>, Error> {
    Ok(asdf_yaml::emit(doc, &asdf_yaml::EmitOptions::default())?)
}
