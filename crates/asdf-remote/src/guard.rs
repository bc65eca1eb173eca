//! The upload guard: a small process that outlives a killed writer and aborts its multipart
//! upload, so that not even `SIGKILL` leaves parts behind.
//!
//! A process cannot clean up after `SIGKILL`; another process can. When a guard command is
//! set ([`set_upload_guard`]: `asdf-cli` sets itself, the Python package its interpreter),
//! each multipart upload starts one, in its own process group (an interrupt sent to the
//! terminal's group does not reach it), and writes to its standard input what it needs to
//! abort the upload: the URL, the store settings (credentials travel through the pipe, never
//! on a command line) and the upload's id. When the upload completes, or is aborted by the
//! writer itself, the writer writes `done` and the guard exits. When the pipe closes without
//! `done` (the writer was killed, crashed, or could not reach the store to abort), the guard
//! aborts the upload, with retries; an upload that had completed meanwhile is left as it is
//! (the store answers that there is no such upload).
//!
//! What is left: a guard killed with its writer (a `SIGKILL` to both, a machine that stops).
//! A bucket's lifecycle rule (`AbortIncompleteMultipartUpload`) is the last line there.
//!
//! The request is a few lines of text (no dependency for a format): `asdf-rs upload guard 1`,
//! then `url U`, `upload ID`, `anonymous 0|1`, `setting KEY VALUE` lines and `end`, values
//! with `\` and newlines escaped.

use crate::error::Error;
use crate::options::RemoteOptions;
use crate::store::{Built, build_typed};
use std::ffi::OsString;
use std::io::{BufRead, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The command started for each multipart upload (its program and arguments), if any.
static GUARD: Mutex<Option<Vec<OsString>>> = Mutex::new(None);

const FIRST_LINE: &str = "asdf-rs upload guard 1";

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
/// Starts the guard of the upload `id` to `url`, if a guard command is set. A guard that
/// cannot be started is reported on standard error and the upload goes on without it.
pub(crate) fn start(url: &str, opts: &RemoteOptions, id: &str) -> Option<Running> {
    let command = guard_command()?;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "warning: the upload guard ({}) could not be started ({e}): a killed upload of {url} would leave its parts",
                command[0].to_string_lossy()
            );
            return None;
        }
    };
    let mut request = format!(
        "{FIRST_LINE}\nurl {}\nupload {}\nanonymous {}\n",
        escape(url),
        escape(id),
        u8::from(opts.anonymous)
    );
    for (k, v) in &opts.settings {
        request.push_str(&format!("setting {} {}\n", escape(&k.replace(' ', "_")), escape(v)));
    }
    request.push_str("end\n");
    let mut stdin = child.stdin.take();
    if let Some(s) = stdin.as_mut() {
        // The request fits the pipe's buffer: written at once, kept if this process dies.
        if s.write_all(request.as_bytes()).and_then(|()| s.flush()).is_err() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
    }
    Some(Running {
        child: Some(child),
        stdin,
    })
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
        // exit is waited for on a thread of its own (no zombie in a long-lived process).
        drop(self.stdin.take());
        if let Some(mut c) = self.child.take() {
            std::thread::spawn(move || c.wait());
        }
    }
}

/// What a guard did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardOutcome {
    /// The writer said `done`: nothing to do.
    Settled,
    /// The writer went away first: the upload was aborted (or had completed already).
    Aborted,
}

/// The guard's body (`asdf-cli __upload-guard`): reads the request from `input`, waits for
/// `done` or the end of `input`, and aborts the upload in the second case.
///
/// # Errors
/// A request that is not a guard's ([`Error::Setting`]); the store's failure to abort after
/// retries.
pub fn run_upload_guard(mut input: impl BufRead) -> Result<GuardOutcome, Error> {
    let bad = |line: &str| Error::Setting {
        url: "(upload guard)".into(),
        key: "request".into(),
        value: line.to_string(),
    };
    let mut line = String::new();
    let next = |input: &mut dyn BufRead, line: &mut String| -> bool {
        line.clear();
        matches!(input.read_line(line), Ok(n) if n > 0)
    };
    if !next(&mut input, &mut line) || line.trim_end() != FIRST_LINE {
        return Err(bad(line.trim_end()));
    }
    let (mut url, mut id) = (None, None);
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
            "upload" => id = Some(unescape(rest)),
            "anonymous" => opts.anonymous = rest == "1",
            "setting" => {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                opts.settings.push((unescape(k), unescape(v)));
            }
            _ => return Err(bad(l)),
        }
    }
    let (Some(url), Some(id)) = (url, id) else {
        return Err(bad("(no url or upload id)"));
    };
    while next(&mut input, &mut line) {
        if line.trim_end() == "done" {
            return Ok(GuardOutcome::Settled);
        }
    }
    abort(&url, &opts, &id)?;
    Ok(GuardOutcome::Aborted)
}

/// Aborts the multipart upload `id` of `url` (an upload that no longer exists is not an
/// error: it completed or was aborted).
fn abort(url: &str, opts: &RemoteOptions, id: &str) -> Result<(), Error> {
    use object_store::multipart::MultipartStore;
    let parsed = url::Url::parse(url).map_err(|source| Error::Url {
        url: url.to_string(),
        source,
    })?;
    let (built, path) = build_typed(&parsed, url, opts)?;
    let id = id.to_string();
    let deadline = opts.deadline;
    let result = crate::store::run(async move {
        let store: &dyn MultipartStore = match &built {
            Built::S3(s) => s,
            Built::Gcs(s) => s,
            Built::Azure(s) => s,
            Built::Http(_) => return Ok(()),
        };
        let r = crate::store::within(deadline, store.abort_multipart(&path, &id)).await;
        match r {
            Err(object_store::Error::NotFound { .. }) => Ok(()),
            other => other,
        }
    })?;
    result.map_err(|source| Error::Store {
        url: url.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn request(settings: &[(&str, &str)]) -> String {
        let mut r = format!(
            "{FIRST_LINE}\nurl s3://b/k.asdf\nupload {}\nanonymous 0\n",
            escape("id\nwith\\odd")
        );
        for (k, v) in settings {
            r.push_str(&format!("setting {k} {}\n", escape(v)));
        }
        r + "end\n"
    }

    #[test]
    fn values_survive_the_escapes() {
        for v in ["plain", "a b\nc\\d\r", "\\n", "", "ends\\"] {
            assert_eq!(unescape(&escape(v)), v);
            assert!(!escape(v).contains('\n'));
        }
    }

    #[test]
    fn done_settles_without_touching_the_store() {
        // The endpoint cannot be reached: an abort would fail, `done` must not try one.
        let r = request(&[("aws_endpoint", "http://127.0.0.1:9"), ("secret", "x\ny")]) + "done\n";
        assert_eq!(run_upload_guard(r.as_bytes()).unwrap(), GuardOutcome::Settled);
    }

    #[test]
    fn a_closed_pipe_without_done_aborts_and_reports_an_unreachable_store() {
        let r = request(&[
            ("aws_endpoint", "http://127.0.0.1:9"),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "k"),
            ("aws_secret_access_key", "s"),
            ("aws_region", "us-east-1"),
            ("aws_max_retries", "0"),
        ]);
        let e = run_upload_guard(r.as_bytes()).unwrap_err();
        assert!(matches!(e, Error::Store { .. }), "{e}");
    }

    #[test]
    fn a_request_that_is_not_a_guards_is_refused() {
        for r in [
            "",
            "hello\n",
            "asdf-rs upload guard 1\nurl x\n",
            "asdf-rs upload guard 1\nbogus 1\nend\n",
        ] {
            assert!(
                matches!(run_upload_guard(r.as_bytes()), Err(Error::Setting { .. })),
                "{r:?}"
            );
        }
        let no_id = format!("{FIRST_LINE}\nurl s3://b/k\nend\n");
        assert!(run_upload_guard(no_id.as_bytes()).is_err());
    }
}
