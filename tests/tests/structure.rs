//! The code's shape: the crates are layered (a lower crate never depends on a higher one) and
//! no two modules of a crate depend on each other, directly or around a loop (the crate root,
//! `lib.rs` or `main.rs`, included).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The library crates, lowest first.
const LAYERS: [&str; 16] = [
    "asdf-codecs",
    "asdf-layout",
    "asdf-remote",
    "asdf-yaml",
    "asdf-schema",
    "asdf-core-types",
    "asdf-fits",
    "asdf-drafts",
    "asdf-chunked",
    "asdf",
    "asdf-preview",
    "asdf-wcs",
    "asdf-cli",
    "asdf-python",
    "asdf-web",
    "asdf-capi",
];

#[test]
fn crates_are_layered() {
    for (rank, name) in LAYERS.iter().enumerate() {
        let manifest = std::fs::read_to_string(workspace().join("crates").join(name).join("Cargo.toml")).unwrap();
        // Only [dependencies] (dev-dependencies may reach anywhere).
        let deps = manifest
            .split("\n[")
            .find(|s| s.starts_with("dependencies]"))
            .unwrap_or_default();
        for line in deps.lines().skip(1) {
            let dep = line.split(['=', '.', ' ']).next().unwrap_or_default().trim();
            if let Some(r) = LAYERS.iter().position(|l| *l == dep) {
                assert!(r < rank, "{name} depends on {dep}, which is above it");
            }
        }
    }
}

/// The source of a file without its `#[cfg(test)] mod tests` (test code may reach anywhere).
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The crate root's file (`lib.rs`, else `main.rs`) under `src`.
fn root_file(src: &Path) -> Option<PathBuf> {
    ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).find(|p| p.exists())
}

/// Code only: comment lines dropped (doc links such as `[`crate::emit`]` are not
/// dependencies), and the crate's tests.
fn code_of(text: &str) -> String {
    without_tests(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The name of the crate root's node in the module graph.
const ROOT: &str = "crate root";

/// What the crate root gives its modules: each item re-exported from a module (`pub use
/// m::{A, B as C}`) by the module it comes from, and each item it defines itself by [`ROOT`].
fn root_items(root_code: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut items = BTreeMap::new();
    let use_re = regex::Regex::new(r"(?s)\buse\s+(?:crate::)?([a-z_][a-z0-9_]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*(?:\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?)\s*;").unwrap();
    for c in use_re.captures_iter(root_code) {
        if !modules.contains(&c[1]) {
            continue;
        }
        for item in c[2].trim_matches(['{', '}']).split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                items.insert(name.to_owned(), c[1].to_owned());
            }
        }
    }
    let def_re = regex::Regex::new(
        r"(?m)^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:fn|struct|enum|const|static|type|trait)\s+([A-Za-z_][A-Za-z0-9_]*)",
    )
    .unwrap();
    for c in def_re.captures_iter(root_code) {
        items.entry(c[1].to_owned()).or_insert_with(|| ROOT.to_owned());
    }
    items
}

/// The top-level modules of a crate's `src`, and its crate root (`lib.rs` or `main.rs`), with
/// what each one names: a sibling module (through `crate::m`, `super::m` or `use crate::{m,
/// ...}`), or an item of the crate root (`crate::Item`), which counts as the module the root
/// re-exports it from, or as the root when the root defines it. The root's own edges are the
/// modules its code calls into and the re-exported items it uses (its `mod` and `use` lines
/// are declarations, not dependencies).
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: Vec<(String, PathBuf, bool)> = Vec::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            for f in std::fs::read_dir(&p).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|x| x == "rs") {
                    files.push((stem.clone(), f, true));
                }
            }
        } else if p.extension().is_some_and(|x| x == "rs") && stem != "lib" && stem != "main" {
            files.push((stem, p, false));
        }
    }
    let names: BTreeSet<String> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = names.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    let root_code = root_file(src).map(|p| code_of(&std::fs::read_to_string(p).unwrap()));
    let items = root_code.as_deref().map(|c| root_items(c, &names)).unwrap_or_default();
    let path_re = regex::Regex::new(r"\b(crate|super)::([A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let group_re = regex::Regex::new(r"\b(crate|super)::\{([^}]*)\}").unwrap();
    // A name after `crate::`: a module, or an item of the crate root.
    let target = |n: &str| -> Option<String> {
        if names.contains(n) {
            Some(n.to_owned())
        } else {
            items.get(n).cloned()
        }
    };
    for (module, file, nested) in &files {
        let text = code_of(&std::fs::read_to_string(file).unwrap());
        let mut named: Vec<String> = Vec::new();
        for c in path_re.captures_iter(&text) {
            // In a file of a folder module, `super::` is that module itself.
            if *nested && &c[1] == "super" {
                continue;
            }
            named.push(c[2].to_owned());
        }
        for c in group_re.captures_iter(&text) {
            if *nested && &c[1] == "super" {
                continue;
            }
            for item in c[2].split(',') {
                named.push(item.trim().split("::").next().unwrap_or_default().to_owned());
            }
        }
        for n in named {
            if let Some(t) = target(&n)
                && t != *module
            {
                graph.get_mut(module).unwrap().insert(t);
            }
        }
    }
    if let Some(code) = root_code {
        let mut edges = BTreeSet::new();
        let ident = regex::Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)\b").unwrap();
        let mut in_use = false;
        for line in code.lines() {
            let t = line.trim_start();
            // `mod`, `use` and `pub use` (to their `;`) declare; the rest is code.
            if t.starts_with("mod ") || t.starts_with("pub mod ") || t.starts_with("pub(crate) mod ") {
                continue;
            }
            if t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ") {
                in_use = !t.trim_end().ends_with(';');
                continue;
            }
            if in_use {
                in_use = !t.trim_end().ends_with(';');
                continue;
            }
            for c in ident.captures_iter(line) {
                let n = &c[1];
                let module_path = line[c.get(0).unwrap().end()..].starts_with("::");
                match items.get(n) {
                    Some(m) if m != ROOT => {
                        edges.insert(m.clone());
                    }
                    _ if module_path && names.contains(n) => {
                        edges.insert(n.to_owned());
                    }
                    _ => {}
                }
            }
        }
        graph.insert(ROOT.to_owned(), edges);
    }
    graph
}

/// A loop of modules, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_owned());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_owned());
        for m in &graph[n] {
            if let Some(c) = visit(m, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_module_cycles() {
    let mut checked = 0;
    let mut cycles = Vec::new();
    for name in LAYERS.iter().chain(&["asdf-testdata"]) {
        let graph = module_graph(&workspace().join("crates").join(name).join("src"));
        checked += graph.len();
        if let Some(c) = find_cycle(&graph) {
            cycles.push(format!("{name}: {}", c.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
    assert!(checked > 40, "only {checked} modules found");
}

#[test]
fn the_crate_root_is_in_the_graph() {
    // A module that names an item the root re-exports depends on the module the item comes
    // from; the root depends on what its code uses, not on what it declares.
    let dir = std::env::temp_dir().join(format!("asdf-rs-structure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "mod a;\nmod b;\npub use a::Thing;\npub use b::{Other, f as g};\npub fn top() -> Thing { a::make() }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "use crate::{Other, top};\npub struct Thing;\npub fn make() -> Thing { Thing }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rs"), "pub struct Other;\npub fn f() {}\n").unwrap();
    let g = module_graph(&dir);
    assert_eq!(g["a"], ["b".to_owned(), ROOT.to_owned()].into());
    assert_eq!(g[ROOT], ["a".to_owned()].into());
    // `a` names `top`, defined by the root, whose code calls into `a`: a loop.
    assert!(find_cycle(&g).is_some());
    std::fs::write(
        dir.join("a.rs"),
        "use crate::Other;\npub struct Thing;\npub fn make() -> Thing { Thing }\n",
    )
    .unwrap();
    assert_eq!(find_cycle(&module_graph(&dir)), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_cycle_check_finds_cycles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_owned()].into());
    g.insert("b".into(), ["c".to_owned()].into());
    g.insert("c".into(), ["a".to_owned()].into());
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
}
