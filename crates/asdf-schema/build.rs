//! Indexes `schemas/` at build time: every file's text is embedded, and the line scans of
//! `src/scan.rs` record each schema's id and each manifest's tags, so that start-up reads
//! static tables instead of parsing (or even touching) 110 KB of YAML.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/scan.rs"]
#[allow(dead_code)]
mod scan;

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
    let root = manifest_dir.join("../../schemas");
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=src/scan.rs");
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
                        "    StaticManifest {{ id: {:?}, extension_uri: {:?}, standard: {:?}, tags: &{:?} }},",
                        m.id, m.extension_uri, m.standard, m.tags
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

    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("embedded.rs");
    std::fs::write(out, src)?;
    Ok(())
}
