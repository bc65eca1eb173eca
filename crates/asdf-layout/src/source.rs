//! Where the bytes come from: positioned reads from a file, a byte buffer or a memory map.
//!
//! Every read names its offset; nothing shares a cursor, so one source can serve many
//! readers and threads at once.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::sync::Mutex;
use std::sync::{Arc, OnceLock};

/// Random-access, read-only bytes.
pub trait ReadAt: Send + Sync {
    /// Total length in bytes.
    ///
    /// # Errors
    /// I/O errors of the underlying storage.
    fn size(&self) -> io::Result<u64>;

    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (fewer only at the
    /// end of the source).
    ///
    /// # Errors
    /// I/O errors of the underlying storage.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Reads exactly `buf.len()` bytes at `offset`.
    ///
    /// # Errors
    /// `UnexpectedEof` when the source ends first; other I/O errors.
    fn read_exact_at(&self, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(offset, buf) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Whether [`ReadAt::bytes_at`] borrows large ranges instead of reading them into new
    /// buffers (byte buffers, memory maps): readers may then take a block in one piece.
    fn holds_in_memory(&self) -> bool {
        false
    }

    /// The whole source as one slice, when it is one (byte buffers, memory maps): the
    /// reader's head and tail caches ([`Prefetched`]) then borrow from it instead of copying.
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    /// How many reads of this source are worth having in flight at once: readers of many
    /// pieces (a chunked array's chunks) use as many threads. A remote source answers with
    /// the concurrency it was opened with; 1 says one request at a time is what the caller
    /// wants (a server whose every request costs the whole object).
    fn reads_at_once(&self) -> usize {
        8
    }

    /// Reads `len` bytes at `offset` in order, handing each piece to `sink` as it arrives
    /// (a remote source: one request, its body as it comes), so that a reader can decode
    /// the first pieces while the later ones are on their way. The pieces add up to exactly
    /// `len` bytes. By default: the bytes in one piece where the source holds them in memory,
    /// otherwise pieces of at most 8 MiB read one after another.
    ///
    /// # Errors
    /// `UnexpectedEof` when the source ends first; other I/O errors; the sink's errors.
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        streamed_by_pieces(self, offset, len, sink)
    }

    /// Exactly `len` bytes at `offset`: borrowed where the source holds them in memory
    /// (byte buffers, memory maps), read into a new buffer otherwise.
    ///
    /// # Errors
    /// `UnexpectedEof` when the source ends first; other I/O errors.
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(len)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        buf.resize(len, 0);
        self.read_exact_at(offset, &mut buf)?;
        Ok(Cow::Owned(buf))
    }
}

/// Where [`ReadAt::read_streamed`] hands its pieces, in order.
pub type Sink<'a> = dyn FnMut(&[u8]) -> io::Result<()> + Send + 'a;

/// [`ReadAt::read_streamed`]'s default: one borrowed piece from a source in memory, pieces
/// of at most 8 MiB otherwise.
///
/// # Errors
/// As [`ReadAt::read_streamed`].
pub fn streamed_by_pieces<S: ReadAt + ?Sized>(
    source: &S,
    offset: u64,
    len: u64,
    sink: &mut Sink<'_>,
) -> io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    if source.holds_in_memory() {
        let n = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        return sink(&source.bytes_at(offset, n)?);
    }
    const PIECE: u64 = 8 << 20;
    let mut buf = Vec::new();
    buf.try_reserve_exact(usize::try_from(len.min(PIECE)).unwrap_or(0))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    buf.resize(usize::try_from(len.min(PIECE)).unwrap_or(0), 0);
    let mut at = offset;
    let end = offset
        .checked_add(len)
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    while at < end {
        let n = usize::try_from((end - at).min(PIECE)).unwrap_or(0);
        source.read_exact_at(at, &mut buf[..n])?;
        sink(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

fn slice_of(data: &[u8], offset: u64, len: usize) -> io::Result<&[u8]> {
    let start = usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let end = start
        .checked_add(len)
        .filter(|&e| e <= data.len())
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    Ok(&data[start..end])
}

fn read_from_slice(data: &[u8], offset: u64, buf: &mut [u8]) -> usize {
    let Ok(start) = usize::try_from(offset) else {
        return 0;
    };
    if start >= data.len() {
        return 0;
    }
    let n = buf.len().min(data.len() - start);
    buf[..n].copy_from_slice(&data[start..start + n]);
    n
}

impl ReadAt for [u8] {
    fn size(&self) -> io::Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
    fn holds_in_memory(&self) -> bool {
        true
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        Ok(read_from_slice(self, offset, buf))
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        slice_of(self, offset, len).map(Cow::Borrowed)
    }
}

impl ReadAt for Vec<u8> {
    fn size(&self) -> io::Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
    fn holds_in_memory(&self) -> bool {
        true
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        Ok(read_from_slice(self, offset, buf))
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        slice_of(self, offset, len).map(Cow::Borrowed)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn reads_at_once(&self) -> usize {
        (**self).reads_at_once()
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        (**self).read_streamed(offset, len, sink)
    }
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        (**self).read_exact_at(offset, buf)
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        (**self).bytes_at(offset, len)
    }
    fn holds_in_memory(&self) -> bool {
        (**self).holds_in_memory()
    }
}

impl ReadAt for File {
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }

    #[cfg(windows)]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }

    /// Targets without positioned reads (wasm32 has no files of its own): refused.
    #[cfg(not(any(unix, windows)))]
    fn read_at(&self, _offset: u64, _buf: &mut [u8]) -> io::Result<usize> {
        Err(io::ErrorKind::Unsupported.into())
    }

    #[cfg(unix)]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Arc<T> {
    fn reads_at_once(&self) -> usize {
        (**self).reads_at_once()
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        (**self).read_streamed(offset, len, sink)
    }
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        (**self).read_exact_at(offset, buf)
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        (**self).bytes_at(offset, len)
    }
    fn holds_in_memory(&self) -> bool {
        (**self).holds_in_memory()
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Box<T> {
    fn reads_at_once(&self) -> usize {
        (**self).reads_at_once()
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        (**self).read_streamed(offset, len, sink)
    }
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        (**self).read_exact_at(offset, buf)
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        (**self).bytes_at(offset, len)
    }
    fn holds_in_memory(&self) -> bool {
        (**self).holds_in_memory()
    }
}

/// Any `Read + Seek` (a network stream wrapper, a cursor, a decompressor with seeking, ...)
/// as a positioned source: each read seeks and reads under a lock.
#[derive(Debug)]
pub struct SeekSource<R> {
    inner: std::sync::Mutex<R>,
    len: u64,
}

impl<R: io::Read + io::Seek> SeekSource<R> {
    /// Wraps `inner`; its length is found by seeking to the end.
    ///
    /// # Errors
    /// Seeking fails.
    pub fn new(mut inner: R) -> io::Result<Self> {
        let len = inner.seek(io::SeekFrom::End(0))?;
        Ok(Self {
            inner: std::sync::Mutex::new(inner),
            len,
        })
    }
}

impl<R: io::Read + io::Seek + Send> ReadAt for SeekSource<R> {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut r = self
            .inner
            .lock()
            .map_err(|_| io::Error::other("a previous read panicked"))?;
        r.seek(io::SeekFrom::Start(offset))?;
        let mut done = 0;
        while done < buf.len() {
            match r.read(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// A read-only memory map of a file.
///
/// Reads borrow the mapped pages; nothing is copied until the caller copies. The file must
/// not be truncated or changed by anyone while it is mapped (see [`MmapSource::open`]).
#[cfg(feature = "mmap")]
#[derive(Debug)]
pub struct MmapSource {
    map: memmap2::Mmap,
    /// The file, for small reads (see [`MmapSource::open`]).
    file: File,
}

#[cfg(feature = "mmap")]
impl MmapSource {
    /// Maps `path` read-only.
    ///
    /// Reads of 1 MiB or more borrow the mapped pages (and tell the kernel to read them
    /// ahead); smaller reads (header, tree, index, single elements) are copied with `pread`,
    /// so they do not map page-cache pages into this process: opening a file and reading one
    /// element of a 1 GiB block keeps the resident set to a few pages.
    ///
    /// The mapping reflects the file as it is on disk: if another process truncates the file
    /// while it is mapped, reading the lost pages raises `SIGBUS`. Use [`File`] as the source
    /// when files may change underneath the reader.
    ///
    /// # Errors
    /// Opening or mapping the file fails.
    pub fn open(path: impl AsRef<std::path::Path>) -> io::Result<Self> {
        Self::from_file(File::open(path)?)
    }

    /// Maps an open file read-only. The same caveat as [`MmapSource::open`] applies.
    ///
    /// # Errors
    /// Mapping the file fails.
    pub fn from_file(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Self::from_file_len(file, len)
    }

    /// Maps the first `len` bytes of an open file read-only, `len` being its length as a
    /// `fstat` of `file` gave it (one system call fewer than [`MmapSource::from_file`]). The
    /// same caveat as [`MmapSource::open`] applies.
    ///
    /// No advice is given for the whole map: small reads do not touch it (they go through
    /// `pread`), large ones announce their own range (see `bytes_at`), and the head and tail
    /// the reader caches are read from it with the kernel's usual read-around.
    ///
    /// # Errors
    /// Mapping the file fails, or `len` does not fit in memory.
    pub fn from_file_len(file: File, len: u64) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        // SAFETY: the map is read-only and private to this value. Memory safety requires that
        // the file is not modified or truncated while mapped; that is the documented contract
        // of `MmapSource` (callers who cannot promise it use `File`). An empty file maps to an
        // empty slice.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(&file)? };
        Ok(Self { map, file })
    }

    /// The mapped bytes.
    #[must_use]
    pub fn as_slice(&self) -> &[u8] {
        &self.map
    }
}

#[cfg(feature = "mmap")]
impl ReadAt for MmapSource {
    fn size(&self) -> io::Result<u64> {
        Ok(self.map.len() as u64)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        // The head and tail the reader caches come from the map (a page fault, not a read
        // into a new buffer); other small reads still go through `pread` (see `open`).
        Some(&self.map)
    }
    fn holds_in_memory(&self) -> bool {
        true
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if buf.len() < LARGE_READ && offset < self.map.len() as u64 {
            let end = usize::try_from(offset).map_or(0, |o| (self.map.len() - o).min(buf.len()));
            return ReadAt::read_at(&self.file, offset, &mut buf[..end]);
        }
        Ok(read_from_slice(&self.map, offset, buf))
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        if len < LARGE_READ {
            // Bounds as for the map, then a copy through the file.
            slice_of(&self.map, offset, len)?;
            let mut v = vec![0u8; len];
            ReadAt::read_exact_at(&self.file, offset, &mut v)?;
            return Ok(Cow::Owned(v));
        }
        let s = slice_of(&self.map, offset, len)?;
        #[cfg(unix)]
        if len >= LARGE_READ {
            // A whole block is about to be read: have the kernel read it ahead.
            if let Ok(at) = usize::try_from(offset) {
                let _ = self.map.advise_range(memmap2::Advice::Sequential, at, len);
                let _ = self.map.advise_range(memmap2::Advice::WillNeed, at, len);
            }
        }
        Ok(Cow::Borrowed(s))
    }
}

/// Reads from a map of at least this many bytes are announced to the kernel.
#[cfg(feature = "mmap")]
const LARGE_READ: usize = 1 << 20;

/// A wrapper that records every byte range read from the inner source.
///
/// Meant for tests and diagnostics: it proves which parts of a file an operation touched.
#[derive(Debug)]
pub struct RecordingSource<S> {
    inner: S,
    reads: Mutex<Vec<(u64, u64)>>,
}

impl<S: ReadAt> RecordingSource<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            reads: Mutex::new(Vec::new()),
        }
    }

    /// The `(offset, end)` ranges read so far, in order.
    pub fn reads(&self) -> Vec<(u64, u64)> {
        self.reads.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Forgets the recorded reads.
    pub fn clear(&self) {
        if let Ok(mut r) = self.reads.lock() {
            r.clear();
        }
    }

    /// Whether any recorded read overlaps `start..end`.
    pub fn touched(&self, start: u64, end: u64) -> bool {
        self.reads().iter().any(|&(a, b)| a < end && start < b)
    }

    fn record(&self, offset: u64, len: usize) {
        if let Ok(mut r) = self.reads.lock() {
            r.push((offset, offset + len as u64));
        }
    }
}

impl<S: ReadAt> ReadAt for RecordingSource<S> {
    fn reads_at_once(&self) -> usize {
        self.inner.reads_at_once()
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        self.inner.read_streamed(offset, len, sink)?;
        self.record(offset, usize::try_from(len).unwrap_or(usize::MAX));
        Ok(())
    }
    fn size(&self) -> io::Result<u64> {
        self.inner.size()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read_at(offset, buf)?;
        self.record(offset, n);
        Ok(n)
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        let b = self.inner.bytes_at(offset, len)?;
        self.record(offset, b.len());
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever is asked, the prefetching view answers as the source itself does (short
    /// reads only at the end, errors past it), for files shorter and longer than its chunks,
    /// and it reads the source at most once per chunk for what it serves.
    #[test]
    fn prefetched_reads_are_the_sources_reads() {
        for size in [0usize, 3, 100, 4095, 8192, 8193, 12_000, 40_000] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251).to_le_bytes()[0]).collect();
            let rec = RecordingSource::new(data.clone());
            let p = Prefetched::with_len(&rec, size as u64);
            // Over one slice, the head and tail are borrowed from it instead of cached.
            let q = Prefetched::with_len(data.as_slice(), size as u64);
            let mut points: Vec<u64> = vec![0, 1, 5, 33, 4000, 4096, 8191, 8192, 8193];
            for back in [0u64, 1, 42, 4095, 4096, 4097, 9000] {
                points.push((size as u64).saturating_sub(back));
            }
            points.push(size as u64 + 10);
            for &at in &points {
                for len in [0usize, 1, 8, 54, 256, 4096, 5000, 20_000] {
                    let mut a = vec![0xAA; len];
                    let mut b = vec![0xAA; len];
                    let ra = p.read_at(at, &mut a).map_err(|e| e.kind());
                    let rb = data.read_at(at, &mut b).map_err(|e| e.kind());
                    assert_eq!(ra, rb, "size {size} read_at {at}+{len}");
                    assert_eq!(a, b, "size {size} read_at {at}+{len}");
                    let ca = p.bytes_at(at, len).map_err(|e| e.kind());
                    let cb = data.bytes_at(at, len).map_err(|e| e.kind());
                    assert_eq!(ca, cb, "size {size} bytes_at {at}+{len}");
                    let mut c = vec![0xAA; len];
                    let rc = q.read_at(at, &mut c).map_err(|e| e.kind());
                    assert_eq!((rc, &c), (rb, &b), "slice: size {size} read_at {at}+{len}");
                    let cc = q.bytes_at(at, len).map_err(|e| e.kind());
                    assert_eq!(cc, cb, "slice: size {size} bytes_at {at}+{len}");
                }
            }
            let head_reads = rec
                .reads()
                .iter()
                .filter(|r| r.0 == 0 && r.1 == (size as u64).min(Prefetched::<&[u8]>::HEAD))
                .count();
            assert!(head_reads <= 1, "size {size}: head read {head_reads} times");
        }
    }

    #[test]
    fn slices_and_eof() {
        let v: Vec<u8> = (0..10).collect();
        let mut buf = [0u8; 4];
        assert_eq!(v.read_at(8, &mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], &[8, 9]);
        assert_eq!(v.read_at(20, &mut buf).unwrap(), 0);
        assert!(v.read_exact_at(8, &mut buf).is_err());
        assert_eq!(&*v.bytes_at(2, 3).unwrap(), &[2, 3, 4]);
        assert!(v.bytes_at(9, 2).is_err());
        assert!(v.bytes_at(u64::MAX, 2).is_err());
        let r = RecordingSource::new(v);
        r.read_exact_at(1, &mut buf).unwrap();
        assert_eq!(r.reads(), vec![(1, 5)]);
        assert!(r.touched(4, 6));
        assert!(!r.touched(5, 6));
    }
}

/// The source as seen while a file is opened: the header, the tree end, the first block header
/// and the block index are found by many small reads near the start and the end of the file.
/// The first [`Prefetched::HEAD`] bytes are read once, when first needed, and so are the last
/// [`Prefetched::TAIL`] when a read reaching the end of the file first needs them; reads that
/// fall inside them are served from memory (one system call instead of a dozen for a file
/// with a small tree).
///
/// [`Reader::open_with`](crate::Reader::open_with) reads through one; a caller that must look
/// at the first bytes before it (as the facade looks for a FITS file) makes it with
/// [`Prefetched::new`] and passes it to
/// [`Reader::open_prefetched`](crate::Reader::open_prefetched), so the head is read once.
#[derive(Debug)]
pub struct Prefetched<S> {
    inner: S,
    len: u64,
    /// `None` when reading it failed: such reads go to `inner` and meet the error there.
    head: OnceLock<Option<Vec<u8>>>,
    tail: OnceLock<Option<Vec<u8>>>,
}

impl<S: ReadAt> Prefetched<S> {
    /// Bytes read at the start of the file on first use.
    pub const HEAD: u64 = 8 * 1024;
    /// Bytes read at the end of the file when a read first reaches it.
    pub const TAIL: u64 = 4 * 1024;

    /// Reads of `inner` through the caches (nothing is read yet).
    ///
    /// # Errors
    /// `inner`'s size cannot be found.
    pub fn new(inner: S) -> io::Result<Self> {
        let len = inner.size()?;
        Ok(Self::with_len(inner, len))
    }

    /// As [`Prefetched::new`], for a caller that knows the source's length (from a `fstat`
    /// it made of the very file `inner` reads).
    pub fn with_len(inner: S, len: u64) -> Self {
        Self {
            inner,
            len,
            head: OnceLock::new(),
            tail: OnceLock::new(),
        }
    }

    /// The source, without the caches.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// `size` bytes at `start` (both within the source), read on first use (borrowed when
    /// the source is one slice).
    fn chunk<'a>(&'a self, cell: &'a OnceLock<Option<Vec<u8>>>, start: u64, size: u64) -> Option<&'a [u8]> {
        if let Some(all) = self.inner.as_slice() {
            return all.get(usize::try_from(start).ok()?..usize::try_from(start.checked_add(size)?).ok()?);
        }
        cell.get_or_init(|| {
            let mut buf = vec![0; usize::try_from(size).ok()?];
            self.inner.read_exact_at(start, &mut buf).ok()?;
            Some(buf)
        })
        .as_deref()
    }

    /// The cached bytes `offset..offset + len` (clipped at the end of the source), if cached.
    fn cached(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(len as u64)?.min(self.len);
        if offset > end {
            return None;
        }
        let tail_start = self.len.saturating_sub(Self::TAIL);
        let (chunk, start) = if end <= Self::HEAD.min(self.len) {
            (self.chunk(&self.head, 0, Self::HEAD.min(self.len))?, 0)
        } else if offset >= tail_start {
            // Only a read reaching the end (the block index search) loads the tail, so that
            // reading a last block's header does not read its data.
            let tail = if end == self.len || self.inner.as_slice().is_some() {
                self.chunk(&self.tail, tail_start, self.len - tail_start)?
            } else {
                self.tail.get()?.as_deref()?
            };
            (tail, tail_start)
        } else {
            return None;
        };
        let from = usize::try_from(offset - start).ok()?;
        let to = usize::try_from(end - start).ok()?;
        chunk.get(from..to)
    }
}

impl<S: ReadAt> ReadAt for Prefetched<S> {
    fn reads_at_once(&self) -> usize {
        self.inner.reads_at_once()
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut Sink<'_>) -> io::Result<()> {
        match usize::try_from(len)
            .ok()
            .and_then(|n| self.cached(offset, n).filter(|c| c.len() == n))
        {
            Some(c) => sink(c),
            None => self.inner.read_streamed(offset, len, sink),
        }
    }
    fn size(&self) -> io::Result<u64> {
        Ok(self.len)
    }
    fn holds_in_memory(&self) -> bool {
        self.inner.holds_in_memory()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self.cached(offset, buf.len()) {
            Some(c) => {
                buf[..c.len()].copy_from_slice(c);
                Ok(c.len())
            }
            None => self.inner.read_at(offset, buf),
        }
    }
    fn bytes_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        match self.cached(offset, len) {
            Some(c) if c.len() == len => Ok(Cow::Borrowed(c)),
            _ => self.inner.bytes_at(offset, len),
        }
    }
}

/// Opens `path` for reading without blocking on a FIFO and without making a terminal the
/// controlling one (reads of a regular file ignore `O_NONBLOCK`). The caller then refuses
/// anything but a regular file: a device the user names is opened, then closed unread.
///
/// # Errors
/// As [`std::fs::OpenOptions::open`].
pub fn open_nonblocking(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK | libc::O_NOCTTY);
    o.open(path)
}

/// The regular file at `path` as a source for a reader, opened as [`open_nonblocking`] opens
/// it (anything but a regular file refused), read by positioned reads or mapped (`memmap`),
/// its first and last bytes read once ([`Prefetched`]); and what it was when opened.
///
/// # Errors
/// Opening or mapping it; [`io::ErrorKind::InvalidInput`] for anything but a regular file.
pub fn open_regular(
    path: &std::path::Path,
    memmap: bool,
) -> io::Result<(Prefetched<Box<dyn ReadAt>>, std::fs::Metadata)> {
    // The length is the one `fstat`'s (no `stat` of the path first).
    let file = open_nonblocking(path)?;
    let opened = file.metadata()?;
    if !opened.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let len = opened.len();
    let source: Box<dyn ReadAt> = if memmap {
        Box::new(crate::MmapSource::from_file_len(file, len)?)
    } else {
        Box::new(file)
    };
    Ok((Prefetched::with_len(source, len), opened))
}
