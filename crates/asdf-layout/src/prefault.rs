//! Mapped bytes handed to a sink while another core faults their pages in ahead of it.

/// Hands `data` (bytes of a memory map) to `sink` in 4 MiB pieces. For a large range another
/// core walks ahead of the sink touching each page, so that the kernel maps the file's pages
/// there while the sink works (at most 64 MiB ahead): reading a big mapped array costs its
/// page faults on the other core.
pub(crate) fn hand_over_mapped(data: &[u8], sink: &mut dyn FnMut(&[u8])) {
    hand_over_in(data, sink, 4 << 20, 64 << 20);
}

/// [`hand_over_mapped`] with pieces of `step` bytes and the walker at most `ahead` bytes ahead.
fn hand_over_in(data: &[u8], sink: &mut dyn FnMut(&[u8]), step: usize, ahead: usize) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (step, ahead) = (step.max(1), ahead);
    if data.len() < 2 * ahead || crate::compression::threads() < 2 {
        sink(data);
        return;
    }
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    /// Stops the walker however the sink ends (a panic included).
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let (done, stop) = (&done, &stop);
    // The walker is a job of the executor's pool; the sink runs here. A walker that starts
    // late (a busy pool) only walks what the sink has not reached; one that has not started
    // when the sink is done stops at once.
    let walker = move || {
        let mut at = (done.load(Ordering::Relaxed) / step + 1) * step;
        let mut sum = 0u8;
        while at < data.len() && !stop.load(Ordering::Relaxed) {
            if at > done.load(Ordering::Relaxed) + ahead {
                std::thread::sleep(std::time::Duration::from_micros(200));
                continue;
            }
            let piece = &data[at..(at + step).min(data.len())];
            if !populate(piece) {
                for p in piece.iter().step_by(4096) {
                    // SAFETY: `p` is a valid reference to an initialised byte; the volatile
                    // read only keeps the load (and so the page fault) from being optimised out.
                    sum ^= unsafe { std::ptr::read_volatile(p) };
                }
            }
            at += step;
        }
        std::hint::black_box(sum);
    };
    crate::compression::exec::join(walker, || {
        let _stop = Stop(stop);
        for (k, piece) in data.chunks(step).enumerate() {
            sink(piece);
            done.store((k + 1) * step, Ordering::Relaxed);
        }
    });
}

/// Asks the kernel to map the pages under `piece` now, in one call (`MADV_POPULATE_READ`,
/// Linux 5.14+): about a third cheaper than a fault per page. False where that is not
/// available (the caller then touches the pages).
#[cfg(target_os = "linux")]
fn populate(piece: &[u8]) -> bool {
    const PAGE: usize = 4096;
    let start = piece.as_ptr() as usize;
    let aligned = start - start % PAGE;
    let len = piece.len() + (start - aligned);
    // SAFETY: MADV_POPULATE_READ only faults pages in for reading, as touching them would; it
    // never changes the memory's contents or mapping. The range begins at most one page before
    // `piece` (page alignment, which madvise requires) and ends with it; a part of it that is
    // not mapped makes the call fail with ENOMEM, which is answered by touching the pages.
    let r = unsafe { libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_POPULATE_READ) };
    r == 0
}

#[cfg(not(target_os = "linux"))]
fn populate(_piece: &[u8]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mapped data handed over with a walker ahead: the pieces join to the data whatever the
    /// sizes, and a sink that panics stops the walker (the panic reaches the caller, nothing
    /// hangs).
    #[test]
    fn mapped_pieces_join_and_a_panic_stops_the_walker() {
        let data: Vec<u8> = (0..1_000_003u32)
            .map(|i| i.to_le_bytes()[0] ^ i.to_le_bytes()[2])
            .collect();
        for (step, ahead) in [
            (16 << 10, 64 << 10),
            (4096, 8192),
            (100_000, 300_000),
            (1 << 20, 1 << 20),
        ] {
            let mut joined = Vec::new();
            let mut pieces = 0;
            hand_over_in(
                &data,
                &mut |p| {
                    joined.extend_from_slice(p);
                    pieces += 1;
                },
                step,
                ahead,
            );
            assert!(joined == data, "step {step} ahead {ahead}");
            assert!(pieces >= 1);
        }
        let mut seen = 0;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hand_over_in(
                &data,
                &mut |_| {
                    seen += 1;
                    assert!(seen < 5, "sink gives up");
                },
                4096,
                16384,
            );
        }));
        assert!(r.is_err());
        assert_eq!(seen, 5);
    }
}
