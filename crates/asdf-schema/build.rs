//! Indexes `schemas/` at build time: every file's text is embedded, and the line scans of
//! `src/scan.rs` record each schema's id and each manifest's tags, so that start-up reads
//! static tables instead of parsing (or even touching) 110 KB of YAML.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/scan.rs"]
#[allow(dead_code)]
mod scan;

// The validator itself, to compile the embedded schemas once here (see `src/compiled.rs`).
#[path = "src/compiled.rs"]
#[allow(dead_code, unused_imports)]
mod compiled;
#[path = "src/error.rs"]
#[allow(dead_code, unused_imports)]
mod error;
#[path = "src/format.rs"]
#[allow(dead_code, unused_imports)]
mod format;
#[path = "src/registry.rs"]
#[allow(dead_code, unused_imports)]
mod registry;
#[path = "src/uri.rs"]
#[allow(dead_code, unused_imports)]
mod uri;
#[path = "src/validator.rs"]
#[allow(dead_code, unused_imports)]
mod validator;

/// Every embedded schema compiled with the library's own compiler, as `compiled::to_bytes`
/// writes it; empty when they do not compile (the library then compiles at run time, and a
/// test fails on the empty table).
fn compile_all(ids: &[(&str, usize)], files: &[(String, PathBuf, Vec<u8>)], tags: &[(&str, &str)]) -> Vec<u8> {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let ids: &'static [(&'static str, usize)] = Box::leak(
        ids.iter()
            .map(|(id, i)| (leak(id), *i))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let files: &'static [(&'static str, &'static [u8])] = Box::leak(
        files
            .iter()
            .map(|(rel, _, text)| (leak(rel), &*Box::leak(text.clone().into_boxed_slice())))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let tags: &'static [(&'static str, &'static str)] = Box::leak(
        tags.iter()
            .map(|(t, s)| (leak(t), leak(s)))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let mut registry = registry::Registry::new();
    registry.set_static_docs(ids, files);
    registry.set_static_aliases(tags);
    // As `AsdfSchemas::all_uris`: every document the registry holds, in its order.
    let uris = registry.schema_uris();
    let refs: Vec<&str> = uris.iter().map(String::as_str).collect();
    let opts = validator::CompileOptions {
        keep_unknown: true,
        ..validator::CompileOptions::default()
    };
    match validator::Validator::compile(&mut registry, &refs, &opts) {
        Ok(v) => v.to_bytes().unwrap_or_default(),
        Err(e) => {
            println!("cargo:warning=the embedded schemas do not compile ({e}): validation compiles at run time");
            Vec::new()
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().and_then(|x| x.to_str()) == Some("yaml") {
            out.push(p);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    // `schemas` in the crate is a link to the repository's `schemas/` (a copy in the package).
    let root = manifest_dir.join("schemas");
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=src/scan.rs");
    for m in ["compiled", "error", "format", "registry", "uri", "validator"] {
        println!("cargo:rerun-if-changed=src/{m}.rs");
    }
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    let mut files: Vec<(String, PathBuf, Vec<u8>)> = Vec::new();
    for p in paths {
        let rel = p.strip_prefix(&root)?.to_string_lossy().replace('\\', "/");
        let text = std::fs::read(&p)?;
        let abs = p.canonicalize()?;
        files.push((rel, abs, text));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    // The schemas of the drafts before ASDF 1.0.0 (`legacy/`) are a set of their own.
    let (legacy, files): (Vec<_>, Vec<_>) = files.into_iter().partition(|(rel, _, _)| rel.starts_with("legacy/"));

    let mut src = String::new();
    src.push_str("/// The pre-1.0 drafts' schemas (`schemas/legacy/`): (path, text), sorted by path.\n");
    src.push_str("pub(crate) static LEGACY_FILES: &[(&str, &[u8])] = &[\n");
    for (rel, abs, _) in &legacy {
        writeln!(src, "    ({rel:?}, include_bytes!({:?})),", abs.to_string_lossy()).ok();
    }
    src.push_str("];\n");
    src.push_str("/// Every embedded file: (path under `schemas/`, text), sorted by path.\n");
    src.push_str("pub(crate) static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, abs, _) in &files {
        writeln!(src, "    ({rel:?}, include_bytes!({:?})),", abs.to_string_lossy()).ok();
    }
    src.push_str("];\n");

    let mut ids: Vec<(&str, usize)> = Vec::new();
    let mut manifests = String::new();
    let mut tags: Vec<(&str, &str)> = Vec::new();
    let mut unscanned: Vec<usize> = Vec::new();
    for (i, (rel, _, text)) in files.iter().enumerate() {
        let name = rel.rsplit('/').next().unwrap_or_default();
        if name.starts_with("version_map-") {
            continue;
        }
        if rel.contains("manifests") {
            match scan::scan_manifest(text) {
                Some(m) => {
                    writeln!(
                        manifests,
                        "    StaticManifest {{ id: {:?}, extension_uri: {:?}, standard: {:?}, standard_range: {:?}, tags: &{:?} }},",
                        m.id, m.extension_uri, m.standard, m.standard_range, m.tags
                    )
                    .ok();
                    for (t, s) in m.tags {
                        if !tags.iter().any(|(k, _)| *k == t) {
                            tags.push((t, s));
                        }
                    }
                }
                None => unscanned.push(i),
            }
        } else {
            match scan::scan_top_level_id(text) {
                Some(id) if !ids.iter().any(|(k, _)| *k == id) => ids.push((id, i)),
                _ => unscanned.push(i),
            }
        }
    }
    ids.sort();
    tags.sort();
    writeln!(
        src,
        "/// (id, index in FILES) of each schema whose id the scan found, sorted by id."
    )
    .ok();
    writeln!(src, "pub(crate) static SCHEMA_IDS: &[(&str, usize)] = &{ids:?};").ok();
    writeln!(src, "/// The manifests the scan read, in path order.").ok();
    writeln!(
        src,
        "pub(crate) static MANIFESTS: &[StaticManifest] = &[\n{manifests}];"
    )
    .ok();
    writeln!(
        src,
        "/// tag -> schema over MANIFESTS (the first manifest to list a tag wins), sorted by tag."
    )
    .ok();
    writeln!(src, "pub(crate) static TAGS: &[(&str, &str)] = &{tags:?};").ok();
    writeln!(
        src,
        "/// Files (not version maps) the scans did not understand: parsed at start-up."
    )
    .ok();
    writeln!(src, "pub(crate) static UNSCANNED: &[usize] = &{unscanned:?};").ok();

    // Files the scans did not understand are parsed at start-up, and change the registry:
    // the build-time validator is made only without them.
    let compiled = if unscanned.is_empty() {
        compile_all(&ids, &files, &tags)
    } else {
        Vec::new()
    };
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("compiled.bin"), compiled)?;
    writeln!(
        src,
        "/// Every schema of SCHEMA_IDS compiled by the build script (`compiled.rs`); empty if they did not compile."
    )
    .ok();
    writeln!(
        src,
        "pub(crate) static COMPILED: &[u8] = include_bytes!({:?});",
        out_dir.join("compiled.bin").to_string_lossy()
    )
    .ok();
    let out = out_dir.join("embedded.rs");
    std::fs::write(out, src)?;
    Ok(())
}
