//! `cargo xtask capi PREFIX [--debug]`: builds asdf-rs's C API (crates/asdf-capi, release
//! profile) and installs it as libasdf: `PREFIX/lib/libasdf.so.0.0.0` (with the links
//! `libasdf.so.0` and `libasdf.so`), `PREFIX/lib/libasdf.a`, `PREFIX/include/asdf/*.h` and
//! `PREFIX/lib/pkgconfig/libasdf.pc`. A program built for libasdf then builds with
//! `pkg-config --cflags --libs libasdf` unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// `capi PREFIX [--debug]`.
pub fn install(args: &[String]) -> Result<()> {
    let mut prefix = None;
    let mut profile = "release";
    for a in args {
        match a.as_str() {
            "--debug" => profile = "dev",
            p if prefix.is_none() => prefix = Some(PathBuf::from(p)),
            other => bail!("unknown argument {other}"),
        }
    }
    let prefix = prefix.context("usage: cargo xtask capi PREFIX [--debug]")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("workspace")?
        .to_path_buf();
    let st = Command::new(env!("CARGO"))
        .args(["build", "-p", "asdf-capi", "--lib", "--profile", profile])
        .current_dir(&root)
        .status()?;
    if !st.success() {
        bail!("building asdf-capi failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let built = target.join(if profile == "dev" { "debug" } else { "release" });
    let lib = prefix.join("lib");
    let include = prefix.join("include");
    std::fs::create_dir_all(lib.join("pkgconfig"))?;
    // The library under libasdf's soname, and the usual links.
    std::fs::copy(built.join("libasdf_capi.so"), lib.join("libasdf.so.0.0.0"))?;
    std::fs::copy(built.join("libasdf_capi.a"), lib.join("libasdf.a"))?;
    for link in ["libasdf.so.0", "libasdf.so"] {
        let l = lib.join(link);
        let _ = std::fs::remove_file(&l);
        std::os::unix::fs::symlink("libasdf.so.0.0.0", &l)?;
    }
    // The headers.
    let src = root.join("crates/asdf-capi/include/asdf");
    copy_tree(&src, &include.join("asdf"))?;
    let version = env!("CARGO_PKG_VERSION");
    let pc = format!(
        "prefix={}\nexec_prefix=${{prefix}}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\n\
         Name: libasdf\nDescription: asdf-rs's C API, with libasdf's names (reading and writing ASDF files)\n\
         Version: {version}\nLibs: -L${{libdir}} -lasdf\nLibs.private: -lstdc++ -lpthread -ldl -lm\nCflags: -I${{includedir}}\n",
        prefix.canonicalize()?.display()
    );
    std::fs::write(lib.join("pkgconfig/libasdf.pc"), pc)?;
    println!(
        "installed asdf-rs's C API as libasdf in {} (lib/libasdf.so.0.0.0, lib/libasdf.a, include/asdf, lib/pkgconfig/libasdf.pc)",
        prefix.display()
    );
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()))?;
        } else {
            std::fs::copy(&p, to.join(e.file_name()))?;
        }
    }
    Ok(())
}
