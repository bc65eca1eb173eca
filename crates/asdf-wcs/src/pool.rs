//! Columns' buffers reused per thread: evaluating many points makes and drops a few columns
//! per transform per task, and giving those back to the allocator made glibc trim the worker
//! threads' heaps (a TLB shootdown on every core each time: a third of the time of a 16-million
//! point grid, measured with perf).

use std::cell::RefCell;

/// Buffers kept per thread.
const KEEP: usize = 64;
/// The largest buffer kept (elements).
const LARGEST: usize = 1 << 16;

thread_local! {
    static FREE: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer with room for `n` values.
pub(crate) fn take(n: usize) -> Vec<f64> {
    let v = FREE.with(|f| f.borrow_mut().pop());
    match v {
        Some(mut v) => {
            v.clear();
            v.reserve(n);
            v
        }
        None => Vec::with_capacity(n),
    }
}

/// Gives a buffer back.
pub(crate) fn give(v: Vec<f64>) {
    if v.capacity() == 0 || v.capacity() > LARGEST {
        return;
    }
    FREE.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < KEEP {
            f.push(v);
        }
    });
}
