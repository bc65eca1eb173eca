//! The upload guard: a small process that outlives a killed writer and aborts its multipart
//! upload, so that not even `SIGKILL` leaves parts behind.
//!
//! A process cannot clean up after `SIGKILL`; another process can. When a guard command is
//! set ([`set_upload_guard`]: `asdf-cli` sets itself, the Python package its interpreter),
//! each multipart upload starts one, in its own process group (an interrupt sent to the
//! terminal's group does not reach it), and writes to its standard input what it needs: the
//! URL and the store settings (credentials travel through the pipe, never on a command line).
//! **The guard creates the upload** and answers its id on its standard output: so there is no
//! moment at which an upload exists that its guard does not know of (a writer that created the
//! upload itself and then told the guard could be killed between the two). When the upload
//! completes, or is aborted by the writer itself, the writer writes `done` and the guard
//! exits. When the pipe closes without `done` (the writer was killed, crashed, could not reach
//! the store to abort, or died before it read the id), the guard aborts the upload, with
//! retries; an upload that had completed meanwhile is left as it is (the store answers that
//! there is no such upload).
//!
//! What is left: a guard killed with its writer (a `SIGKILL` to both, a machine that stops),
//! and a creation whose answer was lost on the network (the store made an upload whose id
//! nobody learnt). A bucket's lifecycle rule (`AbortIncompleteMultipartUpload`) is the last
//! line there.
//!
//! The request is a few lines of text (no dependency for a format): `asdf-rs upload guard 2`,
//! then `url U`, `anonymous 0|1`, `setting KEY VALUE` lines and `end`, values with `\` and
//! newlines escaped. The guard answers `upload ID`, `failed MESSAGE` (one line, escaped) or
//! `nobucket` (the bucket does not exist: the writer says only that, not that its upload goes
//! unguarded); the writer later writes `done`, or nothing.

use crate::error::Error;
use crate::options::RemoteOptions;
use crate::store::{Built, build_typed};
use std::ffi::OsString;
use std::io::{BufRead, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The command started for each multipart upload (its program and arguments), if any.
static GUARD: Mutex<Option<Vec<OsString>>> = Mutex::new(None);

const FIRST_LINE: &str = "asdf-rs upload guard 2";

/// The guard's answer when the bucket does not exist (nothing to guard; the write says so).
const NO_BUCKET: &str = "nobucket";

/// Sets the command that guards each multipart upload of this process (see the module's
/// documentation), or none. The command must run [`run_upload_guard`] on its standard input:
/// `asdf-cli` does for `asdf-cli __upload-guard`.
pub fn set_upload_guard(command: Option<Vec<OsString>>) {
    let command = command.filter(|c| !c.is_empty());
    match GUARD.lock() {
        Ok(mut g) => *g = command,
        Err(poisoned) => *poisoned.into_inner() = command,
    }
}

fn guard_command() -> Option<Vec<OsString>> {
    match GUARD.lock() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// A started guard: told `done` when the upload has settled, otherwise (dropped, or the
/// process killed) it aborts the upload.
pub(crate) struct Running {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
}

/// Starts a guard for a multipart upload to `url`, if a guard command is set, and has it
/// create the upload: the guard and the upload's id. `None` when no guard is set, or it could
/// not be started or could not create the upload (a warning): the writer
/// then creates the upload itself, unguarded, and meets the store's own answer.
pub(crate) fn start(url: &str, opts: &RemoteOptions) -> Option<(Running, String)> {
    let command = guard_command()?;
    let warn = |why: &str| {
        crate::warn::warn(&format!(
            "the upload guard ({}) {}: a killed upload of {} would leave its parts",
            command[0].to_string_lossy(),
            crate::redact(why),
            crate::redact(url)
        ));
    };
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            warn(&format!("could not be started ({e})"));
            return None;
        }
    };
    let mut request = format!(
        "{FIRST_LINE}\nurl {}\nanonymous {}\n",
        escape(url),
        u8::from(opts.anonymous)
    );
    for (k, v) in &opts.settings {
        request.push_str(&format!("setting {} {}\n", escape(&k.replace(' ', "_")), escape(v)));
    }
    request.push_str("end\n");
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let written = stdin.as_mut().is_some_and(|s| {
        // The request fits the pipe's buffer: written at once.
        s.write_all(request.as_bytes()).and_then(|()| s.flush()).is_ok()
    });
    // The answer: the first line that is one (a line the interpreter or a library prints on
    // the way is passed over), read on the I/O runtime's blocking pool so that a guard that
    // hangs does not hang the write: after the store's deadline and half a minute more, the
    // write goes on unguarded.
    let (tx, rx) = std::sync::mpsc::channel();
    // Without a reader (the request could not be written: the guard is gone) the channel is
    // closed at once: no wait.
    if let (true, Some(out)) = (written, stdout) {
        in_background(move || {
            // At most 1 MiB of it: a guard that prints without end is no answer.
            for line in std::io::BufReader::new(std::io::Read::take(out, 1 << 20)).lines() {
                let Ok(line) = line else { break };
                if line.starts_with("upload ") || line.starts_with("failed ") || line == NO_BUCKET {
                    let _ = tx.send(line);
                    return;
                }
            }
        });
    } else {
        drop(tx);
    }
    let wait = opts.deadline.saturating_add(std::time::Duration::from_secs(30));
    let line = rx.recv_timeout(wait).unwrap_or_default();
    if let Some(id) = line.strip_prefix("upload ").map(unescape) {
        return Some((
            Running {
                child: Some(child),
                stdin,
            },
            id,
        ));
    }
    // No upload for this write: the pipe closes without `done`, so a guard that made one late
    // aborts it; its exit is waited for in the background.
    drop(stdin);
    in_background(move || drop(child.wait()));
    match line.strip_prefix("failed ") {
        Some(why) => warn(&format!("could not create the upload ({})", unescape(why))),
        // The bucket is not there: the write says so itself, and nothing is to guard.
        None if line == NO_BUCKET => {}
        None => warn(&format!("gave no answer within {} s", wait.as_secs())),
    }
    None
}

impl Running {
    /// The upload completed or was aborted: the guard exits.
    pub(crate) fn settled(mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"done\n");
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Not settled: the pipe closes without `done` and the guard aborts the upload; its
        // exit is waited for in the background (no zombie in a long-lived process).
        drop(self.stdin.take());
        if let Some(mut c) = self.child.take() {
            in_background(move || drop(c.wait()));
        }
    }
}

/// Runs `f` (a wait on the guard's pipe or exit) on the I/O runtime's blocking pool; without
/// a runtime (none could be made: then no upload was either), here.
fn in_background(f: impl FnOnce() + Send + 'static) {
    match crate::store::runtime() {
        Ok(rt) => drop(rt.spawn_blocking(f)),
        Err(_) => f(),
    }
}

/// What a guard did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardOutcome {
    /// The writer said `done`: nothing to do.
    Settled,
    /// The writer went away first: the upload was aborted (or had completed already).
    Aborted,
    /// The upload could not be created (the store's answer was sent to the writer, which
    /// creates it itself and reports what the store says).
    NotCreated,
}

/// The guard's body (`asdf-cli __upload-guard`): reads the request from `input`, creates the
/// upload and answers its id on `output`, waits for `done` or the end of `input`, and aborts
/// the upload in the second case.
///
/// # Errors
/// A request that is not a guard's ([`Error::Setting`]); the store's failure to abort the
/// upload after retries.
pub fn run_upload_guard(mut input: impl BufRead, mut output: impl std::io::Write) -> Result<GuardOutcome, Error> {
    let bad = |line: &str| Error::Setting {
        url: "(upload guard)".into(),
        environment: false,
        key: "request".into(),
        value: line.to_string(),
        expected: "an upload guard's request",
    };
    let mut line = String::new();
    let next = |input: &mut dyn BufRead, line: &mut String| -> bool {
        line.clear();
        matches!(input.read_line(line), Ok(n) if n > 0)
    };
    if !next(&mut input, &mut line) || line.trim_end() != FIRST_LINE {
        return Err(bad(line.trim_end()));
    }
    let mut url = None;
    let mut opts = RemoteOptions::default();
    loop {
        if !next(&mut input, &mut line) {
            return Err(bad("(the request ended early)"));
        }
        let l = line.trim_end_matches(['\n', '\r']);
        if l == "end" {
            break;
        }
        let (key, rest) = l.split_once(' ').unwrap_or((l, ""));
        match key {
            "url" => url = Some(unescape(rest)),
            "anonymous" => opts.anonymous = rest == "1",
            "setting" => {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                opts.settings.push((unescape(k), unescape(v)));
            }
            _ => return Err(bad(l)),
        }
    }
    let Some(url) = url else {
        return Err(bad("(no url)"));
    };
    // The environment's settings (`ASDF_RS_DEADLINE`, ...), inherited from the writer.
    let opts = opts.own_settings(&url)?;
    let id = match create(&url, &opts) {
        Ok(id) => id,
        Err(e) => {
            // The writer creates the upload itself and meets the store's answer (a bucket
            // that does not exist: said as that alone, no warning of the guard's).
            let answer = match e {
                Error::NoBucket { .. } => NO_BUCKET.to_string(),
                e => format!("failed {}", escape(&e.to_string())),
            };
            let _ = writeln!(output, "{answer}").and_then(|()| output.flush());
            return Ok(GuardOutcome::NotCreated);
        }
    };
    // A writer gone already (a closed pipe) is found below: the upload is aborted.
    let _ = writeln!(output, "upload {}", escape(&id)).and_then(|()| output.flush());
    while next(&mut input, &mut line) {
        if line.trim_end() == "done" {
            return Ok(GuardOutcome::Settled);
        }
    }
    abort(&url, &opts, &id)?;
    Ok(GuardOutcome::Aborted)
}

/// The multipart store of `url` and the object's path in it (`None` for plain HTTP, which
/// has no multipart uploads).
fn multipart_store(url: &str, opts: &RemoteOptions) -> Result<(Built, object_store::path::Path), Error> {
    build_typed(url, opts, crate::location::Use::Object)
}

/// Creates a multipart upload to `url`: its id.
fn create(url: &str, opts: &RemoteOptions) -> Result<String, Error> {
    let (built, path) = multipart_store(url, opts)?;
    let deadline = opts.deadline;
    let result = crate::store::run(async move {
        let Some(store) = built.multipart() else {
            return Err(object_store::Error::NotSupported {
                source: "a plain HTTP server has no multipart uploads".into(),
            });
        };
        crate::store::within(deadline, crate::error::Waited::Headers, store.create_multipart(&path)).await
    })?;
    result.map_err(|source| crate::location::store_error(url, source))
}

/// Aborts the multipart upload `id` of `url` (an upload that no longer exists is not an
/// error: it completed or was aborted).
fn abort(url: &str, opts: &RemoteOptions, id: &str) -> Result<(), Error> {
    let (built, path) = multipart_store(url, opts)?;
    let id = id.to_string();
    let deadline = opts.deadline;
    let result = crate::store::run(async move {
        let Some(store) = built.multipart() else {
            return Ok(());
        };
        let r = crate::store::within(
            deadline,
            crate::error::Waited::Headers,
            store.abort_multipart(&path, &id),
        )
        .await;
        match r {
            Err(object_store::Error::NotFound { .. }) => Ok(()),
            other => other,
        }
    })?;
    result.map_err(|source| crate::location::store_error(url, source))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn request(settings: &[(&str, &str)]) -> String {
        let mut r = format!("{FIRST_LINE}\nurl s3://b/k.asdf\nanonymous 0\n");
        for (k, v) in settings {
            r.push_str(&format!("setting {k} {}\n", escape(v)));
        }
        r + "end\n"
    }

    /// The writer's side: the answer is the first line that is one; a guard that ends without
    /// answering, or fails, leaves the write unguarded (`None`) at once.
    #[cfg(unix)]
    #[test]
    fn the_writer_takes_the_guards_answer_past_other_lines() {
        let sh = |script: &str| Some(vec!["sh".into(), "-c".into(), script.into()]);
        let opts = RemoteOptions::default();
        set_upload_guard(sh(
            "cat >/dev/null & echo 'a line of noise'; printf '%s\\n' 'upload id\\n2'; wait",
        ));
        let (running, id) = start("s3://b/k", &opts).unwrap();
        assert_eq!(id, "id\n2");
        running.settled();
        for script in ["exit 0", "echo 'failed the store said no'", "echo 'uploaded'; exit 3"] {
            set_upload_guard(sh(script));
            let t = std::time::Instant::now();
            assert!(start("s3://b/k", &opts).is_none(), "{script}");
            assert!(t.elapsed() < std::time::Duration::from_secs(10), "{script}");
        }
        set_upload_guard(None);
        assert!(start("s3://b/k", &opts).is_none());
    }

    #[test]
    fn values_survive_the_escapes() {
        for v in ["plain", "a b\nc\\d\r", "\\n", "", "ends\\"] {
            assert_eq!(unescape(&escape(v)), v);
            assert!(!escape(v).contains('\n'));
        }
    }

    #[test]
    fn a_store_that_cannot_be_reached_is_answered_as_failed_and_no_upload_is_assumed() {
        let r = request(&[
            ("aws_endpoint", "http://127.0.0.1:9"),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "k"),
            ("aws_secret_access_key", "s\nwith a newline"),
            ("aws_region", "us-east-1"),
            ("aws_max_retries", "0"),
        ]) + "done\n";
        let mut out = Vec::new();
        assert_eq!(
            run_upload_guard(r.as_bytes(), &mut out).unwrap(),
            GuardOutcome::NotCreated
        );
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with("failed ") && out.ends_with('\n') && out.matches('\n').count() == 1,
            "{out:?}"
        );
    }

    #[test]
    fn a_request_that_is_not_a_guards_is_refused_before_the_store_is_touched() {
        for r in [
            String::new(),
            "hello\n".into(),
            "asdf-rs upload guard 1\nurl s3://b/k\nend\n".into(),
            format!("{FIRST_LINE}\nurl x\n"),
            format!("{FIRST_LINE}\nbogus 1\nend\n"),
            format!("{FIRST_LINE}\nanonymous 1\nend\n"),
        ] {
            let mut out = Vec::new();
            assert!(
                matches!(run_upload_guard(r.as_bytes(), &mut out), Err(Error::Setting { .. })),
                "{r:?}"
            );
            assert!(out.is_empty(), "{r:?}");
        }
    }
}
