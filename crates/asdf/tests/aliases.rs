//! Aliases refer to their anchored node by identity: removing, inserting and moving nodes
//! around aliased ones never makes resolution (what `get`, validation and arrays see) differ
//! from the YAML that gets written.

#![allow(clippy::unwrap_used)]

use asdf::{AsdfFile, Document, Error, Node, NodeKind, Version, WriteOptions};

/// A file whose tree is `yaml` (a block mapping, written under the root).
fn file(yaml: &str) -> AsdfFile {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{yaml}...\n");
    assert!(f.set_tree_yaml(text.as_bytes()).unwrap().is_empty());
    f
}

/// A node that is an alias.
fn alias_node(a: asdf::Alias) -> Node {
    Node {
        kind: NodeKind::Alias(a),
        ..Node::null()
    }
}

/// The tree with every alias expanded, as text (a node met twice is written twice; an alias
/// back to its own ancestor, which edits may make, as `<recursive>`).
fn expand(doc: &Document, n: &Node, open: &mut Vec<usize>) -> String {
    let n = doc.resolve(n);
    let addr = std::ptr::from_ref(n).addr();
    if open.contains(&addr) {
        return "<recursive>".to_owned();
    }
    open.push(addr);
    let out = match &n.kind {
        NodeKind::Scalar(s) => format!("{:?}", s.text.as_str()),
        NodeKind::Sequence(s) => {
            let items: Vec<String> = s.items.iter().map(|i| expand(doc, i, open)).collect();
            format!("[{}]", items.join(", "))
        }
        NodeKind::Mapping(m) => {
            let top = open.len() == 1;
            let items: Vec<String> = m
                .entries
                .iter()
                // The written file names this library here; the rest must be the same.
                .filter(|(k, _)| !top || k.as_str() != Some("asdf_library"))
                .map(|(k, v)| format!("{}: {}", expand(doc, k, open), expand(doc, v, open)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        NodeKind::Alias(a) => format!("ORPHAN *{}", a.anchor),
    };
    open.pop();
    out
}

/// What the tree resolves to in memory, and what the YAML written for it reads back as: they
/// must be the same.
fn agree(f: &AsdfFile) -> String {
    let ours = expand(f.document(), &f.document().root, &mut Vec::new());
    let bytes = crate::common::bytes(f, &WriteOptions::default().validate(false)).unwrap();
    let back = asdf::Open::bytes(bytes)
        .options(asdf::OpenOptions::default().validate(false))
        .open()
        .unwrap();
    let theirs = expand(back.document(), &back.document().root, &mut Vec::new());
    assert_eq!(ours, theirs, "resolution and the written YAML differ");
    assert!(!ours.contains("ORPHAN"), "{ours}");
    ours
}

#[test]
fn the_reported_case_no_longer_lies() {
    // Before: aliases were positions. Removing `a` made `*x` resolve to `b` (2) while the
    // emitted YAML still said {v: 1}.
    let mut f = file("a: &x {v: 1}\nb: 2\nc: *x\n");
    assert_eq!(f.get("/c/v").unwrap().as_i64(), Some(1));
    f.get_mut("").unwrap().as_mapping_mut().unwrap().remove("a");
    // A raw edit orphaned the alias: resolution and writing both refuse, neither lies.
    assert!(matches!(f.get("/c"), Err(Error::Pointer(_))), "{:?}", f.get("/c"));
    assert!(matches!(f.get("/c/v"), Err(Error::Pointer(_))));
    assert_eq!(f.get("/b").unwrap().as_i64(), Some(2));
    let e = crate::common::bytes(&f, &WriteOptions::default().validate(false)).unwrap_err();
    assert!(
        e.to_string()
            .contains("alias *x refers to a node that is no longer in the tree"),
        "{e}"
    );

    // Through the facade, removal keeps the anchored node for the alias.
    let mut f = file("a: &x {v: 1}\nb: 2\nc: *x\n");
    let removed = f.remove("/a").unwrap();
    assert_eq!(removed.get("v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/c/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/b").unwrap().as_i64(), Some(2));
    assert!(agree(&f).contains(r#""c": {"v": "1"}"#));
    let text = String::from_utf8(crate::common::bytes(&f, &WriteOptions::default()).unwrap()).unwrap();
    assert!(text.contains("c: &x {v: 1}") || text.contains("c: &x\n"), "{text}");
}

#[test]
fn remove_insert_and_move_around_aliased_nodes() {
    let yaml = "\
first: 0
items: [&x {v: 1}, *x, plain, &y [a, b]]
ref_y: *y
tail: {w: *x}
";
    // Insert before the anchored node: positions shift, identities do not.
    let mut f = file(yaml);
    f.insert("/items/0", Node::str("new")).unwrap();
    assert_eq!(f.get("/items/1/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/items/2/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/tail/w/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/ref_y/1").unwrap().as_str(), Some("b"));
    agree(&f);

    // Insert a mapping key before the others, and an alias to an existing anchor.
    let to_x = asdf::Alias::to(f.get("/items/1").unwrap()).unwrap();
    f.insert("/items/0", alias_node(to_x)).unwrap();
    // The alias now comes before its anchored node: the writer writes the node there in full.
    assert_eq!(f.get("/items/0/v").unwrap().as_i64(), Some(1));
    agree(&f);

    // Remove the anchored node: the first alias (now /items/0) takes it; the others follow.
    let mut f = file(yaml);
    f.remove("/items/0").unwrap();
    assert_eq!(f.get("/items/0/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/tail/w/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/items/1").unwrap().as_str(), Some("plain"));
    agree(&f);

    // Remove a node holding an anchor whose alias is earlier in the document.
    let mut f = file("x: &p [1, 2]\nlist: [*p, {deep: &q 7}]\nafter: *q\n");
    f.remove("/list").unwrap();
    assert_eq!(f.get("/after").unwrap().as_i64(), Some(7));
    assert_eq!(f.get("/x/1").unwrap().as_i64(), Some(2));
    agree(&f);

    // Move the anchored node behind its aliases.
    let mut f = file(yaml);
    f.move_node("/items/3", "/zzz").unwrap();
    assert_eq!(f.get("/ref_y/0").unwrap().as_str(), Some("a"));
    assert_eq!(f.get("/zzz/1").unwrap().as_str(), Some("b"));
    let written = agree(&f);
    assert!(written.contains(r#""ref_y": ["a", "b"]"#), "{written}");
    // And the moved node is still one node: an edit through one name shows through the other.
    f.get_mut("/zzz/0").map(|n| *n = Node::str("changed")).unwrap();
    assert_eq!(f.get("/ref_y/0").unwrap().as_str(), Some("changed"));
    agree(&f);

    // Move a subtree holding an alias and an anchor into a sequence.
    let mut f = file(yaml);
    f.move_node("/tail", "/items/0").unwrap();
    assert_eq!(f.get("/items/0/w/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/items/1/v").unwrap().as_i64(), Some(1));
    agree(&f);

    // Replacing an anchored node keeps it for its aliases.
    let mut f = file(yaml);
    let old = f.set("/items/0", Node::int(5)).unwrap().unwrap();
    assert_eq!(old.get("v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/items/0").unwrap().as_i64(), Some(5));
    assert_eq!(f.get("/items/1/v").unwrap().as_i64(), Some(1));
    assert_eq!(f.get("/tail/w/v").unwrap().as_i64(), Some(1));
    agree(&f);

    // Refused: a new node with an alias to an anchor that is not in the tree.
    let mut f = file(yaml);
    let stray = asdf::Alias::to(&Node {
        anchor: Some(asdf::Anchor::new("x")),
        ..Node::null()
    })
    .unwrap();
    let before = agree(&f);
    let e = f.set("/new", alias_node(stray)).unwrap_err();
    assert!(matches!(e, Error::Pointer(_)), "{e}");
    assert_eq!(e.kind(), asdf::ErrorKind::Usage);
    assert_eq!(f.get("/nothing").unwrap_err().kind(), asdf::ErrorKind::NotFound);
    assert_eq!(f.get("no-slash").unwrap_err().kind(), asdf::ErrorKind::Usage);
    assert_eq!(agree(&f), before, "a refused edit changed the tree");
    // Replacing an anchored node by an alias to itself would leave the alias nothing.
    let to_x = asdf::Alias::to(f.get("/items/0").unwrap()).unwrap();
    let e = f.set("/items/0", alias_node(to_x)).unwrap_err();
    assert!(matches!(e, Error::Pointer(_)), "{e}");
    assert_eq!(agree(&f), before, "a refused edit changed the tree");
    // Moving a node into itself is refused too.
    assert!(f.move_node("/tail", "/tail/w/z").is_err());
    assert_eq!(agree(&f), before);
}

/// A long run of random edits on a tree full of anchors and aliases: after every edit,
/// resolution and the written YAML agree, and no alias is left without its node.
#[test]
fn random_edits_keep_resolution_and_text_in_step() {
    let yaml = "\
a: &a {k: 1, l: [x, y]}
b: [*a, &b2 [1, 2, 3], *a, {m: *b2}]
c: &c3 {n: &inner deep, o: *inner}
d: [*c3, *inner, *b2]
e: plain
";
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        usize::try_from(rng % (n.max(1) as u64)).unwrap()
    };
    let mut done = [0usize; 3];
    for round in 0..40 {
        let mut f = file(yaml);
        for _ in 0..12 {
            // Every pointer of the tree, not through aliases.
            let mut pointers = Vec::new();
            f.document().root.walk(&mut |path, n| {
                if !path.is_empty() && !matches!(path.last(), Some(asdf::Step::Key(_))) {
                    pointers.push(asdf_yaml::pointer::pointer_of(&f.document().root, path));
                }
                let _ = n;
                true
            });
            if pointers.len() < 3 {
                break;
            }
            let p = pointers[next(pointers.len())].clone();
            let q = pointers[next(pointers.len())].clone();
            let op = next(3);
            let ok = match op {
                0 => f.remove(&p).is_ok(),
                1 => f.insert(&p, Node::str(format!("new{round}"))).is_ok(),
                _ => f.move_node(&p, &q).is_ok(),
            };
            if ok {
                done[op] += 1;
            }
            assert!(
                f.document().orphans().is_empty(),
                "round {round}: op {op} on {p} {q} orphaned an alias"
            );
            agree(&f);
        }
    }
    assert!(
        done.iter().all(|d| *d > 20),
        "edits done (remove, insert, move): {done:?}"
    );
}
