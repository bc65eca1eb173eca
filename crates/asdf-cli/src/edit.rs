//! `edit`: the tree in an editor, written back only if it parses and validates.

use std::io::Write as _;
use std::process::ExitCode;

use crate::report;
use crate::schemas::read_options;

/// Edit the tree in $VISUAL or $EDITOR (default vi); the result is parsed and validated, and
/// the file rewritten safely (a new file renamed over the old one) only if both pass.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file.
    pub file: std::path::PathBuf,
    /// Write the new tree over the old one when it fits in the old tree's space and padding
    /// (fast for big files: the blocks are not copied; not atomic), rewriting safely otherwise.
    #[arg(long)]
    in_place: bool,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        edit(&self.file, self.in_place)
    }
}

fn edit(path: &std::path::Path, in_place: bool) -> Result<ExitCode, asdf::Error> {
    let io = |p: &std::path::Path| {
        let p = p.to_path_buf();
        move |source| asdf::Error::Io { path: p, source }
    };
    let mut file = asdf::Open::path(path).options(read_options()).open()?;
    // The file is rewritten, staged; a file it refers to (an external block) never is.
    crate::output::refuse_inputs(&file, &[path.to_path_buf()], crate::output::Own::Rewritten)?;
    let original = match file.source().layout().tree_bytes() {
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
    let report = file.validate(None, None)?;
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
        file.write(path, &options).map(|_| None)
    };
    match written {
        Ok(Some(asdf::Update::InPlace { tree_bytes, room, .. })) => println!(
            "updated {} in place (tree {tree_bytes} of {room} bytes; blocks untouched)",
            path.display()
        ),
        Ok(Some(asdf::Update::Rewritten(why))) => println!("rewrote {} whole: {why}", path.display()),
        Ok(_) => println!("wrote {}", path.display()),
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
