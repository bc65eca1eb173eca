//! How messages look: color on a terminal (not with `NO_COLOR`), and the YAML line with a caret
//! under the place an error points at.

use std::io::IsTerminal;

/// Whether standard error is a terminal that wants color.
pub fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `error: message`, with `error` in red on a terminal.
pub fn error(msg: &str) {
    if color() {
        eprintln!("\x1b[1;31merror\x1b[0m: {msg}");
    } else {
        eprintln!("error: {msg}");
    }
}

/// `warning: message`, with `warning` in yellow on a terminal.
pub fn warning(msg: &str) {
    if color() {
        eprintln!("\x1b[1;33mwarning\x1b[0m: {msg}");
    } else {
        eprintln!("warning: {msg}");
    }
}

/// Line `line` (0-based) of `text` with a caret under character `column` (0-based), indented,
/// or `None` when the text has no such line.
pub fn snippet(text: &[u8], line: u32, column: u32) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let l = text.lines().nth(usize::try_from(line).ok()?)?;
    let lead: String = l
        .chars()
        .take(usize::try_from(column).ok()?)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let shown: String = l.chars().take(200).collect();
    Some(format!("  {:>5} | {shown}\n        | {lead}^", line + 1))
}

/// The start of the file at `path`: its header, comments and tree (up to `end`), for snippets.
pub fn file_head(path: &std::path::Path, end: u64) -> Vec<u8> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(end).read_to_end(&mut buf);
    }
    buf
}

/// A progress bar on standard error (indicatif: drawn only on a terminal), shown once the
/// work has taken more than a second; cleared when done.
pub struct Bar {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Bar {
    pub fn new(what: &str) -> Self {
        let bar = indicatif::ProgressBar::hidden();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})") {
            bar.set_style(style.progress_chars("#>-"));
        }
        bar.set_message(what.to_owned());
        Self {
            bar,
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Shows `done` of `total`.
    pub fn update(&self, done: usize, total: usize) {
        use std::sync::atomic::Ordering;
        if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() >= std::time::Duration::from_secs(1) {
            self.shown.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }

    /// Clears the bar, if it was drawn.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
