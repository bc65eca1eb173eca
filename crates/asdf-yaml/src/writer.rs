//! The text writer behind [`crate::emit`]: indentation, indicators, tags, anchors and the five
//! scalar styles, laid out as the libyaml emitter (PyYAML's `CSafeDumper`, what Python asdf
//! uses) lays them out, so trees come out byte for byte as Python writes them.

use crate::node::ScalarStyle;

/// What a scalar's characters allow (libyaml's scalar analysis).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowed {
    pub multiline: bool,
    pub flow_plain: bool,
    pub block_plain: bool,
    pub single_quoted: bool,
    pub block: bool,
}

/// Characters libyaml writes as they are (in UTF-8 output with unicode allowed): line feed,
/// printable ASCII, U+00A0..U+D7FF and U+E000..U+FFFD but the byte-order mark. Tabs, NEL and
/// characters beyond the BMP are escaped in double quotes.
fn printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}') && c != '\u{feff}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn blank_or_end(c: Option<char>) -> bool {
    c.is_none_or(|c| c == ' ' || c == '\t' || is_break(c))
}

/// Letters, digits, `_` and `-`: what anchors and tag handles may hold.
pub(crate) fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Which styles can write `text` so that it reads back unchanged.
pub(crate) fn analyze(text: &str, unicode: bool) -> Allowed {
    if text.is_empty() {
        return Allowed {
            multiline: false,
            flow_plain: false,
            block_plain: true,
            single_quoted: true,
            block: false,
        };
    }
    // Fast path: short runs of letters, digits and harmless punctuation.
    let b = text.as_bytes();
    if b.iter()
        .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'+' | b'(' | b')' | b'=' | b';'))
        && !text.starts_with("...")
    {
        return Allowed {
            multiline: false,
            flow_plain: true,
            block_plain: true,
            single_quoted: true,
            block: true,
        };
    }
    let (mut flow_ind, mut block_ind) = (false, false);
    if text.starts_with("---") || text.starts_with("...") {
        flow_ind = true;
        block_ind = true;
    }
    let (mut breaks, mut special) = (false, false);
    let (mut lead_space, mut lead_break, mut trail_space, mut trail_break) = (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut after_blank = true;
    let mut chars = text.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let before_blank = blank_or_end(next);
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' => {
                    flow_ind = true;
                    block_ind = true;
                }
                '?' | ':' => {
                    flow_ind = true;
                    block_ind |= before_blank;
                }
                '-' if before_blank => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_ind = true,
                ':' => {
                    flow_ind = true;
                    block_ind |= before_blank;
                }
                '#' if after_blank => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        }
        if !printable(c) || (!unicode && !c.is_ascii()) {
            special = true;
        }
        if c == ' ' {
            lead_space |= first;
            trail_space |= next.is_none();
            break_space |= prev_break;
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            breaks = true;
            lead_break |= first;
            trail_break |= next.is_none();
            space_break |= prev_space;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        after_blank = c == ' ' || c == '\t' || is_break(c);
        first = false;
    }
    let mut a = Allowed {
        multiline: breaks,
        flow_plain: true,
        block_plain: true,
        single_quoted: true,
        block: true,
    };
    if lead_space || lead_break || trail_space || trail_break || breaks {
        a.flow_plain = false;
        a.block_plain = false;
    }
    if trail_space {
        a.block = false;
    }
    if break_space {
        a.flow_plain = false;
        a.block_plain = false;
        a.single_quoted = false;
    }
    if space_break || special {
        a = Allowed {
            multiline: breaks,
            flow_plain: false,
            block_plain: false,
            single_quoted: false,
            block: false,
        };
    }
    a.flow_plain &= !flow_ind;
    a.block_plain &= !block_ind;
    a
}

/// The output and where the writer stands in it.
pub(crate) struct Out {
    pub buf: Vec<u8>,
    /// Characters since the last line break.
    pub column: usize,
    /// Current indentation (`None` before the root node).
    pub indent: Option<usize>,
    pub indents: Vec<Option<usize>>,
    /// The last thing written was white space (or nothing).
    pub whitespace: bool,
    /// Only indentation has been written on this line.
    pub indention: bool,
    pub flow_level: usize,
    pub best_indent: usize,
    pub width: usize,
    pub unicode: bool,
    /// A block scalar kept its final line breaks (`|+`): the document needs an explicit end.
    pub open_ended: bool,
}

impl Out {
    pub fn new(best_indent: usize, width: usize, unicode: bool) -> Self {
        Out {
            buf: Vec::new(),
            column: 0,
            indent: None,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            flow_level: 0,
            best_indent,
            width,
            unicode,
            open_ended: false,
        }
    }

    fn put(&mut self, b: u8) {
        self.buf.push(b);
        self.column += 1;
    }

    fn put_char(&mut self, c: char) {
        let mut tmp = [0u8; 4];
        self.buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        self.column += 1;
    }

    fn put_str(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
        self.column += if s.is_ascii() { s.len() } else { s.chars().count() };
    }

    fn newline(&mut self) {
        self.buf.push(b'\n');
        self.column = 0;
    }

    /// A line break from the text: `\n` as a newline, others written as they are.
    fn text_break(&mut self, c: char) {
        if c == '\n' {
            self.newline();
        } else {
            self.put_char(c);
            self.column = 0;
        }
    }

    pub fn push_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        self.indent = match self.indent {
            None => Some(if flow { self.best_indent } else { 0 }),
            Some(i) if !indentless => Some(i + self.best_indent),
            same => same,
        };
    }

    pub fn pop_indent(&mut self) {
        self.indent = self.indents.pop().flatten();
    }

    pub fn write_indent(&mut self) {
        let indent = self.indent.unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.newline();
        }
        while self.column < indent {
            self.put(b' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    pub fn indicator(&mut self, s: &str, need_space: bool, is_space: bool, is_indention: bool) {
        if need_space && !self.whitespace {
            self.put(b' ');
        }
        self.put_str(s);
        self.whitespace = is_space;
        self.indention &= is_indention;
    }

    pub fn anchor(&mut self, alias: bool, name: &str) {
        self.indicator(if alias { "*" } else { "&" }, true, false, false);
        self.put_str(name);
        self.whitespace = false;
        self.indention = false;
    }

    /// The space after an alias used as a simple key (`*a : v`).
    pub fn space_after_alias(&mut self) {
        self.put(b' ');
    }

    pub fn tag_handle(&mut self, handle: &str) {
        if !self.whitespace {
            self.put(b' ');
        }
        self.put_str(handle);
        self.whitespace = false;
        self.indention = false;
    }

    /// A tag suffix or prefix, with characters outside the URI set %-escaped.
    pub fn tag_content(&mut self, s: &str, need_space: bool) {
        self.tag_chars(s, need_space, ";/?:@&=+$,_.~*'()[]");
    }

    /// The suffix of a shorthand tag (`!handle!suffix`): as [`Out::tag_content`], and the flow
    /// indicators `,[]` escaped too, which would end the tag inside a flow collection (C
    /// libyaml writes them raw, and the text then reads back differently).
    pub fn tag_suffix(&mut self, s: &str) {
        self.tag_chars(s, false, ";/?:@&=+$_.~*'()");
    }

    fn tag_chars(&mut self, s: &str, need_space: bool, allowed: &str) {
        if need_space && !self.whitespace {
            self.put(b' ');
        }
        for c in s.chars() {
            if word_char(c) || allowed.contains(c) {
                self.put_char(c);
            } else {
                let mut tmp = [0u8; 4];
                for b in c.encode_utf8(&mut tmp).bytes() {
                    self.put(b'%');
                    self.put(HEX[usize::from(b >> 4)]);
                    self.put(HEX[usize::from(b & 15)]);
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    pub fn scalar(&mut self, text: &str, style: ScalarStyle, allow_breaks: bool) {
        match style {
            ScalarStyle::SingleQuoted => self.single_quoted(text, allow_breaks),
            ScalarStyle::DoubleQuoted => self.double_quoted(text, allow_breaks),
            ScalarStyle::Literal => self.literal(text),
            ScalarStyle::Folded => self.folded(text),
            ScalarStyle::Plain | ScalarStyle::Any => self.plain(text, allow_breaks),
        }
    }

    fn plain(&mut self, text: &str, allow_breaks: bool) {
        if !self.whitespace && (!text.is_empty() || self.flow_level > 0) {
            self.put(b' ');
        }
        if text.bytes().all(|b| b.is_ascii_graphic()) {
            self.buf.extend_from_slice(text.as_bytes());
            self.column += text.len();
        } else {
            let (mut spaces, mut breaks) = (false, false);
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c == ' ' {
                    if allow_breaks && !spaces && self.column > self.width && chars.peek() != Some(&' ') {
                        self.write_indent();
                    } else {
                        self.put(b' ');
                    }
                    spaces = true;
                } else if is_break(c) {
                    if !breaks && c == '\n' {
                        self.newline();
                    }
                    self.text_break(c);
                    self.indention = true;
                    breaks = true;
                } else {
                    if breaks {
                        self.write_indent();
                    }
                    self.put_char(c);
                    self.indention = false;
                    spaces = false;
                    breaks = false;
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, text: &str, allow_breaks: bool) {
        self.indicator("'", true, false, false);
        let (mut spaces, mut breaks) = (false, false);
        let mut chars = text.chars().peekable();
        let mut first = true;
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if c == ' ' {
                if allow_breaks && !spaces && self.column > self.width && !first && next.is_some() && next != Some(' ')
                {
                    self.write_indent();
                } else {
                    self.put(b' ');
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.newline();
                }
                self.text_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put(b'\'');
                }
                self.put_char(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
            first = false;
        }
        if breaks {
            self.write_indent();
        }
        self.indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double_quoted(&mut self, text: &str, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let mut spaces = false;
        let mut chars = text.chars().peekable();
        let mut first = true;
        while let Some(c) = chars.next() {
            if !printable(c) || (!self.unicode && !c.is_ascii()) || is_break(c) || c == '"' || c == '\\' {
                self.put(b'\\');
                let short = match c {
                    '\0' => Some(b'0'),
                    '\x07' => Some(b'a'),
                    '\x08' => Some(b'b'),
                    '\t' => Some(b't'),
                    '\n' => Some(b'n'),
                    '\x0b' => Some(b'v'),
                    '\x0c' => Some(b'f'),
                    '\r' => Some(b'r'),
                    '\x1b' => Some(b'e'),
                    '"' => Some(b'"'),
                    '\\' => Some(b'\\'),
                    '\u{85}' => Some(b'N'),
                    '\u{a0}' => Some(b'_'),
                    '\u{2028}' => Some(b'L'),
                    '\u{2029}' => Some(b'P'),
                    _ => None,
                };
                if let Some(s) = short {
                    self.put(s);
                } else {
                    let v = u32::from(c);
                    let (prefix, digits) = if v <= 0xff {
                        (b'x', 2)
                    } else if v <= 0xffff {
                        (b'u', 4)
                    } else {
                        (b'U', 8)
                    };
                    self.put(prefix);
                    for k in (0..digits).rev() {
                        self.put(HEX[((v >> (4 * k)) & 15) as usize]);
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > self.width && !first && chars.peek().is_some() {
                    self.write_indent();
                    if chars.peek() == Some(&' ') {
                        self.put(b'\\');
                    }
                } else {
                    self.put(b' ');
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
            first = false;
        }
        self.indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn block_hints(&mut self, text: &str) {
        let first = text.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            let hint = [b'0' + u8::try_from(self.best_indent).unwrap_or(2)];
            self.indicator(std::str::from_utf8(&hint).unwrap_or("2"), false, false, false);
        }
        self.open_ended = false;
        let mut rev = text.chars().rev();
        let (last, before) = (rev.next(), rev.next());
        if !last.is_some_and(is_break) {
            self.indicator("-", false, false, false);
        } else if before.is_none_or(is_break) {
            self.indicator("+", false, false, false);
            self.open_ended = true;
        }
    }

    fn literal(&mut self, text: &str) {
        self.indicator("|", true, false, false);
        self.block_hints(text);
        self.newline();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                self.text_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put_char(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    fn folded(&mut self, text: &str) {
        self.indicator(">", true, false, false);
        self.block_hints(text);
        self.newline();
        self.indention = true;
        self.whitespace = true;
        let (mut breaks, mut leading_spaces) = (true, true);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if is_break(c) {
                if !breaks && !leading_spaces && c == '\n' {
                    let mut after = chars.clone();
                    let mut n = after.next();
                    while n.is_some_and(is_break) {
                        n = after.next();
                    }
                    if !blank_or_end(n) {
                        self.newline();
                    }
                }
                self.text_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    leading_spaces = c == ' ' || c == '\t';
                }
                if !breaks && c == ' ' && chars.peek() != Some(&' ') && self.column > self.width {
                    self.write_indent();
                } else {
                    self.put_char(c);
                }
                self.indention = false;
                breaks = false;
            }
        }
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";
