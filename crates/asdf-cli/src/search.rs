//! `search`: nodes whose key, type or value match.

use crate::numbers::{Number, number, numbers_equal};
use asdf::{AsdfFile, Node, NodeKind, Value};
use regex::Regex;

/// What to look for; every given criterion must hold.
pub struct Query {
    /// Regex on the node's key (mapping key, or index for sequence items).
    pub key: Option<Regex>,
    /// Regex on the node's type: its tag (full or short, `core/ndarray-1.1.0`) or YAML type
    /// (`dict`, `list`, `str`, `int`, `float`, `bool`, `null`).
    pub type_: Option<Regex>,
    /// The scalar's value: equal text, or equal number when both are numbers (integers
    /// compared exactly, whatever their size).
    pub value: Option<String>,
}

/// One hit: pointer, type and a short value.
pub struct Hit {
    pub pointer: String,
    pub type_: String,
    pub value: Option<String>,
}

/// Hands each hit to `on_hit` as it is found (nothing is collected); returns how many, and a
/// warning when aliases were too many to follow all.
pub fn search(file: &AsdfFile, q: &Query, on_hit: &mut dyn FnMut(&Hit)) -> Result<(u64, Option<String>), asdf::Error> {
    let mut w = Walk { q, on_hit, count: 0 };
    let walked = asdf::walk::Walker::default().walk(file.document(), &mut w);
    Ok((w.count, walked.warning()))
}

/// The search's visitor: hits go to `on_hit` as they are found.
struct Walk<'a> {
    q: &'a Query,
    on_hit: &'a mut dyn FnMut(&Hit),
    count: u64,
}

fn type_names(n: &Node) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = &n.tag {
        v.push(t.to_string());
        if let Some(s) = t.strip_prefix("tag:stsci.edu:asdf/") {
            v.push(s.to_owned());
        }
    }
    v.push(
        match &n.kind {
            NodeKind::Mapping(_) => "dict",
            NodeKind::Sequence(_) => "list",
            NodeKind::Alias(_) => "alias",
            NodeKind::Scalar(s) => s.value.kind_name(),
        }
        .to_owned(),
    );
    v
}

fn value_matches(n: &Node, want: &str) -> bool {
    let Some(s) = n.as_scalar() else { return false };
    if s.text == want {
        return true;
    }
    // The query is read as a plain YAML scalar would be (`0x1F`, `1_000`, `.inf`, `null`,
    // `yes`), else as a number in the common notation YAML 1.1 reads as a string (`1e3`).
    let resolved = asdf::yaml::resolve::resolve_plain(want).ok();
    match (&s.value, &resolved) {
        (Value::Null, Some(Value::Null)) => return true,
        (Value::Bool(a), Some(Value::Bool(b))) => return a == b,
        _ => {}
    }
    let wanted = resolved
        .as_ref()
        .and_then(number)
        .or_else(|| want.parse::<f64>().ok().map(Number::Float));
    match (number(&s.value), wanted) {
        (Some(x), Some(y)) => numbers_equal(&x, &y),
        _ => false,
    }
}

impl<'a> asdf::walk::Visitor<'a> for Walk<'_> {
    fn enter(&mut self, at: &asdf::walk::At<'_, 'a>) -> asdf::Visit {
        let q = self.q;
        let n = at.node();
        let ok = q.key.as_ref().is_none_or(|r| at.depth() > 0 && r.is_match(&at.label()))
            && q.type_
                .as_ref()
                .is_none_or(|r| type_names(n).iter().any(|t| r.is_match(t)))
            && q.value.as_deref().is_none_or(|v| value_matches(n, v));
        if ok {
            // The pointer that names exactly this node (`~e<i>` for a key whose text names
            // another entry), so that `get` reads what `search` found.
            let ptr = at.pointer_exact();
            (self.on_hit)(&Hit {
                pointer: if ptr.is_empty() { "/".to_owned() } else { ptr },
                type_: crate::info::type_name(n),
                value: n.as_scalar().map(|s| s.text.chars().take(60).collect()),
            });
            self.count += 1;
        }
        if crate::info::is_ndarray(n) {
            asdf::Visit::SkipChildren
        } else {
            asdf::Visit::Continue
        }
    }
}

/// List the nodes whose key, type and value match (every option given must match).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Regular expression on the key (or sequence index).
    #[arg(long)]
    key: Option<String>,
    /// Regular expression on the type: tag (`core/ndarray-1.1.0`, full or short) or YAML
    /// type (dict, list, str, int, float, bool, null, timestamp).
    #[arg(long = "type")]
    type_: Option<String>,
    /// The value: same text, or same number (integers compared exactly at any size; a
    /// float equals an integer only when it is that integer exactly).
    #[arg(long)]
    value: Option<String>,
}

impl Args {
    pub fn run(&self) -> Result<std::process::ExitCode, asdf::Error> {
        run_search(
            &self.file,
            self.key.as_deref(),
            self.type_.as_deref(),
            self.value.clone(),
        )
    }
}

fn run_search(
    path: &std::path::Path,
    key: Option<&str>,
    type_: Option<&str>,
    value: Option<String>,
) -> Result<std::process::ExitCode, asdf::Error> {
    let re = |s: Option<&str>, what: &str| -> Result<Option<regex::Regex>, String> {
        s.map(|s| regex::Regex::new(s).map_err(|e| format!("--{what}: {e}")))
            .transpose()
    };
    let q = match (re(key, "key"), re(type_, "type")) {
        (Ok(key), Ok(type_)) => Query { key, type_, value },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return Ok(std::process::ExitCode::from(2));
        }
    };
    let file = asdf::Open::path_or_url(path)
        .options(crate::schemas::read_options())
        .open()?;
    let (hits, warning) = search(&file, &q, &mut |h| match &h.value {
        Some(v) => println!("{} ({}): {}", h.pointer, h.type_, v.replace('\n', "\\n")),
        None => println!("{} ({})", h.pointer, h.type_),
    })?;
    if let Some(w) = warning {
        crate::report::warning(&w);
    }
    Ok(if hits == 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
