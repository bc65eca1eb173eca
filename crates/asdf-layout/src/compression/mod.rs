//! Block compression: the 4-byte labels, the [`Codec`] trait and a registry users can extend.
//!
//! Built in: `zlib`, `bzp2`, `lz4` (Python asdf's chunked framing); with cargo features
//! `zstd`, `lz4f`, `blsc` (blosc1 chunk) and `bls2` (blosc2 chunk or frame). A codec decodes into a buffer of exactly the block's `data_size`, so a
//! stream that decodes to more or fewer bytes is an error, and no decoder allocates by what the
//! compressed bytes claim.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

#[cfg(any(feature = "blsc", feature = "bls2"))]
mod blosc;
mod bzp2;
mod lz4;
#[cfg(feature = "lz4f")]
mod lz4f;
mod stream;
mod zlib;
#[cfg(feature = "zstd")]
mod zstd;

#[cfg(feature = "blsc")]
pub use blosc::Blosc1;
#[cfg(any(feature = "blsc", feature = "bls2"))]
pub use blosc::BloscError;
#[cfg(feature = "bls2")]
pub use blosc::{AbacusBlosc2, Blosc2, Blosc2Codec, Blosc2Filter, FrameMeta, b2nd_array_bytes, frame_metalayers};
pub use bzp2::Bzp2;
pub use lz4::Lz4;
#[cfg(feature = "lz4f")]
pub use lz4f::Lz4Frame;
pub use zlib::Zlib;
#[cfg(feature = "zstd")]
pub use zstd::Zstd;

/// Threads for codec work: the machine's parallelism, at most 8 (asked once: on Linux the
/// answer costs a few file reads).
pub(crate) fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// `f(0..n)` computed on up to [`threads`] scoped threads, results in order.
pub(crate) fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let t = threads().min(n);
    if t <= 1 {
        return (0..n).map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut parts: Vec<Vec<(usize, T)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..t)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break out;
                        }
                        out.push((i, f(i)));
                    }
                })
            })
            .collect();
        // A panic in `f` is a bug: it goes on in the caller (no result is lost silently).
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut all: Vec<(usize, T)> = parts.drain(..).flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, v)| v).collect()
}

/// `f(0..n)` computed on up to [`threads`] worker threads and handed to `emit` on this
/// thread in order, while the next ones are computed; at most `ahead` results wait to be
/// emitted. Stops at the first error of `emit`.
pub(crate) fn par_ordered<T: Send>(
    n: usize,
    ahead: usize,
    f: impl Fn(usize) -> T + Sync,
    emit: &mut dyn FnMut(T) -> Result<(), CodecError>,
) -> Result<(), CodecError> {
    use std::sync::{Condvar, Mutex, PoisonError, mpsc};
    let t = threads().min(n);
    if t <= 1 {
        return (0..n).try_for_each(|k| emit(f(k)));
    }
    let state: Claims = Mutex::new((0, 0, false));
    let turn = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    std::thread::scope(|s| {
        for _ in 0..t {
            let tx = tx.clone();
            let (state, turn, f) = (&state, &turn, &f);
            s.spawn(move || {
                // A panic in `f` stops the other workers too (else they could wait forever
                // for the missing result to be emitted); the scope passes the panic on.
                let _stop = StopOnDrop(state, turn, true);
                loop {
                    let k = {
                        let mut g = state.lock().unwrap_or_else(PoisonError::into_inner);
                        while !g.2 && g.0 < n && g.0 >= g.1 + ahead.max(1) {
                            g = turn.wait(g).unwrap_or_else(PoisonError::into_inner);
                        }
                        if g.2 || g.0 >= n {
                            return;
                        }
                        g.0 += 1;
                        g.0 - 1
                    };
                    if tx.send((k, f(k))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // However this loop ends (an error, a panic in `emit`), the workers stop.
        let _stop = StopOnDrop(&state, &turn, false);
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        let mut result = Ok(());
        while next < n {
            let Some(v) = waiting.remove(&next) else {
                match rx.recv() {
                    Ok((k, v)) => {
                        waiting.insert(k, v);
                        continue;
                    }
                    // Every worker is gone: one panicked (the scope passes the panic on).
                    Err(_) => break,
                }
            };
            next += 1;
            if let Err(e) = emit(v) {
                result = Err(e);
                break;
            }
            state.lock().unwrap_or_else(PoisonError::into_inner).1 = next;
            turn.notify_all();
        }
        result
    })
}

/// The shared state of [`par_ordered`]: (next index to claim, results emitted, stop).
type Claims = std::sync::Mutex<(usize, usize, bool)>;

/// Sets the stop flag of [`par_ordered`] and wakes every waiting worker when dropped (only
/// when unwinding if the last field is true).
struct StopOnDrop<'a>(&'a Claims, &'a std::sync::Condvar, bool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if !self.2 || std::thread::panicking() {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).2 = true;
            self.1.notify_all();
        }
    }
}

/// The 4-byte compression field of a block header.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(pub [u8; 4]);

impl Label {
    /// No compression: four NUL bytes.
    pub const NONE: Label = Label([0; 4]);
    /// `zlib`.
    pub const ZLIB: Label = Label(*b"zlib");
    /// `bzp2`.
    pub const BZP2: Label = Label(*b"bzp2");
    /// `lz4\0`.
    pub const LZ4: Label = Label(*b"lz4\0");
    /// `zstd` (asdf-compression).
    pub const ZSTD: Label = Label(*b"zstd");
    /// `lz4f` (asdf-compression: one LZ4 frame).
    pub const LZ4F: Label = Label(*b"lz4f");
    /// `blsc` (blosc1 chunk).
    pub const BLSC: Label = Label(*b"blsc");
    /// `bls2` (blosc2 chunk or frame).
    pub const BLS2: Label = Label(*b"bls2");
    /// Not a label in any file: what an ASDF 0.1.0 block with the ENCODED flag (the ASDF 0.1.0 draft)
    /// reports, its data starting with a YAML encoding chain ([`crate::encoding`]). Its first
    /// byte is not ASCII, so no written label can be mistaken for it.
    pub const ENCODING_CHAIN: Label = Label([0xd3, b'e', b'n', b'c']);

    /// Whether this is the "no compression" label.
    #[must_use]
    pub fn is_none(self) -> bool {
        self == Label::NONE
    }

    /// Builds a label from a name of up to 4 ASCII bytes, NUL-padded (`"lz4"` -> `lz4\0`);
    /// `""` and `"none"` give [`Label::NONE`]. Returns `None` for longer names.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Label> {
        if name.is_empty() || name == "none" {
            return Some(Label::NONE);
        }
        let b = name.as_bytes();
        if b.len() > 4 {
            return None;
        }
        let mut l = [0u8; 4];
        l[..b.len()].copy_from_slice(b);
        Some(Label(l))
    }

    /// The label as text: NUL padding removed, other bytes escaped.
    #[must_use]
    pub fn name(self) -> String {
        if self.is_none() {
            return "none".to_owned();
        }
        if self == Label::ENCODING_CHAIN {
            return "encoding-chain".to_owned();
        }
        let trimmed: &[u8] = {
            let end = self.0.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            &self.0[..end]
        };
        trimmed.escape_ascii().to_string()
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Label({:?})", self.name())
    }
}

/// What a codec reports when it cannot decode or encode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The stream decodes to a different number of bytes than the header's `data_size`.
    #[error("decoded size {actual} does not match the block's data_size {expected}")]
    SizeMismatch {
        /// data_size from the block header.
        expected: u64,
        /// What the stream produced (a lower bound when it produced too much).
        actual: u64,
    },
    /// The compressed bytes end before the stream does.
    #[error("compressed stream is truncated after {consumed} bytes")]
    Truncated {
        /// Input bytes consumed.
        consumed: u64,
    },
    /// The codec's framing (chunk lengths, sizes) is inconsistent.
    #[error("invalid framing at compressed byte {at}")]
    Framing {
        /// Offset within the compressed bytes.
        at: u64,
    },
    /// The underlying library rejected the data.
    #[error("{0}")]
    Library(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl CodecError {
    /// Wraps a library's error.
    pub fn library(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        CodecError::Library(Box::new(e))
    }
}

/// A block compression algorithm.
///
/// Implement it to add a label; register the implementation with [`Registry::register`].
pub trait Codec: Send + Sync + fmt::Debug {
    /// The label written in block headers.
    fn label(&self) -> Label;

    /// Decodes `input` into `output`, which has exactly the block's `data_size` bytes.
    ///
    /// # Errors
    /// [`CodecError::SizeMismatch`] when the stream decodes to more or fewer bytes than
    /// `output.len()`; other variants for corrupt input.
    fn decode(&self, input: &[u8], output: &mut [u8]) -> Result<(), CodecError>;

    /// Appends the encoding of `input` to `output`.
    ///
    /// # Errors
    /// When the library fails.
    fn encode(&self, input: &[u8], output: &mut Vec<u8>) -> Result<(), CodecError>;

    /// Encodes `input`, handing the encoded bytes to `sink` in consecutive pieces (their
    /// concatenation is what [`Codec::encode`] appends), so that a writer can checksum and
    /// write the first pieces while later ones are being compressed. The default encodes the
    /// whole block and hands it over at once.
    ///
    /// # Errors
    /// When the library fails, or `sink`'s error (which stops the encoding).
    fn encode_pieces(
        &self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        let mut out = Vec::new();
        self.encode(input, &mut out)?;
        sink(&out)
    }

    /// Decodes `input`, which must decode to exactly `expected` bytes, handing the decoded
    /// bytes to `sink` in consecutive pieces (of about [`PIECE`] bytes for the streaming
    /// codecs), so that a block of any size is read with bounded memory. The default decodes
    /// the whole block and hands it over at once.
    ///
    /// # Errors
    /// As [`Codec::decode`]; an error may come after some pieces were handed over.
    fn decode_pieces(&self, input: &[u8], expected: usize, sink: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
        let mut out = zeroed(expected)
            .ok_or_else(|| CodecError::library(std::io::Error::from(std::io::ErrorKind::OutOfMemory)))?;
        self.decode(input, &mut out)?;
        sink(&out);
        Ok(())
    }

    /// Decodes only bytes `range` of `input` (which decodes to `expected` bytes; `range` lies
    /// within it). The default decodes in pieces and keeps those in range; a codec with
    /// random access (Blosc2 frames, through their chunk index) decodes only what the range
    /// touches.
    ///
    /// # Errors
    /// As [`Codec::decode`].
    fn decode_range(&self, input: &[u8], expected: usize, range: Range<usize>) -> Result<Vec<u8>, CodecError> {
        decode_range_by_pieces(self, input, expected, range)
    }
}

/// [`Codec::decode_range`] through [`Codec::decode_pieces`]: the pieces that overlap `range`
/// are kept.
///
/// # Errors
/// As [`Codec::decode_pieces`].
pub fn decode_range_by_pieces<C: Codec + ?Sized>(
    codec: &C,
    input: &[u8],
    expected: usize,
    range: Range<usize>,
) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(range.len());
    let mut pos = 0usize;
    codec.decode_pieces(input, expected, &mut |piece| {
        let (s, e) = (pos, pos + piece.len());
        pos = e;
        let (a, b) = (range.start.max(s), range.end.min(e));
        if a < b {
            out.extend_from_slice(&piece[a - s..b - s]);
        }
    })?;
    Ok(out)
}

/// The size of the pieces [`Codec::decode_pieces`] hands over (1 MiB).
pub const PIECE: usize = 1 << 20;

/// Maps labels to codecs.
#[derive(Debug, Clone)]
pub struct Registry {
    codecs: BTreeMap<Label, Arc<dyn Codec>>,
}

impl Default for Registry {
    /// Every codec built into this crate (depending on features).
    fn default() -> Self {
        // Inserted under their known labels: asking each codec would touch code of every
        // codec when a file is opened (a test checks the labels agree).
        let mut codecs: BTreeMap<Label, Arc<dyn Codec>> = BTreeMap::new();
        codecs.insert(Label::ZLIB, Arc::new(Zlib::default()));
        codecs.insert(Label::BZP2, Arc::new(Bzp2::default()));
        codecs.insert(Label::LZ4, Arc::new(Lz4));
        #[cfg(feature = "zstd")]
        codecs.insert(Label::ZSTD, Arc::new(Zstd::default()));
        #[cfg(feature = "lz4f")]
        codecs.insert(Label::LZ4F, Arc::new(Lz4Frame));
        #[cfg(feature = "blsc")]
        codecs.insert(Label::BLSC, Arc::new(Blosc1::default()));
        #[cfg(feature = "bls2")]
        codecs.insert(Label::BLS2, Arc::new(Blosc2::default()));
        #[cfg(feature = "bls2")]
        codecs.insert(AbacusBlosc2::LABEL, Arc::new(AbacusBlosc2::default()));
        Self { codecs }
    }
}

impl Registry {
    /// The default registry, built once per process and shared.
    #[must_use]
    pub fn shared_default() -> Arc<Registry> {
        static SHARED: std::sync::OnceLock<Arc<Registry>> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| Arc::new(Registry::default())).clone()
    }
}

impl Registry {
    /// A registry with no codecs (only uncompressed blocks can be read).
    #[must_use]
    pub fn empty() -> Self {
        Self {
            codecs: BTreeMap::new(),
        }
    }

    /// Adds or replaces the codec for `codec.label()`.
    pub fn register(&mut self, codec: Arc<dyn Codec>) -> &mut Self {
        self.codecs.insert(codec.label(), codec);
        self
    }

    /// The codec for `label`, if registered.
    #[must_use]
    pub fn get(&self, label: Label) -> Option<&Arc<dyn Codec>> {
        self.codecs.get(&label)
    }

    /// The registered labels, sorted.
    #[must_use]
    pub fn labels(&self) -> Vec<Label> {
        self.codecs.keys().copied().collect()
    }
}

/// `n` zero bytes, or `None` when they cannot be allocated. Large buffers come from the
/// allocator's zeroed pages (`calloc`: fresh anonymous memory), so the pages a decoder never
/// writes are never touched: a block that claims gigabytes but decodes to a few bytes costs
/// a few pages of resident memory, not its claim.
#[must_use]
pub fn zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (n > 0). The pointer, when not null, was allocated
    // by the global allocator with exactly this layout (size n, alignment 1) and all n bytes
    // are initialised (zeroed), so it may become a Vec<u8> of length and capacity n, which
    // frees it with the same layout.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        if p.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(p, n, n))
    }
}

/// Shared helper: fails when a streaming decoder filled `output` but still has input that
/// decodes to more bytes.
pub(crate) fn too_much(expected: usize) -> CodecError {
    CodecError::SizeMismatch {
        expected: expected as u64,
        actual: expected as u64 + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(Label::from_name("lz4"), Some(Label::LZ4));
        assert_eq!(Label::from_name("none"), Some(Label::NONE));
        assert_eq!(Label::from_name("zlibx"), None);
        assert_eq!(Label::LZ4.to_string(), "lz4");
        assert_eq!(Label(*b"x\xffy\0").to_string(), "x\\xffy");
        let r = Registry::default();
        for label in r.labels() {
            assert_eq!(r.get(label).unwrap().label(), label);
        }
        assert!(r.get(Label::ZLIB).is_some());
        assert!(r.get(Label(*b"xxxx")).is_none());
    }

    /// Results come in order however the workers finish; an error of `emit` stops the rest;
    /// a panic in `f` reaches the caller (no result is dropped silently, no worker waits forever).
    #[test]
    fn par_ordered_keeps_order_and_stops() {
        for n in [0usize, 1, 2, 7, 100] {
            let mut got = Vec::new();
            par_ordered(
                n,
                3,
                |k| {
                    // Uneven work so that results arrive out of order.
                    std::thread::sleep(std::time::Duration::from_micros(((k * 7919) % 13) as u64 * 50));
                    k * 2
                },
                &mut |v| {
                    got.push(v);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, (0..n).map(|k| k * 2).collect::<Vec<_>>());
        }
        let mut seen = 0;
        let e = par_ordered(1000, 2, |k| k, &mut |v| {
            seen += 1;
            if v == 5 {
                Err(CodecError::Framing { at: 5 })
            } else {
                Ok(())
            }
        });
        assert!(matches!(e, Err(CodecError::Framing { at: 5 })));
        assert_eq!(seen, 6);
        let caught = std::panic::catch_unwind(|| {
            par_ordered(50, 2, |k| if k == 17 { panic!("bug in f") } else { k }, &mut |_| Ok(()))
        });
        assert!(caught.is_err());
        let caught = std::panic::catch_unwind(|| {
            par_ordered(50, 2, |k| k, &mut |v| {
                if v == 3 { panic!("bug in emit") } else { Ok(()) }
            })
        });
        assert!(caught.is_err());
    }

    /// Every built-in codec round-trips, including empty input, and rejects a wrong size.
    #[test]
    fn round_trip_all() {
        let r = Registry::default();
        let mut data = Vec::new();
        for i in 0u32..50_000 {
            data.extend_from_slice(&((i % 1000) ^ (i >> 7)).to_le_bytes());
        }
        for label in r.labels() {
            let c = r.get(label).unwrap();
            for input in [&data[..], &data[..1], &[][..]] {
                let mut enc = Vec::new();
                c.encode(input, &mut enc).unwrap();
                let mut out = vec![0u8; input.len()];
                c.decode(&enc, &mut out).unwrap();
                assert_eq!(out, input, "{label}");
                let mut short = vec![0u8; input.len() + 1];
                assert!(c.decode(&enc, &mut short).is_err(), "{label}: too little");
                if !input.is_empty() {
                    let mut long = vec![0u8; input.len() - 1];
                    assert!(c.decode(&enc, &mut long).is_err(), "{label}: too much");
                }
            }
            let mut garbage = vec![0u8; 100];
            assert!(c.decode(b"\x01\x02garbage", &mut garbage).is_err(), "{label}");
        }
    }
}
