//! `asdf-cli`: inspect, check, compare and rewrite ASDF files (asdftool's commands and more).
//!
//! Exit codes: 0 fine, 1 invalid or failed, 2 usage.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use asdf::{AsdfFile, Node, NodeKind, OpenOptions};
use clap::{Parser, Subcommand};

// Standard output and error through `out`: a reader that went away (`asdf-cli to-json F | head`)
// ends the output quietly instead of a panic.
macro_rules! println {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! eprintln {
    () => { $crate::out::stderr(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($t)*))) };
}

mod diff;
mod out;
mod report;
mod search;

#[derive(Parser, Debug)]
#[command(name = "asdf-cli", version, about = "Inspect ASDF files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Also read with the schemas and manifests under this directory (an extension's): its
    /// tags are validated, and their defaults filled in files before 1.6.0, as Python asdf
    /// does with the extension installed; repeatable.
    #[arg(long, value_name = "DIR", global = true)]
    schema_dir: Vec<std::path::PathBuf>,
    /// Also read with the schemas and manifests that the Python packages installed for this
    /// Python register with asdf (their `asdf.resource_mappings` entry points: jwst's,
    /// roman_datamodels', asdf-astropy's, gwcs's...), read through asdf's resource manager: the
    /// same defaults and validation as Python asdf's default open there.
    #[arg(long, value_name = "PYTHON", global = true)]
    python_resources: Option<std::path::PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the tree with types, shapes, datatypes and short values.
    Info {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Most lines to print (0: no limit).
        #[arg(long, default_value_t = 200)]
        max_rows: usize,
        /// Widest line to print (0: no limit).
        #[arg(long, default_value_t = 120)]
        max_cols: usize,
        /// Show scalar values (default).
        #[arg(long, overrides_with = "no_show_values")]
        show_values: bool,
        /// Hide scalar values.
        #[arg(long)]
        no_show_values: bool,
        /// List the block headers.
        #[arg(long)]
        show_blocks: bool,
    },
    /// Validate the tree against the schemas of its tags, and its arrays against their blocks;
    /// exit 1 listing every violation.
    Validate {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Also validate the whole tree against this schema (YAML).
        #[arg(long, value_name = "FILE")]
        schema: Option<std::path::PathBuf>,
        /// Check the tree only: do not read blocks, checksums or array data.
        #[arg(long)]
        skip_block_validation: bool,
    },
    /// Read every block, decode it, check every checksum and every array's view; exit 1 on any
    /// problem.
    Verify {
        /// The ASDF file.
        file: std::path::PathBuf,
    },
    /// Rewrite the file compactly (blocks in tree order, no gaps); `-c none` removes compression.
    #[command(alias = "defrag")]
    Defragment {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Compression for every block: zlib, bzp2, lz4, zstd, lz4f, blsc, bls2 or none
        /// (default: keep each block's).
        #[arg(short = 'c', long)]
        compression: Option<String>,
    },
    /// Write each array block as its own ASDF file beside OUTPUT (exploded form).
    Explode {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Output file (its blocks go to OUTPUT-stem0000.asdf, ...).
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// Bring the arrays of an exploded file back into one file.
    Implode {
        /// The exploded ASDF file.
        file: std::path::PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// Write the tree as pure YAML (an ASDF file without blocks), every array inlined.
    #[command(name = "to-yaml", alias = "to_yaml")]
    ToYaml {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// Print the tree as JSON (for jq), arrays decoded; see the README for the format.
    #[command(name = "to-json", alias = "to_json")]
    ToJson {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// Convert a file to another layout: any ASDF file, the pre-1.0 drafts (`#ASDF 0.1.0`,
    /// `%FINF 0.1.0`) included, to ASDF of the standard given (tags upgraded, arrays as
    /// blocks, the ASDF 0.1.0 draft's encoding chains decoded).
    Convert {
        /// The input file.
        file: std::path::PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Output format: asdf, fits, or a draft before 1.0.0 (asdf-0.1.0, finf) (default:
        /// from OUTPUT's extension, .fits/.fit/.fts meaning fits).
        #[arg(long, value_name = "FORMAT")]
        to: Option<String>,
        /// ASDF Standard version of the output.
        #[arg(long, default_value = "1.6.0")]
        standard: String,
        /// Compression for every block: zlib, bzp2, lz4, zstd, lz4f, blsc, bls2 or none
        /// (default: keep each block's; encoding chains become none).
        #[arg(short = 'c', long)]
        compression: Option<String>,
        /// FITS output: where the ASDF file goes, `table` (the one-row BINTABLE named ASDF that
        /// JWST's files have) or `image` (Appendix A's IMAGE of bytes).
        #[arg(long, value_name = "FORM", default_value = "table")]
        fits_form: String,
        /// FITS output: write CHECKSUM and DATASUM cards in every HDU.
        #[arg(long)]
        fits_checksum: bool,
        /// FITS output: write the FITS file the `fits/fits-*` node at this JSON pointer
        /// describes (its HDUs only, no ASDF HDU).
        #[arg(long, value_name = "POINTER")]
        fits_node: Option<String>,
        /// ASDF output from FITS: leave out the `_fits` node that keeps the FITS headers (and
        /// tables no ndarray names) for a conversion back to FITS.
        #[arg(long)]
        no_fits_headers: bool,
    },
    /// Show the differences between two files' trees, array values included; exit 1 if they
    /// differ.
    Diff {
        /// The first file.
        first: std::path::PathBuf,
        /// The second file.
        second: std::path::PathBuf,
        /// Print only the pointers that differ.
        #[arg(short, long)]
        minimal: bool,
        /// A JSON pointer to leave out (with everything under it); repeatable.
        #[arg(short, long = "ignore", value_name = "POINTER")]
        ignore: Vec<String>,
    },
    /// List the nodes whose key, type and value match (every option given must match).
    Search {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Regular expression on the key (or sequence index).
        #[arg(long)]
        key: Option<String>,
        /// Regular expression on the type: tag (`core/ndarray-1.1.0`, full or short) or YAML
        /// type (dict, list, str, int, float, bool, null, timestamp).
        #[arg(long = "type")]
        type_: Option<String>,
        /// The value: same text, or same number.
        #[arg(long)]
        value: Option<String>,
    },
    /// Edit the tree in $VISUAL or $EDITOR (default vi); the result is parsed and validated, and
    /// the file rewritten safely (a new file renamed over the old one) only if both pass.
    Edit {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Write the new tree over the old one when it fits in the old tree's space and padding
        /// (fast for big files: the blocks are not copied; not atomic), rewriting safely otherwise.
        #[arg(long)]
        in_place: bool,
    },
    /// List the tags of an ASDF Standard version (default 1.6.0) and their schemas.
    Tags {
        /// The standard version.
        #[arg(long, default_value = "1.6.0")]
        standard: String,
    },
    /// List the ids of every schema this build carries.
    Schemas,
    /// List the extension manifests this build carries.
    Extensions,
}

pub(crate) fn type_name(n: &Node) -> String {
    if let Some(t) = &n.tag {
        let short = t.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(t);
        return short.to_owned();
    }
    match &n.kind {
        NodeKind::Mapping(_) => "dict".to_owned(),
        NodeKind::Sequence(_) => "list".to_owned(),
        NodeKind::Alias(a) => format!("alias *{}", a.anchor),
        NodeKind::Scalar(s) => match s.value {
            asdf::Value::Null => "null",
            asdf::Value::Bool(_) => "bool",
            asdf::Value::Int(_) | asdf::Value::BigInt(_) => "int",
            asdf::Value::Float(_) => "float",
            asdf::Value::Str => "str",
            asdf::Value::Timestamp => "timestamp",
            asdf::Value::Binary(_) => "bytes",
        }
        .to_owned(),
    }
}

pub(crate) fn is_ndarray(n: &Node) -> bool {
    n.tag.as_deref().is_some_and(asdf::is_ndarray_tag)
}

struct Printer<'a> {
    file: &'a AsdfFile,
    lines: Vec<String>,
    show_values: bool,
    /// Addresses of the nodes being printed (an alias back to one of them is not followed).
    stack: Vec<usize>,
    /// Nodes that aliases led to and were printed once: a second alias to one is a reference.
    shown: std::collections::HashSet<usize>,
}

impl Printer<'_> {
    fn node(&mut self, label: &str, n: &Node, prefix: &str, last: bool, root: bool) {
        let alias = match &n.kind {
            NodeKind::Alias(a) => Some(a.anchor.to_string()),
            _ => None,
        };
        let n = self.file.document().resolve(n);
        let branch = if root {
            ""
        } else if last {
            "└─"
        } else {
            "├─"
        };
        let addr = std::ptr::from_ref(n) as usize;
        if self.stack.contains(&addr) {
            let anchor = alias.unwrap_or_default();
            self.lines.push(format!(
                "{prefix}{branch}{label} (alias *{anchor}, back to an ancestor)"
            ));
            return;
        }
        if let Some(anchor) = &alias
            && !self.shown.insert(addr)
        {
            // Printed once already: an alias bomb costs a line per alias, not per expansion.
            self.lines
                .push(format!("{prefix}{branch}{label} (alias *{anchor}, shown above)"));
            return;
        }
        if self.stack.len() >= asdf::budget::MAX_DEPTH {
            self.lines.push(format!(
                "{prefix}{branch}{label} (… nested deeper than {} levels, not shown)",
                asdf::budget::MAX_DEPTH
            ));
            return;
        }
        let mut line = format!("{prefix}{branch}{label} ({})", type_name(n));
        if is_ndarray(n) {
            if let Ok(a) = asdf::NdArray::from_node(n, self.file.document()) {
                let shape = match (&a.shape, &a.data) {
                    (Some(s), _) => format!(
                        "[{}]",
                        s.iter()
                            .map(|d| match d {
                                asdf::Dim::Fixed(k) => k.to_string(),
                                asdf::Dim::Streamed => "*".to_owned(),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    (None, _) => "inline".to_owned(),
                };
                let dt = a
                    .datatype
                    .as_ref()
                    .map_or_else(|| "inferred".to_owned(), ToString::to_string);
                let _ = write!(line, ": shape={shape}, datatype={dt}");
            }
            self.lines.push(line);
            return;
        }
        if let NodeKind::Scalar(s) = &n.kind
            && self.show_values
        {
            let v: String = s.text.replace('\n', "\\n").chars().take(60).collect();
            let _ = write!(line, ": {v}");
        }
        self.lines.push(line);
        let child_prefix = if root {
            String::new()
        } else {
            format!("{prefix}{}", if last { "  " } else { "│ " })
        };
        self.stack.push(addr);
        match &n.kind {
            NodeKind::Mapping(m) => {
                let k = m.entries.len();
                for (i, (key, v)) in m.entries.iter().enumerate() {
                    let label = key.as_scalar().map(|s| s.text.to_string()).unwrap_or_default();
                    self.node(&label, v, &child_prefix, i + 1 == k, false);
                }
            }
            NodeKind::Sequence(s) => {
                let k = s.items.len();
                for (i, v) in s.items.iter().enumerate() {
                    self.node(&format!("[{i}]"), v, &child_prefix, i + 1 == k, false);
                }
            }
            _ => {}
        }
        self.stack.pop();
    }
}

fn info(
    path: &std::path::Path,
    max_rows: usize,
    max_cols: usize,
    show_values: bool,
    show_blocks: bool,
) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    if let Some(hdus) = file.fits_hdus() {
        // ASDF embedded in FITS: the HDUs beside the tree.
        println!("FITS file, {} HDU(s):", hdus.len());
        for h in hdus {
            let kind = match &h.kind {
                asdf::layout::fits::HduKind::Primary => "PRIMARY".to_owned(),
                asdf::layout::fits::HduKind::Image => "IMAGE".to_owned(),
                asdf::layout::fits::HduKind::BinTable => "BINTABLE".to_owned(),
                asdf::layout::fits::HduKind::Table => "TABLE".to_owned(),
                asdf::layout::fits::HduKind::CompressedImage => "COMPRESSED IMAGE".to_owned(),
                other => format!("{other:?}"),
            };
            println!(
                "  {:>3} {:<10} ver {:<3} {:<16} shape {:?} {}",
                h.index,
                h.name.as_deref().unwrap_or("-"),
                h.ver,
                kind,
                h.shape(),
                h.datatype().unwrap_or("?")
            );
        }
    }
    let mut p = Printer {
        file: &file,
        lines: Vec::new(),
        show_values,
        stack: Vec::new(),
        shown: std::collections::HashSet::new(),
    };
    p.node("root", file.tree(), "", true, true);
    let total = p.lines.len();
    for (i, l) in p.lines.iter().enumerate() {
        if max_rows != 0 && i >= max_rows {
            println!(
                "Some nodes not shown ({} more lines; use --max-rows 0).",
                total - max_rows
            );
            break;
        }
        let shown: String = if max_cols != 0 && l.chars().count() > max_cols {
            l.chars().take(max_cols.saturating_sub(1)).chain(['…']).collect()
        } else {
            l.clone()
        };
        println!("{shown}");
    }
    if show_blocks {
        let r = file.layout();
        let layout = match r.file_header().dialect {
            asdf::layout::Dialect::Asdf010 => " (file format 0.1.0, a draft before ASDF 1.0.0)",
            asdf::layout::Dialect::Finf => " (FINF 0.1.0, the draft before ASDF)",
            _ => "",
        };
        println!("{} block(s){layout}", r.block_count());
        for i in 0..r.block_count() {
            let b = r.block(i)?;
            println!(
                "  block {i} @ {}: compression {}, allocated {}, used {}, data {}{}{}",
                b.offset,
                b.compression(),
                b.header.allocated_size,
                b.stored_len,
                b.data_len(),
                if b.header.is_streamed() { ", streamed" } else { "" },
                match b.header.layout {
                    asdf::layout::BlockLayout::Standard => String::new(),
                    other => format!(", {other:?} header ({} bytes)", b.header.header_size),
                }
            );
        }
    }
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    Ok(ExitCode::SUCCESS)
}

/// The schemas of `--schema-dir` and `--python-resources`, when given (set once, in `main`).
static EXTRA_SCHEMAS: std::sync::OnceLock<Option<std::sync::Arc<asdf::AsdfSchemas>>> = std::sync::OnceLock::new();

/// The standard's schemas and those of `--schema-dir` and `--python-resources`; `None` when
/// neither is given.
fn extra_schemas(
    dirs: &[std::path::PathBuf],
    python: Option<&std::path::Path>,
) -> Result<Option<asdf::AsdfSchemas>, asdf::Error> {
    if dirs.is_empty() && python.is_none() {
        return Ok(None);
    }
    let mut schemas = asdf::schemas_to_extend()?;
    for d in dirs {
        schemas.add_dir(d).map_err(|source| asdf::Error::SchemaFile {
            path: d.clone(),
            source,
        })?;
    }
    // One line, not one per file: a folder dumped from an installed asdf holds the standard's
    // own schemas again.
    if let Some((file, id)) = schemas.shadowed().first() {
        let more = schemas.shadowed().len() - 1;
        report::warning(&format!(
            "{} declares the id {id}, which is already known: not used{}",
            file.display(),
            if more > 0 {
                format!(" (nor {more} more schemas of ids already known)")
            } else {
                String::new()
            }
        ));
    }
    if let Some(py) = python {
        let dir = tempfile::tempdir().map_err(|source| asdf::Error::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        let n = python_resources(py, dir.path())?;
        let before = schemas.shadowed().len();
        schemas.add_dir(dir.path()).map_err(|source| asdf::Error::SchemaFile {
            path: py.to_path_buf(),
            source,
        })?;
        // The standard's own schemas come back from asdf-standard: already known.
        let known = schemas.shadowed().len() - before;
        eprintln!("{} resources from {}'s asdf ({known} already known)", n, py.display());
    }
    Ok(Some(schemas))
}

/// The schemas every command reads with: the standard's, and those of `--schema-dir` and
/// `--python-resources` when given.
fn builtin_or_extra() -> Result<std::sync::Arc<asdf::AsdfSchemas>, asdf::Error> {
    match EXTRA_SCHEMAS.get().cloned().flatten() {
        Some(s) => Ok(s),
        None => asdf::schemas(),
    }
}

/// How every command opens its files: not validated (`validate` reports instead), with the
/// schemas of `--schema-dir` and `--python-resources` when given.
fn read_options() -> OpenOptions {
    let o = OpenOptions::default().validate(false);
    match EXTRA_SCHEMAS.get().cloned().flatten() {
        Some(s) => o.schemas(s),
        None => o,
    }
}

/// Writes every resource (schema, manifest) that asdf's resource manager knows for `python`
/// into `dir`, one file each.
const DUMP_RESOURCES: &str = "
import hashlib, os, sys
import asdf
rm = asdf.get_config().resource_manager
n = 0
for uri in rm:
    name = hashlib.sha1(uri.encode()).hexdigest() + '.yaml'
    with open(os.path.join(sys.argv[1], name), 'wb') as f:
        f.write(rm[uri])
    n += 1
print(n)
";

fn python_resources(python: &std::path::Path, dir: &std::path::Path) -> Result<usize, asdf::Error> {
    let out = std::process::Command::new(python)
        .args(["-c", DUMP_RESOURCES])
        .arg(dir)
        .output()
        .map_err(|source| asdf::Error::Io {
            path: python.to_path_buf(),
            source,
        })?;
    if !out.status.success() {
        return Err(asdf::Error::Io {
            path: python.to_path_buf(),
            source: std::io::Error::other(format!(
                "could not list asdf's resources (is asdf installed for it?): {}",
                String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default()
            )),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0))
}

fn validate(path: &std::path::Path, custom: Option<&str>, skip_blocks: bool) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    let report = match EXTRA_SCHEMAS.get().cloned().flatten() {
        Some(schemas) => file.validate_with(&schemas, custom)?,
        None => file.validate()?,
    };
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    let problems = if skip_blocks {
        Vec::new()
    } else {
        block_problems(&file, None).1
    };
    if report.is_valid() && problems.is_empty() {
        println!("{}: valid", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let head = report::file_head(path, file.layout().tree_range().map_or(0, |r| r.end));
    for v in &report.violations {
        println!("{v}");
        if let Some(s) = report::snippet(&head, v.span.line, v.span.column) {
            println!("{s}");
        }
    }
    for p in &problems {
        println!("{p}");
    }
    println!(
        "{}: {} violation(s)",
        path.display(),
        report.violations.len() + problems.len()
    );
    Ok(ExitCode::from(1))
}

/// Reads every block (decoding it and checking its checksum) and every array: the checksum
/// lines, and the problems found.
fn block_problems(file: &AsdfFile, bar: Option<&report::Bar>) -> (Vec<String>, Vec<String>) {
    let r = file.layout();
    let (mut lines, mut problems) = (Vec::new(), Vec::new());
    let count = r.block_count();
    // Blocks are checked on every core, each decoded in pieces and hashed on the way (MD5 is
    // one core's work per block): memory stays bounded by a piece per core whatever the blocks
    // hold or claim. Results are reported in block order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<Result<asdf::layout::ChecksumStatus, String>>>> =
        std::sync::Mutex::new(vec![None; count]);
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(count.max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                use std::sync::atomic::Ordering;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let result = r.check_block(i).map_err(|e| {
                        let m = e.to_string();
                        if m.starts_with("block ") {
                            m
                        } else {
                            format!("block {i}: {m}")
                        }
                    });
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(result);
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(b) = bar {
                        b.update(n, count);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Some(Ok(s)) => lines.push(format!("block {i}: checksum {s:?}")),
            Some(Err(m)) => problems.push(m),
            None => problems.push(format!("block {i}: not checked")),
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    for p in file.array_pointers() {
        // Arrays with a block: their view is checked against the block (shape, strides,
        // datatype, offset), no element is materialised. Inline arrays (their data is in the
        // tree) and masks are decoded.
        let checked = match file.view(&p) {
            Ok(_) if !has_mask(file, &p) => Ok(()),
            Err(asdf::Error::Array {
                source: asdf::NdArrayError::MissingBlock,
                ..
            })
            | Ok(_) => file.array_values(&p).map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = checked {
            let m = e.to_string();
            problems.push(if m.starts_with('/') { m } else { format!("{p}: {m}") });
        }
    }
    // One problem (an unknown compression, say) can show up for the block and its array.
    let mut seen = std::collections::HashSet::new();
    problems.retain(|p| seen.insert(p.clone()));
    (lines, problems)
}

/// Whether the ndarray at `p` has a `mask`.
fn has_mask(file: &AsdfFile, p: &str) -> bool {
    file.get(p)
        .ok()
        .is_some_and(|n| file.document().resolve(n).get("mask").is_some())
}

fn verify(path: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    let r = file.layout();
    let (lines, problems) = block_problems(&file, Some(&report::Bar::new("verifying blocks")));
    for l in &lines {
        println!("{l}");
    }
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    if problems.is_empty() {
        println!("{}: {} blocks verified", path.display(), r.block_count());
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        println!("{p}");
    }
    Ok(ExitCode::from(1))
}

/// The codecs this build writes, as the codec registry knows them (plus `none`).
fn writable() -> Vec<asdf::Label> {
    let mut known = asdf::compression::Registry::shared_default().labels();
    known.sort_by_key(|l| l.name());
    known.insert(0, asdf::Label::NONE);
    known
}

fn label(name: &str) -> Option<asdf::Label> {
    let l = asdf::Label::from_name(name)?;
    writable().contains(&l).then_some(l)
}

/// The `-c` option: keep each block's compression, or one label for all (`None` after an
/// error message for an unknown name).
fn compression_arg(compression: Option<&str>) -> Option<asdf::Compression> {
    match compression {
        None => Some(asdf::Compression::Keep),
        Some(name) => {
            let l = label(name).map(asdf::Compression::All);
            if l.is_none() {
                let names: Vec<String> = writable().iter().map(ToString::to_string).collect();
                eprintln!("error: unknown compression `{name}` ({})", names.join(", "));
            }
            l
        }
    }
}

/// Whether `out` names a FITS file by its extension (`.fits`, `.fit`, `.fts`).
fn fits_extension(out: &std::path::Path) -> bool {
    out.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .is_some_and(|e| matches!(e.as_str(), "fits" | "fit" | "fts"))
}

fn rewrite(path: &std::path::Path, out: &std::path::Path, compression: Option<&str>) -> Result<ExitCode, asdf::Error> {
    let mut file = asdf::open_path_or_url(path, read_options())?;
    let Some(c) = compression_arg(compression) else {
        return Ok(ExitCode::from(2));
    };
    let bar = std::sync::Arc::new(report::Bar::new("writing blocks"));
    let b = bar.clone();
    let opts = asdf::WriteOptions::default()
        .validate(false)
        .compression(c)
        .progress(move |done, total| b.update(done, total));
    // ASDF in FITS stays FITS over itself (the library keeps every HDU) or to a FITS name;
    // to an ASDF name it keeps the FITS headers in `_fits`, as `convert` does.
    let fits_form = file.fits_asdf_form();
    let r = match fits_form {
        Some(form) if fits_extension(out) => {
            file.write_fits(out, &asdf::FitsWriteOptions::default().asdf(opts).asdf_hdu(form))
        }
        Some(_) if !file.is_own_path(out) => file.keep_fits_headers().and_then(|_| file.write_to(out, &opts)),
        _ => file.write_to(out, &opts),
    };
    bar.finish();
    r?;
    println!(
        "wrote {}{}",
        out.display(),
        if fits_form.is_some() && (fits_extension(out) || file.is_own_path(out)) {
            " (FITS, every HDU kept)"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// What `convert` writes beside the format: the FITS options.
struct FitsArgs<'a> {
    form: &'a str,
    checksum: bool,
    node: Option<&'a str>,
    no_headers: bool,
}

fn convert(
    path: &std::path::Path,
    out: &std::path::Path,
    to: Option<&str>,
    standard: &str,
    compression: Option<&str>,
    fits: &FitsArgs<'_>,
) -> Result<ExitCode, asdf::Error> {
    let by_extension = fits_extension(out);
    let format = to.map_or(if by_extension { "fits" } else { "asdf" }, |t| t);
    match format {
        "asdf" => {}
        "asdf-0.1.0" | "finf" => {
            // The drafts before 1.0.0 (for readers of them and round trips); blocks decoded.
            let file = asdf::open_path_or_url(path, read_options())?;
            refuse_input_as_output(&file, Some(out))?;
            let dialect = if format == "finf" {
                asdf::layout::Dialect::Finf
            } else {
                asdf::layout::Dialect::Asdf010
            };
            let mut result = Ok(0);
            let written = asdf::write_atomically(out, |w| {
                result = file.write_draft(w, dialect, &|_, _| None);
                match &result {
                    Ok(_) => Ok(()),
                    Err(_) => Err(std::io::Error::other("the draft could not be written")),
                }
            });
            // The draft's own error first (the temporary file is gone either way).
            result?;
            written?;
            println!("wrote {} (the {format} draft layout)", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        "fits" => {}
        other => {
            eprintln!("error: unknown output format `{other}` (asdf, fits, asdf-0.1.0 or finf)");
            return Ok(ExitCode::from(2));
        }
    }
    let Ok(version) = standard.parse::<asdf::Version>() else {
        eprintln!("error: `{standard}` is not a version (such as 1.6.0)");
        return Ok(ExitCode::from(2));
    };
    let Some(c) = compression_arg(compression) else {
        return Ok(ExitCode::from(2));
    };
    let mut file = asdf::open_path_or_url(path, read_options())?;
    refuse_input_as_output(&file, Some(out))?;
    let from = file.standard_version();
    let dialect = file.layout().file_header().dialect;
    if dialect.is_legacy() {
        for i in 0..file.layout().block_count() {
            if let Err(e @ asdf::layout::Error::Checksum { .. }) = file.layout().verify_checksum(i) {
                report::warning(&format!(
                    "{e}: the drafts left the checksum's meaning \"TBD\"; the block is written with a checksum of its data as read"
                ));
            }
        }
    }
    let changed = file.set_standard(version)?;
    let report = file.validate()?;
    if !report.violations.is_empty() {
        return Err(asdf::Error::Invalid(report.violations));
    }
    let from_fits = file.fits_hdus().is_some();
    let bar = std::sync::Arc::new(report::Bar::new(if format == "fits" {
        "writing HDUs"
    } else {
        "writing blocks"
    }));
    let b = bar.clone();
    let opts = asdf::WriteOptions::default()
        .compression(c)
        .progress(move |done, total| b.update(done, total));
    let r = if format == "fits" {
        let form = match fits.form {
            "table" => asdf::AsdfHdu::Table,
            "image" => asdf::AsdfHdu::Image,
            other => {
                bar.finish();
                eprintln!("error: unknown --fits-form `{other}` (table or image)");
                return Ok(ExitCode::from(2));
            }
        };
        let fo = asdf::FitsWriteOptions::default()
            .asdf(opts)
            .asdf_hdu(form)
            .checksums(fits.checksum);
        match fits.node {
            Some(p) => file.write_fits_node(p, out, &fo),
            None => file.write_fits(out, &fo),
        }
    } else {
        if from_fits && !fits.no_headers {
            file.keep_fits_headers()?;
        }
        file.write_to(out, &opts)
    };
    bar.finish();
    r?;
    if format == "fits" {
        println!(
            "wrote {} (FITS{}; ASDF Standard {version}, {changed} tags upgraded)",
            out.display(),
            if fits.node.is_some() {
                " from the fits node"
            } else {
                " with the ASDF tree in the ASDF HDU"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let layout = match dialect {
        asdf::layout::Dialect::Asdf010 => "ASDF 0.1.0 draft".to_owned(),
        asdf::layout::Dialect::Finf => "FINF 0.1.0 draft".to_owned(),
        _ if file.fits_hdus().is_some() => format!("ASDF Standard {from} in FITS"),
        _ => format!("ASDF Standard {from}"),
    };
    println!(
        "wrote {} (from the {layout}; ASDF Standard {version}, {changed} tags upgraded)",
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The most elements `to-yaml` inlines for one array (about 1 GiB of tree in memory).
const MAX_INLINE_ELEMENTS: usize = 10_000_000;

fn to_yaml(path: &std::path::Path, out: Option<&std::path::Path>) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    refuse_input_as_output(&file, out)?;
    let mut doc = file.document().clone();
    for p in file.array_pointers() {
        // Inline YAML is built as a tree before it is written: arrays are inlined up to a
        // size whose tree fits in memory comfortably (to-json streams any size).
        if let Ok(v) = file.view(&p)
            && v.count() > MAX_INLINE_ELEMENTS
        {
            return Err(asdf::Error::Array {
                pointer: p.clone(),
                source: asdf::NdArrayError::TooLarge { elements: v.count() },
            });
        }
        let a = file.array_values(&p)?;
        let node = asdf_yaml_pointer_get(&doc, &p);
        let tag = node
            .and_then(|n| n.tag.as_deref().map(str::to_owned))
            .unwrap_or_default();
        let mut inline = asdf::NdArray::inline(a.datatype, &a.shape, &a.elements).to_node(&tag);
        // Its anchor stays, so that aliases of the array (a FITS HDU's `data` in `_fits`)
        // still name it.
        inline.anchor = node.and_then(|n| n.anchor.clone());
        // The mask goes along: an array mask inlined as booleans, a scalar mask as it is.
        let mask = node.and_then(|n| n.get("mask")).map(|m| doc.resolve(m).clone());
        if let (Some(m), Some(map)) = (mask, inline.as_mapping_mut()) {
            let m = match (&a.mask, m.as_scalar()) {
                (Some(bits), None) => {
                    let bools: Vec<asdf::Element> = bits.iter().map(|b| asdf::Element::Bool(*b)).collect();
                    let dt = asdf::Datatype::Scalar(asdf::ScalarType::Bool8);
                    asdf::NdArray::inline(dt, &a.shape, &bools).to_node(&tag)
                }
                _ => m,
            };
            map.insert("mask", m);
        }
        let _ = asdf::set_node(&mut doc, &p, inline);
    }
    doc.relink();
    let text = asdf::emit_yaml(&doc)?;
    let mut bytes = b"#ASDF 1.0.0\n".to_vec();
    bytes.extend(format!("#ASDF_STANDARD {}\n", file.standard_version()).into_bytes());
    bytes.extend(text);
    emit(out, &bytes)?;
    Ok(ExitCode::SUCCESS)
}

/// A conversion's output must not be one of the files read: the ASDF file would be replaced
/// by its YAML or JSON text.
fn refuse_input_as_output(file: &AsdfFile, out: Option<&std::path::Path>) -> Result<(), asdf::Error> {
    if let Some(out) = out
        && let Some(input) = file.input_files().into_iter().find(|i| asdf::same_file(out, i))
    {
        return Err(asdf::Error::OutputIsInput {
            output: out.to_path_buf(),
            input,
        });
    }
    Ok(())
}

/// Writes `bytes` to standard output, or atomically to `out` (a new file renamed into place
/// only once complete: a full disk or a kill never leaves a partial file, and an output that
/// is the input is replaced only after the input was read).
fn emit(out: Option<&std::path::Path>, bytes: &[u8]) -> Result<(), asdf::Error> {
    match out {
        None => out::stdout_bytes(bytes).map_err(|source| asdf::Error::Io {
            path: "<stdout>".into(),
            source,
        }),
        Some(out) => {
            asdf::write_atomically(out, |w| w.write_all(bytes))?;
            eprintln!("wrote {}", out.display());
            Ok(())
        }
    }
}

fn to_json(path: &std::path::Path, out: Option<&std::path::Path>) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_path_or_url(path, read_options())?;
    refuse_input_as_output(&file, out)?;
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    // Written as it is made: to standard output, or to a new file renamed into place.
    let mut warnings = Vec::new();
    match out {
        None => {
            let mut o = out::Stdout;
            warnings = asdf::json::to_json(&file, &mut o).map_err(|source| asdf::Error::Io {
                path: "<stdout>".into(),
                source,
            })?;
        }
        Some(out) => {
            asdf::write_atomically(out, |w| {
                warnings = asdf::json::to_json(&file, w)?;
                Ok(())
            })?;
            eprintln!("wrote {}", out.display());
        }
    }
    for w in &warnings {
        report::warning(w);
    }
    Ok(ExitCode::SUCCESS)
}

fn run_diff(
    a: &std::path::Path,
    b: &std::path::Path,
    minimal: bool,
    ignore: &[String],
) -> Result<ExitCode, asdf::Error> {
    let fa = asdf::open_path_or_url(a, read_options())?;
    let fb = asdf::open_path_or_url(b, read_options())?;
    let ignore: Vec<String> = ignore.iter().map(|i| i.trim_end_matches('/').to_owned()).collect();
    let diffs = diff::diff(&fa, &fb, &ignore);
    for d in &diffs {
        let p = if d.pointer.is_empty() { "/" } else { &d.pointer };
        if minimal {
            println!("{p}");
        } else {
            println!("{p}: {}", d.what);
        }
    }
    if diffs.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    if !minimal {
        println!("{} difference(s)", diffs.len());
    }
    Ok(ExitCode::from(1))
}

fn run_search(
    path: &std::path::Path,
    key: Option<&str>,
    type_: Option<&str>,
    value: Option<String>,
) -> Result<ExitCode, asdf::Error> {
    let re = |s: Option<&str>, what: &str| -> Result<Option<regex::Regex>, String> {
        s.map(|s| regex::Regex::new(s).map_err(|e| format!("--{what}: {e}")))
            .transpose()
    };
    let q = match (re(key, "key"), re(type_, "type")) {
        (Ok(key), Ok(type_)) => search::Query { key, type_, value },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let file = asdf::open_path_or_url(path, read_options())?;
    let (hits, warning) = search::search(&file, &q, &mut |h| match &h.value {
        Some(v) => println!("{} ({}): {}", h.pointer, h.type_, v.replace('\n', "\\n")),
        None => println!("{} ({})", h.pointer, h.type_),
    });
    if let Some(w) = warning {
        report::warning(&w);
    }
    Ok(if hits == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn edit(path: &std::path::Path, in_place: bool) -> Result<ExitCode, asdf::Error> {
    let io = |p: &std::path::Path| {
        let p = p.to_path_buf();
        move |source| asdf::Error::Io { path: p, source }
    };
    let mut file = asdf::open_with(path, read_options())?;
    let original = match file.layout().tree_bytes() {
        Some(t) => t.to_vec(),
        None => asdf::emit_yaml(file.document())?,
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A private directory (mode 0700, an unpredictable name, created exclusively) holding
    // the text: nobody else can read it or plant a link in its place. It is kept when the
    // edit cannot be applied, so that the user's work is not lost.
    let private = tempfile::Builder::new()
        .prefix("asdf-cli-edit-")
        .tempdir()
        .map_err(io(&std::env::temp_dir()))?
        .keep();
    let tmp = private.join(format!("{stem}.yaml"));
    {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut f = o.open(&tmp).map_err(io(&tmp))?;
        f.write_all(&original).map_err(io(&tmp))?;
    }
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_owned());
    // Through the shell, so that an editor given with arguments (`code -w`) works.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&tmp)
        .status()
        .map_err(io(std::path::Path::new(&editor)))?;
    if !status.success() {
        eprintln!(
            "error: the editor `{editor}` failed ({status}); {} is unchanged, the text is in {}",
            path.display(),
            tmp.display()
        );
        return Ok(ExitCode::from(1));
    }
    let edited = std::fs::read(&tmp).map_err(io(&tmp))?;
    if edited == original {
        let _ = std::fs::remove_dir_all(&private);
        println!("no changes");
        return Ok(ExitCode::SUCCESS);
    }
    let keep = |what: &str| {
        eprintln!(
            "{} is unchanged; your edit is kept in {} ({what})",
            path.display(),
            tmp.display()
        );
        ExitCode::from(1)
    };
    match file.set_tree_yaml(&edited) {
        Ok(warnings) => {
            for w in warnings {
                report::warning(&w.to_string());
            }
        }
        Err(e) => {
            report::error(&e.to_string());
            if let asdf::Error::Yaml(y) = &e
                && let Some(sp) = y.span()
                && let Some(s) = report::snippet(&edited, sp.line, sp.column)
            {
                eprintln!("{s}");
            }
            return Ok(keep("lines above are lines of that file"));
        }
    }
    let report = file.validate()?;
    if !report.is_valid() {
        for v in &report.violations {
            println!("{v}");
            if let Some(s) = report::snippet(&edited, v.span.line, v.span.column) {
                println!("{s}");
            }
        }
        println!("{} violation(s)", report.violations.len());
        return Ok(keep("lines above are lines of that file"));
    }
    let options = asdf::WriteOptions::default().validate(false);
    let written = if in_place {
        file.update(&options).map(Some)
    } else {
        file.write_to(path, &options).map(|()| None)
    };
    match written {
        Ok(Some(asdf::Update::InPlace { tree_bytes, room, .. })) => println!(
            "updated {} in place (tree {tree_bytes} of {room} bytes; blocks untouched)",
            path.display()
        ),
        Ok(Some(asdf::Update::Rewritten(why))) => println!("rewrote {} ({why:?})", path.display()),
        Ok(Some(other)) => println!("wrote {} ({other:?})", path.display()),
        Ok(None) => println!("wrote {}", path.display()),
        Err(e @ asdf::Error::Changed { .. }) => {
            // Another writer got there first: its bytes stay, the user's text is kept.
            report::error(&e.to_string());
            return Ok(keep("edit it again after reopening the file"));
        }
        Err(e) => return Err(e),
    }
    let _ = std::fs::remove_dir_all(&private);
    Ok(ExitCode::SUCCESS)
}

fn tags(standard: &str) -> Result<ExitCode, asdf::Error> {
    let Ok(v) = standard.parse::<asdf::Version>() else {
        eprintln!("error: `{standard}` is not a version (x.y.z)");
        return Ok(ExitCode::from(2));
    };
    if !asdf::SUPPORTED_STANDARDS.contains(&v) {
        return Err(asdf::Error::UnsupportedStandard(v));
    }
    let s = asdf::schemas()?;
    for t in s.tags_for_standard((v.major, v.minor, v.patch)) {
        println!("{} -> {}", t.tag, t.schema);
    }
    Ok(ExitCode::SUCCESS)
}

fn asdf_yaml_pointer_get<'a>(doc: &'a asdf::Document, p: &str) -> Option<&'a Node> {
    asdf::get_node(doc, p)
}

impl Command {
    /// The one file the command reads, when there is exactly one (for error snippets).
    fn single_file(&self) -> Option<&std::path::Path> {
        match self {
            Command::Info { file, .. }
            | Command::Validate { file, .. }
            | Command::Verify { file }
            | Command::Defragment { file, .. }
            | Command::Convert { file, .. }
            | Command::Explode { file, .. }
            | Command::Implode { file, .. }
            | Command::ToYaml { file, .. }
            | Command::ToJson { file, .. }
            | Command::Search { file, .. }
            | Command::Edit { file, .. } => Some(file),
            Command::Diff { .. } | Command::Tags { .. } | Command::Schemas | Command::Extensions => None,
        }
    }
}

/// The schemas of `--schema-dir` and `--python-resources`, and `validate --schema`'s custom
/// schema among them (its id).
fn load_schemas(cli: &Cli) -> Result<Option<String>, asdf::Error> {
    let mut extra = extra_schemas(&cli.schema_dir, cli.python_resources.as_deref())?;
    let mut custom = None;
    if let Command::Validate { schema: Some(p), .. } = &cli.command {
        let schemas = match &mut extra {
            Some(s) => s,
            None => extra.insert(asdf::schemas_to_extend()?),
        };
        let text = std::fs::read(p).map_err(|source| asdf::Error::Io {
            path: p.clone(),
            source,
        })?;
        custom = Some(schemas.add_schema(&text).map_err(|source| asdf::Error::SchemaFile {
            path: p.clone(),
            source,
        })?);
    }
    let _ = EXTRA_SCHEMAS.set(extra.map(std::sync::Arc::new));
    Ok(custom)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let custom = match load_schemas(&cli) {
        Ok(c) => c,
        Err(e) => {
            report::error(&e.to_string());
            return ExitCode::from(1);
        }
    };
    let r = match &cli.command {
        Command::Info {
            file,
            max_rows,
            max_cols,
            no_show_values,
            show_blocks,
            ..
        } => info(file, *max_rows, *max_cols, !no_show_values, *show_blocks),
        Command::Validate {
            file,
            skip_block_validation,
            ..
        } => validate(file, custom.as_deref(), *skip_block_validation),
        Command::Verify { file } => verify(file),
        Command::Defragment {
            file,
            output,
            compression,
        } => rewrite(file, output, compression.as_deref()),
        Command::Explode { file, output } => asdf::open_path_or_url(file, read_options()).and_then(|f| {
            let files = f.write_exploded(output, &asdf::WriteOptions::default().validate(false))?;
            for p in files {
                println!("wrote {}", p.display());
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Implode { file, output } => rewrite(file, output, None),
        Command::Convert {
            file,
            output,
            to,
            standard,
            compression,
            fits_form,
            fits_checksum,
            fits_node,
            no_fits_headers,
        } => convert(
            file,
            output,
            to.as_deref(),
            standard,
            compression.as_deref(),
            &FitsArgs {
                form: fits_form,
                checksum: *fits_checksum,
                node: fits_node.as_deref(),
                no_headers: *no_fits_headers,
            },
        ),
        Command::ToYaml { file, output } => to_yaml(file, output.as_deref()),
        Command::ToJson { file, output } => to_json(file, output.as_deref()),
        Command::Diff {
            first,
            second,
            minimal,
            ignore,
        } => run_diff(first, second, *minimal, ignore),
        Command::Search {
            file,
            key,
            type_,
            value,
        } => run_search(file, key.as_deref(), type_.as_deref(), value.clone()),
        Command::Tags { standard } => tags(standard),
        Command::Edit { file, in_place } => edit(file, *in_place),
        Command::Schemas => builtin_or_extra().map(|s| {
            let mut ids: Vec<&str> = s
                .registry()
                .uris()
                .filter(|u| !u.starts_with("urn-anonymous:"))
                .collect();
            ids.sort_unstable();
            for id in ids {
                println!("{id}");
            }
            ExitCode::SUCCESS
        }),
        Command::Extensions => builtin_or_extra().map(|s| {
            for m in s.manifests() {
                let std = m
                    .standard
                    .map(|(a, b, c)| format!(" (ASDF Standard {a}.{b}.{c})"))
                    .unwrap_or_default();
                println!("{}{std}: {} tags, manifest {}", m.extension_uri, m.tags.len(), m.id);
            }
            ExitCode::SUCCESS
        }),
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            report::error(&e.to_string());
            if let (asdf::Error::Yaml(y), Some(path)) = (&e, cli.command.single_file())
                && let Some(sp) = y.span()
            {
                // The tree ends before the blocks; reading a little past the error's line is enough.
                let head = report::file_head(path, sp.index.saturating_mul(4).saturating_add(64 * 1024));
                if let Some(s) = report::snippet(&head, sp.line, sp.column) {
                    eprintln!("{s}");
                }
            }
            ExitCode::from(1)
        }
    }
}
