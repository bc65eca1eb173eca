//! `info`: the tree with types, shapes, datatypes and short values.

use std::fmt::Write as _;
use std::process::ExitCode;

use crate::report;

use asdf::{Node, NodeKind};

use crate::schemas::read_options;

/// Print the tree with types, shapes, datatypes and short values.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or files, folders, prefixes ending in `/`: a line each, read several
    /// at once).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<std::path::PathBuf>,
    /// Files read at once (several files only), 1 to 1024.
    #[arg(long, short = 'j', default_value_t = 8, value_parser = crate::many::parse_jobs)]
    pub jobs: usize,
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
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        if crate::many::is_many(&self.files) {
            return info_many(&self.files, self.jobs);
        }
        info(
            &self.files[0],
            self.max_rows,
            self.max_cols,
            !self.no_show_values,
            self.show_blocks,
        )
    }
}

pub fn type_name(n: &Node) -> String {
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

pub fn is_ndarray(n: &Node) -> bool {
    n.tag.as_deref().is_some_and(asdf::is_ndarray_tag)
}

/// The tree printer: one line per node, aliases followed once (a second alias to a node is a
/// line saying so: an alias bomb costs a line per alias, not per expansion).
struct Printer<'d> {
    doc: &'d asdf::Document,
    /// The lines kept (the first `max_rows`, all when it is 0), and how many there were.
    lines: Vec<String>,
    total: usize,
    max_rows: usize,
    show_values: bool,
    /// The prefix of the children of each node entered and not yet left.
    prefixes: Vec<String>,
}

impl Printer<'_> {
    fn push(&mut self, line: String) {
        self.total += 1;
        if self.max_rows == 0 || self.lines.len() < self.max_rows {
            self.lines.push(line);
        }
    }

    /// The start of the line of the node `at`: the prefix, the branch and the label.
    fn head(&self, at: &asdf::walk::At<'_, '_>) -> String {
        let prefix = self.prefixes.last().map_or("", String::as_str);
        if at.depth() == 0 {
            return "root".to_owned();
        }
        let branch = if at.is_last() { "└─" } else { "├─" };
        let label = match at.step() {
            Some(asdf::Step::Item(i)) => format!("[{i}]"),
            _ => at.label(),
        };
        format!("{prefix}{branch}{label}")
    }
}

impl<'a> asdf::walk::Visitor<'a> for Printer<'_> {
    fn enter(&mut self, at: &asdf::walk::At<'_, 'a>) -> asdf::Visit {
        let n = at.node();
        let mut line = format!("{} ({})", self.head(at), type_name(n));
        let child_prefix = match (at.depth(), self.prefixes.last()) {
            (0, _) | (_, None) => String::new(),
            (_, Some(p)) => format!("{p}{}", if at.is_last() { "  " } else { "│ " }),
        };
        self.prefixes.push(child_prefix);
        if is_ndarray(n) {
            if let Ok(a) = asdf::NdArray::from_node(n, self.doc) {
                let shape = match &a.shape {
                    Some(s) => format!(
                        "[{}]",
                        s.iter()
                            .map(|d| match d {
                                asdf::Dim::Fixed(k) => k.to_string(),
                                asdf::Dim::Streamed => "*".to_owned(),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None => "inline".to_owned(),
                };
                let dt = a
                    .datatype
                    .as_ref()
                    .map_or_else(|| "inferred".to_owned(), ToString::to_string);
                let _ = write!(line, ": shape={shape}, datatype={dt}");
            }
            self.push(line);
            return asdf::Visit::SkipChildren;
        }
        if n.tag.as_deref().is_some_and(asdf::is_zarr_tag) {
            // A chunked array (asdf-zarr): its layout, not its metadata's keys.
            if let Ok(c) = asdf::ChunkLayout::from_node(self.doc, n) {
                let list = |v: &[usize]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                let _ = write!(
                    line,
                    ": shape=[{}], datatype={}, chunks=[{}], compressor={}",
                    list(&c.shape),
                    c.datatype,
                    list(&c.chunks),
                    c.compressor.as_deref().unwrap_or("none")
                );
            } else if let Some(store) = n.get("store") {
                // Chunks and metadata in a store beside the file.
                let text = |k: &str| store.get(k).and_then(asdf::Node::as_str).unwrap_or("?").to_owned();
                let _ = write!(line, ": chunks in a {} at {}", text("type_string"), text("path"));
            }
            self.push(line);
            return asdf::Visit::SkipChildren;
        }
        if n.tag.as_deref().is_some_and(asdf::is_chunked_ndarray_tag) {
            // ASDF.jl's chunked ndarray: shape, datatype and how many chunks.
            let shape = n
                .get("shape")
                .and_then(asdf::Node::as_sequence)
                .map(|s| {
                    s.items
                        .iter()
                        .map(|d| d.as_i64().map_or("?".to_owned(), |d| d.to_string()))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let dt = n.get("datatype").and_then(asdf::Node::as_str).unwrap_or("?");
            let chunks = n
                .get("chunks")
                .and_then(asdf::Node::as_sequence)
                .map_or(0, |s| s.items.len());
            let _ = write!(
                line,
                ": shape=[{shape}], datatype={dt}, {chunks} chunks (ASDF.jl's chunked ndarray)"
            );
            self.push(line);
            return asdf::Visit::SkipChildren;
        }
        // Typed values of the standard's tags read as what they are.
        if n.tag
            .as_deref()
            .is_some_and(|t| asdf::core_types::typed::tag_names(t, "unit/quantity"))
            && let Ok(q) = <asdf::core_types::astro::Quantity as asdf::core_types::typed::Typed>::from_node(n)
        {
            let _ = write!(line, ": {q}");
        }
        if let NodeKind::Scalar(s) = &n.kind
            && self.show_values
        {
            let v: String = s.text.replace('\n', "\\n").chars().take(60).collect();
            let _ = write!(line, ": {v}");
        }
        self.push(line);
        asdf::Visit::Continue
    }

    fn leave(&mut self, _: &asdf::walk::At<'_, 'a>) {
        self.prefixes.pop();
    }

    fn cut(&mut self, at: &asdf::walk::At<'_, 'a>, why: asdf::walk::Cut) -> asdf::Visit {
        let head = self.head(at);
        let anchor = at.alias().map(|a| a.to_string()).unwrap_or_default();
        self.push(match why {
            asdf::walk::Cut::Cycle => format!("{head} (alias *{anchor}, back to an ancestor)"),
            asdf::walk::Cut::Depth => format!(
                "{head} (… nested deeper than {} levels, not shown)",
                asdf::walk::MAX_DEPTH
            ),
            _ => format!("{head} (alias *{anchor}, shown above)"),
        });
        asdf::Visit::Continue
    }
}

/// One file's line: its standard, size, blocks and arrays (pointer, datatype, shape).
fn summary_line(target: &std::path::PathBuf) -> Result<String, String> {
    let file = asdf::Open::path_or_url(target)
        .options(read_options())
        .open()
        .map_err(|e| e.to_string())?;
    let size = file.source().layout().get_ref().size().unwrap_or(0);
    let arrays = file.array_pointers();
    let mut line = format!(
        "ASDF Standard {}, {}, {} blocks, {} arrays",
        file.standard_version(),
        crate::many::bytes(size),
        file.source().layout().block_count(),
        arrays.len()
    );
    for p in arrays.iter().take(4) {
        if let Ok(a) = file.array(p) {
            let _ = write!(line, "; {p} {} {:?}", a.datatype(), a.shape());
        }
    }
    if arrays.len() > 4 {
        line.push_str("; ...");
    }
    Ok(line)
}

fn info_many(targets: &[std::path::PathBuf], jobs: usize) -> Result<ExitCode, asdf::Error> {
    // The time the summary gives counts the listing of prefixes and folders too.
    let start = std::time::Instant::now();
    let found = crate::many::expand(targets)?;
    let others = found.others_note();
    let crate::many::Found { files, skipped, .. } = found;
    let results = crate::many::run_all(&files, jobs, "reading files", summary_line);
    let mut failed = 0;
    for (f, r) in files.iter().zip(&results) {
        let f = crate::many::show(f);
        match r {
            Ok(line) => println!("{f}: {line}"),
            Err(e) => {
                failed += 1;
                println!("{f}: error: {e}");
            }
        }
    }
    crate::many::print_skipped(&skipped);
    println!(
        "{} files: {} read, {failed} failed, {} skipped, in {:.1} s{others}",
        files.len() + skipped.len(),
        files.len() - failed,
        skipped.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(if failed == 0 && skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn info(
    path: &std::path::Path,
    max_rows: usize,
    max_cols: usize,
    show_values: bool,
    show_blocks: bool,
) -> Result<ExitCode, asdf::Error> {
    let file = asdf::Open::path_or_url(path).options(read_options()).open()?;
    if let Some(hdus) = file.source().fits_hdus() {
        // ASDF embedded in FITS: the HDUs beside the tree.
        println!("FITS file, {} HDU(s):", hdus.len());
        for h in hdus {
            let kind = match &h.kind {
                asdf::fits::HduKind::Primary => "PRIMARY".to_owned(),
                asdf::fits::HduKind::Image => "IMAGE".to_owned(),
                asdf::fits::HduKind::BinTable => "BINTABLE".to_owned(),
                asdf::fits::HduKind::Table => "TABLE".to_owned(),
                asdf::fits::HduKind::CompressedImage => "COMPRESSED IMAGE".to_owned(),
                other => format!("{other:?}"),
            };
            println!(
                "  {:>3} {:<10} ver {:<3} {:<16} shape {:?} {}",
                h.index,
                h.name.as_deref().unwrap_or("-"),
                h.ver,
                kind,
                h.shape(),
                // The values' type, as FITS readers give it (uint16 under BZERO 32768), or
                // the stored type of data scaled otherwise.
                h.value_datatype()
                    .map_or_else(|| format!("{} scaled", h.datatype().unwrap_or("?")), str::to_owned)
            );
        }
    }
    let doc = file.document();
    let mut p = Printer {
        doc,
        lines: Vec::new(),
        total: 0,
        max_rows,
        show_values,
        prefixes: Vec::new(),
    };
    asdf::walk::Walker::new(asdf::walk::Aliases::Once).walk(doc, &mut p);
    for l in &p.lines {
        let shown: String = if max_cols != 0 && l.chars().count() > max_cols {
            l.chars().take(max_cols.saturating_sub(1)).chain(['…']).collect()
        } else {
            l.clone()
        };
        println!("{shown}");
    }
    if p.total > p.lines.len() {
        println!(
            "Some nodes not shown ({} more lines; use --max-rows 0).",
            p.total - p.lines.len()
        );
    }
    if show_blocks {
        let r = file.source().layout();
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
    // The world coordinate systems (gwcs), with their frames.
    for pointer in asdf_wcs::WcsExt::wcs_pointers(&file) {
        match asdf_wcs::WcsExt::wcs(&file, &pointer) {
            Ok(w) => println!("{}", crate::wcs::describe(&pointer, &w).trim_end()),
            Err(e) => println!("WCS {pointer}: not evaluated: {e}"),
        }
    }
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    Ok(ExitCode::SUCCESS)
}
