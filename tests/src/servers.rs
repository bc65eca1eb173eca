//! The range-counting HTTP server of `tests/servers` (Python's standard library only), on
//! loopback, for the remote and browser tests.

use std::io::BufRead as _;
use std::process::{Command, Stdio};

/// The range server (tests/servers/range_server.py, run by `python`) over `dir`, and its port.
///
/// # Panics
/// When the server does not start.
#[allow(clippy::unwrap_used)]
pub fn serve(python: impl AsRef<std::ffi::OsStr>, dir: &std::path::Path) -> (std::process::Child, String) {
    serve_with(python, dir, &[])
}

/// The range server over `dir` that also takes writes (`PUT`), and its port.
///
/// # Panics
/// When the server does not start.
pub fn serve_writable(python: impl AsRef<std::ffi::OsStr>, dir: &std::path::Path) -> (std::process::Child, String) {
    serve_with(python, dir, &["--writable"])
}

#[allow(clippy::unwrap_used)]
fn serve_with(
    python: impl AsRef<std::ffi::OsStr>,
    dir: &std::path::Path,
    flags: &[&str],
) -> (std::process::Child, String) {
    let root = asdf_testdata::workspace_root();
    let mut server = Command::new(python)
        .arg(root.join("tests/servers/range_server.py"))
        .arg(dir)
        .args(flags)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.split_whitespace().nth(1).unwrap().to_string();
    (server, port)
}

/// Stops the server, then passes on the test's panic if it had one.
pub fn stop(server: &mut std::process::Child, result: std::thread::Result<()>) {
    let _ = server.kill();
    let _ = server.wait();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
