//! Project tasks: `cargo xtask <task>`.
#![allow(clippy::print_stdout)]

use anyhow::{Result, bail};

mod bench;
mod capi;
mod cutout;
mod fuzz;
mod order;
mod wcs;
mod web;

struct Task {
    name: &'static str,
    help: &'static str,
    run: fn(&[String]) -> Result<()>,
}

const TASKS: &[Task] = &[
    Task {
        name: "layout",
        help: "FILE...: print the header, tree bounds and blocks of ASDF files",
        run: layout,
    },
    Task {
        name: "import-schemas",
        help: "[RESOURCES]: write schemas/ from the standard's resources, prose replaced by our own short titles",
        run: import_schemas,
    },
    Task {
        name: "import-legacy-schemas",
        help: "[SCHEMAS]: write schemas/legacy/ from FINF 0.1.0's schemas (legacy/finf-standard), prose replaced by our own short titles",
        run: import_legacy_schemas,
    },
    Task {
        name: "validate-schemas",
        help: "check every embedded schema against its metaschema, every example against its schema, every manifest tag",
        run: validate_schemas,
    },
    Task {
        name: "bench-validate",
        help: "[N]: validate a tree of N (20,000) mappings x 5 keys with asdf-schema and with Python asdf 6.0 (target/pyenv or python3)",
        run: bench_validate,
    },
    Task {
        name: "bench-extensions",
        help: "[FILE...]: validate real-world files against every schema the interop venv's packages register (~1,650): ours (load + validate, one process per file) vs Python asdf 6.0 (open with validation + validate), medians",
        run: bench_extensions,
    },
    Task {
        name: "bench-blosc2",
        help: "[MiB]: a 256 MiB float64 array as a 64-chunk Blosc2 frame: one element vs the whole array (ours), and whole decode (all cores) / encode (one thread), ours vs python-blosc2 with the same thread counts, medians",
        run: bench_blosc2,
    },
    Task {
        name: "bench-cblosc2",
        help: "evaluate C-Blosc2 (blosc2-src, built from source: needs cmake) against blusc on the 70 conformance frames and on speed (xtask/cblosc2)",
        run: bench_cblosc2,
    },
    Task {
        name: "conformance",
        help: "run every conformance suite and print one table of pass counts per corpus",
        run: conformance,
    },
    Task {
        name: "bench",
        help: "[--runs N] [write|sum|element|fits|stream|codecs|tree]: 1 GiB float64 write, open+sum, open+one element, a 1 GiB JWST FITS file (vs stdatamodels and astropy), 2 GiB stream; ours vs Python asdf 6.0, medians, peak RSS",
        run: bench::bench,
    },
    Task {
        name: "order-symbols",
        help: "record (under valgrind) the functions the bench child's open + element and `asdf-cli info/validate/verify` run, as the linker's symbol ordering files (build-support/symbol_order.rs)",
        run: order::order_symbols,
    },
    Task {
        name: "bench-cutout",
        help: "[--runs N]: a 512 x 512 cutout of a 16384 x 16384 float32 image, local and over HTTP on loopback: asdf-zarr chunks (ours, Python asdf + asdf-zarr, zarr-python on the same chunks as a store), one uncompressed block, a Blosc2 frame, one zstd block; times, bytes read or fetched",
        run: cutout::bench,
    },
    Task {
        name: "capi",
        help: "PREFIX [--debug]: build asdf-rs's C API and install it as libasdf (lib/libasdf.so.0.0.0, lib/libasdf.a, include/asdf/*.h, lib/pkgconfig/libasdf.pc)",
        run: capi::install,
    },
    Task {
        name: "bench-wcs",
        help: "[--runs N]: a 4096 x 4096 grid of pixel -> world through gwcs's NIRCam WCS: gwcs (Python), asdf-wcs (Rust), asdf_rs.wcs (Python); times, peak RSS",
        run: wcs::bench,
    },
    Task {
        name: "bench-wcs-child",
        help: "(internal) one run of `bench-wcs` in this process",
        run: wcs::child,
    },
    Task {
        name: "bench-cutout-child",
        help: "(internal) one cutout of `bench-cutout` in this process",
        run: cutout::child,
    },
    Task {
        name: "bench-child",
        help: "(internal) one workload of `bench` in this process",
        run: bench::child,
    },
    Task {
        name: "fuzz",
        help: "[--seconds N] [--runs N] [--seed N] [--jobs N] [TARGET...]: seed the cargo-fuzz corpora from the conformance files and run each target N (60) seconds, N targets at a time (1)",
        run: fuzz::fuzz,
    },
    Task {
        name: "web",
        help: "build the browser viewer into target/web/ (the library for wasm32 beside web/'s page)",
        run: web::web,
    },
    Task {
        name: "bench-yaml",
        help: "[ROWS]: parse a generated ~20 MB tree with asdf-yaml and with PyYAML (CSafeLoader), side by side",
        run: bench_yaml,
    },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench_yaml(args: &[String]) -> Result<()> {
    let rows: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(78_000);
    let doc = asdf_yaml::sample::catalogue(rows);
    let text = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?;
    let dir = std::path::Path::new("target/bench");
    std::fs::create_dir_all(dir)?;
    let path = dir.join("catalogue.yaml");
    std::fs::write(&path, &text)?;
    let mb = text.len() as f64 / 1e6;
    println!("document: {rows} rows, {mb:.1} MB ({})", path.display());
    let mut ours = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let p = asdf_yaml::parse(&text, &asdf_yaml::Limits::default())?;
        ours.push(t.elapsed().as_secs_f64());
        std::hint::black_box(p);
    }
    let ours = median(ours);
    let mut ev = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let e = asdf_yaml::events::events(&text)?;
        ev.push(t.elapsed().as_secs_f64());
        std::hint::black_box(e);
    }
    let ev = median(ev);
    // libyaml-safer (a Rust port of C libyaml), events only (collected, as ours are), on the
    // same text: what switching our scanner and parser for it would start from.
    let safer_events = || -> Result<Vec<libyaml_safer::Event>> {
        let mut input = &text[..];
        let mut parser = libyaml_safer::Parser::new();
        parser.set_input_string(&mut input);
        let mut v = Vec::new();
        loop {
            let e = parser.parse().map_err(|e| anyhow::anyhow!("libyaml-safer: {e}"))?;
            let end = matches!(e.data, libyaml_safer::EventData::StreamEnd);
            v.push(e);
            if end {
                return Ok(v);
            }
        }
    };
    let mut safer = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let e = safer_events()?;
        safer.push(t.elapsed().as_secs_f64());
        std::hint::black_box(e);
    }
    let safer = median(safer);
    // And writing: the same events through libyaml-safer's emitter, beside our emit.
    let mut ours_emit = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let out = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?;
        ours_emit.push(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    let ours_emit = median(ours_emit);
    let mut safer_emit = Vec::new();
    for _ in 0..3 {
        let batch = safer_events()?;
        let t = std::time::Instant::now();
        let mut out: Vec<u8> = Vec::with_capacity(text.len());
        {
            let mut emitter = libyaml_safer::Emitter::new();
            emitter.set_output(&mut out);
            for e in batch {
                emitter
                    .emit(e)
                    .map_err(|e| anyhow::anyhow!("libyaml-safer emit: {e}"))?;
            }
        }
        safer_emit.push(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    let safer_emit = median(safer_emit);
    println!("events only:          {:7.3} s  {:7.1} MB/s", ev, mb / ev);
    println!(
        "libyaml-safer events: {:7.3} s  {:7.1} MB/s  (asdf-yaml events take {:.2}x its time)",
        safer,
        mb / safer,
        ev / safer
    );
    println!(
        "emit: asdf-yaml {:.3} s, libyaml-safer {:.3} s (asdf-yaml takes {:.2}x its time)",
        ours_emit,
        safer_emit,
        ours_emit / safer_emit
    );
    println!("asdf-yaml parse:      {:7.3} s  {:7.1} MB/s", ours, mb / ours);
    let script = r#"
import sys, time, yaml
class Loader(yaml.CSafeLoader):
    pass
def tagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)
Loader.add_multi_constructor('tag:stsci.edu:asdf/', tagged)
text = open(sys.argv[1], 'rb').read()
ts = []
for _ in range(3):
    t = time.perf_counter(); yaml.load(text, Loader=Loader); ts.append(time.perf_counter() - t)
ts.sort(); print(ts[1])
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()?;
    if !out.status.success() {
        bail!(
            "python3 with PyYAML is needed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let py: f64 = String::from_utf8_lossy(&out.stdout).trim().parse()?;
    println!("PyYAML CSafeLoader:   {:7.3} s  {:7.1} MB/s", py, mb / py);
    println!("ratio (PyYAML time / asdf-yaml time): {:.1}x", py / ours);
    Ok(())
}

fn layout(args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask layout FILE...");
    }
    for path in args {
        let r = asdf_layout::Reader::open_path(path)?;
        println!(
            "{path}: {} bytes, standard {}",
            r.file_len(),
            r.file_header().standard_version
        );
        for i in 0..r.block_count() {
            let b = r.block(i)?;
            println!(
                "  block {i} at {}: {} {} -> {}",
                b.offset,
                b.compression(),
                b.stored_len,
                b.data_len()
            );
        }
        for w in r.warnings() {
            println!("  warning: {w}");
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        println!("cargo xtask <task>\n");
        for t in TASKS {
            println!("  {:<12} {}", t.name, t.help);
        }
        return Ok(());
    };
    // Benchmarks measure optimised code only: a debug build of xtask re-runs itself in release.
    if (name.starts_with("bench") || name == "order-symbols") && cfg!(debug_assertions) {
        println!("(building xtask in release for the benchmark)");
        let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .args(["run", "--quiet", "--release", "--package", "xtask", "--"])
            .args(&args)
            .status()?;
        if !status.success() {
            bail!("{name} failed ({status})");
        }
        return Ok(());
    }
    match TASKS.iter().find(|t| t.name == name) {
        Some(t) => (t.run)(&args[1..]),
        None => bail!("unknown task `{name}`; run `cargo xtask` for the list"),
    }
}

/// Our short title for a schema or manifest, made from its id.
fn our_title(id: &str, manifest: bool) -> String {
    let last = id.rsplit('/').next().unwrap_or(id);
    let (name, version) = last.rsplit_once('-').unwrap_or((last, ""));
    let area = id
        .trim_end_matches(last)
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    if let Some(rest) = id.strip_prefix("http://www.stsci.edu/schemas/finf/0.1.0/") {
        format!("FINF 0.1.0 {rest} (the draft before ASDF)")
    } else if id == "http://www.stsci.edu/schemas/yaml-schema/draft-01" {
        "YAML Schema draft-01 metaschema, as FINF 0.1.0 used it".to_owned()
    } else if manifest {
        format!("Manifest of the {name} extension, version {version}")
    } else if version.is_empty() {
        format!("{name} (schema)")
    } else {
        format!("{name}, version {version} ({area} schemas)")
    }
}

/// How imported schemas are written: the source's flow and scalar styles kept, 100 columns.
fn schema_emit_options() -> asdf_yaml::EmitOptions {
    let mut opts = asdf_yaml::EmitOptions::default();
    opts.flow = asdf_yaml::FlowPolicy::Preserve;
    opts.preserve_scalar_styles = true;
    opts.width = 100;
    opts
}

fn import_schemas(args: &[String]) -> Result<()> {
    let src = std::path::PathBuf::from(
        args.first()
            .cloned()
            .unwrap_or_else(|| "../shared/conformance/asdf-standard/resources".to_owned()),
    );
    let out = std::path::Path::new("schemas");
    let mut n = 0;
    let files = walk_yaml(&src)?;
    // The JSON Schema draft-04 metaschema that ASDF schemas build on.
    let draft4 =
        std::path::PathBuf::from(args.get(1).cloned().unwrap_or_else(|| {
            "../shared/conformance/json-schema-test-suite/metaschema/draft-04-schema.json".to_owned()
        }));
    let opts = schema_emit_options();
    let mut jobs: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src)?.to_path_buf();
        jobs.push((f, rel));
    }
    jobs.push((
        draft4,
        std::path::PathBuf::from("stable/schemas/json-schema.org/draft-04/schema.yaml"),
    ));
    for (f, rel) in jobs {
        write_stripped(&f, &rel, out, &opts, "the ASDF Standard (BSD-3-Clause, AURA)")?;
        n += 1;
    }
    println!("wrote {n} schemas and manifests under {}", out.display());
    Ok(())
}

/// Writes schema `f` to `out/rel` with its prose replaced by our own short title.
fn write_stripped(
    f: &std::path::Path,
    rel: &std::path::Path,
    out: &std::path::Path,
    opts: &asdf_yaml::EmitOptions,
    origin: &str,
) -> Result<()> {
    use asdf_yaml::{FlowPolicy, Limits, Node};
    let text = std::fs::read(f)?;
    let mut doc = asdf_yaml::parse(&text, &Limits::default())?.document;
    let manifest = rel.components().any(|c| c.as_os_str() == "manifests");
    let id = doc.root.get("id").and_then(Node::as_str).unwrap_or_default().to_owned();
    asdf_schema::asdf::strip_prose(&mut doc.root);
    if manifest && let Some(tags) = doc.root.get_mut("tags").and_then(Node::as_sequence_mut) {
        for t in &mut tags.items {
            if let Some(m) = t.as_mapping_mut() {
                m.entries
                    .retain(|(k, _)| !matches!(k.as_str(), Some("title" | "description")));
            }
        }
    }
    if let Some(m) = doc.root.as_mapping_mut() {
        // The title goes right after `id` (or `$schema`), where readers look for it.
        let pos = m
            .entries
            .iter()
            .position(|(k, _)| k.as_str() == Some("id"))
            .map_or(0, |p| p + 1);
        let stem = f.file_stem().and_then(|x| x.to_str()).unwrap_or_default();
        let title = if id.starts_with("http://json-schema.org/") {
            "JSON Schema draft-04 metaschema".to_owned()
        } else if let Some(v) = stem.strip_prefix("version_map-") {
            format!("Tag versions that make up ASDF Standard {v}")
        } else {
            our_title(&id, manifest)
        };
        m.entries.insert(pos, (Node::str("title"), Node::str(title)));
    }
    // JSON sources are written in block style; YAML sources keep their styles.
    let json = f.extension().and_then(|x| x.to_str()) == Some("json");
    let mut opts = opts.clone();
    if json {
        opts.flow = FlowPolicy::Python;
        opts.preserve_scalar_styles = false;
    }
    let origin = if rel.starts_with("stable/schemas/json-schema.org") {
        "the JSON Schema draft-04 metaschema"
    } else {
        origin
    };
    let mut emitted = format!("# Normative content from {origin}; title written by asdf-rs.\n").into_bytes();
    emitted.extend(asdf_yaml::emit(&doc, &opts)?);
    let dest = out.join(rel);
    std::fs::create_dir_all(dest.parent().unwrap_or(out))?;
    std::fs::write(&dest, emitted)?;
    Ok(())
}

/// FINF 0.1.0's schemas (FINF 0.1.0's era) into `schemas/legacy/`, as `import_schemas` does for
/// today's: the FINF reader validates FINF trees against them.
fn import_legacy_schemas(args: &[String]) -> Result<()> {
    let src = std::path::PathBuf::from(
        args.first()
            .cloned()
            .unwrap_or_else(|| "../shared/conformance/legacy/finf-standard/schemas/stsci.edu".to_owned()),
    );
    let out = std::path::Path::new("schemas/legacy");
    let opts = schema_emit_options();
    let mut n = 0;
    for f in walk_yaml(&src)? {
        let rel = f.strip_prefix(&src)?.to_path_buf();
        write_stripped(
            &f,
            &rel,
            out,
            &opts,
            "FINF 0.1.0, the draft of ASDF (BSD-3-Clause, AURA)",
        )?;
        n += 1;
    }
    println!("wrote {n} schemas under {}", out.display());
    Ok(())
}

/// Every `.yaml` file under `dir`, sorted.
fn walk_yaml(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().and_then(|x| x.to_str()) == Some("yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn validate_schemas(_args: &[String]) -> Result<()> {
    let c = asdf_core_types::check_embedded_schemas().map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("schemas valid against their metaschema: {}", c.schemas_valid);
    println!("examples valid against their schemas:   {}", c.examples_valid);
    println!("manifest tags resolving to a schema:     {}", c.tags_resolved);
    println!("failures:                                {}", c.failures.len());
    for f in &c.failures {
        println!("  {f}");
    }
    if !c.failures.is_empty() {
        bail!("{} schema checks failed", c.failures.len());
    }
    Ok(())
}

fn python() -> String {
    let venv = std::path::Path::new("target/pyenv/bin/python");
    if venv.exists() {
        venv.display().to_string()
    } else {
        "python3".to_owned()
    }
}

fn bench_validate(args: &[String]) -> Result<()> {
    use asdf_yaml::{Document, Node, node::tags};
    let n: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(20_000);
    let rows: Vec<Node> = (0..n)
        .map(|i| {
            Node::map(vec![
                (Node::str("a"), Node::int(i64::try_from(i).unwrap_or(0))),
                (Node::str("b"), Node::str(format!("row {i}"))),
                (Node::str("c"), Node::float(0.5)),
                (Node::str("d"), Node::bool(i % 2 == 0)),
                (Node::str("e"), Node::null()),
            ])
        })
        .collect();
    let software = Node::map(vec![
        (Node::str("name"), Node::str("asdf-rs")),
        (Node::str("version"), Node::str("0.1.0")),
    ])
    .with_tag(format!("{}core/software-1.0.0", tags::ASDF));
    let root = Node::map(vec![
        (Node::str("asdf_library"), software),
        (Node::str("rows"), Node::seq(rows)),
    ])
    .with_tag(format!("{}core/asdf-1.1.0", tags::ASDF));
    let doc = Document::new(root);
    let tree = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?;
    let mut w = asdf_layout::Writer::new(Vec::new(), asdf_layout::Version::new(1, 6, 0))?;
    w.write_tree(&tree)?;
    let file = w.finish(false)?;
    let dir = std::path::Path::new("target/bench");
    std::fs::create_dir_all(dir)?;
    let path = dir.join("tree20k.asdf");
    std::fs::write(&path, &file)?;
    println!(
        "file: {} mappings x 5 keys, {:.1} MB ({})",
        n,
        file.len() as f64 / 1e6,
        path.display()
    );

    let schemas = asdf_core_types::schemas().map_err(|e| anyhow::anyhow!("{e}"))?;
    let parsed = asdf_yaml::parse(&tree, &asdf_yaml::Limits::default())?.document;
    let mut validate = Vec::new();
    let mut open_validate = Vec::new();
    for _ in 0..7 {
        let t = std::time::Instant::now();
        let r = schemas.validate_document(&parsed);
        validate.push(t.elapsed().as_secs_f64());
        if !r.is_valid() {
            bail!("tree is invalid: {:?}", r.violations.first());
        }
        let t = std::time::Instant::now();
        let rd = asdf_layout::Reader::open_path(&path)?;
        let d = asdf_yaml::parse(rd.tree_bytes().unwrap_or_default(), &asdf_yaml::Limits::default())?.document;
        let r = schemas.validate_document(&d);
        open_validate.push(t.elapsed().as_secs_f64());
        std::hint::black_box(r);
    }
    let (ours_v, ours_ov) = (median(validate), median(open_validate));
    let script = r#"
import sys, time, asdf
p = sys.argv[1]
af = asdf.open(p)
ts = []
for _ in range(3):
    t = time.perf_counter(); af.validate(); ts.append(time.perf_counter() - t)
ts.sort()
os = []
for _ in range(3):
    t = time.perf_counter(); f = asdf.open(p); f.close(); os.append(time.perf_counter() - t)
os.sort()
print(ts[1], os[1], asdf.__version__)
"#;
    let out = std::process::Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()?;
    if !out.status.success() {
        bail!(
            "Python asdf is needed (python3 -m venv target/pyenv && target/pyenv/bin/pip install asdf==6.0.0): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let py_v: f64 = parts.next().unwrap_or("nan").parse()?;
    let py_ov: f64 = parts.next().unwrap_or("nan").parse()?;
    let ver = parts.next().unwrap_or("?");
    println!(
        "validate only:        asdf-schema {:8.4} s   Python asdf {ver} validate() {:8.4} s   ratio {:6.1}x",
        ours_v,
        py_v,
        py_v / ours_v
    );
    println!(
        "open + parse + validate: ours  {:8.4} s   Python asdf.open()          {:8.4} s   ratio {:6.1}x",
        ours_ov,
        py_ov,
        py_ov / ours_ov
    );
    Ok(())
}

/// Lines the suites print, and the corpus each summarises.
const SUMMARIES: &[(&str, &str)] = &[
    (
        "EXPECTATIONS.json through the facade:",
        "asdf-pytests-data EXPECTATIONS.json (facade)",
    ),
    ("EXPECTATIONS.json:", "asdf-pytests-data EXPECTATIONS.json (layout)"),
    ("blocks in", "every .asdf under conformance: blocks"),
    ("truncation sweep:", "truncation sweep"),
    ("reference files, ", "asdf-standard reference arrays vs yaml twins"),
    ("reference trees valid", "asdf-standard reference trees valid"),
    ("schemas and manifests equal", "embedded schemas vs official copies"),
    ("draft4 required:", "JSON-Schema-Test-Suite draft4 required"),
    ("draft4 optional:", "JSON-Schema-Test-Suite draft4 optional"),
    ("yaml-test-suite:", "yaml-test-suite event streams"),
    ("error cases rejected:", "yaml-test-suite error cases"),
    (
        "Python asdf 6.0 trees re-emitted",
        "python-asdf-samples trees re-emitted byte for byte",
    ),
    ("reference files:", "reference trees re-emitted byte for byte"),
    ("plain scalars resolve", "PyYAML plain-scalar table"),
    ("interop (a):", "Python asdf 6.0 writes, we read"),
    ("interop (b):", "we write, Python asdf 6.0 reads"),
    ("files rewritten", "read -> write -> read round trip"),
    ("ndarray nodes written", "ndarray nodes written as Python writes them"),
];

fn conformance(_args: &[String]) -> Result<()> {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args([
            "test",
            "--workspace",
            "--all-features",
            "--no-fail-fast",
            "--",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows = Vec::new();
    for (prefix, corpus) in SUMMARIES {
        let line = text
            .lines()
            .find(|l| l.contains(prefix))
            .map(str::trim)
            .unwrap_or("(no summary printed)");
        // Drop the test runner's "test name ... " in front, and shorten long lists.
        let line = line.rsplit_once(" ... ").map_or(line, |(_, r)| r);
        let short: String = line.chars().take(140).collect();
        let more = if line.chars().count() > 140 { " ..." } else { "" };
        rows.push((*corpus, format!("{short}{more}")));
    }
    let width = rows.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    println!("{:width$}  result", "corpus");
    for (c, l) in &rows {
        println!("{c:width$}  {l}");
    }
    let failed = text.lines().filter(|l| l.contains("test result: FAILED")).count();
    println!("test binaries failing: {failed}");
    if !out.status.success() || failed > 0 {
        bail!("some suites failed");
    }
    Ok(())
}

/// Validation against every extension schema, as a user with the ecosystem installed runs it:
/// ours loads the resource folder and validates (`asdf-cli validate F --schema-dir DIR` in
/// one process, the CLI's code path), Python asdf 6.0 opens with validation and validates
/// again; each in a fresh process per run, medians of 5, side by side.
fn bench_extensions(args: &[String]) -> Result<()> {
    let py = asdf_testdata::interop_python();
    let dir = std::path::Path::new("target/bench/extensions");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    // The real-world suite's script makes the files and dumps the registered resources.
    let out = std::process::Command::new(&py)
        .arg("tests/interop/realworld.py")
        .arg("make")
        .arg(dir)
        .output()?;
    if !out.status.success() {
        bail!("realworld.py make: {}", String::from_utf8_lossy(&out.stderr));
    }
    let made: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let files: Vec<String> = if args.is_empty() {
        made["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["path"].as_str())
            .filter(|p| {
                [
                    "jwst_image",
                    "roman_image",
                    "gwcs_imaging",
                    "dataset-1.2.0",
                    "sunpy_map",
                ]
                .iter()
                .any(|k| p.contains(k))
            })
            .map(str::to_owned)
            .collect()
    } else {
        args.to_vec()
    };
    let resources = dir.join("resources");
    let count = std::fs::read_dir(&resources)?.count();
    println!(
        "{count} schema resources from the interop venv's packages ({})",
        resources.display()
    );
    let cli = std::env::current_exe()?.with_file_name("asdf-cli");
    let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["build", "--quiet", "--release", "-p", "asdf-tools"])
        .status()?;
    if !status.success() {
        bail!("cannot build asdf-cli");
    }
    let script = "import sys, asdf, warnings\nwarnings.simplefilter('ignore')\nwith asdf.config_context() as c:\n    c.validate_on_read = True\n    with asdf.open(sys.argv[1], _force_raw_types=True) as af:\n        af.validate()\n";
    println!("| file | ours (load {count} schemas + validate) | Python asdf 6.0 (open + validate) | ratio |");
    println!("|---|---|---|---|");
    for f in &files {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let o = std::process::Command::new(&cli)
                .args(["validate", f.as_str(), "--schema-dir"])
                .arg(&resources)
                .output()?;
            ours.push(t.elapsed().as_secs_f64());
            if !o.status.success() {
                bail!("asdf-cli validate {f}: {}", String::from_utf8_lossy(&o.stdout));
            }
            let t = std::time::Instant::now();
            let o = std::process::Command::new(&py).arg("-c").arg(script).arg(f).output()?;
            theirs.push(t.elapsed().as_secs_f64());
            if !o.status.success() {
                bail!("python validate {f}: {}", String::from_utf8_lossy(&o.stderr));
            }
        }
        let (a, b) = (median(ours), median(theirs));
        let name = std::path::Path::new(f)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!("| {name} | {:.0} ms | {:.0} ms | {:.1}x |", a * 1e3, b * 1e3, b / a);
    }
    Ok(())
}

/// Blosc2 frames: the cost of one element against the whole array (through the chunk index),
/// and whole-frame decode and encode, ours against python-blosc2 (C-Blosc2) with the same
/// codec, filter, level, chunk size and one thread, taking turns, medians of 5.
fn bench_blosc2(args: &[String]) -> Result<()> {
    use asdf_layout::compression::{Blosc2, Codec as _};
    let mib: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(256);
    let n = mib << 17; // float64 elements
    let data: Vec<u8> = (0..n)
        .flat_map(|i| ((i as f64 * 0.001).sin() * 1000.0).round().to_le_bytes())
        .collect();
    let codec = Blosc2 {
        chunksize: (mib << 20) / 64,
        ..Blosc2::default()
    };
    let mut frame = Vec::new();
    codec.encode(&data, &mut frame)?;
    let dir = std::path::Path::new("target/bench");
    std::fs::create_dir_all(dir)?;
    let (raw_path, frame_path) = (dir.join("blosc2.raw"), dir.join("blosc2.b2frame"));
    std::fs::write(&raw_path, &data)?;
    std::fs::write(&frame_path, &frame)?;
    println!(
        "{mib} MiB float64 in 64 chunks of {} MiB (blosclz, shuffle, level 5): frame {:.1} MiB",
        codec.chunksize >> 20,
        frame.len() as f64 / 1048576.0
    );
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let t = std::time::Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64())
    };
    // Decoding uses every core on both sides; encoding one thread on both (ours encodes on one).
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let py = asdf_testdata::interop_python();
    let script = r#"
import sys, time, json, blosc2
raw = open(sys.argv[1], 'rb').read(); frame = open(sys.argv[2], 'rb').read(); chunk = int(sys.argv[3])
cp = blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=5, typesize=8, filters=[blosc2.Filter.SHUFFLE], nthreads=1)
dp = blosc2.DParams(nthreads=int(sys.argv[4]))
t = time.perf_counter(); s = blosc2.schunk_from_cframe(frame, copy=False); s.dparams = dp
out = s[:]
dec = time.perf_counter() - t
assert out == raw
t = time.perf_counter(); s2 = blosc2.SChunk(chunksize=chunk, data=raw, cparams=cp); f2 = s2.to_cframe()
enc = time.perf_counter() - t
print(json.dumps({'decode': dec, 'encode': enc, 'size': len(f2)}))
"#;
    let (mut one, mut whole, mut whole1, mut enc, mut py_dec, mut py_enc) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut py_size = 0u64;
    for _ in 0..5 {
        let mid = data.len() / 2 / 8 * 8;
        one.push(time(&mut || {
            let v = codec.decode_range(&frame, data.len(), mid..mid + 8)?;
            std::hint::black_box(v);
            Ok(())
        })?);
        whole.push(time(&mut || {
            let mut out = vec![0u8; data.len()];
            codec.decode(&frame, &mut out)?;
            if out != data {
                bail!("whole decode differs");
            }
            Ok(())
        })?);
        // The whole array on one thread: a range over all of it decodes chunk after chunk.
        whole1.push(time(&mut || {
            let v = codec.decode_range(&frame, data.len(), 0..data.len())?;
            std::hint::black_box(v);
            Ok(())
        })?);
        enc.push(time(&mut || {
            let mut out = Vec::new();
            codec.encode(&data, &mut out)?;
            std::hint::black_box(out);
            Ok(())
        })?);
        let o = std::process::Command::new(&py)
            .arg("-c")
            .arg(script)
            .arg(&raw_path)
            .arg(&frame_path)
            .arg(codec.chunksize.to_string())
            .arg(threads.to_string())
            .output()?;
        if !o.status.success() {
            bail!("python-blosc2: {}", String::from_utf8_lossy(&o.stderr));
        }
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        py_dec.push(v["decode"].as_f64().unwrap_or(f64::NAN));
        py_enc.push(v["encode"].as_f64().unwrap_or(f64::NAN));
        py_size = v["size"].as_u64().unwrap_or(0);
    }
    let (one, whole, whole1, enc, py_dec, py_enc) = (
        median(one),
        median(whole),
        median(whole1),
        median(enc),
        median(py_dec),
        median(py_enc),
    );
    println!("| what | ours | python-blosc2 (C-Blosc2) | ratio (theirs / ours) |");
    println!("|---|---|---|---|");
    println!(
        "| one element (decode_range: 1 of 64 chunks) | {:.2} ms | | whole on 1 thread / one = {:.0}x; whole on {threads} threads / one = {:.0}x |",
        one * 1e3,
        whole1 / one,
        whole / one
    );
    println!("| whole array decode, 1 thread | {:.0} ms | | |", whole1 * 1e3);
    println!(
        "| whole array decode | {:.0} ms ({:.0} MB/s) | {:.0} ms ({:.0} MB/s) | {:.2}x |",
        whole * 1e3,
        data.len() as f64 / whole / 1e6,
        py_dec * 1e3,
        data.len() as f64 / py_dec / 1e6,
        py_dec / whole
    );
    println!(
        "| whole array encode | {:.0} ms ({:.0} MB/s) | {:.0} ms ({:.0} MB/s) | {:.2}x |",
        enc * 1e3,
        data.len() as f64 / enc / 1e6,
        py_enc * 1e3,
        data.len() as f64 / py_enc / 1e6,
        py_enc / enc
    );
    println!(
        "| frame size | {:.1} MiB | {:.1} MiB | |",
        frame.len() as f64 / 1048576.0,
        py_size as f64 / 1048576.0
    );
    Ok(())
}

/// Builds and runs `xtask/cblosc2` (its own workspace: C-Blosc2 is built there from source with
/// cmake, never in the main build) on the conformance data.
fn bench_cblosc2(_args: &[String]) -> Result<()> {
    if std::process::Command::new("cmake").arg("--version").output().is_err() {
        bail!("bench-cblosc2 builds C-Blosc2 from source and needs cmake (apt-get install cmake)");
    }
    let Some(conformance) = asdf_testdata::find_conformance() else {
        bail!("bench-cblosc2 needs ../shared/conformance (the blosc2-frames corpus)");
    };
    let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args([
            "run",
            "--quiet",
            "--release",
            "--manifest-path",
            "xtask/cblosc2/Cargo.toml",
            "--",
        ])
        .arg(conformance)
        .status()?;
    if !status.success() {
        bail!("xtask/cblosc2 failed ({status})");
    }
    Ok(())
}
