//! YAML text to tokens.
//!
//! A byte-oriented scanner in the classic two-stage design (tokens with "simple key" look-back,
//! then a grammar over tokens in `grammar.rs`), following the YAML 1.2 productions where they
//! tighten what libyaml accepts (comments need a space before `#`, tabs never indent, flow
//! content stays right of its block, `:` inside flow plain scalars). Plain and one-line
//! quoted scalars are borrowed from the text; nothing here allocates per character.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::error::Error;
use crate::node::{ScalarStyle, Span};

/// A position in the text: byte offset, 0-based line, 0-based column in characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Mark {
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

impl From<Mark> for Span {
    fn from(m: Mark) -> Span {
        Span {
            line: u32::try_from(m.line).unwrap_or(u32::MAX),
            column: u32::try_from(m.column).unwrap_or(u32::MAX),
            index: m.index as u64,
        }
    }
}

pub(crate) fn syntax(at: Mark, problem: &'static str, context: Option<&'static str>) -> Error {
    Error::Syntax {
        span: at.into(),
        problem,
        context,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    StreamStart,
    StreamEnd,
    Version(u8, u8),
    TagDirective(&'a str, Cow<'a, str>),
    DocStart,
    DocEnd,
    BlockSeqStart,
    BlockMapStart,
    BlockEnd,
    FlowSeqStart,
    FlowSeqEnd,
    FlowMapStart,
    FlowMapEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(&'a str),
    Anchor(&'a str),
    /// Handle (`!`, `!!`, `!name!`, or empty for a verbatim tag) and suffix.
    Tag(&'a str, Cow<'a, str>),
    Scalar(Cow<'a, str>, ScalarStyle),
}

#[derive(Debug, Clone)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub start: Mark,
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    /// Separated from the token before it (on its line) by a tab.
    tab_before: bool,
    possible: bool,
    required: bool,
    number: usize,
    mark: Mark,
}

pub(crate) struct Scanner<'a> {
    src: &'a str,
    b: &'a [u8],
    m: Mark,
    tokens: VecDeque<Token<'a>>,
    /// Tokens handed out so far.
    parsed: usize,
    started: bool,
    ended: bool,
    indent: isize,
    indents: Vec<isize>,
    flow_level: usize,
    /// For each open flow collection: is it a mapping.
    flow_maps: Vec<bool>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    /// The previous token was a quoted scalar or the end of a flow collection: in flow
    /// context a `:` right after it is a value indicator even without a space.
    json_like: bool,
    /// Leading spaces of the current line contain a tab before the first content.
    tab_in_indent: bool,
    /// Spaces before the first tab of the current line's indentation.
    indent_spaces: usize,
    /// At the start of a line (only spaces/tabs seen since the break).
    line_start: bool,
    /// The whitespace right before the current token (on its line) holds a tab.
    tab_sep: bool,
    /// The current token is the first of its line.
    first_on_line: bool,
    /// Line of the last full stale-key pass, and the oldest key position it left possible.
    stale_line: usize,
    stale_from: usize,
    /// Levels below this hold no possible key.
    lowest: usize,
    /// Possible keys that can go stale (not in a flow mapping).
    watched: usize,
}

const EOF: u8 = 0;

/// Flow collections nested deeper than this are refused whatever the [`Limits`](crate::Limits)
/// (each open one holds a possible key the scanner checks on every token).
const MAX_FLOW_DEPTH: usize = 10_000;

#[inline]
fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}
#[inline]
fn brk(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}
#[inline]
fn blankz(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | EOF)
}
/// U+2028 or U+2029 at byte `i`.
#[inline]
fn ls_ps_at(b: &[u8], i: usize) -> bool {
    b.get(i) == Some(&0xe2) && b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(&(0xa8 | 0xa9)))
}
#[inline]
fn flow_ind(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

/// Checks the characters YAML allows in a stream (printable; tab, LF, CR as control codes).
fn check_printable(b: &[u8]) -> Result<(), Error> {
    let mut line = 0;
    let mut col = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let bad = (c < 0x20 && c != b'\t' && c != b'\n' && c != b'\r')
            || c == 0x7f
            || (c == 0xc2 && i + 1 < b.len() && (0x80..=0x9f).contains(&b[i + 1]) && b[i + 1] != 0x85);
        if bad {
            return Err(syntax(
                Mark {
                    index: i,
                    line,
                    column: col,
                },
                "control characters are not allowed",
                None,
            ));
        }
        if c == b'\n' {
            line += 1;
            col = 0;
        } else if c & 0xc0 != 0x80 {
            col += 1;
        }
        i += 1;
    }
    Ok(())
}

impl<'a> Scanner<'a> {
    /// A scanner over `text` (UTF-8, checked; a leading BOM is skipped).
    pub fn new(text: &'a [u8]) -> Result<Self, Error> {
        let src = std::str::from_utf8(text).map_err(|e| Error::Encoding {
            offset: e.valid_up_to(),
            problem: "invalid UTF-8",
        })?;
        check_printable(text)?;
        let mut s = Scanner {
            src,
            b: text,
            m: Mark::default(),
            tokens: VecDeque::new(),
            parsed: 0,
            started: false,
            ended: false,
            indent: -1,
            indents: Vec::new(),
            flow_level: 0,
            flow_maps: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            json_like: false,
            tab_in_indent: false,
            indent_spaces: 0,
            line_start: true,
            tab_sep: false,
            first_on_line: true,
            stale_line: usize::MAX,
            stale_from: 0,
            lowest: 0,
            watched: 0,
        };
        if text.starts_with(b"\xef\xbb\xbf") {
            s.m.index = 3;
        }
        Ok(s)
    }

    #[inline]
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.m.index + k).copied().unwrap_or(EOF)
    }

    #[inline]
    fn eof(&self) -> bool {
        self.m.index >= self.b.len()
    }

    /// Advances over `n` ASCII bytes on one line.
    #[inline]
    fn adv(&mut self, n: usize) {
        self.m.index += n;
        self.m.column += n;
    }

    /// Advances over one character (any width, not a line break).
    #[inline]
    fn adv_char(&mut self) {
        let c = self.at(0);
        let w = if c < 0x80 {
            1
        } else if c >= 0xf0 {
            4
        } else if c >= 0xe0 {
            3
        } else {
            2
        };
        self.m.index += w;
        self.m.column += 1;
    }

    /// Advances over bytes `from..to` of the current line (no breaks in it).
    #[inline]
    fn adv_to(&mut self, to: usize) {
        let seg = &self.b[self.m.index..to];
        self.m.column += seg.iter().filter(|&&c| c & 0xc0 != 0x80).count();
        self.m.index = to;
    }

    /// Skips a line break (LF, CR LF or CR).
    #[inline]
    fn skip_break(&mut self) {
        if self.at(0) == b'\r' && self.at(1) == b'\n' {
            self.m.index += 2;
        } else {
            self.m.index += 1;
        }
        self.m.line += 1;
        self.m.column = 0;
    }

    fn err(&self, problem: &'static str, context: Option<&'static str>) -> Error {
        syntax(self.m, problem, context)
    }

    /// The next token, or `None` after the stream end.
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, Error> {
        self.fetch_more()?;
        let t = self.tokens.pop_front();
        if t.is_some() {
            self.parsed += 1;
        }
        Ok(t)
    }

    /// Removes the token [`peek`](Self::peek) showed (it is final: no key can go before it).
    pub fn pop_peeked(&mut self) -> Option<Token<'a>> {
        let t = self.tokens.pop_front();
        if t.is_some() {
            self.parsed += 1;
        }
        t
    }

    /// The next token without consuming it.
    pub fn peek(&mut self) -> Result<Option<&Token<'a>>, Error> {
        self.fetch_more()?;
        Ok(self.tokens.front())
    }

    fn fetch_more(&mut self) -> Result<(), Error> {
        loop {
            if !self.tokens.is_empty() {
                self.stale_simple_keys()?;
                let waiting = self.key_at_front();
                if !waiting {
                    return Ok(());
                }
            }
            if self.ended {
                return Ok(());
            }
            self.fetch_next()?;
        }
    }

    fn push(&mut self, tok: Tok<'a>, start: Mark) {
        self.tokens.push_back(Token { tok, start });
    }

    fn fetch_next(&mut self) -> Result<(), Error> {
        if !self.started {
            self.started = true;
            self.simple_key_allowed = true;
            self.simple_keys.push(SimpleKey::default());
            self.push(Tok::StreamStart, self.m);
            return Ok(());
        }
        self.scan_to_next_token()?;
        self.stale_simple_keys()?;
        if self.eof() {
            self.unroll_indent(-1);
            return self.fetch_stream_end();
        }
        let c = self.at(0);
        let first_on_line = self.line_start;
        self.first_on_line = first_on_line;
        self.line_start = false;
        if !first_on_line && self.tab_sep && self.flow_level == 0 && matches!(c, b'-' | b'?') && blankz(self.at(1)) {
            return Err(self.err("a block collection may not follow a tab on its line", None));
        }
        if first_on_line && self.tab_in_indent && self.flow_level == 0 {
            let spaces = self.indent_spaces as isize;
            if spaces <= self.indent || (matches!(c, b'-' | b'?' | b':') && blankz(self.at(1))) {
                return Err(self.err("tabs are not allowed as indentation", None));
            }
        }
        self.unroll_indent(self.m.column as isize);
        if self.m.column == 0 {
            if c == b'%' {
                return self.fetch_directive();
            }
            if self.doc_indicator() {
                let start = self.m;
                let t = if c == b'-' { Tok::DocStart } else { Tok::DocEnd };
                self.unroll_indent(-1);
                self.remove_simple_key()?;
                self.simple_key_allowed = false;
                self.adv(3);
                self.push(t, start);
                self.json_like = false;
                return Ok(());
            }
        }
        let was_json = std::mem::replace(&mut self.json_like, false);
        match c {
            b'[' => self.fetch_flow_start(Tok::FlowSeqStart),
            b'{' => self.fetch_flow_start(Tok::FlowMapStart),
            b']' => self.fetch_flow_end(Tok::FlowSeqEnd),
            b'}' => self.fetch_flow_end(Tok::FlowMapEnd),
            b',' => self.fetch_flow_entry(),
            b'-' if blankz(self.at(1)) => self.fetch_block_entry(),
            b'?' if blankz(self.at(1)) => self.fetch_key(),
            b':' if blankz(self.at(1)) || (self.flow_level > 0 && (was_json || flow_ind(self.at(1)))) => {
                self.fetch_value()
            }
            b'*' => self.fetch_anchor(true),
            b'&' => self.fetch_anchor(false),
            b'!' => self.fetch_tag(),
            b'|' | b'>' if self.flow_level == 0 => self.fetch_block_scalar(c == b'|'),
            b'\'' | b'"' => self.fetch_flow_scalar(c == b'\''),
            _ => {
                let plain_start = !matches!(
                    c,
                    b'-' | b'?'
                        | b':'
                        | b','
                        | b'['
                        | b']'
                        | b'{'
                        | b'}'
                        | b'#'
                        | b'&'
                        | b'*'
                        | b'!'
                        | b'|'
                        | b'>'
                        | b'\''
                        | b'"'
                        | b'%'
                        | b'@'
                        | b'`'
                ) || (matches!(c, b'-' | b'?' | b':')
                    && !blankz(self.at(1))
                    && !(self.flow_level > 0 && flow_ind(self.at(1))));
                if plain_start && !blank(c) {
                    self.fetch_plain()
                } else {
                    Err(self.err(
                        "found character that cannot start any token",
                        Some("while scanning for the next token"),
                    ))
                }
            }
        }
    }

    fn doc_indicator(&self) -> bool {
        self.m.column == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && blankz(self.at(3))
    }

    fn scan_to_next_token(&mut self) -> Result<(), Error> {
        self.tab_sep = false;
        loop {
            let mut sep = self.m.index == 0 || self.m.column == 0;
            loop {
                let c = self.at(0);
                if c == b' ' {
                    if self.line_start && !self.tab_in_indent {
                        self.indent_spaces += 1;
                    }
                } else if c == b'\t' {
                    if self.line_start {
                        self.tab_in_indent = true;
                    } else {
                        self.tab_sep = true;
                    }
                } else {
                    break;
                }
                self.adv(1);
                sep = true;
            }
            if self.at(0) == b'#' {
                let prev = if self.m.index == 0 {
                    b' '
                } else {
                    self.b[self.m.index - 1]
                };
                if !sep && !blankz(prev) && !self.after_bom() {
                    return Err(self.err("comments must be separated from other tokens by whitespace", None));
                }
                while !brk(self.at(0)) && !self.eof() {
                    self.m.index += 1;
                }
            }
            if brk(self.at(0)) {
                self.skip_break();
                self.new_line();
                self.tab_sep = false;
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
                continue;
            }
            return Ok(());
        }
    }

    fn after_bom(&self) -> bool {
        self.m.index == 3 && self.b.starts_with(b"\xef\xbb\xbf")
    }

    fn new_line(&mut self) {
        self.line_start = true;
        self.tab_in_indent = false;
        self.indent_spaces = 0;
    }

    /// A possible key starts at the next token to hand out. Keys of lower levels were saved
    /// earlier, so the lowest possible key has the smallest token number.
    fn key_at_front(&mut self) -> bool {
        let n = self.simple_keys.len();
        while self.lowest < n && !self.simple_keys[self.lowest].possible {
            self.lowest += 1;
        }
        self.lowest < n && self.simple_keys[self.lowest].number == self.parsed
    }

    /// Keys in a flow mapping may be separated from their `:` by line breaks: they never go stale.
    fn exempt(&self, level: usize) -> bool {
        level > 0 && self.flow_maps.get(level - 1).copied().unwrap_or(false)
    }

    /// Marks the key of the innermost level impossible.
    fn clear_top_key(&mut self) {
        let level = self.simple_keys.len().saturating_sub(1);
        let exempt = self.exempt(level);
        if let Some(k) = self.simple_keys.last_mut()
            && k.possible
        {
            k.possible = false;
            if !exempt {
                self.watched = self.watched.saturating_sub(1);
            }
        }
    }

    fn stale_simple_keys(&mut self) -> Result<(), Error> {
        let m = self.m;
        if self.watched == 0 {
            return Ok(());
        }
        // Nothing can have gone stale since the last pass on this line unless the oldest key
        // that could is now more than 1024 bytes back (keeps deep nesting linear).
        if m.line == self.stale_line && m.index <= self.stale_from.saturating_add(1024) {
            return Ok(());
        }
        let mut oldest = usize::MAX;
        let from = self.lowest.min(self.simple_keys.len());
        for (level, k) in self.simple_keys.iter_mut().enumerate().skip(from) {
            let in_map = level > 0 && self.flow_maps.get(level - 1).copied().unwrap_or(false);
            if k.possible && !in_map && (k.mark.line < m.line || k.mark.index + 1024 < m.index) {
                if k.required {
                    return Err(syntax(
                        m,
                        "could not find expected ':'",
                        Some("while scanning a simple key"),
                    ));
                }
                k.possible = false;
                self.watched = self.watched.saturating_sub(1);
            }
            if k.possible && !in_map {
                oldest = oldest.min(k.mark.index);
            }
        }
        self.stale_line = m.line;
        self.stale_from = oldest;
        Ok(())
    }

    fn save_simple_key(&mut self) -> Result<(), Error> {
        let required = self.flow_level == 0 && self.indent == self.m.column as isize;
        if self.simple_key_allowed {
            let key = SimpleKey {
                tab_before: self.tab_sep && !self.first_on_line,
                possible: true,
                required,
                number: self.parsed + self.tokens.len(),
                mark: self.m,
            };
            self.remove_simple_key()?;
            let level = self.simple_keys.len().saturating_sub(1);
            if !self.exempt(level) {
                self.watched += 1;
                // A new watched key: the next pass must look at it.
                self.stale_from = self.stale_from.min(key.mark.index);
            }
            self.lowest = self.lowest.min(level);
            if let Some(last) = self.simple_keys.last_mut() {
                *last = key;
            }
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> Result<(), Error> {
        if let Some(k) = self.simple_keys.last()
            && k.possible
            && k.required
        {
            return Err(syntax(
                k.mark,
                "could not find expected ':'",
                Some("while scanning a simple key"),
            ));
        }
        self.clear_top_key();
        Ok(())
    }

    /// Opens a block collection at `column` if it is right of the current one; says whether it did.
    fn roll_indent(&mut self, column: usize, number: Option<usize>, tok: Tok<'a>, at: Mark) -> bool {
        if self.flow_level > 0 {
            return false;
        }
        let rolled = self.indent < column as isize;
        if rolled {
            self.indents.push(self.indent);
            self.indent = column as isize;
            let t = Token { tok, start: at };
            match number {
                Some(n) => self.tokens.insert(n - self.parsed, t),
                None => self.tokens.push_back(t),
            }
        }
        rolled
    }

    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            self.push(Tok::BlockEnd, self.m);
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn fetch_stream_end(&mut self) -> Result<(), Error> {
        if self.m.column != 0 {
            self.m.column = 0;
            self.m.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        self.ended = true;
        self.push(Tok::StreamEnd, self.m);
        Ok(())
    }

    fn fetch_flow_start(&mut self, t: Tok<'a>) -> Result<(), Error> {
        if self.flow_level >= MAX_FLOW_DEPTH {
            return Err(Error::Limits {
                span: self.m.into(),
                kind: crate::error::LimitError::Depth(MAX_FLOW_DEPTH),
            });
        }
        self.save_simple_key()?;
        self.simple_keys.push(SimpleKey::default());
        self.flow_maps.push(t == Tok::FlowMapStart);
        self.flow_level += 1;
        self.simple_key_allowed = true;
        let start = self.m;
        self.adv(1);
        self.push(t, start);
        Ok(())
    }

    fn fetch_flow_end(&mut self, t: Tok<'a>) -> Result<(), Error> {
        self.remove_simple_key()?;
        if self.flow_level > 0 {
            self.flow_level -= 1;
            self.simple_keys.pop();
            self.flow_maps.pop();
        }
        self.simple_key_allowed = false;
        let start = self.m;
        self.adv(1);
        self.push(t, start);
        self.json_like = true;
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Result<(), Error> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.m;
        self.adv(1);
        self.push(Tok::FlowEntry, start);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Result<(), Error> {
        if self.flow_level > 0 {
            return Err(self.err("block sequence entries are not allowed in flow context", None));
        }
        if !self.simple_key_allowed {
            return Err(self.err("block sequence entries are not allowed in this context", None));
        }
        let _ = self.roll_indent(self.m.column, None, Tok::BlockSeqStart, self.m);
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.m;
        self.adv(1);
        self.push(Tok::BlockEntry, start);
        Ok(())
    }

    fn fetch_key(&mut self) -> Result<(), Error> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.err("mapping keys are not allowed in this context", None));
            }
            let _ = self.roll_indent(self.m.column, None, Tok::BlockMapStart, self.m);
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.m;
        self.adv(1);
        self.push(Tok::Key, start);
        Ok(())
    }

    fn fetch_value(&mut self) -> Result<(), Error> {
        let key = self.simple_keys.last().copied().unwrap_or_default();
        if key.possible {
            let t = Token {
                tok: Tok::Key,
                start: key.mark,
            };
            self.tokens.insert(key.number - self.parsed, t);
            if self.roll_indent(key.mark.column, Some(key.number), Tok::BlockMapStart, key.mark) && key.tab_before {
                return Err(syntax(
                    key.mark,
                    "a block mapping may not follow a tab on its line",
                    None,
                ));
            }
            self.clear_top_key();
            self.simple_key_allowed = false;
        } else {
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err(self.err("mapping values are not allowed in this context", None));
                }
                let _ = self.roll_indent(self.m.column, None, Tok::BlockMapStart, self.m);
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.m;
        self.adv(1);
        self.push(Tok::Value, start);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.m;
        self.adv(1);
        let from = self.m.index;
        let mut i = from;
        while i < self.b.len() && !blankz(self.b[i]) && !flow_ind(self.b[i]) {
            i += 1;
        }
        if i == from {
            return Err(self.err(
                "did not find expected alphabetic or numeric character",
                Some(if alias {
                    "while scanning an alias"
                } else {
                    "while scanning an anchor"
                }),
            ));
        }
        self.adv_to(i);
        let name = &self.src[from..i];
        self.push(if alias { Tok::Alias(name) } else { Tok::Anchor(name) }, start);
        Ok(())
    }

    fn fetch_tag(&mut self) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.m;
        let ctx = Some("while parsing a tag");
        let (handle, suffix);
        if self.at(1) == b'<' {
            self.adv(2);
            let s = self.scan_uri(true, ctx)?;
            if self.at(0) != b'>' || s.is_empty() {
                return Err(self.err("did not find the expected '>'", ctx));
            }
            self.adv(1);
            handle = "";
            suffix = s;
        } else {
            // `!`, `!!suffix`, `!name!suffix` or `!suffix`.
            let from = self.m.index;
            let mut i = from + 1;
            while i < self.b.len() && (self.b[i].is_ascii_alphanumeric() || self.b[i] == b'-' || self.b[i] == b'_') {
                i += 1;
            }
            if i < self.b.len() && self.b[i] == b'!' {
                self.adv_to(i + 1);
                handle = &self.src[from..=i];
                suffix = self.scan_uri(false, ctx)?;
                if suffix.is_empty() {
                    return Err(self.err("did not find expected tag URI", ctx));
                }
            } else {
                self.adv(1);
                handle = "!";
                suffix = self.scan_uri(false, ctx)?;
            }
        }
        let c = self.at(0);
        if !(blankz(c) || (self.flow_level > 0 && flow_ind(c))) {
            return Err(self.err("did not find expected whitespace or line break", ctx));
        }
        self.push(Tok::Tag(handle, suffix), start);
        Ok(())
    }

    /// URI characters with `%xx` escapes decoded. In a verbatim tag every URI character is
    /// allowed; in a shorthand suffix `!` and the flow indicators end it.
    fn scan_uri(&mut self, verbatim: bool, ctx: Option<&'static str>) -> Result<Cow<'a, str>, Error> {
        let from = self.m.index;
        let mut i = from;
        let mut escaped = false;
        while i < self.b.len() {
            let c = self.b[i];
            let ok = c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'-' | b'#'
                        | b';'
                        | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b'.'
                        | b'%'
                        | b'_'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                )
                || (verbatim && matches!(c, b',' | b'[' | b']' | b'!'));
            if !ok {
                break;
            }
            if c == b'%' {
                escaped = true;
            }
            i += 1;
        }
        self.adv_to(i);
        let raw = &self.src[from..i];
        if !escaped {
            return Ok(Cow::Borrowed(raw));
        }
        let rb = raw.as_bytes();
        let mut bytes = Vec::with_capacity(rb.len());
        let mut k = 0;
        while k < rb.len() {
            if rb[k] == b'%' {
                let hex = rb.get(k + 1..k + 3).and_then(|h| std::str::from_utf8(h).ok());
                let v = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(v) = v else {
                    return Err(syntax(self.m, "did not find URI escaped octet", ctx));
                };
                bytes.push(v);
                k += 3;
            } else {
                bytes.push(rb[k]);
                k += 1;
            }
        }
        String::from_utf8(bytes)
            .map(Cow::Owned)
            .map_err(|_| syntax(self.m, "found an incorrect UTF-8 sequence in a URI escape", ctx))
    }

    fn fetch_directive(&mut self) -> Result<(), Error> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.m;
        let ctx = Some("while scanning a directive");
        self.adv(1);
        let from = self.m.index;
        let mut i = from;
        while i < self.b.len() && !blankz(self.b[i]) {
            i += 1;
        }
        if i == from {
            return Err(self.err("could not find expected directive name", ctx));
        }
        self.adv_to(i);
        let name = &self.src[from..i];
        let tok = match name {
            "YAML" => {
                self.skip_blanks_required(ctx)?;
                let major = self.scan_version_number(ctx)?;
                if self.at(0) != b'.' {
                    return Err(self.err("did not find expected digit or '.' character", ctx));
                }
                self.adv(1);
                let minor = self.scan_version_number(ctx)?;
                Some(Tok::Version(major, minor))
            }
            "TAG" => {
                self.skip_blanks_required(ctx)?;
                let from = self.m.index;
                let mut i = from;
                if self.at(0) != b'!' {
                    return Err(self.err("did not find expected '!'", ctx));
                }
                i += 1;
                while i < self.b.len() && (self.b[i].is_ascii_alphanumeric() || self.b[i] == b'-' || self.b[i] == b'_')
                {
                    i += 1;
                }
                if i < self.b.len() && self.b[i] == b'!' {
                    i += 1;
                } else if i != from + 1 {
                    return Err(self.err("did not find expected '!'", ctx));
                }
                self.adv_to(i);
                let handle = &self.src[from..i];
                self.skip_blanks_required(ctx)?;
                let c = self.at(0);
                if c == b'!' {
                    self.adv(1);
                }
                let rest = self.scan_uri(true, ctx)?;
                let prefix = if c == b'!' {
                    Cow::Owned(format!("!{rest}"))
                } else {
                    rest
                };
                if prefix.is_empty() {
                    return Err(self.err("did not find expected tag prefix", ctx));
                }
                Some(Tok::TagDirective(handle, prefix))
            }
            _ => {
                // A reserved directive: its parameters are ignored.
                while !brk(self.at(0)) && !self.eof() {
                    if self.at(0) == b'#' && blank(self.b[self.m.index - 1]) {
                        break;
                    }
                    self.adv_char();
                }
                None
            }
        };
        // Trailing blanks, an optional comment, then a line break.
        let mut sep = self.m.index > 0 && blank(self.b[self.m.index - 1]);
        while blank(self.at(0)) {
            self.adv(1);
            sep = true;
        }
        if self.at(0) == b'#' {
            if !sep {
                return Err(self.err("comments must be separated from other tokens by whitespace", ctx));
            }
            while !brk(self.at(0)) && !self.eof() {
                self.m.index += 1;
            }
        }
        if !brk(self.at(0)) && !self.eof() {
            return Err(self.err("did not find expected comment or line break", ctx));
        }
        if let Some(t) = tok {
            self.push(t, start);
        }
        Ok(())
    }

    fn skip_blanks_required(&mut self, ctx: Option<&'static str>) -> Result<(), Error> {
        if !blank(self.at(0)) {
            return Err(self.err("did not find expected whitespace", ctx));
        }
        while blank(self.at(0)) {
            self.adv(1);
        }
        Ok(())
    }

    fn scan_version_number(&mut self, ctx: Option<&'static str>) -> Result<u8, Error> {
        let mut v: u32 = 0;
        let mut n = 0;
        while self.at(0).is_ascii_digit() {
            v = v * 10 + u32::from(self.at(0) - b'0');
            n += 1;
            if n > 3 {
                return Err(self.err("found extremely long version number", ctx));
            }
            self.adv(1);
        }
        if n == 0 {
            return Err(self.err("did not find expected version number", ctx));
        }
        u8::try_from(v).map_err(|_| self.err("found extremely long version number", ctx))
    }

    fn fetch_block_scalar(&mut self, literal: bool) -> Result<(), Error> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.m;
        let ctx = Some("while scanning a block scalar");
        self.adv(1);
        // Header: chomping and indentation indicators in either order.
        let mut chomp = 0i8;
        let mut increment = 0usize;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' if chomp == 0 => {
                    chomp = if self.at(0) == b'+' { 1 } else { -1 };
                    self.adv(1);
                }
                b'1'..=b'9' if increment == 0 => {
                    increment = usize::from(self.at(0) - b'0');
                    self.adv(1);
                }
                b'0' => {
                    return Err(self.err("found an indentation indicator equal to 0", ctx));
                }
                _ => {}
            }
        }
        let mut sep = false;
        while blank(self.at(0)) {
            self.adv(1);
            sep = true;
        }
        if self.at(0) == b'#' {
            if !sep {
                return Err(self.err("comments must be separated from other tokens by whitespace", ctx));
            }
            while !brk(self.at(0)) && !self.eof() {
                self.m.index += 1;
            }
        }
        if !brk(self.at(0)) && !self.eof() {
            return Err(self.err("did not find expected comment or line break", ctx));
        }
        let header_line = self.m.line;
        if brk(self.at(0)) {
            self.skip_break();
        }
        let min = (self.indent + 1).max(0) as usize;
        let indent = if increment > 0 {
            self.indent.max(0) as usize + increment
        } else {
            // Auto-detect from the first non-empty line; leading empty lines may not have
            // more spaces than it.
            let mut max_empty = 0;
            let mut j = self.m.index;
            let content_col;
            loop {
                let mut sp = 0;
                while j + sp < self.b.len() && self.b[j + sp] == b' ' {
                    sp += 1;
                }
                let c = self.b.get(j + sp).copied().unwrap_or(EOF);
                if brk(c) || (c == EOF && sp > 0) {
                    max_empty = max_empty.max(sp);
                    if c == EOF {
                        content_col = None;
                        break;
                    }
                    j += sp
                        + if c == b'\r' && self.b.get(j + sp + 1) == Some(&b'\n') {
                            2
                        } else {
                            1
                        };
                    continue;
                }
                let at = &self.b[j + sp..];
                let indicator = sp == 0
                    && (at.starts_with(b"---") || at.starts_with(b"..."))
                    && blankz(at.get(3).copied().unwrap_or(EOF));
                content_col = if c == EOF || indicator { None } else { Some(sp) };
                break;
            }
            match content_col {
                Some(col) if col >= min => {
                    if max_empty > col {
                        return Err(self.err("leading empty lines are indented more than the first line", ctx));
                    }
                    col
                }
                _ => max_empty.max(min).max(1),
            }
        };
        let mut out = String::new();
        let mut trailing = String::new();
        self.block_breaks(indent, header_line, &mut trailing)?;
        let mut leading_break = false;
        let mut leading_blank = false;
        while self.m.column == indent && !self.eof() {
            if self.m.column == 0 && self.doc_indicator() {
                break;
            }
            let trailing_blank = blank(self.at(0));
            if !literal && leading_break && !leading_blank && !trailing_blank {
                if trailing.is_empty() {
                    out.push(' ');
                }
            } else if leading_break {
                out.push('\n');
            }
            leading_break = false;
            out.push_str(&trailing);
            trailing.clear();
            leading_blank = trailing_blank;
            let from = self.m.index;
            let mut i = from;
            while i < self.b.len() && !brk(self.b[i]) {
                i += 1;
            }
            self.adv_to(i);
            out.push_str(&self.src[from..i]);
            if self.eof() {
                // A last line of spaces ends as if it had its line break.
                if self.b[from..i].iter().all(|&c| blank(c)) {
                    leading_break = true;
                }
                break;
            }
            self.skip_break();
            leading_break = true;
            self.block_breaks(indent, header_line, &mut trailing)?;
        }
        if chomp != -1 && leading_break {
            out.push('\n');
        }
        if chomp == 1 {
            out.push_str(&trailing);
        }
        // What follows starts in the indentation of a line.
        self.new_line();
        self.indent_spaces = self.m.column;
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        self.push(Tok::Scalar(Cow::Owned(out), style), start);
        Ok(())
    }

    /// Empty lines of a block scalar (spaces up to `indent`), appended as `\n` to `breaks`.
    fn block_breaks(&mut self, indent: usize, header_line: usize, breaks: &mut String) -> Result<(), Error> {
        loop {
            while self.m.column < indent && self.at(0) == b' ' {
                self.adv(1);
            }
            if self.m.column < indent && self.at(0) == b'\t' {
                let mut j = self.m.index;
                while j < self.b.len() && blank(self.b[j]) {
                    j += 1;
                }
                if j >= self.b.len() || brk(self.b[j]) {
                    return Err(self.err(
                        "tabs are not allowed in the indentation of a block scalar",
                        Some("while scanning a block scalar"),
                    ));
                }
            }
            if self.eof() && self.m.column > 0 && self.m.line > header_line {
                // Spaces at the very end: an empty last line.
                breaks.push('\n');
                return Ok(());
            }
            if !brk(self.at(0)) {
                return Ok(());
            }
            self.skip_break();
            breaks.push('\n');
        }
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.m;
        let ctx = Some("while scanning a quoted scalar");
        self.adv(1);
        let q = if single { b'\'' } else { b'"' };
        // Fast path: one line, no escapes.
        let from = self.m.index;
        let mut i = from;
        while i < self.b.len() {
            let c = self.b[i];
            if c == q || (c == b'\\' && !single) || brk(c) || ls_ps_at(self.b, i) {
                break;
            }
            i += 1;
        }
        if i < self.b.len() && self.b[i] == q && !(single && self.b.get(i + 1) == Some(&b'\'')) {
            self.adv_to(i);
            self.adv(1);
            let text = &self.src[from..i];
            let style = if single {
                ScalarStyle::SingleQuoted
            } else {
                ScalarStyle::DoubleQuoted
            };
            self.push(Tok::Scalar(Cow::Borrowed(text), style), start);
            self.json_like = true;
            return Ok(());
        }
        let mut out = String::new();
        let mut escaped_break = false;
        'scalar: loop {
            // A run of content.
            loop {
                if self.eof() {
                    return Err(self.err("found unexpected end of stream", ctx));
                }
                let c = self.at(0);
                if single && c == b'\'' {
                    if self.at(1) == b'\'' {
                        out.push('\'');
                        self.adv(2);
                        continue;
                    }
                    break 'scalar;
                }
                if !single && c == b'"' {
                    break 'scalar;
                }
                if !single && c == b'\\' {
                    if brk(self.at(1)) {
                        self.adv(1);
                        self.skip_break();
                        escaped_break = true;
                        break;
                    }
                    self.escape(&mut out, ctx)?;
                    continue;
                }
                if blank(c) || brk(c) || ls_ps_at(self.b, self.m.index) {
                    break;
                }
                let from = self.m.index;
                let mut i = from;
                while i < self.b.len() {
                    let c = self.b[i];
                    if c == q || (c == b'\\' && !single) || blank(c) || brk(c) || ls_ps_at(self.b, i) {
                        break;
                    }
                    i += 1;
                }
                if i == from {
                    i += 1;
                }
                self.adv_to(i);
                out.push_str(&self.src[from..i]);
            }
            // Whitespace: kept within a line, folded across lines.
            let ws_from = self.m.index;
            while blank(self.at(0)) {
                self.adv(1);
            }
            if !escaped_break && !self.quoted_break() {
                out.push_str(&self.src[ws_from..self.m.index]);
                continue;
            }
            // Each break as written: `\n`, or U+2028 / U+2029, which YAML 1.1 (libyaml, so
            // PyYAML's dumper) treats as line breaks and keeps in the value.
            let mut seen: Vec<char> = Vec::new();
            let mut spaces = self.m.column;
            while self.quoted_break() {
                if brk(self.at(0)) {
                    self.skip_break();
                    seen.push('\n');
                } else {
                    seen.push(if self.at(2) == 0xa8 { '\u{2028}' } else { '\u{2029}' });
                    self.m.index += 3;
                    self.m.line += 1;
                    self.m.column = 0;
                }
                while self.at(0) == b' ' {
                    self.adv(1);
                }
                spaces = self.m.column;
                while blank(self.at(0)) {
                    self.adv(1);
                }
            }
            let breaks = seen.len();
            if breaks > 0 && !brk(self.at(0)) && !self.eof() && (spaces as isize) <= self.indent {
                return Err(self.err("continuation line of a quoted scalar is not indented enough", ctx));
            }
            if self.m.column == 0 && self.doc_indicator() {
                return Err(self.err("found unexpected document indicator", ctx));
            }
            if !self.eof() && (self.m.column as isize) <= self.indent {
                return Err(self.err("continuation line of a quoted scalar is not indented enough", ctx));
            }
            match seen.first() {
                _ if escaped_break => out.extend(seen.iter()),
                Some('\n') if breaks == 1 => out.push(' '),
                Some('\n') => out.extend(seen[1..].iter()),
                _ => out.extend(seen.iter()),
            }
            escaped_break = false;
        }
        self.adv(1);
        let style = if single {
            ScalarStyle::SingleQuoted
        } else {
            ScalarStyle::DoubleQuoted
        };
        self.push(Tok::Scalar(Cow::Owned(out), style), start);
        self.json_like = true;
        Ok(())
    }

    /// A line break inside a quoted scalar: LF, CR, or (as in YAML 1.1) U+2028 / U+2029.
    fn quoted_break(&self) -> bool {
        brk(self.at(0)) || ls_ps_at(self.b, self.m.index)
    }

    fn escape(&mut self, out: &mut String, ctx: Option<&'static str>) -> Result<(), Error> {
        let c = self.at(1);
        let simple = match c {
            b'0' => Some('\0'),
            b'a' => Some('\u{7}'),
            b'b' => Some('\u{8}'),
            b't' | b'\t' => Some('\t'),
            b'n' => Some('\n'),
            b'v' => Some('\u{b}'),
            b'f' => Some('\u{c}'),
            b'r' => Some('\r'),
            b'e' => Some('\u{1b}'),
            b' ' => Some(' '),
            b'"' => Some('"'),
            b'/' => Some('/'),
            b'\\' => Some('\\'),
            b'N' => Some('\u{85}'),
            b'_' => Some('\u{a0}'),
            b'L' => Some('\u{2028}'),
            b'P' => Some('\u{2029}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.adv(2);
            return Ok(());
        }
        let len = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => return Err(self.err("found unknown escape character", ctx)),
        };
        self.adv(2);
        let mut v: u32 = 0;
        for k in 0..len {
            let d = (self.at(k) as char)
                .to_digit(16)
                .ok_or_else(|| self.err("did not find expected hexadecimal number", ctx))?;
            v = v * 16 + d;
        }
        let ch = char::from_u32(v).ok_or_else(|| self.err("found invalid Unicode character escape code", ctx))?;
        out.push(ch);
        self.adv(len);
        Ok(())
    }

    fn fetch_plain(&mut self) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.m;
        let indent = (self.indent + 1).max(0) as usize;
        let flow = self.flow_level > 0;
        let mut owned: Option<String> = None;
        let mut first: Option<(usize, usize)> = None;
        let mut leading_blanks = false;
        // Pending whitespace between segments: (from, to) on one line, or line breaks.
        let mut pending_ws: Option<(usize, usize)> = None;
        let mut pending_breaks = 0usize;
        let mut end_mark = self.m;
        loop {
            if self.m.column == 0 && self.doc_indicator() {
                break;
            }
            if self.at(0) == b'#' {
                break;
            }
            // One segment of non-blank characters.
            let from = self.m.index;
            let b = self.b;
            let mut i = from;
            while i < b.len() {
                let c = b[i];
                if blankz(c) {
                    break;
                }
                if c == b':' {
                    let n = b.get(i + 1).copied().unwrap_or(EOF);
                    if blankz(n) || (flow && flow_ind(n)) {
                        break;
                    }
                } else if flow && flow_ind(c) {
                    break;
                }
                i += 1;
            }
            if i == from {
                break;
            }
            // Join with what came before.
            if let Some((f, t)) = first {
                let s = owned.get_or_insert_with(|| self.src[f..t].to_owned());
                if pending_breaks == 0 {
                    if let Some((a, z)) = pending_ws {
                        s.push_str(&self.src[a..z]);
                    }
                } else if pending_breaks == 1 {
                    s.push(' ');
                } else {
                    for _ in 1..pending_breaks {
                        s.push('\n');
                    }
                }
                s.push_str(&self.src[from..i]);
            } else {
                first = Some((from, i));
            }
            pending_ws = None;
            pending_breaks = 0;
            self.adv_to(i);
            end_mark = self.m;
            let c = self.at(0);
            if !(blank(c) || brk(c)) {
                break;
            }
            // Blanks and breaks.
            let mut ws_from = self.m.index;
            loop {
                let c = self.at(0);
                if blank(c) {
                    if leading_blanks && c == b'\t' && self.m.column < indent && !flow {
                        // A tab inside the indentation of a continuation line.
                        let mut j = self.m.index;
                        while j < self.b.len() && blank(self.b[j]) {
                            j += 1;
                        }
                        if j < self.b.len() && !brk(self.b[j]) {
                            return Err(self.err(
                                "found a tab character that violates indentation",
                                Some("while scanning a plain scalar"),
                            ));
                        }
                    }
                    if pending_breaks > 0 {
                        if c == b'\t' {
                            self.tab_in_indent = true;
                        } else if !self.tab_in_indent {
                            self.indent_spaces += 1;
                        }
                    }
                    self.adv(1);
                } else if brk(c) {
                    self.skip_break();
                    self.new_line();
                    pending_breaks += 1;
                    leading_blanks = true;
                    ws_from = self.m.index;
                } else {
                    break;
                }
            }
            if pending_breaks == 0 {
                pending_ws = Some((ws_from, self.m.index));
            }
            if !flow && self.m.column < indent {
                break;
            }
            if flow && pending_breaks > 0 && (self.m.column as isize) <= self.indent && !self.eof() {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        let _ = end_mark;
        let text = match (owned, first) {
            (Some(s), _) => Cow::Owned(s),
            (None, Some((f, t))) => Cow::Borrowed(&self.src[f..t]),
            (None, None) => Cow::Borrowed(""),
        };
        self.push(Tok::Scalar(text, ScalarStyle::Plain), start);
        Ok(())
    }
}
