//! The `#ASDF` header line, the comment lines after it, and the bounds of the YAML tree.

use crate::dialect::Dialect;
use crate::error::{Error, FormatError, LimitError, Result, Unsupported, Warning};
use crate::limits::Limits;
use crate::source::ReadAt;
use crate::version::Version;

/// What follows the header and comment lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// A YAML tree starts here (`%YAML` or `---`).
    Tree,
    /// A block starts here (a file without a tree).
    Block,
    /// Nothing: the file ends after the header (an empty tree, no blocks).
    Empty,
}

/// The parsed header and comment lines of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// Which layout the header line announces: ASDF 1.x, the ASDF 0.1.0 draft, or FINF 0.1.0.
    pub dialect: Dialect,
    /// The version on the `#ASDF` (or `%FINF`) line.
    pub format_version: Version,
    /// The version on the `#ASDF_STANDARD` comment, or 1.0.0 when there is none.
    pub standard_version: Version,
    /// Whether an `#ASDF_STANDARD` comment was present.
    pub standard_version_declared: bool,
    /// Every comment line after the header, without its `#` and surrounding white space.
    pub comments: Vec<String>,
    /// Offset of the first byte after the comment lines.
    pub content_offset: u64,
    /// What starts at `content_offset`.
    pub content: Content,
}

/// Reads lines from a source without reading more than needed.
struct LineReader<'a, S: ?Sized> {
    source: &'a S,
    file_len: u64,
}

impl<S: ReadAt + ?Sized> LineReader<'_, S> {
    /// The line starting at `pos`: (bytes without the line break, offset after the break).
    fn line(&self, pos: u64, max: u64) -> Result<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut p = pos;
        let mut chunk = [0u8; 256];
        while p < self.file_len {
            let want = usize::try_from((self.file_len - p).min(chunk.len() as u64)).unwrap_or(chunk.len());
            self.source
                .read_exact_at(p, &mut chunk[..want])
                .map_err(Error::io_at(p))?;
            if let Some(i) = chunk[..want].iter().position(|&b| b == b'\n') {
                out.extend_from_slice(&chunk[..i]);
                if out.last() == Some(&b'\r') {
                    out.pop();
                }
                return Ok((out, p + i as u64 + 1));
            }
            out.extend_from_slice(&chunk[..want]);
            p += want as u64;
            if out.len() as u64 > max {
                return Err(Error::Limits(LimitError::TreeBytes { limit: max }));
            }
        }
        if out.last() == Some(&b'\r') {
            out.pop();
        }
        Ok((out, self.file_len))
    }

    fn starts_with(&self, pos: u64, prefix: &[u8]) -> Result<bool> {
        if self.file_len.saturating_sub(pos) < prefix.len() as u64 {
            return Ok(false);
        }
        let mut b = vec![0u8; prefix.len()];
        self.source.read_exact_at(pos, &mut b).map_err(Error::io_at(pos))?;
        Ok(b == prefix)
    }
}

fn parse_version(text: &[u8], offset: u64) -> Result<Version> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            Error::format(
                offset,
                FormatError::UnparsableVersion(String::from_utf8_lossy(text).chars().take(64).collect()),
            )
        })
}

/// Parses the header line and the comment lines.
///
/// Accepts file format 1.x (1.y with y > 0 adds [`Warning::NewerFileFormat`]), the drafts
/// before it (`#ASDF 0.1.0`, the ASDF 0.1.0 draft, and `%FINF 0.1.0`: [`Dialect`]); rejects any
/// other version, a missing `#ASDF` magic, and non-comment lines before the tree.
///
/// # Errors
/// [`FormatError::NotAsdf`], [`FormatError::UnparsableVersion`],
/// [`Unsupported::FileFormatVersion`], [`FormatError::JunkBeforeTree`], I/O errors.
pub fn read_file_header(
    source: &(impl ReadAt + ?Sized),
    file_len: u64,
    limits: &Limits,
    warnings: &mut Vec<Warning>,
) -> Result<FileHeader> {
    let lr = LineReader { source, file_len };
    let finf = lr.starts_with(0, b"%FINF")?;
    if !finf && !lr.starts_with(0, b"#ASDF")? {
        return Err(Error::format(0, FormatError::NotAsdf));
    }
    let (line, mut pos) = lr.line(0, limits.max_tree_bytes)?;
    let mut parts = line.split(|b| b.is_ascii_whitespace()).filter(|p| !p.is_empty());
    let (Some(magic), Some(ver), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Error::format(0, FormatError::NotAsdf));
    };
    if magic != b"#ASDF" && magic != b"%FINF" {
        return Err(Error::format(0, FormatError::NotAsdf));
    }
    let format_version = parse_version(ver, 6)?;
    let dialect = match (finf, format_version.major, format_version.minor) {
        (false, 1, _) => Dialect::Asdf,
        (false, 0, 1) => Dialect::Asdf010,
        (true, 0, 1) => Dialect::Finf,
        _ => {
            return Err(Error::Unsupported {
                offset: 6,
                kind: Unsupported::FileFormatVersion(format_version),
            });
        }
    };
    if dialect == Dialect::Asdf && format_version.minor > 0 {
        warnings.push(Warning::NewerFileFormat(format_version));
    }
    let magic = dialect.block_magic();

    let mut comments = Vec::new();
    let mut standard_version = None;
    loop {
        if pos >= file_len {
            break;
        }
        if lr.starts_with(pos, b"%")? || lr.starts_with(pos, b"---")? {
            break;
        }
        if lr.starts_with(pos, &magic)? {
            break;
        }
        if !lr.starts_with(pos, b"#")? {
            return Err(Error::format(pos, FormatError::JunkBeforeTree));
        }
        let (line, next) = lr.line(pos, limits.max_tree_bytes)?;
        let text = String::from_utf8_lossy(&line[1..]).trim().to_owned();
        let mut words = text.split_whitespace();
        if let (Some("ASDF_STANDARD"), Some(v), None) = (words.next(), words.next(), words.next()) {
            standard_version = Some(parse_version(v.as_bytes(), pos + 15)?);
        }
        comments.push(text);
        pos = next;
    }
    let content = if pos >= file_len {
        Content::Empty
    } else if lr.starts_with(pos, &magic)? {
        Content::Block
    } else {
        Content::Tree
    };
    Ok(FileHeader {
        dialect,
        format_version,
        standard_version: standard_version.unwrap_or(Version::STANDARD_DEFAULT),
        standard_version_declared: standard_version.is_some(),
        comments,
        content_offset: pos,
        content,
    })
}

/// Finds the end of the YAML tree that starts at `start`: the byte after the `...` line
/// (`\n...\n`, `\n...\r\n`, or `\n...` at the end of the file). Returns the tree's bytes.
///
/// A `...` that does not stand alone on its line (as in `foo: ...bar`) does not end the tree.
///
/// # Errors
/// [`FormatError::TreeEndNotFound`] (pointing at the tree's start),
/// [`LimitError::TreeBytes`], I/O errors.
pub fn read_tree(source: &(impl ReadAt + ?Sized), start: u64, file_len: u64, limits: &Limits) -> Result<Vec<u8>> {
    // Most trees end within the first read: looked for without a buffer of our own (the
    // bytes are borrowed where the source holds them), and only the tree is copied.
    let first = (file_len.saturating_sub(start))
        .min(crate::FIRST_READ as u64)
        .min(limits.max_tree_bytes.saturating_add(6));
    let first = usize::try_from(first).unwrap_or(0);
    let head = source.bytes_at(start, first).map_err(Error::io_at(start))?;
    let at_eof = start + first as u64 >= file_len;
    if let Some(end) = find_end_marker(&head, 0, at_eof) {
        return Ok(head[..end].to_vec());
    }
    let mut buf: Vec<u8> = head.into_owned();
    let mut searched = 0usize;
    loop {
        let have = start + buf.len() as u64;
        let at_eof = have >= file_len;
        if let Some(end) = find_end_marker(&buf, searched, at_eof) {
            buf.truncate(end);
            return Ok(buf);
        }
        if at_eof {
            return Err(Error::format(start, FormatError::TreeEndNotFound));
        }
        if buf.len() as u64 >= limits.max_tree_bytes {
            return Err(Error::Limits(LimitError::TreeBytes {
                limit: limits.max_tree_bytes,
            }));
        }
        // Keep the last 5 bytes in the next search window: a marker may straddle chunks.
        searched = buf.len().saturating_sub(5);
        // 4 KiB first (most trees are small), then as much again as read so far, up to
        // 64 KiB at a time.
        let chunk = buf.len().clamp(crate::FIRST_READ, crate::MAX_READ) as u64;
        let want = (file_len - have)
            .min(chunk)
            .min(limits.max_tree_bytes.saturating_add(6) - buf.len() as u64);
        let old = buf.len();
        let want = usize::try_from(want).unwrap_or(0);
        buf.resize(old + want, 0);
        source
            .read_exact_at(have, &mut buf[old..])
            .map_err(Error::io_at(have))?;
    }
}

/// Offset just past the first end-of-document line found at or after `from` in `buf`.
pub fn find_end_marker(buf: &[u8], from: usize, at_eof: bool) -> Option<usize> {
    let mut i = from;
    while let Some(p) = buf.get(i..)?.windows(4).position(|w| w == b"\n...") {
        let after = i + p + 4;
        match buf.get(after) {
            Some(b'\n') => return Some(after + 1),
            Some(b'\r') => match buf.get(after + 1) {
                Some(b'\n') => return Some(after + 2),
                None if !at_eof => return None,
                _ => {}
            },
            None if at_eof => return Some(after),
            None => return None,
            _ => {}
        }
        i += p + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(b: &[u8]) -> Result<(FileHeader, Vec<Warning>)> {
        let mut w = Vec::new();
        read_file_header(&b, b.len() as u64, &Limits::default(), &mut w).map(|h| (h, w))
    }

    #[test]
    fn header_cases() {
        let (h, w) = hdr(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n").unwrap();
        assert_eq!(h.format_version, Version::new(1, 0, 0));
        assert_eq!(h.standard_version, Version::new(1, 6, 0));
        assert!(h.standard_version_declared);
        assert_eq!(h.content, Content::Tree);
        assert_eq!(h.content_offset, 33);
        assert!(w.is_empty());
        let (h, w) = hdr(b"#ASDF 1.3.0\r\n# just a note\r\n").unwrap();
        assert_eq!(h.standard_version, Version::new(1, 0, 0));
        assert!(!h.standard_version_declared);
        assert_eq!(h.comments, vec!["just a note".to_owned()]);
        assert_eq!(h.content, Content::Empty);
        assert_eq!(w, vec![Warning::NewerFileFormat(Version::new(1, 3, 0))]);
        let (h, _) = hdr(b"#ASDF 0.1.0\n%YAML 1.1\n").unwrap();
        assert_eq!(h.dialect, Dialect::Asdf010);
        let (h, _) = hdr(b"%FINF 0.1.0\r\n\x89BLK").unwrap();
        assert_eq!((h.dialect, h.content), (Dialect::Finf, Content::Block));
        assert!(hdr(b"#ASDF 0.2.0\n").is_err());
        assert!(hdr(b"%FINF 1.0.0\n").is_err());
        assert!(matches!(
            hdr(b"#ASDF 2.0.0\n").unwrap_err(),
            Error::Unsupported {
                kind: Unsupported::FileFormatVersion(_),
                ..
            }
        ));
        assert_eq!(
            hdr(b"#ASDX 1.0.0\n").unwrap_err().format_kind(),
            Some(&FormatError::NotAsdf)
        );
        assert_eq!(hdr(b"#ASDF").unwrap_err().format_kind(), Some(&FormatError::NotAsdf));
        assert_eq!(hdr(b"").unwrap_err().format_kind(), Some(&FormatError::NotAsdf));
        assert!(matches!(
            hdr(b"#ASDF x.y\n").unwrap_err().format_kind(),
            Some(FormatError::UnparsableVersion(_))
        ));
        let e = hdr(b"#ASDF 1.0.0\nfoo\n%YAML 1.1\n").unwrap_err();
        assert_eq!(e.format_kind(), Some(&FormatError::JunkBeforeTree));
        assert_eq!(e.offset(), Some(12));
        let (h, _) = hdr(b"#ASDF 1.0.0\n\xd3BLK").unwrap();
        assert_eq!(h.content, Content::Block);
    }

    #[test]
    fn end_marker() {
        assert_eq!(find_end_marker(b"a\n...\nb", 0, false), Some(6));
        assert_eq!(find_end_marker(b"a\n...\r\nb", 0, false), Some(7));
        assert_eq!(find_end_marker(b"a\n...", 0, true), Some(5));
        assert_eq!(find_end_marker(b"a\n...", 0, false), None);
        assert_eq!(find_end_marker(b"a: ...x\n...bar\n", 0, true), None);
        assert_eq!(find_end_marker(b"a\n....\n...\n", 0, true), Some(11));
        let l = Limits::default();
        let t = b"%YAML 1.1\n---\nfoo: ...bar...\n...\n\xd3BLK";
        assert_eq!(read_tree(&&t[..], 0, t.len() as u64, &l).unwrap().len(), t.len() - 4);
        let e = read_tree(&&t[..20], 3, 20, &l).unwrap_err();
        assert_eq!(e.format_kind(), Some(&FormatError::TreeEndNotFound));
        assert_eq!(e.offset(), Some(3));
        let small = Limits {
            max_tree_bytes: 8,
            ..Limits::default()
        };
        assert!(matches!(
            read_tree(&&t[..], 0, t.len() as u64, &small).unwrap_err(),
            Error::Limits(_)
        ));
    }

    #[test]
    fn long_tree_across_chunks() {
        let mut t = b"%YAML 1.1\n---\n".to_vec();
        while t.len() < 200_000 {
            t.extend_from_slice(b"key: value ... more\n");
        }
        // Place the marker across the 64 KiB boundary.
        t.truncate(65_534);
        t.extend_from_slice(b"\n...\n");
        t.extend_from_slice(&[0; 10]);
        let got = read_tree(&t, 0, t.len() as u64, &Limits::default()).unwrap();
        assert_eq!(got.len(), 65_539);
    }
}
