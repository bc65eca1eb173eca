//! The threads codec work runs on: one scoped-thread executor for the whole workspace
//! ([`par_map`] for independent pieces, [`par_ordered`] for results consumed in order with
//! bounded look-ahead). Written by hand rather than taken from rayon: docs/ARCHITECTURE.md
//! ("Written by hand, and why") has the measurement.

use std::collections::BTreeMap;

use crate::codec::CodecError;

/// The threads set with [`set_threads`] (0: not set).
static SET: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Threads for parallel work (decoding, encoding, checksums, verifying): what
/// [`set_threads`] set, else the environment variable `ASDF_RS_THREADS`, else the machine's
/// parallelism, at most 8 (asked once: on Linux the answer costs a few file reads).
pub fn threads() -> usize {
    static DEFAULT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match SET.load(std::sync::atomic::Ordering::Relaxed) {
        0 => *DEFAULT.get_or_init(|| {
            std::env::var("ASDF_RS_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
        }),
        n => n,
    }
}

/// Sets how many threads parallel work uses from now on, for the whole process (1: none
/// beside the caller's; 0: back to the default of [`threads`]).
pub fn set_threads(n: usize) {
    SET.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// `a` and `b` at once (`b` on a second thread when [`threads`] allows one), both results.
/// A panic in either goes on in the caller.
pub fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if threads() < 2 {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let ha = s.spawn(a);
        let rb = b();
        (ha.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), rb)
    })
}

/// `f(i, chunk)` for each `size`-long chunk of `out` (the last may be shorter), on up to
/// [`threads`] threads, each taking a run of consecutive chunks; the first error is returned.
///
/// # Errors
/// The first error of `f`.
pub fn par_chunks_mut<E: Send>(
    out: &mut [u8],
    size: usize,
    f: impl Fn(usize, &mut [u8]) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let size = size.max(1);
    let chunks = out.len().div_ceil(size);
    let t = threads().min(chunks).min(out.len() / (1 << 20) + 1);
    if t <= 1 {
        return out.chunks_mut(size).enumerate().try_for_each(|(i, c)| f(i, c));
    }
    let per = chunks.div_ceil(t);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per * size)
            .enumerate()
            .map(|(k, part)| {
                s.spawn(move || {
                    part.chunks_mut(size)
                        .enumerate()
                        .try_for_each(|(j, c)| f(k * per + j, c))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<()>, E>>()
            .map(|_| ())
    })
}

/// `f(0..n)` computed on up to [`threads`] scoped threads, results in order.
pub fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
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
pub fn par_ordered<T: Send>(
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
