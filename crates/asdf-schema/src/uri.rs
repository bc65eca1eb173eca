//! URI references: resolving a reference against a base, splitting off fragments, and
//! decoding JSON-pointer fragments.

/// Resolves `reference` against `base` (RFC 3986). A base that cannot take relative
/// references (such as `tag:` URIs) gives the reference unchanged when it is absolute.
#[must_use]
pub fn join(base: &str, reference: &str) -> Option<String> {
    if let Ok(abs) = url::Url::parse(reference) {
        return Some(abs.to_string());
    }
    let b = url::Url::parse(base).ok()?;
    if let Some(frag) = reference.strip_prefix('#') {
        let mut u = b;
        u.set_fragment(Some(frag));
        return Some(u.to_string());
    }
    b.join(reference).ok().map(|u| u.to_string())
}

/// Splits `uri#fragment` into the URI without fragment and the fragment (empty if none).
#[must_use]
pub fn split_fragment(uri: &str) -> (&str, &str) {
    match uri.split_once('#') {
        Some((a, f)) => (a, f),
        None => (uri, ""),
    }
}

/// Percent-decodes a URI component (invalid UTF-8 replaced, as Python's `unquote` does).
#[must_use]
pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// The unescaped tokens of a JSON-pointer fragment (`/a/b~1c` -> `["a", "b/c"]`), or `None`
/// when the fragment is not a pointer.
#[must_use]
pub fn pointer_tokens(fragment: &str) -> Option<Vec<String>> {
    let f = percent_decode(fragment);
    if f.is_empty() {
        return Some(Vec::new());
    }
    let rest = f.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// Builds a fragment from tokens.
#[must_use]
pub fn pointer_string(tokens: &[String]) -> String {
    tokens.iter().fold(String::new(), |mut s, t| {
        s.push('/');
        s.push_str(&t.replace('~', "~0").replace('/', "~1"));
        s
    })
}

/// Whether `name` matches the glob `pattern`, where `*` matches any run of characters (the
/// way ASDF matches tags such as `tag:stsci.edu:asdf/core/ndarray-1.*`).
#[must_use]
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_and_globs() {
        assert_eq!(
            join("http://stsci.edu/schemas/asdf/core/ndarray-1.1.0", "../unit/unit-1.0.0").as_deref(),
            Some("http://stsci.edu/schemas/asdf/unit/unit-1.0.0")
        );
        assert_eq!(
            join("http://x.org/a/b.json", "#/definitions/c").as_deref(),
            Some("http://x.org/a/b.json#/definitions/c")
        );
        assert_eq!(
            join("asdf://asdf-format.org/core/schemas/a-1.0.0", "b-1.0.0").as_deref(),
            Some("asdf://asdf-format.org/core/schemas/b-1.0.0")
        );
        assert_eq!(
            pointer_tokens("/a~1b/c%25d"),
            Some(vec!["a/b".to_owned(), "c%d".to_owned()])
        );
        assert!(glob_match(
            "tag:stsci.edu:asdf/core/ndarray-1.*",
            "tag:stsci.edu:asdf/core/ndarray-1.1.0"
        ));
        assert!(!glob_match(
            "tag:stsci.edu:asdf/core/ndarray-1.*",
            "tag:stsci.edu:asdf/core/ndarray-2.0.0"
        ));
        assert!(glob_match("a*c*e", "abcde"));
        assert!(glob_match("abc", "abc"));
        assert!(!glob_match("abc", "abcd"));
    }
}
