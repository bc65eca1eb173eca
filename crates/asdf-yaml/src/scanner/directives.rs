//! Tags, anchors' URIs and directives (`%YAML`, `%TAG`).

use super::*;

impl<'a> Scanner<'a> {
    pub(super) fn fetch_tag(&mut self) -> Result<(), Error> {
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
    pub(super) fn scan_uri(&mut self, verbatim: bool, ctx: Option<&'static str>) -> Result<Cow<'a, str>, Error> {
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

    pub(super) fn fetch_directive(&mut self) -> Result<(), Error> {
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

    pub(super) fn skip_blanks_required(&mut self, ctx: Option<&'static str>) -> Result<(), Error> {
        if !blank(self.at(0)) {
            return Err(self.err("did not find expected whitespace", ctx));
        }
        while blank(self.at(0)) {
            self.adv(1);
        }
        Ok(())
    }

    pub(super) fn scan_version_number(&mut self, ctx: Option<&'static str>) -> Result<u8, Error> {
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
}
