//! Which mapping keys the ASDF Standard allows, and where a tree has others.
//!
//! The standard allows strings, integers and booleans as mapping keys. Python asdf reads other
//! scalars (null, floats, timestamps, tagged keys) with a warning; readers that accept them
//! ([`crate::Limits`] aside, a parse with any scalar keys) find them here to warn alike, and
//! validators report them.

use crate::Warning;
use crate::node::{Node, NodeKind, Step, Value, Visit};

/// The tags PyYAML's `SafeConstructor` builds (a scalar with another tag is a tagged value that
/// Python asdf keeps as it is, never constructed).
#[must_use]
pub fn safe_constructor_tag(tag: &str) -> bool {
    tag.strip_prefix("tag:yaml.org,2002:").is_some_and(|t| {
        matches!(
            t,
            "null"
                | "bool"
                | "int"
                | "float"
                | "binary"
                | "timestamp"
                | "omap"
                | "pairs"
                | "set"
                | "str"
                | "seq"
                | "map"
        )
    })
}

/// A node's tag unless it is one PyYAML's safe constructor builds (`tag:yaml.org,2002:str`,
/// `!!timestamp`, `!!map`, ...: the node is read as if untagged). Other tags of YAML's own
/// namespace (`!!x`, `!!value`, PyYAML's `!!python/tuple`, `!!python/object:...`) are kept:
/// Python asdf's loader gives them as tagged nodes (a `TaggedString` for a scalar, with a
/// warning), never constructed.
#[must_use]
pub fn user_tag(node: &Node) -> Option<&str> {
    node.tag.as_deref().filter(|t| *t != "!" && !safe_constructor_tag(t))
}

/// Whether `k` is a key the standard allows: an untagged (or core-tagged) string, integer or
/// boolean.
#[must_use]
pub fn standard_key(k: &Node) -> bool {
    (user_tag(k).is_none() || k.tag.as_deref() == Some("tag:yaml.org,2002:value"))
        && matches!(&k.kind, NodeKind::Scalar(s) if matches!(s.value, Value::Str | Value::Int(_) | Value::BigInt(_) | Value::Bool(_)))
}

/// The path of every mapping key under `root` that the standard does not allow (ending in
/// [`Step::Key`]; [`Node::at_path`] gives the key), in document order. A `!!set`'s members are not counted (Python asdf
/// writes and reads null and float members without a warning), nor are aliases used as keys.
#[must_use]
pub fn nonstandard_keys(root: &Node) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    root.walk_with(&mut |path, n| {
        if let Some((Step::Key(_), parent)) = path.split_last() {
            let in_set = root
                .at_path(parent)
                .is_some_and(|p| p.tag.as_deref() == Some("tag:yaml.org,2002:set"));
            if !in_set && !matches!(n.kind, NodeKind::Alias(_)) && !standard_key(n) {
                out.push(path.to_vec());
            }
            return Visit::SkipChildren;
        }
        Visit::Continue
    });
    out
}

/// A [`Warning::NonstandardKey`] for every key [`nonstandard_keys`] finds, with its place and
/// the JSON pointer of its mapping.
#[must_use]
pub fn nonstandard_key_warnings(root: &Node) -> Vec<Warning> {
    nonstandard_keys(root)
        .into_iter()
        .filter_map(|path| {
            let (_, parent) = path.split_last()?;
            let key = root.at_path(&path)?;
            Some(Warning::NonstandardKey {
                span: key.span,
                pointer: crate::pointer::pointer_exact(root, parent),
                key: {
                    let text = key.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                    match user_tag(key) {
                        Some(tag) => format!("!<{tag}> {text}"),
                        None => text,
                    }
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_other_than_strings_integers_and_booleans_are_found_with_their_place() {
        let text =
            b"a: {1.0: x, 2: y, null: z, !t k: w, !!str 3.5: v}\ns: !!set {1.5: null, ~: null}\nq: [{2020-01-01: d}]\n";
        let doc = crate::parse_yaml(text, &crate::Limits::default()).unwrap().document;
        let w: Vec<String> = nonstandard_key_warnings(&doc.root)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].starts_with("at 1:5: mapping key `1.0` of /a "), "{}", w[0]);
        assert!(w[1].contains("`null` of /a "), "{}", w[1]);
        assert!(w[2].contains("`!<!t> k` of /a "), "{}", w[2]);
        assert!(w[3].contains("`2020-01-01` of /q/0 "), "{}", w[3]);
    }

    /// Keys of one type and one value are one key, the later value read (with a warning), as
    /// PyYAML's dict holds them: floats by value (every NaN one key, `0.0` and `-0.0` one),
    /// timestamps by text. A float beside an equal integer stays a key of its own.
    #[test]
    fn float_and_timestamp_keys_of_one_value_are_one_key() {
        let text =
            b"a: {1.5: x, 1.50: y, .nan: p, .NaN: q, 0.0: z, -0.0: w, 2020-01-01: d, 2020-01-01: e, 1: i, 1.0: f}\n";
        let parsed = crate::parse_yaml(text, &crate::Limits::default()).unwrap();
        let a = parsed.document.root.get("a").unwrap();
        let NodeKind::Mapping(m) = &a.kind else {
            panic!("not a mapping")
        };
        let got: Vec<(String, String)> = m
            .entries
            .iter()
            .map(|(k, v)| (k.as_scalar().unwrap().text.to_string(), v.as_str().unwrap().to_owned()))
            .collect();
        let want = [
            ("1.5", "y"),
            (".nan", "q"),
            ("0.0", "w"),
            ("2020-01-01", "e"),
            ("1", "i"),
            ("1.0", "f"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((k, v), (wk, wv)) in got.iter().zip(want) {
            assert_eq!((k.as_str(), v.as_str()), (wk, wv), "{got:?}");
        }
        let dups = parsed
            .warnings
            .iter()
            .filter(|w| matches!(w, crate::Warning::DuplicateKey { .. }))
            .count();
        assert_eq!(dups, 4, "{:?}", parsed.warnings);
    }

    /// A key's text in a warning cannot forge a line or a terminal sequence, and a long key
    /// is cut.
    #[test]
    fn warnings_escape_and_cut_key_text() {
        let long = "1.".to_owned() + &"0".repeat(500) + "1";
        let text = format!("\"a\\nwarning: forged\": {{? \"k\\n\\e[31m\": x, {long}: y, !t \"z\\r\": w}}\n");
        let doc = crate::parse_yaml(text.as_bytes(), &crate::Limits::default())
            .unwrap()
            .document;
        for w in nonstandard_key_warnings(&doc.root).iter().map(ToString::to_string) {
            assert!(!w.contains('\n') && !w.contains('\r') && !w.contains('\u{1b}'), "{w:?}");
            assert!(w.chars().count() < 400, "{w:?}");
        }
    }
}
