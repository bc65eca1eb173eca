use super::*;
use crate::Location;
use crate::scan::{scan_manifest, scan_top_level_id};
use asdf_yaml::parse;

fn manifest(text: &[u8]) -> Option<Manifest> {
    scan_manifest(text).map(|m| Manifest {
        id: m.id.to_owned(),
        extension_uri: m.extension_uri.to_owned(),
        standard: m.standard.and_then(parse_version),
        standard_range: (
            m.standard_range.0.and_then(parse_version),
            m.standard_range.1.and_then(parse_version),
        ),
        tags: m
            .tags
            .iter()
            .map(|(t, s)| TagDef {
                tag: (*t).to_owned(),
                schema: (*s).to_owned(),
            })
            .collect(),
    })
}

/// The line scans give what full parses give, for every embedded file, and the build
/// script's tables are what parsing everything at start-up would give.
#[test]
fn static_tables_agree_with_parses_of_every_embedded_file() {
    let mut parsed_manifests = Vec::new();
    let mut ids = Vec::new();
    for (path, text) in embedded_files() {
        if path.rsplit('/').next().unwrap().starts_with("version_map-") {
            continue;
        }
        let root = parse(text, &Limits::default()).unwrap().document.root;
        if path.contains("manifests") {
            let m = Manifest::from_node(&root).unwrap();
            assert_eq!(manifest(text).as_ref(), Some(&m), "{path}");
            parsed_manifests.push(m);
        } else {
            let id = crate::registry::id_of(&root).map(|i| crate::uri::split_fragment(i).0);
            assert_eq!(scan_top_level_id(text), id, "{path}");
            ids.push(id.unwrap().to_owned());
        }
    }
    assert!(ids.len() >= 55 && parsed_manifests.len() >= 8, "{ids:?}");
    assert_eq!(embedded::UNSCANNED, &[] as &[usize]);
    ids.sort();
    let static_ids: Vec<&str> = embedded::SCHEMA_IDS.iter().map(|(id, _)| *id).collect();
    assert_eq!(static_ids, ids);
    let s = AsdfSchemas::embedded().unwrap();
    assert_eq!(s.manifests(), &parsed_manifests[..]);
    let mut first_wins: BTreeMap<&str, &str> = BTreeMap::new();
    for t in parsed_manifests.iter().flat_map(|m| &m.tags) {
        first_wins.entry(&t.tag).or_insert(&t.schema);
    }
    assert_eq!(embedded::TAGS, first_wins.into_iter().collect::<Vec<_>>());
    for (tag, schema) in embedded::TAGS {
        assert_eq!(s.resolve_tag(tag), TagResolution::Known((*schema).to_owned()));
        assert!(s.registry().contains(schema), "{schema}");
    }
}

/// Embedded schemas are compiled without parsing their patterns again: this is where they
/// are checked, every `pattern` and `patternProperties` name of every embedded file.
#[test]
fn every_embedded_pattern_is_valid() {
    fn walk(n: &Node, loc: &Location, found: &mut usize) {
        if let Some(m) = n.as_mapping() {
            for (k, v) in &m.entries {
                let key = k.as_str().unwrap_or_default();
                if key == "pattern"
                    && let Some(p) = v.as_str()
                {
                    crate::validator::regex(p, loc, key, false).unwrap();
                    *found += 1;
                }
                if key == "patternProperties"
                    && let Some(pm) = v.as_mapping()
                {
                    for (p, _) in &pm.entries {
                        crate::validator::regex(p.as_str().unwrap(), loc, key, false).unwrap();
                        *found += 1;
                    }
                }
                walk(v, loc, found);
            }
        } else if let Some(s) = n.as_sequence() {
            for item in &s.items {
                walk(item, loc, found);
            }
        }
    }
    let mut found = 0;
    for (path, text) in embedded_files() {
        let root = parse(text, &Limits::default()).unwrap().document.root;
        let loc = Location {
            doc: path.clone(),
            tokens: Vec::new(),
        };
        walk(&root, &loc, &mut found);
    }
    assert!(found >= 40, "only {found} patterns");
    // A bad one is still refused when not vouched for.
    let loc = Location {
        doc: "x".into(),
        tokens: Vec::new(),
    };
    assert!(crate::validator::regex("(", &loc, "pattern", false).is_err());
}

/// Texts the scans do not fully understand are left to the parser.
#[test]
fn scans_refuse_what_they_do_not_understand() {
    for text in [
        "id: \"http://x/y\\\"\"\n",
        "id: 'http://x/y\n",
        "id: http://x/y # comment\n",
        "$ref: http://x/z\nid: http://x/y\n",
        "{id: http://x/y}\n",
        "id: http://x/y\n---\nid: http://x/z\n",
        "id: http://x/y\nid: http://x/z\n",
        "id: 12:30\n",
    ] {
        assert_eq!(scan_top_level_id(text.as_bytes()), None, "{text:?}");
    }
    assert_eq!(
        scan_top_level_id(b"%YAML 1.1\n---\nid: http://x/y#top\ntype: object\n"),
        Some("http://x/y")
    );
    let good = "%YAML 1.1\n---\nid: asdf://x/m-1.0.0\nextension_uri: asdf://x/e-1.0.0\ntitle: T\n  more\ntags:\n- tag_uri: tag:x/a-1.0.0\n  title: |\n    text\n  schema_uri: http://x/a-1.0.0\n...\n";
    let parsed = Manifest::from_node(&parse(good.as_bytes(), &Limits::default()).unwrap().document.root);
    assert_eq!(manifest(good.as_bytes()), parsed);
    assert!(parsed.is_some());
    for bad in [
        good.replace("tags:\n", "tags: []\n"),
        good.replace("- tag_uri: tag:x/a-1.0.0", "- {tag_uri: tag:x/a-1.0.0}"),
        good.replace("title: T", "other: T"),
        good.replace("http://x/a-1.0.0", "\"http://x/a-1.0.0\\u0041\""),
        good.replace("  schema_uri: http://x/a-1.0.0\n", ""),
        good.replace("...\n", "---\nid: asdf://x/n\n"),
    ] {
        assert_eq!(scan_manifest(bad.as_bytes()), None, "{bad}");
    }
}

/// A tag that two manifests list with different schemas takes the newer manifest's schema,
/// whichever was added first (as Python asdf, whose packages register their newest
/// extension first).
#[test]
fn a_tag_in_several_manifests_takes_the_newest() {
    let m = |v: &str, schema: &str| {
        format!(
            "%YAML 1.1\n---\nid: asdf://x/manifests/m-{v}\nextension_uri: asdf://x/e-{v}\ntags:\n- tag_uri: asdf://x/tags/d-1.2.0\n  schema_uri: asdf://x/schemas/{schema}\n...\n"
        )
    };
    for order in [["1.2.0", "1.6.0"], ["1.6.0", "1.2.0"]] {
        let mut s = AsdfSchemas::embedded().unwrap();
        for v in order {
            let schema = if v == "1.6.0" { "d-1.2.0" } else { "d-1.1.0" };
            s.add_manifest(m(v, schema).as_bytes()).unwrap();
        }
        assert_eq!(
            s.resolve_tag("asdf://x/tags/d-1.2.0"),
            TagResolution::Known("asdf://x/schemas/d-1.2.0".to_owned()),
            "{order:?}"
        );
    }
}
