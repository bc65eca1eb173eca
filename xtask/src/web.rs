//! `cargo xtask web`: the browser viewer as a static folder, `target/web/`: the library built
//! for wasm32 (`crates/asdf-web`, profile `viewer`) beside the page's own files (`web/`). Serve
//! the folder with any static server that answers range requests, or open `index.html`
//! through one; nothing runs on a server.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The folder the viewer is built into.
pub fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/web")
}

pub fn web(_args: &[String]) -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = std::process::Command::new(&cargo)
        .current_dir(&root)
        .args([
            "build",
            "--quiet",
            "--package",
            "asdf-web",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "viewer",
        ])
        .status()?;
    if !status.success() {
        bail!(
            "building asdf-web for wasm32 failed ({status}); the target is installed with `rustup target add wasm32-unknown-unknown`"
        );
    }
    let out = out_dir();
    let wasm = root.join("target/wasm32-unknown-unknown/viewer/asdf_web.wasm");
    let bytes = std::fs::read(&wasm).with_context(|| format!("reading {}", wasm.display()))?;
    asdf_web::write_viewer(&out, &bytes, &root.join("web"))?;
    let size = std::fs::metadata(out.join("asdf_web.wasm"))?.len();
    println!(
        "the viewer is in {} (asdf_web.wasm: {:.2} MB); serve it, e.g. `python3 -m http.server -d target/web`, and open http://127.0.0.1:8000/, or open target/web/index.html as a file",
        out.display(),
        size as f64 / 1e6
    );
    Ok(())
}
