//! Opening: [`open`] for the common case, [`Open`] for everything else (bytes, a reader, a URL,
//! options, a lazy open). Every way in ends at `open_prefetched`: the header and block index
//! are read there, into a [`LazyFile`]; an eager open parses and checks its tree at once
//! ([`LazyFile::parse`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use asdf_layout::{ReadAt, ReadOptions, Reader, Version};

use crate::error::{Error, Warning};
use crate::file::{AsdfFile, Core};
use crate::lazy::LazyFile;
use crate::options::OpenOptions;
use asdf_drafts::legacy;
use asdf_fits::file::FitsFile;

/// Opens the ASDF file (or FITS file holding one) at `path`, with default options: validated,
/// warnings for violations, the tree parsed now. Everything else: [`Open`].
///
/// ```no_run
/// let file = asdf::open("obs.asdf")?;
/// let pixels: Vec<f32> = file.array("/sci/data")?.read()?;
/// # Ok::<(), asdf::Error>(())
/// ```
///
/// # Errors
/// See [`Error`].
pub fn open(path: impl AsRef<Path>) -> Result<AsdfFile, Error> {
    Open::path(path).open()
}

/// What to open and how: the one builder every open goes through.
///
/// ```no_run
/// use asdf::Open;
/// // Only the header and block index now; the tree when something needs it.
/// let f = Open::path("big.asdf").open_lazy()?;
/// let x = f.array("/data")?.element(&[7])?;
/// // From memory, strictly validated.
/// let bytes = std::fs::read("obs.asdf")?;
/// let g = Open::bytes(bytes).strict(true).open()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[must_use]
pub struct Open {
    target: Target,
    options: OpenOptions,
    remote: crate::RemoteOptions,
}

enum Target {
    Path(PathBuf),
    PathOrUrl(PathBuf),
    Url(String),
    Bytes(Vec<u8>),
    Reader(std::io::Result<Box<dyn ReadAt>>),
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Path(p) | Target::PathOrUrl(p) => write!(f, "{}", p.display()),
            Target::Url(u) => f.write_str(u),
            Target::Bytes(b) => write!(f, "{} bytes", b.len()),
            Target::Reader(_) => f.write_str("a reader"),
        }
    }
}

impl Open {
    fn with(target: Target) -> Self {
        Open {
            target,
            options: OpenOptions::default(),
            remote: crate::RemoteOptions::default(),
        }
    }

    /// The file at a local path.
    pub fn path(path: impl AsRef<Path>) -> Self {
        Self::with(Target::Path(path.as_ref().to_path_buf()))
    }

    /// A local path or, with feature `remote`, a URL (`http(s)://`, `s3://`): what a command
    /// line that takes either needs.
    pub fn path_or_url(target: impl AsRef<Path>) -> Self {
        Self::with(Target::PathOrUrl(target.as_ref().to_path_buf()))
    }

    /// A remote file (`http(s)://`, `s3://`; feature `remote`), read with ranged requests:
    /// the header and tree in one or two, the block index from the tail, then only the
    /// blocks, elements or rows asked for. See [`asdf_remote`] for the cache and read-ahead,
    /// and [`crate::Source::remote_stats`] for what was fetched. Built without the feature,
    /// opening one is an error ([`Error::Remote`], of kind `Usage`).
    pub fn url(url: &str) -> Self {
        Self::with(Target::Url(url.to_owned()))
    }

    /// A file held in memory.
    pub fn bytes(bytes: Vec<u8>) -> Self {
        Self::with(Target::Bytes(bytes))
    }

    /// A file read on demand from any `Read + Seek` (nothing is mapped).
    pub fn reader<R: std::io::Read + std::io::Seek + Send + 'static>(reader: R) -> Self {
        Self::with(Target::Reader(
            asdf_layout::SeekSource::new(reader).map(|s| Box::new(s) as Box<dyn ReadAt>),
        ))
    }

    /// A file read on demand from any positioned source: a browser's `File` or a server's
    /// ranges through the host (the web viewer), a store of the caller's own.
    pub fn source(source: impl ReadAt + 'static) -> Self {
        Self::with(Target::Reader(Ok(Box::new(source))))
    }

    /// All the options at once (replacing those set so far).
    pub fn options(mut self, options: OpenOptions) -> Self {
        self.options = options;
        self
    }

    /// Validate the tree against its schemas (default on): see [`OpenOptions::validate`].
    pub fn validate(mut self, yes: bool) -> Self {
        self.options = self.options.validate(yes);
        self
    }

    /// Refuse a tree that violates its schemas (default off): see [`OpenOptions::strict`].
    pub fn strict(mut self, yes: bool) -> Self {
        self.options = self.options.strict(yes);
        self
    }

    /// Memory-map a local file (default off): see [`OpenOptions::memmap`].
    pub fn memmap(mut self, yes: bool) -> Self {
        self.options = self.options.memmap(yes);
        self
    }

    /// The options of remote reads (feature `remote`): cache, read-ahead, credentials.
    pub fn storage_options(mut self, remote: crate::RemoteOptions) -> Self {
        self.remote = remote;
        self
    }

    /// Opens it: the header, the block index and the tree, parsed and checked.
    ///
    /// # Errors
    /// See [`Error`]; [`Error::Remote`] when a URL cannot be reached.
    pub fn open(self) -> Result<AsdfFile, Error> {
        self.open_lazy()?.parse()
    }

    /// Opens it lazily: the header and block index now, the tree when something needs it
    /// ([`LazyFile`]: an array read by pointer may answer from a skim of the tree's text;
    /// [`LazyFile::parse`] parses and checks the rest as [`Open::open`] would have, and reports
    /// its errors then). FITS files and files of the drafts before 1.0.0 are read whole now.
    ///
    /// # Errors
    /// See [`Error`]; [`Error::Remote`] when a URL cannot be reached.
    pub fn open_lazy(self) -> Result<LazyFile, Error> {
        let Open {
            target,
            options,
            remote,
        } = self;
        match target {
            Target::Path(p) => open_path(&p, options),
            Target::PathOrUrl(p) => {
                if let Some(url) = p.to_str().filter(|s| crate::net::is_url(s)) {
                    return open_url(url, options, &remote);
                }
                open_path(&p, options)
            }
            Target::Url(u) => open_url(&u, options, &remote),
            Target::Bytes(b) => open_source(Box::new(b), None, options),
            Target::Reader(r) => {
                let r = r.map_err(|source| Error::Io {
                    path: PathBuf::from("<reader>"),
                    source,
                })?;
                open_source(r, None, options)
            }
        }
    }
}

fn open_path(path: &Path, options: OpenOptions) -> Result<LazyFile, Error> {
    let (source, opened) = asdf_layout::source::open_regular(path, options.memmap).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut f = open_prefetched(source, Some(file_dir(path)), options, false)?;
    let core = f.core_mut();
    core.path = Some(path.to_path_buf());
    core.opened = Some(asdf_layout::guard::Fingerprint::of(&opened));
    Ok(f)
}

/// A remote file (feature `remote`; refused without it).
fn open_url(url: &str, options: OpenOptions, remote: &crate::RemoteOptions) -> Result<LazyFile, Error> {
    let (src, stats) = crate::net::open_source(url, remote).map_err(|e| Error::Remote(Box::new(e)))?;
    // Its blocks past the first are found on first need: an open that reads the tree and
    // the first block makes no request for the file's tail (its block index).
    let source = asdf_layout::Prefetched::new(src).map_err(asdf_layout::Error::from)?;
    let mut f = open_prefetched(source, None, options, true)?;
    let core = f.core_mut();
    core.remote = Some(stats);
    core.remote_origin = Some((url.to_owned(), remote.clone()));
    Ok(f)
}

/// Opens the file `source` holds (`dir`: where its relative references point).
pub(crate) fn open_source(
    source: Box<dyn ReadAt>,
    dir: Option<PathBuf>,
    options: OpenOptions,
) -> Result<LazyFile, Error> {
    let source = asdf_layout::Prefetched::new(source).map_err(asdf_layout::Error::from)?;
    open_prefetched(source, dir, options, false)
}

fn open_prefetched(
    source: asdf_layout::Prefetched<Box<dyn ReadAt>>,
    dir: Option<PathBuf>,
    options: OpenOptions,
    lazy_blocks: bool,
) -> Result<LazyFile, Error> {
    // The FITS check reads through the reader's head cache: one read for both.
    if asdf_fits::file::starts_as_fits(&source) {
        return open_fits(source.into_inner(), dir, options);
    }
    let ro = ReadOptions::default()
        .registry(legacy::read_registry())
        .limits(options.layout_limits)
        .verify_checksums(options.verify_checksums)
        .lazy_blocks(lazy_blocks);
    let reader = Reader::open_prefetched(source, ro)?;
    // A pre-1.0 file's tree is mapped onto the 1.0.0 tags (whatever its `#ASDF_STANDARD`
    // says, 0.1.0 in the last drafts): it is read as 1.0.0, and whole (no skim).
    let legacy = reader.file_header().dialect.is_legacy();
    let standard = if legacy {
        Version::STANDARD_DEFAULT
    } else {
        reader.file_header().standard_version
    };
    if !crate::reads_standard(standard) {
        return Err(Error::UnsupportedStandard(standard));
    }
    let mut core = Core::new(reader, standard, options);
    core.dir = dir;
    let file = LazyFile::new(core);
    Ok(if legacy { LazyFile::parsed(file.parse()?) } else { file })
}

/// Opens the ASDF file inside the FITS file `source`, whole.
fn open_fits(source: Box<dyn ReadAt>, dir: Option<PathBuf>, options: OpenOptions) -> Result<LazyFile, Error> {
    let (mut fits, window) = FitsFile::open(Arc::from(source)).map_err(|source| Error::Fits {
        pointer: String::new(),
        source,
    })?;
    let mut file = open_source(Box::new(window), dir, options)?.parse()?;
    fits.origin = fits.sources_in(file.doc());
    let mismatches = fits.mismatches(file.doc());
    let mismatches = mismatches
        .into_iter()
        .map(|(pointer, problem)| Warning::FitsMismatch { pointer, problem });
    file.tree.warnings.extend(mismatches);
    file.fits = Some(Arc::new(fits));
    Ok(LazyFile::parsed(file))
}

/// The folder of the file at `path`, absolute: a bare name (`a.asdf`) is in the current
/// folder (its `parent()` is empty, which names no folder), and a later change of the current
/// folder does not move what the file refers to.
pub(crate) fn file_dir(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}
