//! `asdf-cli`: inspect, check, compare and rewrite ASDF files (asdftool's commands and more).
//!
//! Exit codes: 0 fine, 1 invalid or failed, 2 usage. One module per command, each an
//! `Args` struct with `run`; this file parses and dispatches.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

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

mod convert;
mod diff;
mod edit;
mod get;
mod info;
mod many;
mod numbers;
mod out;
mod output;
mod preview;
mod report;
mod rewrite;
mod schemas;
mod search;
mod to_json;
mod to_yaml;
mod validate;
mod verify;
mod wcs;

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
    /// Which other files a file may make this program read (the external blocks of exploded
    /// arrays, Zarr directory stores): `inside` its folder only, by relative paths, links
    /// resolved (the default: a file cannot make its reader open `/etc/passwd`); `any` local
    /// path (absolute paths and `..` too, as Python asdf follows them; for files you trust);
    /// `none`. (`$ref`s are not followed: the tree is read as written, as Python asdf opens it;
    /// the Rust and Python libraries resolve them on request.)
    #[arg(long, value_name = "POLICY", global = true, value_parser = ["inside", "any", "none"])]
    references: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Info(info::Args),
    Validate(validate::Args),
    Verify(verify::Args),
    #[command(alias = "defrag")]
    Defragment(rewrite::Defragment),
    Explode(rewrite::Explode),
    Implode(rewrite::Implode),
    #[command(name = "to-yaml", alias = "to_yaml")]
    ToYaml(to_yaml::Args),
    #[command(name = "to-json", alias = "to_json")]
    ToJson(to_json::Args),
    Convert(convert::Args),
    Diff(diff::Args),
    Search(search::Args),
    Get(get::Args),
    Preview(preview::Args),
    Edit(edit::Args),
    Wcs(wcs::Args),
    Tags(schemas::Tags),
    /// List the ids of every schema known (this build's, and those given).
    Schemas,
    /// List the extension manifests known (this build's, and those given).
    Extensions,
}

impl Command {
    /// The one file the command reads, when there is exactly one (for error snippets).
    fn single_file(&self) -> Option<&std::path::Path> {
        match self {
            Command::Info(a) => a
                .files
                .first()
                .filter(|_| a.files.len() == 1)
                .map(std::path::PathBuf::as_path),
            Command::Validate(a) => Some(&a.file),
            Command::Verify(a) => a
                .files
                .first()
                .filter(|_| a.files.len() == 1)
                .map(std::path::PathBuf::as_path),
            Command::Defragment(a) => Some(&a.file),
            Command::Explode(a) => Some(&a.file),
            Command::Implode(a) => Some(&a.file),
            Command::ToYaml(a) => Some(&a.file),
            Command::ToJson(a) => Some(&a.file),
            Command::Convert(a) => Some(&a.file),
            Command::Search(a) => Some(&a.file),
            Command::Get(a) => Some(&a.file),
            Command::Preview(a) => Some(&a.file),
            Command::Edit(a) => Some(&a.file),
            Command::Wcs(a) => Some(&a.file),
            Command::Diff(_) | Command::Tags(_) | Command::Schemas | Command::Extensions => None,
        }
    }
}

fn main() -> ExitCode {
    // The upload guard (see `asdf_remote::set_upload_guard`): started by this program for each
    // multipart upload, it aborts the upload when this program is killed before it settles.
    if std::env::args_os().nth(1).is_some_and(|a| a == "__upload-guard") {
        return upload_guard();
    }
    if let Ok(exe) = std::env::current_exe() {
        asdf::remote::set_upload_guard(Some(vec![exe.into_os_string(), "__upload-guard".into()]));
    }
    let cli = Cli::parse();
    // An interrupt (Ctrl-C, SIGTERM) during an upload to object storage aborts the upload
    // (its parts deleted, nothing written) and then ends the program; otherwise it ends the
    // program at once, as without a handler, leaving no temporary file behind.
    let _ = ctrlc::set_handler(|| {
        if asdf::remote::uploading() {
            asdf::remote::cancel_uploads();
        } else {
            // No destructor runs on exit: the temporaries of unfinished writes are removed
            // here (the targets are untouched).
            asdf::remove_unfinished_temporaries();
            std::process::exit(130);
        }
    });
    let policy = match cli.references.as_deref() {
        Some("any") => asdf::ReferencePolicy::AnyLocalPath,
        Some("none") => asdf::ReferencePolicy::None,
        _ => asdf::ReferencePolicy::RelativeOnly,
    };
    let _ = schemas::REFERENCES.set(policy);
    let custom_schema = match &cli.command {
        Command::Validate(a) => a.schema.as_deref(),
        _ => None,
    };
    let custom = match schemas::load_schemas(&cli.schema_dir, cli.python_resources.as_deref(), custom_schema) {
        Ok(c) => c,
        Err(e) => {
            report::error(&e.to_string());
            return ExitCode::from(1);
        }
    };
    let r = match &cli.command {
        Command::Info(a) => a.run(),
        Command::Validate(a) => a.run(custom.as_deref()),
        Command::Verify(a) => a.run(),
        Command::Defragment(a) => a.run(),
        Command::Explode(a) => a.run(),
        Command::Implode(a) => a.run(),
        Command::ToYaml(a) => a.run(),
        Command::ToJson(a) => a.run(),
        Command::Convert(a) => a.run(),
        Command::Diff(a) => a.run(),
        Command::Search(a) => a.run(),
        Command::Get(a) => a.run(),
        Command::Preview(a) => a.run(),
        Command::Edit(a) => a.run(),
        Command::Wcs(a) => a.run(),
        Command::Tags(a) => a.run(),
        Command::Schemas => schemas::list_schemas(),
        Command::Extensions => schemas::list_extensions(),
    };
    // An interrupt that came while an upload was finishing (its completion sent: too late to
    // stop it) is said, and the exit status is an interrupt's, as when it stops an upload.
    let interrupted = asdf::remote::uploads_cancelled();
    if interrupted && r.is_ok() {
        eprintln!(
            "asdf-cli: interrupted, but too late to stop the upload: it had completed, and the object was written"
        );
    }
    let code = match r {
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
    };
    if interrupted { ExitCode::from(130) } else { code }
}

/// The body of `asdf-cli __upload-guard` (not listed in `--help`: started by this program).
fn upload_guard() -> ExitCode {
    match asdf::remote::run_upload_guard(std::io::stdin().lock(), std::io::stdout().lock()) {
        // The writer reports the store's answer itself.
        Ok(asdf::remote::GuardOutcome::Settled | asdf::remote::GuardOutcome::NotCreated) => ExitCode::SUCCESS,
        Ok(asdf::remote::GuardOutcome::Aborted) => {
            eprintln!("asdf-cli: the writer ended before its upload did; the upload was aborted (nothing written)");
            ExitCode::SUCCESS
        }
        Err(e) => {
            report::error(&format!("the upload guard could not abort the upload: {e}"));
            ExitCode::from(1)
        }
    }
}
