//! Standard output and error that a closed reader cannot crash: the first broken pipe ends
//! that stream's output quietly (the command finishes with its usual exit code); other write
//! errors are ignored as `print!` would not be able to report them either.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

fn put(gone: &AtomicBool, r: std::io::Result<()>) {
    if let Err(e) = r
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        gone.store(true, Ordering::Relaxed);
    }
}

/// `print!` to standard output.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    if !STDOUT_GONE.load(Ordering::Relaxed) {
        put(&STDOUT_GONE, std::io::stdout().lock().write_fmt(args));
    }
}

/// `eprint!` to standard error.
pub fn stderr(args: std::fmt::Arguments<'_>) {
    if !STDERR_GONE.load(Ordering::Relaxed) {
        put(&STDERR_GONE, std::io::stderr().lock().write_fmt(args));
    }
}

/// Raw bytes to standard output, flushed; a broken pipe is not an error.
///
/// # Errors
/// Other write errors (a full disk behind a redirection).
pub fn stdout_bytes(bytes: &[u8]) -> std::io::Result<()> {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        r => r,
    }
}

/// Standard output as an `io::Write` whose broken pipe is not an error (see [`stdout_bytes`]).
#[derive(Debug)]
pub struct Stdout;

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        stdout_bytes(buf).map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
