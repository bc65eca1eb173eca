//! The threads codec work runs on: rayon thread pools, one per thread count asked for, made
//! on first use and kept ([`par_map`] for independent pieces, [`par_chunks_mut`] for pieces of
//! one output, [`par_ordered`] for results consumed in order with bounded look-ahead, [`join`]
//! for two things at once).
//!
//! How many threads a call uses is the caller's: [`with_threads`] sets it for what runs inside
//! it on this thread (the facade passes `OpenOptions::threads` and `WriteOptions::threads`),
//! else `ASDF_RS_THREADS`, else the machine's parallelism, at most 8. Work already running on
//! one of these pools keeps to that pool. Nothing here blocks a pool's thread waiting for work
//! that needs a pool's thread: a consumer waiting on a pool thread runs pending work meanwhile.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::codec::CodecError;

thread_local! {
    /// The thread count set by [`with_threads`] on this thread (0: none set).
    static ASKED: Cell<usize> = const { Cell::new(0) };
}

/// The default thread count: `ASDF_RS_THREADS`, else the machine's parallelism, at most 8
/// (asked once: on Linux the answer costs a few file reads).
fn default_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("ASDF_RS_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
    })
}

/// Threads for parallel work (decoding, encoding, checksums, verifying) here: on a thread of
/// one of these pools, that pool's size; else what [`with_threads`] set on this thread; else
/// `ASDF_RS_THREADS`, else the machine's parallelism, at most 8.
#[must_use]
pub fn threads() -> usize {
    if rayon::current_thread_index().is_some() {
        return rayon::current_num_threads();
    }
    match ASKED.get() {
        0 => default_threads(),
        n => n,
    }
}

/// Runs `f` with parallel work inside it on `n` threads (`None` or 0: the default of
/// [`threads`]; 1: none beside the caller's), on this thread.
pub fn with_threads<R>(n: Option<usize>, f: impl FnOnce() -> R) -> R {
    let Some(n) = n.filter(|n| *n > 0) else { return f() };
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            ASKED.set(self.0);
        }
    }
    let _restore = Restore(ASKED.replace(n));
    f()
}

/// The pool of `n` threads (made on first use, kept for the process's life: one per thread
/// count asked for), or `None` where threads cannot be made (the browser).
fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Option<Arc<rayon::ThreadPool>>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    pools
        .entry(n)
        .or_insert_with(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("asdf-rs-{i}"))
                .build()
                .ok()
                .map(Arc::new)
        })
        .clone()
}

/// The pool this thread's work belongs to: its own when it is a pool's thread, else the pool
/// of [`threads`] threads; `None`: one thread asked for, or none can be made (the caller does
/// the work alone).
enum Scoper {
    /// This thread is a pool's.
    Current,
    /// This pool's.
    Pool(Arc<rayon::ThreadPool>),
}

impl Scoper {
    fn get() -> Option<Self> {
        if rayon::current_thread_index().is_some() {
            return Some(Scoper::Current);
        }
        let n = threads();
        if n < 2 {
            return None;
        }
        pool(n).map(Scoper::Pool)
    }

    /// Runs `f` in a scope of the pool, on this thread (`f` need not be `Send`); returns when
    /// every job spawned in it has finished (passing on the first panic).
    fn scope<'scope, R>(&self, f: impl FnOnce(&rayon::Scope<'scope>) -> R) -> R {
        match self {
            Scoper::Current => rayon::in_place_scope(f),
            Scoper::Pool(p) => p.in_place_scope(f),
        }
    }
}

/// `a` and `b` at once (`a` on a pool's thread when [`threads`] allows one, `b` on this
/// thread), both results. A panic in either goes on in the caller.
pub fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    let Some(scoper) = Scoper::get() else {
        return (a(), b());
    };
    let mut ra = None;
    let rb = scoper.scope(|s| {
        let ra = &mut ra;
        s.spawn(move |_| *ra = Some(a()));
        b()
    });
    match ra {
        Some(ra) => (ra, rb),
        None => unreachable!("rayon's scope returns after every job spawned in it ran"),
    }
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
    let Some(scoper) = Scoper::get() else {
        return out.chunks_mut(size).enumerate().try_for_each(|(i, c)| f(i, c));
    };
    let per = chunks.div_ceil(t);
    let (f, results) = (&f, &Mutex::new(Vec::new()));
    scoper.scope(|s| {
        for (k, part) in out.chunks_mut(per * size).enumerate() {
            s.spawn(move |_| {
                let r = part
                    .chunks_mut(size)
                    .enumerate()
                    .try_for_each(|(j, c)| f(k * per + j, c));
                results.lock().unwrap_or_else(PoisonError::into_inner).push(r);
            });
        }
    });
    let results = std::mem::take(&mut *results.lock().unwrap_or_else(PoisonError::into_inner));
    results.into_iter().collect()
}

/// `f(0..n)` computed on up to [`threads`] threads, results in order.
pub fn par_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let t = threads().min(n);
    if t <= 1 {
        return (0..n).map(f).collect();
    }
    let Some(scoper) = Scoper::get() else {
        return (0..n).map(f).collect();
    };
    let next = &std::sync::atomic::AtomicUsize::new(0);
    let (f, parts) = (&f, &Mutex::new(Vec::with_capacity(n)));
    scoper.scope(|s| {
        for _ in 0..t {
            s.spawn(move |_| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let v = f(i);
                    parts.lock().unwrap_or_else(PoisonError::into_inner).push((i, v));
                }
            });
        }
    });
    let mut all = std::mem::take(&mut *parts.lock().unwrap_or_else(PoisonError::into_inner));
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, v)| v).collect()
}

/// `f(0..n)` computed on up to [`threads`] pool threads and handed to `emit` on this thread
/// in order, while the next ones are computed; at most `ahead` results are computed ahead of
/// the one emitted. Stops at the first error of `emit` (the work already started finishes;
/// no more is started).
///
/// Each `f(k)` is a job of its own, started only when `k` is within `ahead` of the next to
/// emit: no job waits for another, so a consumer on a pool thread that runs pending jobs
/// while it waits (its own among them) never waits for itself.
pub fn par_ordered<T: Send>(
    n: usize,
    ahead: usize,
    f: impl Fn(usize) -> T + Sync,
    emit: &mut dyn FnMut(T) -> Result<(), CodecError>,
) -> Result<(), CodecError> {
    use std::sync::mpsc;
    let t = threads().min(n);
    if t <= 1 {
        return (0..n).try_for_each(|k| emit(f(k)));
    }
    let Some(scoper) = Scoper::get() else {
        return (0..n).try_for_each(|k| emit(f(k)));
    };
    let ahead = ahead.max(1);
    let f = &f;
    let (tx, rx) = mpsc::channel::<(usize, std::thread::Result<T>)>();
    scoper.scope(|s| {
        let mut started = 0;
        let mut start = |upto: usize| {
            while started < n && started < upto {
                let (tx, k) = (tx.clone(), started);
                s.spawn(move |_| {
                    // A panic is sent on, to go on in the consumer (which would else wait for
                    // this result forever).
                    let v = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k)));
                    let _ = tx.send((k, v));
                });
                started += 1;
            }
        };
        start(ahead);
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        while next < n {
            let v = match waiting.remove(&next) {
                Some(v) => v,
                None => {
                    let Some((k, v)) = receive(&rx) else {
                        return Err(CodecError::Library(Box::new(std::io::Error::other(
                            "a worker ended without its result",
                        ))));
                    };
                    waiting.insert(k, v);
                    continue;
                }
            };
            let v = v.unwrap_or_else(|p| std::panic::resume_unwind(p));
            next += 1;
            emit(v)?;
            start(next + ahead);
        }
        Ok(())
    })
}

/// The next result sent: on a pool's thread, pending jobs are run while none has come.
/// `None`: every sender is gone (not while the caller holds one).
fn receive<T>(rx: &std::sync::mpsc::Receiver<T>) -> Option<T> {
    use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
    if rayon::current_thread_index().is_none() {
        // Not a pool's thread: nothing to run meanwhile.
        return rx.recv().ok();
    }
    loop {
        match rx.try_recv() {
            Ok(v) => return Some(v),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            continue;
        }
        match rx.recv_timeout(std::time::Duration::from_millis(1)) {
            Ok(v) => return Some(v),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order_at_every_thread_count() {
        for n in [1, 2, 3, 8] {
            let v = with_threads(Some(n), || par_map(1000, |i| i * 2));
            assert_eq!(v, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
            assert_eq!(with_threads(Some(n), threads), n);
        }
    }

    #[test]
    fn par_ordered_emits_in_order_and_stops_at_the_first_error() {
        let mut seen = Vec::new();
        let r = with_threads(Some(4), || {
            par_ordered(100, 3, |k| k, &mut |v| {
                seen.push(v);
                if v == 50 {
                    Err(CodecError::Truncated { consumed: 0 })
                } else {
                    Ok(())
                }
            })
        });
        assert!(r.is_err());
        assert_eq!(seen, (0..=50).collect::<Vec<_>>());
    }

    /// Nested: every pool thread a consumer of its own `par_ordered`, whose jobs need the
    /// same pool's threads. Finishes (a consumer runs pending jobs while it waits).
    #[test]
    fn nested_ordered_work_on_a_full_pool_finishes() {
        let sums = with_threads(Some(2), || {
            par_map(8, |i| {
                let mut sum = 0usize;
                par_ordered(200, 4, |k| k + i, &mut |v| {
                    sum += v;
                    Ok(())
                })
                .map(|()| sum)
            })
        });
        for (i, s) in sums.into_iter().enumerate() {
            assert_eq!(s.unwrap(), (0..200).map(|k| k + i).sum::<usize>());
        }
    }

    #[test]
    fn par_chunks_mut_fills_every_chunk() {
        let mut out = vec![0u8; 5 << 20];
        with_threads(Some(3), || {
            par_chunks_mut(&mut out, 1000, |i, c| {
                c.fill(u8::try_from(i % 251).unwrap_or(0));
                Ok::<(), ()>(())
            })
        })
        .unwrap();
        for (i, c) in out.chunks(1000).enumerate() {
            assert!(c.iter().all(|&b| Ok(b) == u8::try_from(i % 251)));
        }
    }

    #[test]
    fn join_gives_both_results() {
        assert_eq!(with_threads(Some(2), || join(|| 1, || 2)), (1, 2));
        assert_eq!(with_threads(Some(1), || join(|| 1, || 2)), (1, 2));
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn a_panic_in_ordered_work_goes_on_in_the_caller() {
        let _ = with_threads(Some(2), || {
            par_ordered(10, 2, |k| assert!(k != 5, "boom"), &mut |()| Ok(()))
        });
    }
}
