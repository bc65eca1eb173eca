//! JSON Pointer (RFC 6901) over the node tree: `/a/0/b~1c` with `~0` for `~` and `~1` for `/`.
//! Aliases are followed; mapping keys match as strings (an integer or boolean key matches its
//! text, so `/1` finds the key `1`).
//!
//! One extension, for keys no text names: the token `~e<i>` (`i` in decimal, no sign, no
//! leading zero) names entry `i` of a mapping, in document order, whatever its key. RFC 6901
//! makes any `~` not followed by `0` or `1` an error, so no standard pointer means something
//! else by it. [`pointer_exact`] writes it only where a key's text names another entry (an
//! integer key `1` beside the string key `'1'`) or no text can (a null, float or mapping key).

use crate::node::{Document, Node, NodeKind, Step, Value};

/// Why a pointer could not be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointerError {
    /// The pointer is neither empty nor starts with `/` (a leading `#` is allowed).
    #[error("`{0}` is not a JSON pointer (it must be empty or start with `/`)")]
    Syntax(String),
    /// A `~` not followed by `0` or `1`.
    #[error("bad escape in JSON pointer token `{0}`")]
    Escape(String),
    /// No such key or index.
    #[error("{pointer}: no `{token}` here")]
    NotFound {
        /// The pointer up to the missing token.
        pointer: String,
        /// The token not found.
        token: String,
    },
    /// A token applied to a scalar.
    #[error("{pointer}: a scalar has no children")]
    NotAContainer {
        /// The pointer up to the scalar.
        pointer: String,
    },
    /// An alias on the way (or at the end) whose anchored node is no longer in the tree.
    #[error("{pointer}: alias *{anchor} refers to a node that is no longer in the tree")]
    Orphan {
        /// The pointer up to the alias.
        pointer: String,
        /// The alias's anchor name.
        anchor: String,
    },
}

/// Makes an empty mapping of every parent of `pointer` that is missing (a mapping or a
/// sequence on the way is kept).
///
/// # Errors
/// [`PointerError::NotAContainer`] for a scalar on the way; as [`tokens`] and [`set`].
pub fn create_parents(doc: &mut Document, pointer: &str) -> Result<(), PointerError> {
    let toks = tokens(pointer)?;
    for i in 1..toks.len() {
        let at = join(&toks[..i]);
        match get(doc, &at) {
            Ok(n) if matches!(n.kind, NodeKind::Mapping(_) | NodeKind::Sequence(_)) => {}
            Ok(_) => return Err(PointerError::NotAContainer { pointer: at }),
            Err(PointerError::NotFound { .. }) => {
                set(doc, &at, Node::map(Vec::new()))?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Splits a pointer into unescaped tokens.
///
/// # Errors
/// [`PointerError::Syntax`], [`PointerError::Escape`].
pub fn tokens(pointer: &str) -> Result<Vec<String>, PointerError> {
    let p = pointer.strip_prefix('#').unwrap_or(pointer);
    if p.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = p.strip_prefix('/') else {
        return Err(PointerError::Syntax(pointer.to_owned()));
    };
    rest.split('/').map(unescape).collect()
}

fn unescape(t: &str) -> Result<String, PointerError> {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return Err(PointerError::Escape(t.to_owned())),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Escapes one token (`~` -> `~0`, `/` -> `~1`).
#[must_use]
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Builds a pointer from unescaped tokens.
#[must_use]
pub fn join<S: AsRef<str>>(tokens: &[S]) -> String {
    tokens.iter().fold(String::new(), |mut s, t| {
        s.push('/');
        s.push_str(&escape(t.as_ref()));
        s
    })
}

/// A token as [`resolve_path`] reads it.
enum Token {
    /// A key's text or a sequence index (unescaped).
    Text(String),
    /// `~e<i>`: a mapping's entry by position.
    Entry(usize),
}

/// An array index as RFC 6901 writes it: decimal digits, without a sign or leading zeros.
fn strict_index(token: &str) -> Option<usize> {
    let canonical =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    if canonical { token.parse().ok() } else { None }
}

fn token(raw: &str) -> Result<Token, PointerError> {
    if let Some(d) = raw.strip_prefix("~e") {
        let canonical = !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'));
        return match d.parse() {
            Ok(i) if canonical => Ok(Token::Entry(i)),
            _ => Err(PointerError::Escape(raw.to_owned())),
        };
    }
    unescape(raw).map(Token::Text)
}

fn key_matches(k: &Node, token: &str) -> bool {
    match k.as_scalar() {
        Some(s) => match &s.value {
            Value::Str | Value::Int(_) | Value::BigInt(_) => s.text == token,
            // `true`, or the key as written (`yes`, `On`: YAML 1.1 booleans).
            Value::Bool(b) => token == if *b { "true" } else { "false" } || s.text == token,
            // Other scalars (a float key `1.0`, a timestamp key) by their text as written.
            _ => s.text == token,
        },
        None => false,
    }
}

/// Where `token` leads from `node` (an already-resolved node).
pub(crate) fn step_for(node: &Node, token: &str) -> Option<Step> {
    match &node.kind {
        // A string key first: `/1` names the key `'1'` where a mapping has both `1` and
        // `'1'` (as Python's `tree['1']` does); a key of another type (`1`, `true`) is named
        // by its text only where no string key has that text.
        NodeKind::Mapping(m) => m
            .entries
            .iter()
            .position(|(k, _)| k.as_str() == Some(token))
            .or_else(|| m.entries.iter().position(|(k, _)| key_matches(k, token)))
            .map(Step::Entry),
        NodeKind::Sequence(s) => {
            let i = strict_index(token)?;
            (i < s.items.len()).then_some(Step::Item(i))
        }
        _ => None,
    }
}

/// The path of steps a pointer leads to, with aliases replaced by their targets' paths.
///
/// # Errors
/// As [`get`].
pub fn resolve_path(doc: &Document, pointer: &str) -> Result<Vec<Step>, PointerError> {
    let p = pointer.strip_prefix('#').unwrap_or(pointer);
    let raw: Vec<&str> = if p.is_empty() {
        Vec::new()
    } else {
        p.strip_prefix('/')
            .ok_or_else(|| PointerError::Syntax(pointer.to_owned()))?
            .split('/')
            .collect()
    };
    let toks = raw.iter().map(|t| token(t)).collect::<Result<Vec<Token>, _>>()?;
    let mut path: Vec<Step> = Vec::new();
    let mut node = &doc.root;
    for (i, t) in toks.iter().enumerate() {
        // Follow aliases: continue from the target's path.
        let mut hops = 0;
        while let NodeKind::Alias(a) = &node.kind {
            hops += 1;
            match doc.anchored(a) {
                Some((p, n)) if hops < 64 => {
                    path = p;
                    node = n;
                }
                _ => break,
            }
        }
        let here = || raw[..i].iter().fold(String::new(), |s, t| s + "/" + t);
        if let NodeKind::Alias(a) = &node.kind
            && doc.anchored(a).is_none()
        {
            return Err(PointerError::Orphan {
                pointer: here(),
                anchor: a.anchor.to_string(),
            });
        }
        if matches!(node.kind, NodeKind::Scalar(_) | NodeKind::Alias(_)) {
            return Err(PointerError::NotAContainer { pointer: here() });
        }
        let not_found = || PointerError::NotFound {
            pointer: here(),
            token: match t {
                Token::Text(s) => s.clone(),
                Token::Entry(_) => raw[i].to_owned(),
            },
        };
        let step = match (t, &node.kind) {
            (Token::Text(s), _) => step_for(node, s),
            (Token::Entry(e), NodeKind::Mapping(m)) => (*e < m.entries.len()).then_some(Step::Entry(*e)),
            (Token::Entry(_), _) => None,
        }
        .ok_or_else(not_found)?;
        path.push(step);
        node = node.step(step).ok_or_else(not_found)?;
    }
    Ok(path)
}

/// The node `pointer` refers to (following aliases on the way and at the end).
///
/// # Errors
/// [`PointerError`] for malformed pointers and missing keys or indices.
pub fn get<'a>(doc: &'a Document, pointer: &str) -> Result<&'a Node, PointerError> {
    let path = resolve_path(doc, pointer)?;
    let n = doc.root.at_path(&path).ok_or_else(|| PointerError::NotFound {
        pointer: String::new(),
        token: pointer.to_owned(),
    })?;
    let r = doc.resolve(n);
    if let NodeKind::Alias(a) = &r.kind {
        return Err(PointerError::Orphan {
            pointer: pointer.to_owned(),
            anchor: a.anchor.to_string(),
        });
    }
    Ok(r)
}

/// The node `pointer` refers to, mutably (aliases on the way are followed; the node itself is
/// returned even if it is an alias).
///
/// # Errors
/// As [`get`].
pub fn get_mut<'a>(doc: &'a mut Document, pointer: &str) -> Result<&'a mut Node, PointerError> {
    let path = resolve_path(doc, pointer)?;
    let mut n = &mut doc.root;
    for s in path {
        n = n.step_mut(s).ok_or_else(|| PointerError::NotFound {
            pointer: pointer.to_owned(),
            token: String::new(),
        })?;
    }
    Ok(n)
}

/// Sets the node at `pointer`: replaces an existing value, adds a new mapping key, or appends
/// to a sequence with the token `-`. Returns the replaced node.
///
/// # Errors
/// As [`get`] for the parent; [`PointerError::NotFound`] for an index past the end.
pub fn set(doc: &mut Document, pointer: &str, value: Node) -> Result<Option<Node>, PointerError> {
    let toks = tokens(pointer)?;
    let Some((last, parent_toks)) = toks.split_last() else {
        return Ok(Some(std::mem::replace(&mut doc.root, value)));
    };
    let parent = get_mut(doc, &join(parent_toks))?;
    let here = join(parent_toks);
    match &mut parent.kind {
        NodeKind::Mapping(m) => {
            if let Some(slot) = m.entries.iter_mut().find(|(k, _)| key_matches(k, last)) {
                return Ok(Some(std::mem::replace(&mut slot.1, value)));
            }
            m.entries.push((Node::str(last.clone()), value));
            Ok(None)
        }
        NodeKind::Sequence(s) => {
            if last == "-" {
                s.items.push(value);
                return Ok(None);
            }
            let i: usize = strict_index(last).ok_or_else(|| PointerError::NotFound {
                pointer: here.clone(),
                token: last.clone(),
            })?;
            let len = s.items.len();
            if i == len {
                s.items.push(value);
                return Ok(None);
            }
            match s.items.get_mut(i) {
                Some(slot) => Ok(Some(std::mem::replace(slot, value))),
                None => Err(PointerError::NotFound {
                    pointer: here,
                    token: last.clone(),
                }),
            }
        }
        _ => Err(PointerError::NotAContainer { pointer: here }),
    }
}

/// Removes the node at `pointer` and returns it. Aliases elsewhere stay true: an anchored node
/// inside the removed one that an alias outside still refers to takes the place of the first
/// such alias, anchor and all ([`Document::remove_path`]).
///
/// # Errors
/// As [`get`]; the root cannot be removed ([`PointerError::NotFound`]).
pub fn remove(doc: &mut Document, pointer: &str) -> Result<Node, PointerError> {
    let path = resolve_path(doc, pointer)?;
    doc.remove_path(&path).ok_or_else(|| PointerError::NotFound {
        pointer: pointer.to_owned(),
        token: String::new(),
    })
}

/// Adds `value` at `pointer` as JSON Patch's `add` does: a new or replaced mapping key; in a
/// sequence, an item inserted before index `i` (shifting the rest) or appended with `-` or the
/// length. Returns the value a mapping key had. A replaced value's anchored nodes are kept for
/// aliases elsewhere, as [`remove`] keeps them.
///
/// # Errors
/// As [`set`]; [`PointerError::Orphan`] when `value` holds an alias to an anchor that is not
/// in the tree (nothing is changed then).
pub fn insert(doc: &mut Document, pointer: &str, value: Node) -> Result<Option<Node>, PointerError> {
    let toks = tokens(pointer)?;
    let Some((last, parent_toks)) = toks.split_last() else {
        return set_checked(doc, pointer, value);
    };
    let parent_path = resolve_path(doc, &join(parent_toks))?;
    let here = join(parent_toks);
    let parent = doc
        .root
        .at_path_mut(&parent_path)
        .ok_or_else(|| PointerError::NotFound {
            pointer: here.clone(),
            token: last.clone(),
        })?;
    if !matches!(parent.kind, NodeKind::Sequence(_)) {
        return set_checked(doc, pointer, value);
    }
    check_aliases(doc, &value, None, pointer)?;
    let has_aliases = value.has_alias();
    let Some(NodeKind::Sequence(s)) = doc.root.at_path_mut(&parent_path).map(|n| &mut n.kind) else {
        return Err(PointerError::NotFound {
            pointer: here,
            token: last.clone(),
        });
    };
    let i = if last == "-" {
        s.items.len()
    } else {
        strict_index(last)
            .filter(|i| *i <= s.items.len())
            .ok_or_else(|| PointerError::NotFound {
                pointer: here.clone(),
                token: last.clone(),
            })?
    };
    s.items.insert(i, value);
    // The items after it moved: aliases to them still find them, by identity (their hints are
    // brought up to date by the next edit that relinks, or `Document::relink`).
    if has_aliases {
        doc.relink();
    }
    Ok(None)
}

/// As [`set`], keeping the replaced value's anchored nodes for aliases elsewhere and refusing
/// a value with aliases to nothing.
///
/// # Errors
/// As [`insert`].
pub fn set_checked(doc: &mut Document, pointer: &str, value: Node) -> Result<Option<Node>, PointerError> {
    // Refused before anything changes: an alias in `value` to an anchor that is neither in
    // `value` nor elsewhere in the tree (outside the node `value` replaces).
    let replaced = resolve_path(doc, pointer).ok();
    check_aliases(doc, &value, replaced.as_deref(), pointer)?;
    let value_has_aliases = value.has_alias();
    let old = set(doc, pointer, value)?;
    let old_has_anchors = old.as_ref().is_some_and(Node::has_anchor);
    if let Some(old) = old.as_ref().filter(|_| old_has_anchors) {
        doc.keep_anchors_of(old);
    } else if value_has_aliases {
        doc.relink();
    }
    Ok(old)
}

/// [`PointerError::Orphan`] when `value` holds an alias to an anchor that is neither in
/// `value` nor in the tree outside `replaced` (the path of the node `value` takes the place
/// of, if any).
fn check_aliases(doc: &Document, value: &Node, replaced: Option<&[Step]>, pointer: &str) -> Result<(), PointerError> {
    let needed = value.outside_aliases();
    if needed.is_empty() {
        return Ok(());
    }
    let anchors = doc.anchor_paths();
    for a in needed {
        let ok = anchors
            .get(&crate::node::anchor_key(&a))
            .is_some_and(|p| replaced.is_none_or(|r| !p.starts_with(r)));
        if !ok {
            return Err(PointerError::Orphan {
                pointer: pointer.to_owned(),
                anchor: a.to_string(),
            });
        }
    }
    Ok(())
}

/// Moves the node at `from` to `to` (JSON Patch's `move`: removed, then added at `to` as
/// [`insert`] adds, `to` read in the tree without it). Aliases to anchored nodes inside it
/// stay true wherever it goes; the emitter writes it in full where it is first met.
///
/// # Errors
/// As [`get`] for `from`, as [`insert`] for `to` (then nothing is changed); moving a node
/// into itself is [`PointerError::NotFound`].
pub fn move_node(doc: &mut Document, from: &str, to: &str) -> Result<(), PointerError> {
    let from_path = resolve_path(doc, from)?;
    let to_toks = tokens(to)?;
    let from_toks = tokens(from)?;
    if to_toks.len() > from_toks.len() && to_toks.starts_with(&from_toks) {
        return Err(PointerError::NotFound {
            pointer: to.to_owned(),
            token: String::new(),
        });
    }
    let before = doc.clone();
    let node = doc.take_path(&from_path).ok_or_else(|| PointerError::NotFound {
        pointer: from.to_owned(),
        token: String::new(),
    })?;
    if let Err(e) = insert(doc, to, node) {
        *doc = before;
        return Err(e);
    }
    doc.relink();
    Ok(())
}

/// The JSON pointer of a path of steps (keys written as their text).
#[must_use]
pub fn pointer_of(root: &Node, path: &[Step]) -> String {
    let mut out = String::new();
    let mut node = root;
    for s in path {
        let token = match (s, &node.kind) {
            (Step::Item(i), _) => i.to_string(),
            (Step::Entry(i) | Step::Key(i), NodeKind::Mapping(m)) => m
                .entries
                .get(*i)
                .and_then(|(k, _)| k.as_scalar().map(|s| s.text.to_string()))
                .unwrap_or_default(),
            _ => String::new(),
        };
        out.push('/');
        out.push_str(&escape(&token));
        match node.step(*s) {
            Some(n) => node = n,
            None => break,
        }
    }
    out
}

/// The token that names entry `i` of the mapping `map` exactly: its key's text (escaped) where
/// that text leads back to it, else `~e<i>` (see the module's documentation). `None` when
/// `map` is not a mapping or has no entry `i`.
#[must_use]
pub fn entry_token(map: &Node, i: usize) -> Option<String> {
    let NodeKind::Mapping(m) = &map.kind else { return None };
    let (k, _) = m.entries.get(i)?;
    // A string key is what its text names (a mapping has no two string keys of one text):
    // no search, so that naming every entry of a large mapping stays linear. A key of another
    // type is named by its text only where no string key has that text (a search of the
    // mapping's keys).
    if k.as_str().is_some() {
        return k.as_scalar().map(|s| escape(&s.text));
    }
    Some(match k.as_scalar().map(|s| s.text.to_string()) {
        Some(t) if step_for(map, &t) == Some(Step::Entry(i)) => escape(&t),
        _ => format!("~e{i}"),
    })
}

/// The JSON pointer of a path of steps that names exactly the node the path leads to: a key
/// is written as its text where that text leads back to it, else as `~e<i>` (its entry's
/// position; see the module's documentation). Aliases on the path are not followed (the path
/// is of the tree as written).
#[must_use]
pub fn pointer_exact(root: &Node, path: &[Step]) -> String {
    let mut out = String::new();
    let mut node = root;
    for s in path {
        out.push('/');
        match s {
            Step::Item(i) => out.push_str(&i.to_string()),
            Step::Entry(i) | Step::Key(i) => out.push_str(&entry_token(node, *i).unwrap_or_default()),
        }
        match node.step(*s) {
            Some(n) => node = n,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, parse};

    fn doc(t: &str) -> Document {
        parse(t.as_bytes(), &Limits::default()).unwrap().document
    }

    #[test]
    fn get_and_set() {
        let mut d = doc("a: {b/c: [10, 20], 'x~y': 1, 3: three}\nr: &r {v: 5}\ns: *r\n");
        assert_eq!(get(&d, "/a/b~1c/1").unwrap().as_i64(), Some(20));
        assert_eq!(get(&d, "#/a/x~0y").unwrap().as_i64(), Some(1));
        assert_eq!(get(&d, "/a/3").unwrap().as_str(), Some("three"));
        assert_eq!(get(&d, "/s/v").unwrap().as_i64(), Some(5));
        assert_eq!(get(&d, "").unwrap(), &d.root);
        assert!(matches!(get(&d, "/a/b~1c/2"), Err(PointerError::NotFound { .. })));
        assert!(matches!(get(&d, "/a/b~1c/01"), Err(PointerError::NotFound { .. })));
        assert!(matches!(get(&d, "a"), Err(PointerError::Syntax(_))));
        assert!(matches!(get(&d, "/a~2"), Err(PointerError::Escape(_))));
        assert!(matches!(get(&d, "/a/3/x"), Err(PointerError::NotAContainer { .. })));
        set(&mut d, "/a/b~1c/-", Node::int(30)).unwrap();
        set(&mut d, "/a/new", Node::str("n")).unwrap();
        assert_eq!(get(&d, "/a/b~1c/2").unwrap().as_i64(), Some(30));
        assert_eq!(get(&d, "/a/new").unwrap().as_str(), Some("n"));
        let old = set(&mut d, "/a/x~0y", Node::int(2)).unwrap();
        assert_eq!(old.unwrap().as_i64(), Some(1));
        assert_eq!(join(&["a/b", "c~"]), "/a~1b/c~0");
        let p = resolve_path(&d, "/a/b~1c/1").unwrap();
        assert_eq!(pointer_of(&d.root, &p), "/a/b~1c/1");
    }

    /// `~e<i>` names a mapping's entry by position, strictly (decimal, no sign, no leading
    /// zero); `pointer_exact` writes it only for keys whose text names another entry.
    #[test]
    fn entry_tokens_name_keys_no_text_names() {
        let d = doc("'1': s\n1: i\ny: m\nx: {'2': a, 2: b}\n");
        let at = |p: &str| get(&d, p).map(|n| n.as_str().unwrap_or_default().to_owned());
        assert_eq!(at("/1").unwrap(), "s");
        assert_eq!(at("/~e0").unwrap(), "s");
        assert_eq!(at("/~e1").unwrap(), "i");
        assert_eq!(at("/~e2").unwrap(), "m");
        assert_eq!(at("/x/~e1").unwrap(), "b");
        for bad in ["/~e01", "/~e+1", "/~e", "/~e-1", "/~e1x", "/~e99999999999999999999999"] {
            assert!(matches!(get(&d, bad), Err(PointerError::Escape(_))), "{bad}");
        }
        assert!(matches!(get(&d, "/~e4"), Err(PointerError::NotFound { .. })));
        assert!(matches!(get(&d, "/x/~e0/~e0"), Err(PointerError::NotAContainer { .. })));
        let root = &d.root;
        let exact = |p: &str| pointer_exact(root, &resolve_path(&d, p).unwrap());
        assert_eq!(exact("/1"), "/1");
        assert_eq!(exact("/~e1"), "/~e1");
        assert_eq!(exact("/~e2"), "/y");
        assert_eq!(exact("/x/2"), "/x/2");
        assert_eq!(exact("/x/~e1"), "/x/~e1");
        // Every entry's exact pointer leads back to it.
        for p in ["/~e0", "/~e1", "/~e2", "/~e3", "/x/~e0", "/x/~e1"] {
            assert_eq!(
                resolve_path(&d, &exact(p)).unwrap(),
                resolve_path(&d, p).unwrap(),
                "{p}"
            );
        }
    }
}
