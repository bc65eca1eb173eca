//! `asdf-cli`: inspect ASDF files. So far `info` (the tree with types, shapes and values, like
//! `asdftool info`) and `validate`.
//!
//! Exit codes: 0 fine, 1 invalid or failed, 2 usage.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fmt::Write as _;
use std::process::ExitCode;

use asdf::{AsdfFile, Node, NodeKind, OpenOptions};
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "asdf-cli", version, about = "Inspect ASDF files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
    /// Validate the tree against the schemas of its tags; exit 1 listing every violation.
    Validate {
        /// The ASDF file.
        file: std::path::PathBuf,
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
    /// Write the tree as pure YAML, every array inlined.
    #[command(name = "to-yaml", alias = "to_yaml")]
    ToYaml {
        /// The ASDF file.
        file: std::path::PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
}

fn type_name(n: &Node) -> String {
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

fn is_ndarray(n: &Node) -> bool {
    n.tag.as_deref().is_some_and(|t| t.contains("core/ndarray-"))
}

struct Printer<'a> {
    file: &'a AsdfFile,
    lines: Vec<String>,
    show_values: bool,
}

impl Printer<'_> {
    fn node(&mut self, label: &str, n: &Node, prefix: &str, last: bool, root: bool) {
        let n = self.file.document().resolve(n);
        let branch = if root {
            ""
        } else if last {
            "└─"
        } else {
            "├─"
        };
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
        match &n.kind {
            NodeKind::Mapping(m) => {
                let k = m.entries.len();
                for (i, (key, v)) in m.entries.iter().enumerate() {
                    let label = key.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
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
    }
}

fn info(
    path: &std::path::Path,
    max_rows: usize,
    max_cols: usize,
    show_values: bool,
    show_blocks: bool,
) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_with(path, OpenOptions::default().validate(false))?;
    let mut p = Printer {
        file: &file,
        lines: Vec::new(),
        show_values,
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
        let r = file.blocks();
        println!("{} block(s)", r.block_count());
        for i in 0..r.block_count() {
            let b = r.block(i)?;
            println!(
                "  block {i} @ {}: compression {}, allocated {}, used {}, data {}{}",
                b.offset,
                b.compression(),
                b.header.allocated_size,
                b.stored_len,
                b.data_len(),
                if b.header.is_streamed() { ", streamed" } else { "" }
            );
        }
    }
    for w in file.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(path: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_with(path, OpenOptions::default().validate(false))?;
    let report = file.validate()?;
    for w in file.warnings() {
        eprintln!("warning: {w}");
    }
    if report.is_valid() {
        println!("{}: valid", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    for v in &report.violations {
        println!("{v}");
    }
    println!("{}: {} violation(s)", path.display(), report.violations.len());
    Ok(ExitCode::from(1))
}

fn verify(path: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_with(path, OpenOptions::default().validate(false))?;
    let r = file.blocks();
    let mut problems = Vec::new();
    for i in 0..r.block_count() {
        match r.read_data(i) {
            Ok(_) => {}
            Err(e) => problems.push(format!("block {i}: {e}")),
        }
        match r.verify_checksum(i) {
            Ok(s) => println!("block {i}: checksum {s:?}"),
            Err(e) => problems.push(format!("block {i}: {e}")),
        }
    }
    for p in ndarrays(file.tree(), "") {
        if let Err(e) = file.array(&p) {
            problems.push(format!("{p}: {e}"));
        }
    }
    for w in file.warnings() {
        eprintln!("warning: {w}");
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

fn ndarrays(n: &Node, at: &str) -> Vec<String> {
    if is_ndarray(n) {
        return vec![at.to_owned()];
    }
    match &n.kind {
        NodeKind::Mapping(m) => m
            .entries
            .iter()
            .flat_map(|(k, v)| {
                let key = k
                    .as_scalar()
                    .map(|s| s.text.replace('~', "~0").replace('/', "~1"))
                    .unwrap_or_default();
                ndarrays(v, &format!("{at}/{key}"))
            })
            .collect(),
        NodeKind::Sequence(s) => s
            .items
            .iter()
            .enumerate()
            .flat_map(|(i, v)| ndarrays(v, &format!("{at}/{i}")))
            .collect(),
        _ => Vec::new(),
    }
}

fn label(name: &str) -> Option<asdf::Label> {
    let l = asdf::Label::from_name(name)?;
    let known = [
        asdf::Label::NONE,
        asdf::Label::ZLIB,
        asdf::Label::BZP2,
        asdf::Label::LZ4,
        asdf::Label::ZSTD,
        asdf::Label::LZ4F,
        asdf::Label::BLSC,
        asdf::Label::BLS2,
    ];
    known.contains(&l).then_some(l)
}

fn rewrite(path: &std::path::Path, out: &std::path::Path, compression: Option<&str>) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_with(path, OpenOptions::default().validate(false))?;
    let c = match compression {
        None => asdf::Compression::Keep,
        Some(name) => match label(name) {
            Some(l) => asdf::Compression::All(l),
            None => {
                eprintln!("error: unknown compression `{name}` (zlib, bzp2, lz4, zstd, lz4f, blsc, bls2, none)");
                return Ok(ExitCode::from(2));
            }
        },
    };
    file.write_to(out, &asdf::WriteOptions::default().validate(false).compression(c))?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

fn to_yaml(path: &std::path::Path, out: &std::path::Path) -> Result<ExitCode, asdf::Error> {
    let file = asdf::open_with(path, OpenOptions::default().validate(false))?;
    let mut doc = file.document().clone();
    for p in ndarrays(file.tree(), "") {
        let a = file.array(&p)?;
        let node = asdf_yaml_pointer_get(&doc, &p);
        let tag = node.and_then(|n| n.tag.clone()).unwrap_or_default();
        let inline = asdf::NdArray::inline(a.datatype, &a.shape, &a.elements).to_node(&tag);
        let _ = asdf::set_node(&mut doc, &p, inline);
    }
    let text = asdf::emit_yaml(&doc)?;
    let mut bytes = b"#ASDF 1.0.0\n".to_vec();
    bytes.extend(format!("#ASDF_STANDARD {}\n", file.standard_version()).into_bytes());
    bytes.extend(text);
    std::fs::write(out, bytes).map_err(|source| asdf::Error::Io {
        path: out.to_path_buf(),
        source,
    })?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

fn asdf_yaml_pointer_get<'a>(doc: &'a asdf::Document, p: &str) -> Option<&'a Node> {
    asdf::get_node(doc, p)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.command {
        Command::Info {
            file,
            max_rows,
            max_cols,
            no_show_values,
            show_blocks,
            ..
        } => info(file, *max_rows, *max_cols, !no_show_values, *show_blocks),
        Command::Validate { file } => validate(file),
        Command::Verify { file } => verify(file),
        Command::Defragment {
            file,
            output,
            compression,
        } => rewrite(file, output, compression.as_deref()),
        Command::Explode { file, output } => {
            asdf::open_with(file, OpenOptions::default().validate(false)).and_then(|f| {
                let files = f.write_exploded(output, &asdf::WriteOptions::default().validate(false))?;
                for p in files {
                    println!("wrote {}", p.display());
                }
                Ok(ExitCode::SUCCESS)
            })
        }
        Command::Implode { file, output } => rewrite(file, output, None),
        Command::ToYaml { file, output } => to_yaml(file, output),
    };
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
