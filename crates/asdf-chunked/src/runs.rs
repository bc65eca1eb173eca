//! Neighbouring blocks read in one streamed request, and boxes copied between chunk and region.

use crate::error::ChunkedError;

/// The file's blocks, as the facade holds them.
pub(crate) type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

/// The longest run of neighbouring blocks when several readers share a read.
pub(crate) const MAX_RUN_BYTES: u64 = 64 << 20;

/// `blocks` (sorted, unique) in runs of neighbours: consecutive indices, read together by
/// [`stream_run`], up to `cap` bytes a run.
pub(crate) fn neighbour_runs(reader: &Reader, blocks: &[usize], cap: u64) -> Vec<Vec<usize>> {
    let offsets = reader.block_offsets();
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for &b in blocks {
        let joins = runs.last().is_some_and(|run| {
            let (first, last) = (run[0], run[run.len() - 1]);
            last + 1 == b
                && offsets
                    .get(first)
                    .is_some_and(|start| block_end(reader, &offsets, b).saturating_sub(*start) <= cap)
        });
        match runs.last_mut() {
            Some(run) if joins => run.push(b),
            _ => runs.push(vec![b]),
        }
    }
    runs
}

/// Where block `b`'s bytes end at the latest: the next block's start, or the end of the file
/// for the last block (its block index, a few lines, read with it).
pub(crate) fn block_end(reader: &Reader, offsets: &[u64], b: usize) -> u64 {
    offsets.get(b + 1).copied().unwrap_or_else(|| reader.file_len())
}

/// The decoded data of the neighbouring blocks `run`, each handed to `emit` as soon as its
/// bytes are in: one streamed read from the first block's header to the next block's start
/// (the file's end after the last block; one request to a remote file), each header parsed
/// from it and each block decoded. Where that cannot serve (checksums to verify, a draft's
/// layout, a streamed block, a header that does not parse or claims more than `chunk_bytes`
/// allows, a read that fails), those blocks are read one by one as the reader reads them.
/// Memory: the blocks not yet complete, not the run. False when `emit` said stop.
pub(crate) fn stream_run(
    reader: &Reader,
    run: &[usize],
    chunk_bytes: usize,
    emit: &mut (dyn FnMut(usize, Result<Vec<u8>, ChunkedError>) -> bool + Send),
) -> bool {
    let one = |b: usize| {
        reader
            .read_data(b)
            .map(std::borrow::Cow::into_owned)
            .map_err(|e| ChunkedError::Block {
                block: b,
                source: Box::new(e),
            })
    };
    let offsets = reader.block_offsets();
    let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
        return true;
    };
    let usable = !reader.options().verify_checksums && reader.file_header().dialect == asdf_layout::Dialect::Asdf;
    let span = offsets
        .get(first)
        .map(|&s| (s, block_end(reader, &offsets, last)))
        .filter(|(s, e)| usable && e > s);
    let Some((start, end)) = span else {
        return run.iter().all(|&b| emit(b, one(b)));
    };
    // The largest stored block taken from the stream (a compressor's worst case and more).
    let most = (chunk_bytes as u64).saturating_mul(4) + (1 << 20);
    let mut next = 0usize; // the next block of `run` to take
    let mut alone: Vec<usize> = Vec::new(); // blocks to read one by one after the stream
    let mut stopped = false;
    let mut pending: Vec<u8> = Vec::new(); // bytes from `pending_at` not yet used
    let mut pending_at = start;
    let mut streamed = start; // where the bytes received so far end
    // Takes the blocks complete in `data` (the file's bytes from `data_at`); returns where
    // the bytes still needed begin, or None when `emit` said stop.
    let mut take = |data: &[u8], data_at: u64, next: &mut usize, alone: &mut Vec<usize>| -> Option<u64> {
        while let Some(&b) = run.get(*next) {
            let Some(&at) = offsets.get(b) else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(rel) = at.checked_sub(data_at).and_then(|r| usize::try_from(r).ok()) else {
                // Before the bytes kept (a hostile index's overlapping blocks).
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(avail) = data.get(rel..).filter(|a| a.len() >= 6) else {
                return Some(at);
            };
            let header_len = 6 + usize::from(u16::from_be_bytes([avail[4], avail[5]]));
            if avail.len() < header_len {
                return Some(at);
            }
            let header = asdf_layout::BlockHeader::parse(avail, at)
                .ok()
                .filter(|h| !h.is_streamed() && h.data_size <= most && h.used_size <= most);
            let Some(h) = header else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(from) = usize::try_from(h.total_header_len()).ok() else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(to) = usize::try_from(h.used_size).ok().and_then(|u| from.checked_add(u)) else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(stored) = avail.get(from..to) else {
                return Some(at);
            };
            let decoded = if h.compression.is_none() {
                (h.used_size == h.data_size).then(|| stored.to_vec())
            } else {
                reader.options().registry.get(h.compression).and_then(|codec| {
                    let mut out = vec![0u8; usize::try_from(h.data_size).ok()?];
                    codec.decode(stored, &mut out).ok()?;
                    Some(out)
                })
            };
            *next += 1;
            match decoded {
                Some(d) => {
                    if !emit(b, Ok(d)) {
                        return None;
                    }
                }
                None => alone.push(b),
            }
        }
        Some(u64::MAX)
    };
    let mut sink = |piece: &[u8]| -> std::io::Result<()> {
        let piece_at = streamed;
        streamed += piece.len() as u64;
        let keep_from = if pending.is_empty() {
            // Straight from the piece (a source in memory hands the whole run at once).
            let keep = take(piece, piece_at, &mut next, &mut alone);
            pending_at = piece_at;
            keep.map(|k| {
                let k = k.clamp(piece_at, streamed);
                pending.extend_from_slice(&piece[usize::try_from(k - piece_at).unwrap_or(piece.len())..]);
                pending_at = k;
                k
            })
        } else {
            pending.extend_from_slice(piece);
            let keep = take(&pending, pending_at, &mut next, &mut alone);
            keep.map(|k| {
                let k = k.clamp(pending_at, streamed);
                pending.drain(..usize::try_from(k - pending_at).unwrap_or(pending.len()));
                pending_at = k;
                k
            })
        };
        if keep_from.is_none() {
            stopped = true;
            return Err(std::io::Error::other("the chunks' readers were stopped"));
        }
        Ok(())
    };
    let read = asdf_layout::ReadAt::read_streamed(reader.get_ref(), start, end - start, &mut sink);
    if stopped {
        return false;
    }
    // The blocks the stream did not bring (a failed read, or a header claiming more than
    // the bytes up to the next block): each read alone, so that a failure says which.
    drop(read);
    alone.extend(run.get(next..).unwrap_or_default());
    alone.into_iter().all(|b| emit(b, one(b)))
}

/// Copies where a source box and a destination box meet, row by row along the last
/// dimension: the source box starts at `start` with `shape` (C order, from byte `offset` of
/// `src`), the destination box at `lo` with `extent` (C order, all of `dst`); `fix` is applied
/// to each row written (a byte swap). `Err(())` when either side's bytes are too short.
pub(crate) fn copy_box(
    src: &[u8],
    offset: usize,
    (start, shape): (&[usize], &[usize]),
    (dst, lo, extent): (&mut [u8], &[usize], &[usize]),
    size: usize,
    fix: impl Fn(&mut [u8]),
) -> Result<(), ()> {
    let nd = start.len();
    let (a, b): (Vec<usize>, Vec<usize>) = start
        .iter()
        .zip(shape)
        .zip(lo.iter().zip(extent))
        .map(|((&s, &n), (&l, &e))| (s.max(l), (s + n).min(l + e)))
        .unzip();
    if a.iter().zip(&b).any(|(x, y)| x >= y) {
        return Ok(());
    }
    // Byte strides of a C-ordered box.
    let strides = |dims: &[usize]| {
        let mut st = vec![size; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            st[d] = st[d + 1].saturating_mul(dims[d + 1]);
        }
        st
    };
    let (from_strides, to_strides) = (strides(shape), strides(extent));
    let row = if nd == 0 { size } else { (b[nd - 1] - a[nd - 1]) * size };
    let mut idx = a.clone();
    loop {
        let from = offset
            + idx
                .iter()
                .zip(start)
                .zip(&from_strides)
                .map(|((&i, &s), &st)| (i - s) * st)
                .sum::<usize>();
        let to = idx
            .iter()
            .zip(lo)
            .zip(&to_strides)
            .map(|((&i, &l), &st)| (i - l) * st)
            .sum::<usize>();
        let piece = src.get(from..from + row).ok_or(())?;
        let target = dst.get_mut(to..to + row).ok_or(())?;
        target.copy_from_slice(piece);
        fix(target);
        // The next row: the odometer over every dimension but the last.
        let mut d = nd.saturating_sub(1);
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < b[d] {
                break;
            }
            idx[d] = a[d];
        }
    }
}

/// The chunk grid's extent along each dimension.
pub(crate) fn grid_of(shape: &[usize], chunks: &[usize]) -> Vec<usize> {
    shape.iter().zip(chunks).map(|(s, c)| s.div_ceil(*c)).collect()
}
