//! The schemas every command reads with (`--schema-dir`, `--python-resources`), and the
//! commands that list what a build knows: `tags`, `schemas`, `extensions`.

use std::process::ExitCode;

use crate::report;

use asdf::OpenOptions;

/// List the tags of an ASDF Standard version (default 1.6.0) and their schemas.
#[derive(clap::Args, Debug)]
pub struct Tags {
    /// The standard version.
    #[arg(long, default_value = "1.6.0")]
    standard: String,
}

impl Tags {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        tags(&self.standard)
    }
}

/// `schemas`: the ids of every schema known (the build's, and those given).
pub fn list_schemas() -> Result<ExitCode, asdf::Error> {
    builtin_or_extra().map(|s| {
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
    })
}

/// `extensions`: the extension manifests known.
pub fn list_extensions() -> Result<ExitCode, asdf::Error> {
    builtin_or_extra().map(|s| {
        for m in s.manifests() {
            let std = m
                .standard
                .map(|(a, b, c)| format!(" (ASDF Standard {a}.{b}.{c})"))
                .unwrap_or_default();
            println!("{}{std}: {} tags, manifest {}", m.extension_uri, m.tags.len(), m.id);
        }
        ExitCode::SUCCESS
    })
}

/// The schemas of `--schema-dir` and `--python-resources`, when given (set once, in `main`).
pub static EXTRA_SCHEMAS: std::sync::OnceLock<Option<std::sync::Arc<asdf::AsdfSchemas>>> = std::sync::OnceLock::new();

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
pub fn builtin_or_extra() -> Result<std::sync::Arc<asdf::AsdfSchemas>, asdf::Error> {
    match EXTRA_SCHEMAS.get().cloned().flatten() {
        Some(s) => Ok(s),
        None => asdf::schemas(),
    }
}

/// The reference policy of `--references` (the library's default when not given).
pub static REFERENCES: std::sync::OnceLock<asdf::ReferencePolicy> = std::sync::OnceLock::new();

/// How every command opens its files: not validated (`validate` reports instead), with the
/// schemas of `--schema-dir` and `--python-resources` when given, and the reference policy of
/// `--references`. Mapping keys the standard does not allow (null, floats, timestamps) are
/// read as Python asdf reads them, with a warning (`validate` counts them as violations).
pub fn read_options() -> OpenOptions {
    let o = OpenOptions::default()
        .validate(false)
        .any_scalar_keys(true)
        .references(REFERENCES.get().copied().unwrap_or_default());
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

/// The schemas of `--schema-dir` and `--python-resources`, and `validate --schema`'s custom
/// schema among them (its id).
pub fn load_schemas(
    dirs: &[std::path::PathBuf],
    python: Option<&std::path::Path>,
    custom_schema: Option<&std::path::Path>,
) -> Result<Option<String>, asdf::Error> {
    let mut extra = extra_schemas(dirs, python)?;
    let mut custom = None;
    if let Some(p) = custom_schema {
        let schemas = match &mut extra {
            Some(s) => s,
            None => extra.insert(asdf::schemas_to_extend()?),
        };
        let text = std::fs::read(p).map_err(|source| asdf::Error::Io {
            path: p.to_path_buf(),
            source,
        })?;
        custom = Some(schemas.add_schema(&text).map_err(|source| asdf::Error::SchemaFile {
            path: p.to_path_buf(),
            source,
        })?);
    }
    let _ = EXTRA_SCHEMAS.set(extra.map(std::sync::Arc::new));
    Ok(custom)
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
