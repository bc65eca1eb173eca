//! `info`: the tree with types, shapes, datatypes and short values.

use std::fmt::Write as _;
use std::process::ExitCode;

use crate::report;

use asdf::{Node, NodeKind};

use crate::schemas::read_options;

/// Print the tree with types, shapes, datatypes and short values.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
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
        info(
            &self.file,
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

struct Printer<'a> {
    doc: &'a asdf::Document,
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
        let n = self.doc.resolve(n);
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
            if let Ok(a) = asdf::NdArray::from_node(n, self.doc) {
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
                h.datatype().unwrap_or("?")
            );
        }
    }
    let mut p = Printer {
        doc: file.document()?,
        lines: Vec::new(),
        show_values,
        stack: Vec::new(),
        shown: std::collections::HashSet::new(),
    };
    p.node("root", &p.doc.root, "", true, true);
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
    for w in file.warnings() {
        report::warning(&w.to_string());
    }
    Ok(ExitCode::SUCCESS)
}
