//! The threads codec work runs on: one scoped-thread executor for the whole workspace
//! ([`par_map`] for independent pieces, [`par_ordered`] for results consumed in order with
//! bounded look-ahead). Written by hand rather than taken from rayon: docs/ARCHITECTURE.md
//! ("Written by hand, and why") has the measurement.

use std::collections::BTreeMap;

use crate::codec::CodecError;

/// Threads for codec work: the machine's parallelism, at most 8 (asked once: on Linux the
/// answer costs a few file reads).
pub fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
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
