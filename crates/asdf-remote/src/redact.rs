//! Secrets kept out of messages: every message of this crate that names a URL names it
//! through [`redact`] (the URL itself, and the text of the store's errors, which often quote
//! the URL they requested).
//!
//! A URL's password (`https://user:secret@host/`) and the values of the query parameters that
//! carry credentials (`sig` of Azure SAS tokens, `X-Amz-Signature`, `X-Amz-Credential` and
//! `X-Amz-Security-Token` of S3 presigned URLs, Google's `X-Goog-*` ones, `token`,
//! `access_token`, ...) become `***`; the rest of the URL stays, so that the message still
//! names the place. Control characters (a key's tab or newline) are shown escaped (`\t`).

/// Query parameters whose values are credentials (compared without case).
const SECRET_PARAMS: [&str; 24] = [
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
    "awsaccesskeyid",
    "token",
    "access_token",
    "id_token",
    "refresh_token",
    "password",
    "secret",
    "api_key",
    "apikey",
    "code",
    "key",
    "auth",
    "authorization",
    "jwt",
    "session",
    "sessionid",
    "credential",
];

/// What stands for a secret.
const HIDDEN: &str = "***";

/// `text` (a URL, or a message that quotes URLs) with the secrets of each URL in it
/// replaced by `***` (see the module's documentation) and control characters escaped.
#[must_use]
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters, digits, `+`, `-` and `.` just before `://`.
        let scheme_len = rest[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .map(char::len_utf8)
            .sum::<usize>();
        out.push_str(&rest[..at - scheme_len]);
        let url_start = at - scheme_len;
        // The URL runs to the first space, quote or bracket that ends it in a message.
        let after = &rest[at + 3..];
        let len = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']'))
            .unwrap_or(after.len());
        let url_end = at + 3 + len;
        out.push_str(&redact_one(&rest[url_start..url_end], at - url_start));
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    escape_controls(&out)
}

/// One URL (`scheme_len` bytes of scheme, then `://`) with its secrets hidden.
fn redact_one(url: &str, scheme_len: usize) -> String {
    let (head, after) = url.split_at(scheme_len + 3);
    let authority_len = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(authority_len);
    let mut out = head.to_string();
    match authority.rsplit_once('@') {
        // A password: hidden; a user alone (`abfs://container@account`) is no secret.
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => {
                out.push_str(user);
                out.push(':');
                out.push_str(HIDDEN);
                out.push('@');
                out.push_str(host);
            }
            None => out.push_str(authority),
        },
        None => out.push_str(authority),
    }
    let (before_fragment, fragment) = match tail.find('#') {
        Some(i) => tail.split_at(i),
        None => (tail, ""),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((k, _)) if is_secret(k) => format!("{k}={HIDDEN}"),
                    _ => param.to_string(),
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    out
}

fn is_secret(key: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
    SECRET_PARAMS.iter().any(|s| decoded.eq_ignore_ascii_case(s))
}

/// An error (the store's, its HTTP client's) kept as text with the secrets of every URL in it
/// hidden ([`redact`]) at every level of its chain: what [`std::error::Error::source`] gives
/// is redacted too, so that a caller printing the whole chain (`anyhow`'s `{:#}`, a log of
/// causes, `{:?}`) sees no password or signature. The levels' texts are those of the error
/// it was made from, in order.
#[derive(Debug)]
pub struct RedactedError {
    text: String,
    source: Option<Box<RedactedError>>,
}

/// The most levels of a chain kept (a chain longer than this is cut, its deepest causes left
/// out).
const MAX_LEVELS: usize = 32;

impl RedactedError {
    /// `e` and its chain of sources, each level's text redacted.
    #[must_use]
    pub fn new(e: &(dyn std::error::Error + 'static)) -> Self {
        let mut levels = Vec::new();
        let mut next = Some(e);
        while let Some(level) = next {
            if levels.len() == MAX_LEVELS {
                break;
            }
            levels.push(redact(&level.to_string()));
            next = level.source();
        }
        let mut out = Self {
            text: levels.pop().unwrap_or_default(),
            source: None,
        };
        while let Some(text) = levels.pop() {
            out = Self {
                text,
                source: Some(Box::new(out)),
            };
        }
        out
    }
}

impl RedactedError {
    /// The text, and the text of each cause that it does not already quote (`: ` between):
    /// the whole chain as one message (object_store's errors quote some of their causes and
    /// not others: the reason a redirect was refused, a connection's error).
    #[must_use]
    pub fn with_causes(&self) -> String {
        let mut out = self.text.clone();
        let mut next = self.source.as_deref();
        while let Some(level) = next {
            if !out.contains(&level.text) {
                out.push_str(": ");
                out.push_str(&level.text);
            }
            next = level.source.as_deref();
        }
        out
    }
}

impl std::fmt::Display for RedactedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for RedactedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// `text` with its control characters escaped (`\t`, `\n`, `\u{1}`): a name cannot start a
/// line of its own in a message or move the terminal's cursor.
fn escape_controls(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_in_urls_are_hidden_and_the_place_kept() {
        for (text, want) in [
            (
                "https://user:s3cr3t@host:8443/f.asdf",
                "https://user:***@host:8443/f.asdf",
            ),
            (
                "https://acct.blob.core.windows.net/c/f.asdf?sv=2022-11-02&se=2030&sp=r&sig=AbC%2Bd%3D",
                "https://acct.blob.core.windows.net/c/f.asdf?sv=2022-11-02&se=2030&sp=r&sig=***",
            ),
            (
                "error sending request for url (https://b.s3.amazonaws.com/k.asdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F2024&X-Amz-Security-Token=tok&X-Amz-Signature=deadbeef): timed out",
                "error sending request for url (https://b.s3.amazonaws.com/k.asdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Security-Token=***&X-Amz-Signature=***): timed out",
            ),
            (
                "abfs://container@account.dfs.core.windows.net/f",
                "abfs://container@account.dfs.core.windows.net/f",
            ),
            ("s3://b/run/x#1.asdf", "s3://b/run/x#1.asdf"),
            ("s3://b/f\tg.asdf", "s3://b/f\\tg.asdf"),
            ("no URL here: 10 bytes", "no URL here: 10 bytes"),
            (
                "a http://u:p@h/x and https://h/y?token=t#frag, \"s3://b/k?sig=z\"",
                "a http://u:***@h/x and https://h/y?token=***#frag, \"s3://b/k?sig=***\"",
            ),
            ("://odd", "://odd"),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[derive(Debug)]
    struct Level(&'static str, Option<Box<Level>>);

    impl std::fmt::Display for Level {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Level {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn every_level_of_a_chain_is_redacted() {
        let raw = Level(
            "request failed",
            Some(Box::new(Level(
                "error sending request for url (https://u:pw@h/k?X-Amz-Signature=SIG)",
                Some(Box::new(Level("connection refused", None))),
            ))),
        );
        let r = super::RedactedError::new(&raw);
        let mut levels = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&r);
        while let Some(e) = next {
            levels.push(e.to_string());
            next = e.source();
        }
        assert_eq!(
            levels,
            [
                "request failed",
                "error sending request for url (https://u:***@h/k?X-Amz-Signature=***)",
                "connection refused"
            ]
        );
        assert!(!format!("{r:?}").contains("SIG") && !format!("{r:?}").contains("pw"));
        assert_eq!(
            r.with_causes(),
            "request failed: error sending request for url (https://u:***@h/k?X-Amz-Signature=***): connection refused"
        );
    }
}
