//! The file's bytes as the page reads them for us: every read goes to the host (a browser
//! `File`'s slices or a server's ranges), small ones through a bounded cache of 64 KiB pages
//! (parsing the header, the tree and the block index makes many small reads, and each is a
//! round trip to the host).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::Mutex;

use asdf::ReadAt;

/// Reads `buf.len()` bytes at an offset (fewer only at the end); the host's answer.
pub type Fetch = Box<dyn Fn(u64, &mut [u8]) -> io::Result<usize> + Send + Sync>;

/// Bytes per cached page.
const PAGE: u64 = 64 << 10;
/// Pages kept (16 MiB).
const PAGES: usize = 256;
/// Reads at least this long go to the host directly (not cached).
const DIRECT: usize = 1 << 20;

/// A source whose reads the host answers.
pub struct HostSource {
    size: u64,
    fetch: Fetch,
    cache: Mutex<Cache>,
    /// Bytes asked of the host so far, and how many requests.
    stats: Mutex<(u64, u64)>,
}

#[derive(Default)]
struct Cache {
    pages: HashMap<u64, Vec<u8>>,
    order: VecDeque<u64>,
}

impl std::fmt::Debug for HostSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostSource")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl HostSource {
    /// A source of `size` bytes read through `fetch`.
    #[must_use]
    pub fn new(size: u64, fetch: Fetch) -> Self {
        HostSource {
            size,
            fetch,
            cache: Mutex::new(Cache::default()),
            stats: Mutex::new((0, 0)),
        }
    }

    /// Bytes asked of the host, and requests made.
    #[must_use]
    pub fn stats(&self) -> (u64, u64) {
        self.stats.lock().map(|s| *s).unwrap_or((0, 0))
    }

    fn host(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.fetch)(offset, buf)?;
        if let Ok(mut s) = self.stats.lock() {
            s.0 += n as u64;
            s.1 += 1;
        }
        Ok(n)
    }

    /// Pages `first..=last` into the cache (the missing ones in one read from the host).
    fn load(&self, cache: &mut Cache, first: u64, last: u64) -> io::Result<()> {
        let missing: Vec<u64> = (first..=last).filter(|p| !cache.pages.contains_key(p)).collect();
        let (Some(&lo), Some(&hi)) = (missing.first(), missing.last()) else {
            return Ok(());
        };
        let start = lo * PAGE;
        let end = ((hi + 1) * PAGE).min(self.size);
        let len =
            usize::try_from(end.saturating_sub(start)).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match self.host(start + got as u64, &mut buf[got..])? {
                0 => break,
                n => got += n,
            }
        }
        buf.truncate(got);
        for p in lo..=hi {
            let a = usize::try_from((p - lo) * PAGE).unwrap_or(usize::MAX).min(buf.len());
            let b = usize::try_from((p - lo + 1) * PAGE)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            if cache.pages.insert(p, buf[a..b].to_vec()).is_none() {
                cache.order.push_back(p);
            }
        }
        while cache.order.len() > PAGES {
            if let Some(old) = cache.order.pop_front() {
                cache.pages.remove(&old);
            }
        }
        Ok(())
    }
}

impl ReadAt for HostSource {
    fn size(&self) -> io::Result<u64> {
        Ok(self.size)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(self.size - offset).unwrap_or(usize::MAX));
        if want >= DIRECT {
            return self.host(offset, &mut buf[..want]);
        }
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| io::Error::other("the page cache was poisoned"))?;
        let (first, last) = (offset / PAGE, (offset + want as u64 - 1) / PAGE);
        self.load(&mut cache, first, last)?;
        let mut done = 0;
        while done < want {
            let at = offset + done as u64;
            let Some(page) = cache.pages.get(&(at / PAGE)) else {
                break;
            };
            let within = usize::try_from(at % PAGE).unwrap_or(usize::MAX);
            let Some(avail) = page.get(within..) else {
                break;
            };
            if avail.is_empty() {
                break;
            }
            let n = avail.len().min(want - done);
            buf[done..done + n].copy_from_slice(&avail[..n]);
            done += n;
        }
        Ok(done)
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn small_reads_share_pages_and_large_ones_go_through() {
        let data: Arc<Vec<u8>> = Arc::new((0..3_000_000u32).map(|i| (i % 251) as u8).collect());
        let calls = Arc::new(AtomicU64::new(0));
        let (d, c) = (data.clone(), calls.clone());
        let src = HostSource::new(
            data.len() as u64,
            Box::new(move |off, buf| {
                c.fetch_add(1, Ordering::Relaxed);
                let off = usize::try_from(off).unwrap_or(usize::MAX).min(d.len());
                let n = buf.len().min(d.len() - off);
                buf[..n].copy_from_slice(&d[off..off + n]);
                Ok(n)
            }),
        );
        let mut b = [0u8; 100];
        for off in [10u64, 500, 70_000, 65_500] {
            src.read_exact_at(off, &mut b).unwrap();
            assert_eq!(&b[..], &data[off as usize..off as usize + 100]);
        }
        // Pages 0 and 1 were read once each (the read across them asked for none again).
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        let mut big = vec![0u8; 2 << 20];
        src.read_exact_at(100, &mut big).unwrap();
        assert_eq!(&big[..], &data[100..100 + (2 << 20)]);
        // The end of the source.
        let n = src.read_at(data.len() as u64 - 10, &mut b).unwrap();
        assert_eq!(&b[..n], &data[data.len() - 10..]);
        assert_eq!(src.read_at(data.len() as u64, &mut b).unwrap(), 0);
        assert!(src.stats().1 >= 4);
    }
}
