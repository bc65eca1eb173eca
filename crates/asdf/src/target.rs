//! The one write entry, [`AsdfFile::write`]: a [`Target`] (a path, an object-store URL, bytes,
//! a stream) and [`WriteOptions`] whose [`Form`] says what is written (ASDF, FITS, a draft
//! before 1.0.0, the exploded form). Streamed writing ([`AsdfFile::write_streamed`]) and
//! updating in place ([`AsdfFile::update`]) are operations of their own.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use asdf_drafts::chain::Chain;
use asdf_layout::Label;

use crate::array::Array;
use crate::error::Error;
use crate::file::AsdfFile;
use asdf_fits::file::AsdfHdu;

/// Where [`AsdfFile::write`] writes.
#[non_exhaustive]
pub enum Target<'a> {
    /// A file, replaced atomically (over the file's own path: locked, and refused when another
    /// writer changed it since it was opened). A path that is an object-store URL (`s3://`,
    /// `gs://`, `az://`; feature `remote`) is written there as [`Target::Url`] writes it, with
    /// the storage options this file was opened with when it came from the same store.
    Path(Cow<'a, Path>),
    /// An object in a store, uploaded in parts (nothing visible until the upload completes),
    /// refused when the object changed meanwhile; with `etag`, written only over that version
    /// of the object (feature `remote`; refused without it).
    Url {
        /// The object's URL.
        url: &'a str,
        /// The store's options.
        remote: &'a crate::net::RemoteOptions,
        /// The version (ETag) the write may replace; `None`: the one read, or the one there
        /// when the write began (or none).
        etag: Option<&'a str>,
    },
    /// In memory: [`Written::into_bytes`].
    Bytes,
    /// To a stream (made in memory first, except a draft, which is written as it goes).
    Writer(&'a mut dyn std::io::Write),
}

impl std::fmt::Debug for Target<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Path(p) => f.debug_tuple("Path").field(p).finish(),
            Target::Url { url, etag, .. } => f
                .debug_struct("Url")
                .field("url", url)
                .field("etag", etag)
                .finish_non_exhaustive(),
            Target::Bytes => f.write_str("Bytes"),
            Target::Writer(_) => f.write_str("Writer"),
        }
    }
}

impl<'a> From<&'a Path> for Target<'a> {
    fn from(p: &'a Path) -> Self {
        Target::Path(Cow::Borrowed(p))
    }
}
impl<'a> From<&'a PathBuf> for Target<'a> {
    fn from(p: &'a PathBuf) -> Self {
        Target::Path(Cow::Borrowed(p.as_path()))
    }
}
impl From<PathBuf> for Target<'_> {
    fn from(p: PathBuf) -> Self {
        Target::Path(Cow::Owned(p))
    }
}
impl<'a> From<&'a str> for Target<'a> {
    fn from(p: &'a str) -> Self {
        Target::Path(Cow::Borrowed(Path::new(p)))
    }
}
impl<'a> From<&'a String> for Target<'a> {
    fn from(p: &'a String) -> Self {
        Target::Path(Cow::Borrowed(Path::new(p.as_str())))
    }
}
impl From<String> for Target<'_> {
    fn from(p: String) -> Self {
        Target::Path(Cow::Owned(PathBuf::from(p)))
    }
}

/// What a write made.
#[derive(Debug, Default)]
pub struct Written {
    pub(crate) bytes: Vec<u8>,
    pub(crate) files: Vec<PathBuf>,
}

impl Written {
    /// The file's bytes, for [`Target::Bytes`] (empty for other targets).
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The files written by the exploded form: its array files and the target (empty for other
    /// forms).
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// Which encoding chain each block of a draft is written with: called with the block's index
/// and the array stored in it; `None` writes the block decoded.
pub type DraftChain = Arc<dyn Fn(usize, Option<&Array<'_>>) -> Option<Chain> + Send + Sync>;

/// What [`AsdfFile::write`] writes ([`WriteOptions::form`]).
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Form {
    /// An ASDF file.
    #[default]
    Asdf,
    /// FITS, the tree in an `ASDF` HDU, as JWST's pipelines write it (see
    /// [`FitsWriteOptions`]); the write's other options are the embedded ASDF file's.
    Fits(Box<FitsWriteOptions>),
    /// A draft before 1.0.0 ([`asdf_layout::Dialect::Asdf010`], the ASDF 0.1.0 draft's layout,
    /// or [`asdf_layout::Dialect::Finf`], FINF 0.1.0): the standard's tags become the draft's
    /// (`tag:stsci.edu:asdf/0.1.0/X`, FINF's `tag:stsci.edu:finf/0.1.0/X` with `core/finf` at
    /// the root and `dtype` for `datatype`); each block is written decoded or with the chain
    /// `chain` gives it (ASDF 0.1.0 only). A block behind a `quantize` step is written
    /// big-endian (what decoding gives), so its array's `byteorder` becomes `big`. A file with
    /// arrays added since it was opened is refused: write it first.
    Draft {
        /// The draft.
        dialect: asdf_layout::Dialect,
        /// The chain of each block (`None`: every block decoded).
        chain: Option<DraftChain>,
    },
    /// The exploded form: the target holds the tree, and each array block goes to its own ASDF
    /// file beside it (`name0000.asdf`, `name0001.asdf`, ...), referenced by relative file
    /// name ([`Written::files`]).
    Exploded,
}

impl std::fmt::Debug for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Form::Asdf => f.write_str("Asdf"),
            Form::Fits(o) => f.debug_tuple("Fits").field(o).finish(),
            Form::Draft { dialect, chain } => f
                .debug_struct("Draft")
                .field("dialect", dialect)
                .field("chain", &chain.is_some())
                .finish(),
            Form::Exploded => f.write_str("Exploded"),
        }
    }
}

/// A form that cannot go to a target.
fn unsupported(form: &Form) -> Error {
    Error::Usage(match form {
        Form::Fits(_) => "FITS is written to a path, bytes or a stream",
        Form::Draft { .. } => "a draft is written to a path, bytes or a stream",
        Form::Exploded => "the exploded form is written to a path (its array files go beside it)",
        Form::Asdf => "an ASDF file cannot be written there",
    })
}

impl AsdfFile {
    /// Writes the file to `target` (a path, an object-store URL, [`Target::Bytes`], a stream)
    /// in the form `options.form` says: an ASDF file (this tree, with `asdf_library` naming
    /// this library, and every array block it references, renumbered in the order the arrays
    /// appear), FITS, a draft before 1.0.0, or the exploded form.
    ///
    /// A path is written atomically: into a temporary file in the same directory, then renamed
    /// over it, so a crash leaves either the old file or the new one. Over the file's own path
    /// the write holds an advisory lock and first checks that no other writer changed the
    /// file since it was opened ([`Error::Changed`] otherwise; nothing is written); a file
    /// read from FITS, written over itself as ASDF, stays FITS (its other HDUs and their cards
    /// kept).
    ///
    /// ```no_run
    /// let file = asdf::open("in.asdf")?;
    /// file.write("out.asdf", &asdf::WriteOptions::default())?;
    /// let bytes = file.write(asdf::Target::Bytes, &asdf::WriteOptions::default())?.into_bytes();
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// Validation failures (with `validate`), block read or codec errors, I/O errors;
    /// [`Error::Remote`] for a store's refusal or failure; [`Error::Usage`] for a form the
    /// target cannot take (FITS, a draft or the exploded form to an object store; the
    /// exploded form anywhere but a path).
    pub fn write<'t>(&self, target: impl Into<Target<'t>>, options: &WriteOptions) -> Result<Written, Error> {
        let target = target.into();
        asdf_layout::compression::exec::with_threads(options.threads, || self.write_to_target(target, options))
    }

    fn write_to_target(&self, target: Target<'_>, options: &WriteOptions) -> Result<Written, Error> {
        let mut written = Written::default();
        match (&options.form, target) {
            (Form::Asdf, Target::Path(p)) => self.write_path(&p, options)?,
            (Form::Asdf, Target::Url { url, remote, etag }) => match etag {
                None => self.write_url(url, options, remote)?,
                Some(etag) => self.write_url_over(url, etag, options, remote)?,
            },
            (Form::Asdf, Target::Bytes) => written.bytes = self.to_bytes(options)?,
            (Form::Asdf, Target::Writer(w)) => write_out(w, &self.to_bytes(options)?)?,
            (Form::Fits(fits), target) => {
                let mut fits = (**fits).clone();
                fits.asdf = WriteOptions {
                    form: Form::Asdf,
                    ..options.clone()
                };
                match target {
                    Target::Path(p) => self.write_fits(&p, &fits)?,
                    Target::Bytes => written.bytes = self.to_fits_bytes(&fits)?,
                    Target::Writer(w) => write_out(w, &self.to_fits_bytes(&fits)?)?,
                    Target::Url { .. } => return Err(unsupported(&options.form)),
                }
            }
            (Form::Draft { dialect, chain }, target) => {
                let none = |_: usize, _: Option<&Array<'_>>| None;
                let chain: &dyn Fn(usize, Option<&Array<'_>>) -> Option<Chain> = match chain {
                    Some(c) => c.as_ref(),
                    None => &none,
                };
                match target {
                    Target::Bytes => {
                        self.write_draft(&mut written.bytes, *dialect, chain)?;
                    }
                    Target::Writer(w) => {
                        self.write_draft(w, *dialect, chain)?;
                    }
                    Target::Path(p) => {
                        let mut bytes = Vec::new();
                        self.write_draft(&mut bytes, *dialect, chain)?;
                        asdf_layout::atomic::write_atomically(&p, |w| w.write_all(&bytes))?;
                    }
                    Target::Url { .. } => return Err(unsupported(&options.form)),
                }
            }
            (Form::Exploded, Target::Path(p)) => written.files = self.write_exploded(&p, options)?,
            (form @ Form::Exploded, _) => return Err(unsupported(form)),
        }
        Ok(written)
    }
}

/// `bytes` written to a caller's stream.
fn write_out(w: &mut dyn std::io::Write, bytes: &[u8]) -> Result<(), Error> {
    w.write_all(bytes).and_then(|()| w.flush()).map_err(|source| Error::Io {
        path: PathBuf::from("(the stream written to)"),
        source,
    })
}

/// How blocks are compressed on write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// Keep each block's compression (new arrays: none).
    Keep,
    /// Write every block with this label (`Label::NONE` removes compression).
    All(Label),
}

/// Options for [`AsdfFile::write`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Threads for the write's parallel work (encoding, checksums): `None` (the default) is
    /// `ASDF_RS_THREADS`, else the machine's cores, at most 8; 1 is none beside the caller's.
    pub threads: Option<usize>,
    /// Block compression.
    pub compression: Compression,
    /// Write MD5 checksums (default on).
    pub checksums: bool,
    /// Write the block index (default on).
    pub index: bool,
    /// Validate the tree before writing (default on).
    pub validate: bool,
    /// Bring arrays stored in external files (exploded form) into this file (default on).
    pub internalize: bool,
    /// Called after each block is written with (blocks written, blocks in all).
    pub progress: Option<Progress>,
    /// Leave room to grow, as Python asdf's `pad_blocks=True`: NULs after the tree up to a
    /// 4 KiB boundary (at least 10% more), and each block allocated 10% more than it uses,
    /// rounded up to 4 KiB plus 4 KiB. Later [`AsdfFile::update`]s then happen in place.
    pub pad_blocks: bool,
    /// Put a new file on disk (fsync) before it replaces the old one, so that a power loss
    /// leaves one of the two whole (default on). Off, writing is as Python asdf's: the
    /// rename still happens only after every byte was written without error, but the bytes
    /// may still be in the page cache when it does. In-place updates always sync (their
    /// blocks must reach the disk before the tree that names them).
    pub durable: bool,
    /// Allow writing a file of an ASDF Standard that is not final ([`crate::UNSTABLE_STANDARDS`];
    /// default off, also allowed when `ASDF_UNSTABLE_CORE_SCHEMAS` is set).
    pub unstable_standard: bool,
    /// The codecs blocks are written with (default: the built-in ones, with default
    /// settings); see [`WriteOptions::codec`].
    pub codecs: Option<std::sync::Arc<asdf_layout::compression::Registry>>,
    /// What is written: an ASDF file (the default), FITS, a draft, the exploded form.
    pub form: Form,
}

/// A progress callback for long writes: (done, total).
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            threads: None,
            compression: Compression::Keep,
            checksums: true,
            index: true,
            validate: true,
            internalize: true,
            progress: None,
            pad_blocks: false,
            durable: true,
            unstable_standard: false,
            codecs: None,
            form: Form::Asdf,
        }
    }
}

impl WriteOptions {
    /// Sets the threads of the write (see [`WriteOptions::threads`]).
    #[must_use]
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Writes the blocks of `codec`'s label with this codec: its settings instead of the
    /// defaults. For example a `bls2` frame of 1 MiB zstd chunks, or one Blosc2 chunk:
    /// `WriteOptions::default().compression(Compression::All(Label::BLS2)).codec(Arc::new(Blosc2 { chunksize: 1 << 20, codec: Blosc2Codec::Zstd, ..Blosc2::default() }))`.
    #[must_use]
    pub fn codec(mut self, codec: std::sync::Arc<dyn asdf_layout::compression::Codec>) -> Self {
        let mut r = self
            .codecs
            .as_deref()
            .cloned()
            .unwrap_or_else(|| (*asdf_layout::compression::Registry::shared_default()).clone());
        r.register(codec);
        self.codecs = Some(std::sync::Arc::new(r));
        self
    }

    /// The compression of a block added since opening whose own is `own`: the one
    /// [`Compression::All`] names, else its own, else none.
    pub(crate) fn new_block_label(&self, own: Option<Label>) -> Label {
        match self.compression {
            Compression::All(l) => l,
            Compression::Keep => own.unwrap_or(Label::NONE),
        }
    }

    /// The codecs to write with.
    pub(crate) fn registry(&self) -> std::sync::Arc<asdf_layout::compression::Registry> {
        self.codecs
            .clone()
            .unwrap_or_else(asdf_layout::compression::Registry::shared_default)
    }

    /// Sets the compression of every block.
    #[must_use]
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// Sets whether checksums are written.
    #[must_use]
    pub fn checksums(mut self, yes: bool) -> Self {
        self.checksums = yes;
        self
    }
    /// Sets whether the block index is written.
    #[must_use]
    pub fn index(mut self, yes: bool) -> Self {
        self.index = yes;
        self
    }
    /// Sets validation before writing.
    #[must_use]
    pub fn validate(mut self, yes: bool) -> Self {
        self.validate = yes;
        self
    }
    /// Sets whether external (exploded) arrays are brought into the file.
    #[must_use]
    pub fn internalize(mut self, yes: bool) -> Self {
        self.internalize = yes;
        self
    }

    /// Sets whether room to grow is left after the tree and in each block.
    #[must_use]
    pub fn pad_blocks(mut self, yes: bool) -> Self {
        self.pad_blocks = yes;
        self
    }

    /// Sets whether a file of an ASDF Standard that is not final may be written.
    #[must_use]
    pub fn unstable_standard(mut self, yes: bool) -> Self {
        self.unstable_standard = yes;
        self
    }

    /// Sets whether a new file is forced to disk before it replaces the old one.
    #[must_use]
    pub fn durable(mut self, yes: bool) -> Self {
        self.durable = yes;
        self
    }

    /// Calls `f(done, total)` after each block is written (for a progress bar).
    #[must_use]
    pub fn progress(mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.progress = Some(Progress(std::sync::Arc::new(f)));
        self
    }

    /// What is written (see [`crate::Form`]): FITS, a draft, the exploded form; ASDF by default.
    #[must_use]
    pub fn form(mut self, form: Form) -> Self {
        self.form = form;
        self
    }

    /// FITS with these options (the form [`crate::Form::Fits`]).
    #[must_use]
    pub fn fits(self, fits: FitsWriteOptions) -> Self {
        self.form(Form::Fits(Box::new(fits)))
    }
}

/// How FITS is written ([`crate::Form::Fits`]): the ASDF HDU's form, checksums, new HDUs' names,
/// or a FITS file described by a node of the tree.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FitsWriteOptions {
    /// How the embedded ASDF file is written: the write's own options.
    pub(crate) asdf: WriteOptions,
    /// The form of the ASDF HDU.
    pub asdf_hdu: AsdfHdu,
    /// Write CHECKSUM and DATASUM cards in every HDU (FITS 4.0, Appendix J). Off, no HDU
    /// carries them (cards of the file read are dropped: they would no longer hold).
    pub checksums: bool,
    /// EXTNAMEs for new HDUs, by the JSON pointer of their ndarray (others are named after
    /// their key, upper case).
    pub names: Vec<(String, String)>,
    /// Write the FITS file the `fits/fits-*` node at this JSON pointer describes instead (no
    /// ASDF HDU): its HDUs in order, each header card for card (a card's `[keyword, value,
    /// comment]` or its text), each `data` ndarray as the HDU's data (an image's BITPIX and
    /// NAXISn following the array).
    pub node: Option<String>,
}

impl FitsWriteOptions {
    /// Writes the FITS file the node at `pointer` describes (see [`FitsWriteOptions::node`]).
    #[must_use]
    pub fn node(mut self, pointer: &str) -> Self {
        self.node = Some(pointer.to_owned());
        self
    }

    /// CHECKSUM and DATASUM cards on or off.
    #[must_use]
    pub fn checksums(mut self, yes: bool) -> Self {
        self.checksums = yes;
        self
    }

    /// The form of the ASDF HDU.
    #[must_use]
    pub fn asdf_hdu(mut self, form: AsdfHdu) -> Self {
        self.asdf_hdu = form;
        self
    }

    /// Names the HDU of the ndarray at `pointer` `extname`.
    #[must_use]
    pub fn name(mut self, pointer: &str, extname: &str) -> Self {
        self.names.push((pointer.to_owned(), extname.to_owned()));
        self
    }
}
