//! The block index: `#ASDF BLOCK INDEX`, then a YAML 1.1 document holding a list of block
//! offsets, at the very end of the file (optionally followed by NUL bytes).
//!
//! The index is read with a small dedicated parser that accepts the block form Python asdf
//! writes (`- 687` lines) and the flow form the standard shows (`--- [2043, 16340]`), and
//! nothing else.

use crate::error::{Error, LimitError, Result};
use crate::source::ReadAt;

/// The line that starts a block index.
pub const INDEX_HEADER: &[u8] = b"#ASDF BLOCK INDEX";

/// Bytes that may appear in a block index document (and in NUL padding after it).
fn index_byte(b: u8) -> bool {
    b.is_ascii_digit() || b" \t\r\n-[],.%YAML+\0".contains(&b)
}

/// Looks for `#ASDF BLOCK INDEX` reading backward from the end of the file, no earlier than
/// `min_offset`. Returns the offset of the last occurrence.
///
/// The search stops once it has passed bytes that cannot belong to an index (so a large block
/// without an index after it is not scanned), or after `max_bytes` bytes.
///
/// # Errors
/// I/O errors; [`LimitError::IndexBytes`] is never returned (the search just stops).
pub fn find_index(
    source: &(impl ReadAt + ?Sized),
    min_offset: u64,
    file_len: u64,
    max_bytes: u64,
) -> Result<Option<u64>> {
    let mut chunk = crate::FIRST_READ as u64;
    let overlap = INDEX_HEADER.len() as u64 - 1;
    let mut end = file_len;
    let floor = min_offset.max(file_len.saturating_sub(max_bytes));
    while end > floor {
        let start = end.saturating_sub(chunk).max(floor);
        chunk = (chunk * 2).min(crate::MAX_READ as u64);
        // Read [start, end + overlap) so a header straddling chunks is seen.
        let read_end = (end + overlap).min(file_len);
        let len = usize::try_from(read_end - start).unwrap_or(0);
        let buf = source.bytes_at(start, len).map_err(Error::io_at(start))?;
        if let Some(p) = rfind(&buf, INDEX_HEADER) {
            return Ok(Some(start + p as u64));
        }
        let fresh = &buf[..usize::try_from(end - start).unwrap_or(0)];
        if !fresh.iter().all(|&b| index_byte(b)) {
            // Scan the non-index part only up to the last "foreign" byte plus a margin: the
            // header, if present, would have been in this chunk.
            return Ok(None);
        }
        end = start;
    }
    Ok(None)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Why the text after `#ASDF BLOCK INDEX` is not an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexParseError {
    /// The text does not start with the header line.
    #[error("missing `#ASDF BLOCK INDEX` line")]
    NoHeader,
    /// No `---` document start.
    #[error("missing `---`")]
    NoDocumentStart,
    /// The document is not a list of non-negative integers.
    #[error("line {line}: not a list of non-negative integers")]
    NotAList {
        /// 1-based line within the index.
        line: usize,
    },
    /// Non-NUL bytes after the `...` line.
    #[error("line {line}: content after the end of the document")]
    TrailingContent {
        /// 1-based line within the index.
        line: usize,
    },
}

/// Parses a block index (starting at `#ASDF BLOCK INDEX`) into its offsets.
///
/// # Errors
/// [`IndexParseError`] when the bytes are not exactly one YAML list of integers.
pub fn parse_index(bytes: &[u8]) -> Result<Vec<u64>, IndexParseError> {
    let rest = bytes.strip_prefix(INDEX_HEADER).ok_or(IndexParseError::NoHeader)?;
    let rest = rest
        .strip_prefix(b"\r\n")
        .or_else(|| rest.strip_prefix(b"\n"))
        .ok_or(IndexParseError::NoHeader)?;
    let end = rest.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    let text = std::str::from_utf8(&rest[..end]).map_err(|_| IndexParseError::NotAList { line: 2 })?;

    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 2, l.trim_end_matches('\r')));
    // Directives, then `---`.
    let mut body = String::new();
    let body_line;
    loop {
        let (n, l) = lines.next().ok_or(IndexParseError::NoDocumentStart)?;
        if l.starts_with('%') {
            continue;
        }
        if l.trim_end() == "---" {
            body_line = n + 1;
            break;
        }
        if let Some(after) = l.strip_prefix("--- ") {
            body.push_str(after);
            body.push('\n');
            body_line = n;
            break;
        }
        if l.trim().is_empty() {
            continue;
        }
        return Err(IndexParseError::NoDocumentStart);
    }
    let mut ended = false;
    for (n, l) in lines.by_ref() {
        if l.trim_end() == "..." {
            ended = true;
            break;
        }
        if l.starts_with("---") {
            return Err(IndexParseError::TrailingContent { line: n });
        }
        body.push_str(l);
        body.push('\n');
    }
    if ended {
        for (n, l) in lines {
            if !l.trim().is_empty() {
                return Err(IndexParseError::TrailingContent { line: n });
            }
        }
    }
    parse_list(&body, body_line)
}

fn parse_int(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_list(body: &str, first_line: usize) -> Result<Vec<u64>, IndexParseError> {
    let trimmed = body.trim();
    if let Some(inner) = trimmed.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or(IndexParseError::NotAList { line: first_line })?;
        if inner.trim().is_empty() {
            return Ok(Vec::new());
        }
        return inner
            .split(',')
            .map(|p| parse_int(p).ok_or(IndexParseError::NotAList { line: first_line }))
            .collect();
    }
    let mut out = Vec::new();
    for (i, l) in body.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let line = first_line + i;
        let v = l
            .strip_prefix('-')
            .filter(|r| r.starts_with([' ', '\t']))
            .and_then(parse_int)
            .ok_or(IndexParseError::NotAList { line })?;
        out.push(v);
    }
    if out.is_empty() && !trimmed.is_empty() {
        return Err(IndexParseError::NotAList { line: first_line });
    }
    Ok(out)
}

/// The bytes of a block index for `offsets`, as Python asdf writes it.
#[must_use]
pub fn index_bytes(offsets: &[u64]) -> Vec<u8> {
    let mut s = String::from("#ASDF BLOCK INDEX\n%YAML 1.1\n---\n");
    for o in offsets {
        s.push_str("- ");
        s.push_str(&o.to_string());
        s.push('\n');
    }
    s.push_str("...\n");
    s.into_bytes()
}

/// Reads the index starting at `offset` up to the end of the file, within `max_bytes`.
pub(crate) fn read_index_bytes(
    source: &(impl ReadAt + ?Sized),
    offset: u64,
    file_len: u64,
    max_bytes: u64,
) -> Result<Vec<u8>> {
    let len = file_len.saturating_sub(offset);
    if len > max_bytes {
        return Err(Error::Limits(LimitError::IndexBytes { limit: max_bytes }));
    }
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
    source.read_exact_at(offset, &mut buf).map_err(Error::io_at(offset))?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        assert_eq!(parse_index(&index_bytes(&[687, 900])).unwrap(), vec![687, 900]);
        assert_eq!(
            parse_index(b"#ASDF BLOCK INDEX\r\n%YAML 1.1\r\n--- [2043, 16340]\r\n...\r\n\0\0\0").unwrap(),
            vec![2043, 16340]
        );
        assert_eq!(
            parse_index(b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[1,\n 2]\n...\n").unwrap(),
            vec![1, 2]
        );
        assert_eq!(
            parse_index(b"#ASDF BLOCK INDEX\n%YAML 1.1\n--- []\n...\n").unwrap(),
            Vec::<u64>::new()
        );
        assert_eq!(parse_index(b"#ASDF BLOCK INDEX\n---\n- 5\n").unwrap(), vec![5]);
        for bad in [
            &b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 5\njunk"[..],
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 5\n...\nJUNK",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n0000000000\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- -5\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 5x\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n-5\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n",
            b"#ASDF BLOCK INDEX",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n--- [1, 2\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 99999999999999999999999\n...\n",
        ] {
            assert!(parse_index(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn finds_last_header_and_stops_at_foreign_bytes() {
        let mut f = vec![7u8; 100_000];
        f.extend_from_slice(&index_bytes(&[1, 2]));
        let n = f.len() as u64;
        assert_eq!(find_index(&f, 0, n, u64::MAX).unwrap(), Some(100_000));
        // An index header buried in foreign bytes far from the end is not searched for.
        let mut g = index_bytes(&[1]);
        g.extend_from_slice(&vec![7u8; 200_000]);
        assert_eq!(find_index(&g, 0, g.len() as u64, u64::MAX).unwrap(), None);
        // A long run of index-like bytes is searched through.
        let mut h = index_bytes(&[1]);
        h.extend_from_slice(&vec![b'0'; 200_000]);
        assert_eq!(find_index(&h, 0, h.len() as u64, u64::MAX).unwrap(), Some(0));
        assert_eq!(find_index(&h, 1, h.len() as u64, u64::MAX).unwrap(), None);
    }
}
