//! Scalars: block (literal `|`, folded `>`), flow (single and double quoted) and plain.

use super::*;

impl<'a> Scanner<'a> {
    pub(super) fn fetch_block_scalar(&mut self, literal: bool) -> Result<(), Error> {
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
    pub(super) fn block_breaks(&mut self, indent: usize, header_line: usize, breaks: &mut String) -> Result<(), Error> {
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

    pub(super) fn fetch_flow_scalar(&mut self, single: bool) -> Result<(), Error> {
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
    pub(super) fn quoted_break(&self) -> bool {
        brk(self.at(0)) || ls_ps_at(self.b, self.m.index)
    }

    pub(super) fn escape(&mut self, out: &mut String, ctx: Option<&'static str>) -> Result<(), Error> {
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

    pub(super) fn fetch_plain(&mut self) -> Result<(), Error> {
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
