//! The code's shape: the crates are layered (a lower crate never depends on a higher one) and
//! no two modules of a crate depend on each other, directly or around a loop.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The library crates, lowest first.
const LAYERS: [&str; 8] = [
    "asdf-layout",
    "asdf-remote",
    "asdf-yaml",
    "asdf-schema",
    "asdf-core-types",
    "asdf",
    "asdf-cli",
    "asdf-python",
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

/// The top-level modules of a crate's `src` and the sibling modules each one names (through
/// `crate::m`, `super::m` or `use crate::{m, ...}`).
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
    let path_re = regex::Regex::new(r"\b(crate|super)::([a-z_][a-z0-9_]*)").unwrap();
    let group_re = regex::Regex::new(r"\b(crate|super)::\{([^}]*)\}").unwrap();
    for (module, file, nested) in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // Code only: doc links (`[`crate::emit`]`) are not dependencies.
        let code: String = without_tests(&text)
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = code.as_str();
        let mut named: Vec<String> = Vec::new();
        for c in path_re.captures_iter(text) {
            // In a file of a folder module, `super::` is that module itself.
            if *nested && &c[1] == "super" {
                continue;
            }
            named.push(c[2].to_owned());
        }
        for c in group_re.captures_iter(text) {
            if *nested && &c[1] == "super" {
                continue;
            }
            for item in c[2].split(',') {
                named.push(item.trim().split("::").next().unwrap_or_default().to_owned());
            }
        }
        for n in named {
            if n != *module && names.contains(&n) {
                graph.get_mut(module).unwrap().insert(n);
            }
        }
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
fn the_cycle_check_finds_cycles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_owned()].into());
    g.insert("b".into(), ["c".to_owned()].into());
    g.insert("c".into(), ["a".to_owned()].into());
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
}
