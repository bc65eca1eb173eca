//! A skim of an ASDF tree's text for one top-level value, without parsing the rest: what a
//! pointer-directed (lazy) open needs to find `/data` in a file whose tree it has not parsed.
//!
//! The skim reads a strict subset of YAML, the layout Python asdf and this crate write: `%YAML`
//! and `%TAG` directives, `---` with an optional root tag, then a block mapping whose keys start
//! lines at column 0. The value asked for must be a scalar-only block mapping (optionally tagged
//! through a `%TAG` handle) of plain scalars and one-line flow sequences of plain scalars: an
//! ndarray as it is written. Every other entry is only stepped over, with a small lexer that
//! follows quotes, flow collections and comments so that a line inside a multi-line scalar or
//! collection is never taken for a key. Anything outside the subset (block scalars anywhere,
//! quoted or complex keys, tabs, aliases, a second document, a duplicate key, a line at column
//! 0 that is not a simple key) makes the skim give up (`None`): the caller then parses the
//! whole tree, so a skim never changes what a file means. When it answers, the node is the one
//! [`crate::parse`] builds for that value, position included (tested against the parser).

use crate::node::{Document, Mapping, Node, NodeKind, Scalar, ScalarStyle, Sequence, Span};
use crate::resolve::{Value, resolve_plain};

/// A JSON pointer as the skim reads it: its first token (a top-level key) and the pointer of
/// the rest within that key's value. `None` for the root and for a pointer with a `~e<i>`
/// token (a key by position, for the parsed tree).
#[must_use]
pub fn split_pointer(pointer: &str) -> Option<(String, String)> {
    let tokens = crate::pointer::tokens(pointer).ok()?;
    let (first, rest) = tokens.split_first()?;
    let rest = rest.iter().map(|t| format!("/{}", crate::pointer::escape(t))).collect();
    Some((first.clone(), rest))
}

/// The value of top-level key `key` of the tree `text`, as the root of a document of its own,
/// when the text is within the skim's subset; `None` otherwise (parse the whole tree then).
#[must_use]
pub fn top_level_value(text: &[u8], key: &str) -> Option<Document> {
    if other_line_breaks(text) {
        return None;
    }
    let mut lines = Lines { text, pos: 0, line: 0 };
    let mut directives: Vec<(String, String)> = Vec::new();
    let mut version = None;
    // Directives, then `---` (with an optional root tag and nothing else).
    loop {
        let (_, _, l) = lines.next()?;
        if l.is_empty() || l[0] == b'#' {
            continue;
        }
        if let Some(rest) = l.strip_prefix(b"%TAG ") {
            let mut parts = rest.split(|c| *c == b' ').filter(|p| !p.is_empty());
            let (h, p) = (parts.next()?, parts.next()?);
            if parts.next().is_some() || h.first() != Some(&b'!') || h.last() != Some(&b'!') {
                return None;
            }
            let (h, p) = (std::str::from_utf8(h).ok()?, std::str::from_utf8(p).ok()?);
            if directives.iter().any(|(d, _)| d == h) {
                return None;
            }
            directives.push((h.to_owned(), p.to_owned()));
            continue;
        }
        if let Some(rest) = l.strip_prefix(b"%YAML ") {
            let v = std::str::from_utf8(rest).ok()?.trim();
            let (a, b) = v.split_once('.')?;
            version = Some((a.parse().ok()?, b.parse().ok()?));
            continue;
        }
        if l == b"---" {
            break;
        }
        let tag = l.strip_prefix(b"--- ")?;
        let tag = trim_end(tag);
        if !tag.starts_with(b"!") || tag.contains(&b' ') {
            return None;
        }
        break;
    }
    let mut found: Option<(usize, u32, usize)> = None; // (offset after `key:`, line, end of its value)
    let mut lex = Lexer::default();
    let mut ended = false;
    while let Some((start, n, l)) = lines.next() {
        if ended {
            // After `...`: only blank lines and comments.
            if l.iter().all(|c| *c == b' ') || l[0] == b'#' {
                continue;
            }
            return None;
        }
        match l.first() {
            None => continue,
            Some(b' ') => {
                lex.line(l)?;
                continue;
            }
            Some(b'#') if lex.neutral() => continue,
            _ => {}
        }
        if !lex.neutral() {
            return None;
        }
        if let Some((_, _, end)) = &mut found
            && *end == usize::MAX
        {
            *end = start;
        }
        if l == b"..." || l.starts_with(b"... ") {
            ended = true;
            continue;
        }
        let k = l.iter().take_while(|c| is_key_char(**c)).count();
        let name = &l[..k];
        if k == 0 || !name[0].is_ascii_alphabetic() && name[0] != b'_' || l.get(k) != Some(&b':') {
            return None;
        }
        if !matches!(l.get(k + 1), None | Some(b' ')) {
            return None;
        }
        let name = std::str::from_utf8(name).ok()?;
        if !matches!(resolve_plain(name), Ok(Value::Str)) {
            return None;
        }
        if name == key {
            if found.is_some() {
                return None;
            }
            found = Some((start + k + 1, n, usize::MAX));
        }
        lex.line(&l[k + 1..])?;
    }
    if !lex.neutral() {
        return None;
    }
    let (at, line, end) = found?;
    let end = end.min(text.len());
    let root = value(text, at, end, line, &directives)?;
    Some(Document {
        version,
        tag_directives: directives,
        root,
    })
}

/// The lines of the text: (offset, 0-based number, bytes without the line break).
struct Lines<'a> {
    text: &'a [u8],
    pos: usize,
    line: u32,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<(usize, u32, &'a [u8])> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
        self.pos = start + len + 1;
        let n = self.line;
        self.line = self.line.saturating_add(1);
        Some((start, n, &rest[..len]))
    }
}

/// Whether `text` breaks a line other than at `\n`: YAML 1.1 also breaks at `\r`, NEL, LS and
/// PS, even inside a comment, where a key could follow unseen by a reading line by line.
fn other_line_breaks(text: &[u8]) -> bool {
    text.iter().enumerate().any(|(i, &b)| match b {
        b'\r' => true,
        0xC2 => text.get(i + 1) == Some(&0x85),
        0xE2 => text.get(i + 1) == Some(&0x80) && matches!(text.get(i + 2), Some(0xA8 | 0xA9)),
        _ => false,
    })
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s.iter().rposition(|c| *c != b' ').map_or(0, |i| i + 1);
    &s[..n]
}

/// Follows what decides whether a line starts inside a scalar or collection: quotes, flow
/// depth, comments. Block scalars and odd bytes (tab, CR, control bytes) are refused.
#[derive(Default)]
struct Lexer {
    double: bool,
    single: bool,
    flow: u32,
}

impl Lexer {
    fn neutral(&self) -> bool {
        !self.double && !self.single && self.flow == 0
    }

    /// Steps over one line (or the rest of one); `None` when it leaves the subset. A quote or
    /// flow collection opens only where a token starts, never inside a plain scalar, an anchor
    /// or a tag; a plain scalar ends at `: ` (and, in a flow collection, at `,[]{}`).
    fn line(&mut self, l: &[u8]) -> Option<()> {
        let mut token_start = true;
        let mut plain = false;
        let mut word = false;
        let mut i = 0;
        while i < l.len() {
            let c = l[i];
            let next = l.get(i + 1).copied();
            i += 1;
            if c == b'\t' || c == b'\r' || c < 0x20 || c == 0x7f {
                return None;
            }
            if self.double {
                match c {
                    b'\\' => i += 1,
                    b'"' => self.double = false,
                    _ => {}
                }
                continue;
            }
            if self.single {
                if c == b'\'' {
                    if next == Some(b'\'') {
                        i += 1;
                    } else {
                        self.single = false;
                    }
                }
                continue;
            }
            let flow_indicator = self.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}');
            if plain {
                match c {
                    b' ' if next == Some(b'#') => return Some(()),
                    b':' if next.is_none_or(|n| n == b' ' || self.flow > 0 && b",[]{}".contains(&n)) => {
                        plain = false;
                    }
                    _ if flow_indicator => plain = false,
                    _ => continue,
                }
                if !flow_indicator {
                    continue;
                }
            }
            if word {
                if c != b' ' && !flow_indicator {
                    continue;
                }
                word = false;
            }
            match c {
                b' ' => {
                    token_start = true;
                    continue;
                }
                b'#' if token_start => return Some(()),
                b'"' if token_start => self.double = true,
                b'\'' if token_start => self.single = true,
                b'[' | b'{' => self.flow += 1,
                b']' | b'}' if self.flow > 0 => self.flow -= 1,
                b',' if self.flow > 0 => {
                    token_start = true;
                    continue;
                }
                b'|' | b'>' if token_start && self.flow == 0 => return None,
                b'&' | b'*' | b'!' if token_start => word = true,
                b'-' | b'?' | b':' if token_start && next.is_none_or(|n| n == b' ') => {}
                _ if token_start => plain = true,
                _ => {}
            }
            token_start = matches!(c, b'[' | b'{');
        }
        Some(())
    }
}

/// The most entries a skimmed mapping may have.
const MAX_ENTRIES: usize = 32;

/// The value of the entry whose `:` ends at `at` (its lines run to `end`).
fn value(text: &[u8], at: usize, end: usize, line: u32, directives: &[(String, String)]) -> Option<Node> {
    let mut lines = Lines {
        text: &text[..end],
        pos: at,
        line,
    };
    let (_, _, first) = lines.next()?;
    let first = trim_end(first);
    let tag_text = first.strip_prefix(b" ").map(|t| t.trim_ascii_start());
    let (tag, tag_span) = match tag_text {
        None | Some([]) => (None, None),
        Some(t) => {
            let col = at + (first.len() - t.len()) - line_start(text, at);
            let span = Span {
                line,
                column: u32::try_from(col).ok()?,
                index: (at + first.len() - t.len()) as u64,
            };
            (Some(resolve_tag(t, directives)?), Some(span))
        }
    };
    let mut entries: Vec<(Node, Node)> = Vec::new();
    let mut indent = None;
    while let Some((start, n, l)) = lines.next() {
        let l = trim_end(l);
        if l.is_empty() {
            continue;
        }
        let m = l.iter().take_while(|c| **c == b' ').count();
        if *indent.get_or_insert(m) != m || m == 0 {
            return None;
        }
        let body = &l[m..];
        let k = body.iter().take_while(|c| is_key_char(**c)).count();
        let name = std::str::from_utf8(&body[..k]).ok()?;
        if k == 0 || body.get(k) != Some(&b':') || body.get(k + 1) != Some(&b' ') {
            return None;
        }
        // An ndarray has a handful of keys; a longer mapping is left to the parser and its
        // limits (and the duplicate check here stays short).
        if entries.len() >= MAX_ENTRIES
            || !matches!(resolve_plain(name), Ok(Value::Str))
            || entries.iter().any(|(e, _)| e.as_str() == Some(name))
        {
            return None;
        }
        let key = plain(name, n, m, start + m)?;
        let v_col = m + k + 2;
        let v = &l[v_col..];
        let val = if let Some(items) = v.strip_prefix(b"[") {
            let inner = items.strip_suffix(b"]")?;
            let mut seq = Vec::new();
            let mut col = v_col + 1;
            if !inner.trim_ascii().is_empty() {
                for part in inner.split(|c| *c == b',') {
                    let lead = part.iter().take_while(|c| **c == b' ').count();
                    let item = trim_end(&part[lead..]);
                    seq.push(plain(
                        std::str::from_utf8(item).ok()?,
                        n,
                        col + lead,
                        start + col + lead,
                    )?);
                    col += part.len() + 1;
                }
            }
            Node {
                tag: None,
                anchor: None,
                span: span(n, v_col, start + v_col),
                kind: NodeKind::Sequence(Sequence { items: seq, flow: true }),
            }
        } else {
            plain(std::str::from_utf8(v).ok()?, n, v_col, start + v_col)?
        };
        entries.push((key, val));
    }
    let first_key = entries.first().map(|(k, _)| k.span)?;
    Some(Node {
        tag: tag.map(String::into_boxed_str),
        anchor: None,
        span: tag_span.unwrap_or(first_key),
        kind: NodeKind::Mapping(Mapping { entries, flow: false }),
    })
}

fn line_start(text: &[u8], at: usize) -> usize {
    text[..at].iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1)
}

fn span(line: u32, column: usize, index: usize) -> Span {
    Span {
        line,
        column: u32::try_from(column).unwrap_or(u32::MAX),
        index: index as u64,
    }
}

/// A plain scalar of the subset: letters, digits and `_ . + -`, resolved as the parser does
/// (and refused where the parser would warn: integers outside int64).
fn plain(text: &str, line: u32, column: usize, index: usize) -> Option<Node> {
    let b = text.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'-'))
    {
        return None;
    }
    if b[0] == b'-' && b.len() == 1 {
        return None;
    }
    let value = resolve_plain(text).ok()?;
    match value {
        Value::Int(i) if i < -(i64::MAX - 1) => return None,
        Value::BigInt(_) => return None,
        _ => {}
    }
    Some(Node {
        tag: None,
        anchor: None,
        span: span(line, column, index),
        kind: NodeKind::Scalar(Scalar {
            text: text.into(),
            value,
            style: ScalarStyle::Plain,
        }),
    })
}

/// `!handle!suffix` or `!suffix` through a `%TAG` directive of the document.
fn resolve_tag(t: &[u8], directives: &[(String, String)]) -> Option<String> {
    let t = std::str::from_utf8(t).ok()?;
    if !t
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'!' | b'/' | b'-' | b'.' | b'_' | b':'))
    {
        return None;
    }
    let rest = t.strip_prefix('!')?;
    let (handle, suffix) = match rest.find('!') {
        Some(i) => (&t[..i + 2], &rest[i + 1..]),
        None => ("!", rest),
    };
    if suffix.is_empty() || suffix.contains('!') {
        return None;
    }
    let (_, prefix) = directives.iter().find(|(h, _)| h == handle)?;
    Some(format!("{prefix}{suffix}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::top_level_value;
    use crate::{Limits, parse};

    const HEAD: &str = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

    /// The skim's answer, checked against the parser's node for the same key.
    fn skim(body: &str, key: &str) -> Option<crate::Node> {
        let text = format!("{HEAD}{body}");
        let got = top_level_value(text.as_bytes(), key)?;
        let parsed = parse(text.as_bytes(), &Limits::default()).expect("parses");
        assert_eq!(Some(&got.root), parsed.document.root.get(key), "{text}");
        Some(got.root)
    }

    const ARRAY: &str =
        "data: !core/ndarray-1.1.0\n  source: 0\n  datatype: float64\n  byteorder: little\n  shape: [134217728]\n";

    #[test]
    fn finds_an_ndarray_as_the_parser_builds_it() {
        let lib =
            "asdf_library: !core/software-1.0.0 {author: The asdf-rs developers, name: asdf-rs,\n  version: 0.1.0}\n";
        let n = skim(&format!("{lib}{ARRAY}...\n"), "data").expect("in the subset");
        assert_eq!(n.tag.as_deref(), Some("tag:stsci.edu:asdf/core/ndarray-1.1.0"));
        assert_eq!(
            n.get("shape").unwrap().as_sequence().unwrap().items[0].as_i64(),
            Some(134_217_728)
        );
        // Other entries in any style are stepped over.
        let other = "meta:\n  a: 'it''s: [x'\n  b: \"q: {\\\" #\"\n  c: [1, {x: \"]\"}]  # ]\n  d: don't [stop\nseq:\n  - \"x\n    y\"\n  - &a !t [1]\n";
        assert!(skim(&format!("{other}{ARRAY}history: [a,\n  b]\n...\n"), "data").is_some());
        let strides = "data: !core/ndarray-1.1.0\n  source: -1\n  datatype: [ucs4, 3]\n  byteorder: big\n  shape: [2, 3]\n  strides: [24, 8]\n  offset: 0\n";
        assert!(skim(&format!("{strides}...\n"), "data").is_some());
        // Untagged, and the last entry without `...`.
        assert!(skim("x: 1\ny:\n  a: 1.5e+3\n  b: [-1, null, yes]\n", "y").is_some());
    }

    #[test]
    fn gives_up_outside_the_subset() {
        let cases = [
            // duplicate key, key absent, block scalar, alias, quoted key, a nested mapping
            format!("{ARRAY}{ARRAY}...\n"),
            "other: 1\n...\n".to_owned(),
            format!("note: |\n  text\n{ARRAY}...\n"),
            "a: &x 1\ndata: !core/ndarray-1.1.0\n  source: *x\n...\n".to_owned(),
            format!("'q': 1\n{ARRAY}...\n"),
            "data:\n  source: 0\n  inner:\n    a: 1\n...\n".to_owned(),
            // a multi-line quoted scalar or flow collection reaching column 0
            format!("a: \"x\ndata: 5\"\n{ARRAY}...\n"),
            format!("a: [1,\ndata: 5]\n{ARRAY}...\n"),
            // a second document, a tab, an unknown tag handle
            format!("{ARRAY}---\nb: 1\n"),
            format!("a:\t1\n{ARRAY}...\n"),
            "data: !x!ndarray-1.1.0\n  source: 0\n...\n".to_owned(),
            // a line break other than `\n` (LS, PS, NEL, CR), in a comment or a value: the
            // parser sees a key there (here a duplicate, whose later value wins)
            format!("{ARRAY}# note\u{2028}data: 5\n...\n"),
            format!("{ARRAY}# note\u{2029}data: 5\n...\n"),
            format!("{ARRAY}# note\u{85}data: 5\n...\n"),
            format!("{ARRAY}# note\rdata: 5\n...\n"),
            ARRAY.replace(
                "  byteorder: little\n",
                "  byteorder: little # c\u{2028}  byteorder: big\n",
            ),
            // a merge key
            "base: &b {source: 0, datatype: float64}\ndata: !core/ndarray-1.1.0\n  <<: *b\n...\n".to_owned(),
            // more entries than an ndarray has
            format!(
                "data:\n{}...\n",
                (0..40).map(|i| format!("  k{i}: 1\n")).collect::<String>()
            ),
        ];
        for body in cases {
            let text = format!("{HEAD}{body}");
            assert!(top_level_value(text.as_bytes(), "data").is_none(), "{text}");
        }
    }
}
