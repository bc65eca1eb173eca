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

mod directives;
mod scalars;

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
}
