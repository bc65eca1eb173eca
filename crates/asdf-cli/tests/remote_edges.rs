//! The edges of remote files (docs: /work/shared/EDGES.md, "Names" and "Network"), on real
//! servers started here on loopback: moto's S3 server, with boto3 (AWS's own client) to list,
//! write and read beside us; and `tests/servers/hostile_http.py`, an HTTP server that drips
//! its headers or ignores `Range` as `python -m http.server` does.
//!
//! - Object keys are literal (as `aws s3 cp` takes them): random keys with `%`, `#`, `?`,
//!   spaces, `+`, `..` and unicode are written to the key given (boto3 lists exactly those),
//!   listed back to the same keys, read back to the same bytes; keys object_store cannot
//!   address (`.`/`..` segments, empty segments) are refused and nothing is written.
//! - `verify` over a prefix reads each listed key, not another one it decodes to.
//! - A deadline stated is a deadline kept; a server that ignores `Range` is read whole when
//!   the file is small enough (and says so), refused clearly when it is not.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::{Server, dir, root};
use std::io::{BufRead as _, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A TCP proxy on 127.0.0.1 in front of a test server's port: each connection it accepts
/// waits `delay` before it is passed on (a slow network), and the listing requests that pass
/// are counted (`list-type=2` in what the client sends). With `hold`, a multipart upload's
/// completion (`POST ...?uploadId=`) is held that long before it is passed on, and `held` says
/// it came.
struct Proxy {
    port: u16,
    lists: Arc<AtomicUsize>,
    held: Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    fn start(target: u16, delay: Duration) -> Self {
        Self::with_hold(target, delay, None)
    }

    fn with_hold(target: u16, delay: Duration, hold: Option<Duration>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let lists = Arc::new(AtomicUsize::new(0));
        let held = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let counted = Arc::clone(&lists);
        let seen = Arc::clone(&held);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let counted = Arc::clone(&counted);
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                        return;
                    };
                    let (mut from_server, mut to_client) = (server.try_clone().unwrap(), client.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from_server, &mut to_client);
                        let _ = to_client.shutdown(std::net::Shutdown::Write);
                    });
                    let (mut from_client, mut to_server) = (client, server);
                    let needle = b"list-type=2";
                    let mut tail: Vec<u8> = Vec::new();
                    let mut buf = vec![0u8; 1 << 16];
                    loop {
                        let n = match from_client.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let completion = buf.starts_with(b"POST ") && buf[..n].windows(9).any(|w| w == b"uploadId=");
                        if let (true, Some(hold)) = (completion, hold) {
                            seen.store(true, Ordering::SeqCst);
                            std::thread::sleep(hold);
                        }
                        if to_server.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        tail.extend_from_slice(&buf[..n]);
                        let found = tail.windows(needle.len()).filter(|w| w == needle).count();
                        counted.fetch_add(found, Ordering::SeqCst);
                        tail.drain(..tail.len().saturating_sub(needle.len() - 1));
                    }
                    let _ = to_server.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        Proxy { port, lists, held }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// moto's options, through this proxy.
    fn options(&self) -> asdf::RemoteOptions {
        super::moto_options(self.endpoint())
    }
}

/// boto3 beside moto (`tests/servers/s3_keys.py`).
impl Server {
    /// boto3's answer to `s3_keys.py ENDPOINT args...` (keys as JSON strings).
    fn boto3(&self, args: &[&str]) -> String {
        let out = Command::new(asdf_testdata::interop_python())
            .arg(root().join("tests/servers/s3_keys.py"))
            .arg(self.endpoint())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "boto3 {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The keys boto3 lists in bucket `data` under `prefix`.
    fn boto3_list(&self, prefix: &str) -> Vec<String> {
        serde_json::from_str(&self.boto3(&["list", "data", &json(prefix)])).unwrap()
    }

    fn boto3_put(&self, key: &str, file: &Path) {
        self.boto3(&["put", "data", &json(key), file.to_str().unwrap()]);
    }

    fn boto3_get(&self, key: &str, dir: &Path) -> Vec<u8> {
        let to = dir.join("boto3-get.bin");
        self.boto3(&["get", "data", &json(key), to.to_str().unwrap()]);
        std::fs::read(to).unwrap()
    }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A small ASDF file with one checksummed block of `fill` bytes; its bytes.
fn small_asdf(path: &Path, fill: u8) -> Vec<u8> {
    let data: Vec<u8> = vec![fill; 4096];
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    f.put_array("/data", asdf::NewArray::from_slice(&data, &[4096]).unwrap())
        .unwrap();
    f.set("/fill", asdf::Node::str(fill.to_string())).unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
    std::fs::read(path).unwrap()
}

/// The whole object at `url`, read by our reader.
fn read_back(moto: &Server, url: &str) -> Vec<u8> {
    let (size, _) = asdf::remote::head(url, &moto.options()).unwrap().unwrap();
    asdf::remote::fetch_range(url, &moto.options(), 0..size, None).unwrap()
}

/// A xorshift generator (a fixed seed: the same keys every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

/// A random key under `prefix`: one to three segments of characters that URLs and S3 treat
/// specially, some segments `.`, `..` or empty.
fn random_key(rng: &mut Rng, prefix: &str) -> String {
    const CHARS: &[&str] = &[
        "a", "b", "Z", "0", ".", "..", "%", "%41", "%2e", "%2F", "#", "?", " ", "+", "&", "=", "~", "'", "!", "$", "(",
        "é", "中", "😀", "ß", ";", ":", "@", ",", "*", "-", "_", "\\", "[", "]", "{", "^", "`", "|", "<",
    ];
    let mut segs = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let seg = match rng.below(20) {
            0 => "..".to_string(),
            1 => ".".to_string(),
            2 => String::new(),
            _ => (0..1 + rng.below(6)).map(|_| CHARS[rng.below(CHARS.len())]).collect(),
        };
        segs.push(seg);
    }
    // The last segment is never empty (a key ending in `/` is a folder marker).
    if segs.last().is_some_and(String::is_empty) {
        segs.pop();
        segs.push("x".into());
    }
    format!("{prefix}{}", segs.join("/"))
}

fn addressable(key: &str) -> bool {
    key.split('/').all(|s| !matches!(s, "" | "." | ".."))
}

#[test]
fn random_keys_are_written_listed_and_read_back_as_the_keys_given() {
    let moto = Server::moto();
    let d = dir("remote-edges-keys");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut keys: Vec<String> = (0..60).map(|_| random_key(&mut rng, "prop/")).collect();
    // The cases the attacks found, always.
    keys.extend(
        [
            "prop/tmp/../keep.asdf",
            "prop/tmp/%2e%2e/keep.asdf",
            "prop/run/%41.asdf",
            "prop/x#1.asdf",
            "prop/q?.asdf",
            "prop/a b+c.asdf",
            "prop/ünï çødé.asdf",
            "prop/./x.asdf",
            "prop/a//b.asdf",
        ]
        .map(String::from),
    );
    keys.sort();
    keys.dedup();
    let mut written = std::collections::BTreeMap::new();
    let (mut refused, mut ok) = (0, 0);
    for (i, key) in keys.iter().enumerate() {
        let body = format!("object {i} key {key:?}\n").into_bytes();
        let local = d.join(format!("{i}.bin"));
        std::fs::write(&local, &body).unwrap();
        let url = format!("s3://data/{key}");
        let r = asdf::remote::put_file(
            &url,
            &moto.options(),
            &std::fs::File::open(&local).unwrap(),
            &asdf::remote::upload::Condition::Overwrite,
            &|_, _| {},
        );
        if addressable(key) {
            r.unwrap_or_else(|e| panic!("{key:?}: {e}"));
            written.insert(key.clone(), body);
            ok += 1;
        } else {
            let e = r.unwrap_err();
            let text = e.to_string();
            assert!(text.contains(&format!("{key:?}")), "the message names the key: {text}");
            assert!(text.contains("nothing was read or written"), "{text}");
            // A read of it is refused too (it never reads the key it would resolve to).
            assert!(asdf::remote::head(&url, &moto.options()).is_err(), "{key:?}");
            refused += 1;
        }
    }
    println!("{ok} keys written, {refused} refused");
    assert!(ok >= 40 && refused >= 5, "{ok} written, {refused} refused");
    // boto3 lists exactly the keys given: the store received each literally.
    let boto3 = moto.boto3_list("prop/");
    let expected: Vec<String> = written.keys().cloned().collect();
    assert_eq!(boto3, expected);
    // Our listing gives URLs that name the same keys, and read back the same bytes.
    let listed = asdf::remote::list("s3://data/prop/", &moto.options(), 10_000).unwrap();
    let listed_keys: Vec<String> = listed
        .iter()
        .map(|(u, _)| u.strip_prefix("s3://data/").unwrap().to_string())
        .collect();
    assert_eq!(listed_keys, expected);
    for (url, size) in &listed {
        let key = url.strip_prefix("s3://data/").unwrap();
        assert_eq!(*size, written[key].len() as u64, "{url}");
        assert_eq!(read_back(&moto, url), written[key], "{url}");
    }
    // And boto3 reads what we wrote under the literal key.
    assert_eq!(moto.boto3_get("prop/run/%41.asdf", &d), written["prop/run/%41.asdf"]);
}

#[test]
fn a_dot_segment_key_never_reaches_another_object() {
    let moto = Server::moto();
    let d = dir("remote-edges-dots");
    let keep = small_asdf(&d.join("keep.asdf"), 7);
    moto.boto3_put("keep.asdf", &d.join("keep.asdf"));
    small_asdf(&d.join("in.asdf"), 9);
    let input = d.join("in.asdf");
    // `..` in the key: refused, nothing written, the message names the key.
    let out = moto
        .cli()
        .args(["convert", input.to_str().unwrap(), "-o", "s3://data/tmp/../keep.asdf"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("\"tmp/../keep.asdf\"") && err.contains("`..`"), "{err}");
    assert_eq!(moto.boto3_get("keep.asdf", &d), keep, "keep.asdf was overwritten");
    assert_eq!(moto.boto3_list(""), ["keep.asdf"]);
    // Reads of it are refused too: they never read keep.asdf.
    let out = moto
        .cli()
        .args(["info", "s3://data/tmp/../keep.asdf"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("\"tmp/../keep.asdf\""), "{err}");
    // An escaped `..` is a literal key of its own, written as given and named.
    let out = moto
        .cli()
        .args([
            "convert",
            input.to_str().unwrap(),
            "-o",
            "s3://data/tmp/%2e%2e/keep.asdf",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("s3://data/keep.asdf"), "{text}");
    assert_eq!(moto.boto3_list(""), ["keep.asdf", "tmp/%2e%2e/keep.asdf"]);
    assert_eq!(moto.boto3_get("keep.asdf", &d), keep, "keep.asdf was overwritten");
    assert_eq!(
        moto.boto3_get("tmp/%2e%2e/keep.asdf", &d),
        std::fs::read(&input).unwrap()
    );
}

#[test]
fn verify_over_a_prefix_reads_every_listed_key_itself() {
    let moto = Server::moto();
    let d = dir("remote-edges-verify");
    let good = d.join("good.asdf");
    let bytes = small_asdf(&good, 5);
    // The same file with one byte of its block changed: its checksum fails.
    let at = bytes.windows(64).position(|w| w.iter().all(|&b| b == 5)).unwrap();
    let mut bad = bytes.clone();
    bad[at + 10] ^= 0xff;
    let corrupt = d.join("corrupt.asdf");
    std::fs::write(&corrupt, &bad).unwrap();
    let good_keys = [
        "run/A.asdf",
        "run/x#1.asdf",
        "run/q?.asdf",
        "run/sp ace+plus.asdf",
        "run/ünï.asdf",
    ];
    for key in good_keys {
        moto.boto3_put(key, &good);
    }
    moto.boto3_put("run/%41.asdf", &corrupt);
    let out = moto.cli().args(["verify", "s3://data/run/"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  s3://data/run/%41.asdf:"), "{stdout}");
    for key in good_keys {
        assert!(
            stdout.contains(&format!("ok    s3://data/{key} (1 blocks)")),
            "{key}: {stdout}"
        );
    }
    assert!(stdout.contains("6 files: 5 verified, 1 failed"), "{stdout}");
}

#[test]
fn a_dripping_server_fails_an_open_within_the_deadline_its_message_states() {
    let d = dir("remote-edges-drip");
    small_asdf(&d.join("x.asdf"), 1);
    let server = Server::start("hostile_http.py", &["drip", d.join("x.asdf").to_str().unwrap(), "0.5"]);
    let url = format!("http://127.0.0.1:{}/x.asdf", server.port);
    let deadline = Duration::from_secs(4);
    let opts = asdf::RemoteOptions {
        deadline,
        ..asdf::RemoteOptions::default()
    };
    let t = Instant::now();
    let e = asdf::Open::path_or_url(&url)
        .storage_options(opts)
        .open()
        .unwrap_err()
        .to_string();
    let took = t.elapsed();
    println!("{took:?}: {e}");
    assert!(e.contains("deadline of 4s"), "{e}");
    // The deadline stated is the one kept: about 4 s, never two of them (the open's fallback
    // request once had a deadline of its own: 8 s here, 240 s for the CLI's 120 s).
    assert!(took >= deadline - Duration::from_millis(200), "{took:?}");
    assert!(took < deadline.mul_f64(1.5), "{took:?}: {e}");
}

#[test]
fn a_server_that_ignores_range_is_read_whole_when_small_and_refused_clearly_when_not() {
    let d = dir("remote-edges-norange");
    let path = d.join("x.asdf");
    let bytes = small_asdf(&path, 3);
    let server = Server::start("hostile_http.py", &["norange", path.to_str().unwrap()]);
    let url = format!("http://127.0.0.1:{}/x.asdf", server.port);
    // The library: read whole, the fact told.
    let f = asdf::Open::path_or_url(&url).open().unwrap();
    let data = f.array("/data").unwrap().read::<Vec<u8>>().unwrap();
    assert_eq!(data, vec![3u8; 4096]);
    assert!(f.source().remote_stats().unwrap().read_whole());
    // Over the limit: refused, the limit and the size named.
    let opts = asdf::RemoteOptions::default().setting("whole_limit", "1000");
    let e = asdf::Open::path_or_url(&url)
        .storage_options(opts)
        .open()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not answer range requests")
            && e.contains(&format!("{} bytes", bytes.len()))
            && e.contains("limit of 1000 bytes"),
        "{e}"
    );
    // The CLI: the file is read, and the warning says how.
    let out = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
        .args(["verify", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("does not answer range requests") && err.contains("read whole"),
        "{err}"
    );
    // A `..` in an HTTP URL is refused (this server would answer any path with the file).
    let out = Command::new(env!("CARGO_BIN_EXE_asdf-cli"))
        .args(["info", &format!("http://127.0.0.1:{}/tmp/%2E%2e/x.asdf", server.port)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("`.` or `..` segment"), "{err}");
}

/// `python3 -m http.server` (which the README suggests for the viewer, and which ignores
/// `Range`) serving `dir`, stopped when dropped.
struct HttpServer(Child, u16);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_server(dir: &Path) -> HttpServer {
    let mut child = Command::new(asdf_testdata::interop_python())
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
    let port = line
        .split(" port ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("http.server did not start: {line:?}"));
    HttpServer(child, port)
}

/// The viewer's worker (`web/worker.js`) loaded in Node without its module: its URL reader
/// on `url`, with `limit` as its limit for a file read whole. Prints JSON: the size, the
/// notice and the first 6 bytes, or the error.
const WORKER_PROBE: &str = r#"
const fs = require("fs"), vm = require("vm");
const [, worker, url, limit] = process.argv;
let code = fs.readFileSync(worker, "utf8");
const declared = "const WHOLE_LIMIT = 256 * 1024 * 1024;";
if (!code.includes(declared)) throw new Error("worker.js no longer declares WHOLE_LIMIT as expected");
code = code.replace(declared, `const WHOLE_LIMIT = ${limit};`) + "\n;globalThis.__urlReader = urlReader;";
const ctx = { fetch, TextEncoder, TextDecoder, WebAssembly, performance, console, Uint8Array, Number, Error, Promise,
  postMessage() {}, onmessage: null, XMLHttpRequest: function () { throw new Error("no XMLHttpRequest here"); } };
ctx.globalThis = ctx;
vm.runInNewContext(code, ctx);
ctx.__urlReader(url).then(
  ([size, read, notice]) => console.log(JSON.stringify({ size, notice, head: Buffer.from(read(0, 6)).toString("latin1") })),
  (e) => console.log(JSON.stringify({ error: String(e.message || e) })),
);
"#;

#[test]
fn python_http_server_ignores_range_and_the_reader_and_the_viewer_read_the_file_whole() {
    let d = dir("remote-edges-http-server");
    let bytes = small_asdf(&d.join("x.asdf"), 4);
    let server = http_server(&d);
    let url = format!("http://127.0.0.1:{}/x.asdf", server.1);
    // The Rust reader (library, CLI, Python): read whole, and said.
    let f = asdf::Open::path_or_url(&url).open().unwrap();
    assert_eq!(f.array("/data").unwrap().read::<Vec<u8>>().unwrap(), vec![4u8; 4096]);
    assert!(f.source().remote_stats().unwrap().read_whole());
    // The viewer's reader, in Node (no browser here: the wasm module is not needed for it).
    let node = Command::new("node").arg("--version").output();
    if node.is_err() {
        eprintln!("NOT RUN: the viewer half of remote_edges::python_http_server_ignores_range... (needs node)");
        return;
    }
    let probe = |limit: &str| -> serde_json::Value {
        let out = Command::new("node")
            .args(["-e", WORKER_PROBE, "--"])
            .arg(root().join("web/worker.js"))
            .arg(&url)
            .arg(limit)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let got = probe("256 * 1024 * 1024");
    assert_eq!(got["size"], bytes.len(), "{got}");
    assert_eq!(got["head"], "#ASDF ", "{got}");
    let notice = got["notice"].as_str().unwrap();
    assert!(
        notice.contains("does not answer range requests") && notice.contains("read whole"),
        "{got}"
    );
    // Over the viewer's limit: refused, the limit named.
    let got = probe("1000");
    let e = got["error"].as_str().unwrap();
    assert!(
        e.contains("does not answer range requests") && e.contains("limit of 1000 bytes"),
        "{got}"
    );
}

#[test]
fn a_file_without_etag_rewritten_in_the_same_size_fails_the_read_not_mixes_versions() {
    let d = dir("remote-edges-noetag");
    let path = d.join("x.bin");
    let first: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &first).unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let server = Server::start("hostile_http.py", &["noetag", path.to_str().unwrap()]);
    let url = format!("http://127.0.0.1:{}/x.bin", server.port);
    let src = asdf::remote::RemoteSource::open(&url, &asdf::RemoteOptions::default()).unwrap();
    // Past the open's first 256 KiB: from the server.
    let mut buf = vec![0u8; 1000];
    asdf::ReadAt::read_exact_at(&src, 300_000, &mut buf).unwrap();
    assert_eq!(buf, first[300_000..301_000]);
    // Another writer rewrites the file in place, the same size (its mtime now).
    let second: Vec<u8> = first.iter().map(|b| b ^ 0x55).collect();
    std::fs::write(&path, &second).unwrap();
    let e = asdf::ReadAt::read_exact_at(&src, 400_000, &mut buf)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("changed while it was read") && e.contains("Last-Modified"),
        "{e}"
    );
}

/// Found by the independent review of the remote surfaces: commands that write local files
/// only (`get`, `to-json`, `to-yaml`, `preview`, `explode`) refuse a URL output (they wrote a
/// local file named `s3:/bucket/x.npy` and said they wrote the URL); `convert` refuses an
/// output that is its input's URL (it replaced it); a folder marker (an empty object
/// `run/d.asdf/` with objects under it) is a folder to `verify`, not a file that is missing or
/// verified twice.
#[test]
fn url_outputs_and_folder_markers_found_by_the_review() {
    let moto = Server::moto();
    let d = dir("remote-edges-review");
    let good = d.join("good.asdf");
    small_asdf(&good, 3);
    moto.boto3_put("in/small.asdf", &good);
    let run = |args: &[&str]| {
        let out = moto.cli().current_dir(&d).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    for args in [
        &["get", "s3://data/in/small.asdf", "/x", "-o", "s3://data/out/x.npy"][..],
        &["to-json", "s3://data/in/small.asdf", "-o", "s3://data/out/t.json"],
        &["to-yaml", "s3://data/in/small.asdf", "-o", "s3://data/out/t.yaml"],
        &["explode", "s3://data/in/small.asdf", "-o", "s3://data/out/e.asdf"],
        &[
            "get",
            "s3://data/in/small.asdf",
            "/x",
            "-o",
            "http://127.0.0.1:9/x.json",
        ],
    ] {
        let (code, text) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains("writes local files only"), "{args:?}: {text}");
    }
    assert!(moto.boto3_list("out/").is_empty());
    assert!(!d.join("s3:").exists() && !d.join("http:").exists());
    let before = moto.boto3_get("in/small.asdf", &d);
    let (code, text) = run(&["convert", "s3://data/in/small.asdf", "-o", "s3://data/in/small.asdf"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("refusing to write over"), "{text}");
    assert_eq!(moto.boto3_get("in/small.asdf", &d), before);
    // Folder markers: `m/d.asdf/` (empty) with a file under it, and `m/x.asdf` beside its own
    // marker `m/x.asdf/`.
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    moto.boto3_put("m/d.asdf/", &empty);
    moto.boto3_put("m/d.asdf/in.asdf", &good);
    moto.boto3_put("m/x.asdf", &good);
    moto.boto3_put("m/x.asdf/", &empty);
    moto.boto3_put("m/x.asdf/y.asdf", &good);
    let (code, text) = run(&["verify", "s3://data/m/"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 files: 3 verified, 0 failed"), "{text}");
    assert_eq!(text.matches("ok    s3://data/m/x.asdf ").count(), 1, "{text}");
}

/// Found by the review: one listed key that object_store cannot address (a `.` or `..`
/// segment, `//`, a control character) made it refuse the whole page of the listing, so
/// `verify`/`info` over the prefix read nothing. Every key is now listed: each good one is
/// verified, each bad one reported by its key (escaped), counted, and the exit status says so.
#[test]
fn a_listed_key_that_cannot_be_addressed_is_reported_and_the_walk_goes_on() {
    let moto = Server::moto();
    let d = dir("remote-edges-unaddressable");
    let good = d.join("good.asdf");
    small_asdf(&good, 6);
    let good_keys = ["walk/a.asdf", "walk/m.asdf", "walk/sub/y.asdf", "walk/z.asdf"];
    // Before, between and after the good ones, two of them next to each other.
    let bad_keys = [
        "walk/./b.asdf",
        "walk//c.asdf",
        "walk/d/../e.asdf",
        "walk/f\tg.asdf",
        "walk/sub/../h.asdf",
        "walk/zz/./last.asdf",
    ];
    for key in good_keys.iter().chain(&bad_keys) {
        moto.boto3_put(key, &good);
    }
    let size = std::fs::metadata(&good).unwrap().len();
    // The library: every key listed, the bad ones with why, and with their sizes (found by
    // the review: 0, as if empty).
    let proxy = Proxy::start(moto.port, Duration::ZERO);
    let entries = asdf::remote::list_entries("s3://data/walk/", &proxy.options(), 100).unwrap();
    // Found by the review: each such key cost about eleven listing requests (object_store
    // refuses a page for one key, and the page was bisected). One page is one request.
    assert_eq!(proxy.lists.load(Ordering::SeqCst), 1, "listing requests");
    let mut all: Vec<&str> = good_keys.iter().chain(&bad_keys).copied().collect();
    all.sort_unstable();
    assert_eq!(entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), all);
    for e in &entries {
        assert_eq!(e.url, format!("s3://data/{}", e.key));
        if bad_keys.contains(&e.key.as_str()) {
            assert!(e.problem.is_some() && e.size == Some(size), "{e:?}");
        } else {
            assert_eq!((e.problem, e.size), (None, Some(size)), "{e:?}");
        }
    }
    let listed = asdf::remote::list("s3://data/walk/", &moto.options(), 100).unwrap();
    assert_eq!(listed.len(), all.len());
    assert!(listed.iter().all(|(_, s)| *s == size), "{listed:?}");
    // The CLI's walk: the good files verified, each bad key reported, the walk not stopped.
    for command in ["verify", "info"] {
        let out = moto.cli().args([command, "s3://data/walk/"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        println!("{command}: {text}");
        assert_eq!(out.status.code(), Some(1), "{command}: {text}");
        for key in bad_keys {
            let escaped = format!("{key:?}");
            assert!(text.contains(&escaped), "{command}: {key:?} not reported: {text}");
        }
        assert!(
            !text.contains('\t'),
            "{command}: a control character printed as is: {text}"
        );
        if command == "verify" {
            for key in good_keys {
                assert!(
                    text.contains(&format!("ok    s3://data/{key} (1 blocks)")),
                    "{key}: {text}"
                );
            }
            assert!(text.contains("10 files: 4 verified, 6 failed"), "{text}");
        } else {
            for key in good_keys {
                assert!(text.contains(&format!("s3://data/{key}")), "{key}: {text}");
            }
        }
    }
}

/// Found by the review: `fetch_range` (what a Dask task reads) had no whole-file fallback for
/// a server that ignores `Range`, which the other reads have: it now reads the file whole
/// within `whole_limit`, as they do, and refuses it above, naming the limit.
#[test]
fn fetch_range_reads_a_server_that_ignores_range_whole_within_the_limit() {
    let d = dir("remote-edges-norange-fetch");
    let path = d.join("x.asdf");
    let bytes = small_asdf(&path, 8);
    let server = Server::start("hostile_http.py", &["norange", path.to_str().unwrap()]);
    let url = format!("http://127.0.0.1:{}/x.asdf", server.port);
    let opts = asdf::RemoteOptions::default();
    let got = asdf::remote::fetch_range(&url, &opts, 100..1100, None).unwrap();
    assert_eq!(got, bytes[100..1100]);
    // With the version an open saw, as a Dask task reads.
    let src = asdf::remote::RemoteSource::open(&url, &opts).unwrap();
    let version = src.stats().version();
    let n = bytes.len() as u64;
    let got = asdf::remote::fetch_range(&url, &opts, n - 10..n, version).unwrap();
    assert_eq!(got, bytes[bytes.len() - 10..]);
    // Another version (another size) is refused, not mixed in.
    let e = asdf::remote::fetch_range(&url, &opts, 0..10, Some((n + 1, None)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed"), "{e}");
    // Over the limit: refused, the size and the limit named.
    let e = asdf::remote::fetch_range(&url, &opts.clone().setting("whole_limit", "1000"), 0..10, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not answer range requests")
            && e.contains(&format!("{n} bytes"))
            && e.contains("limit of 1000 bytes"),
        "{e}"
    );
}

/// Found by the review: `whole_limit` (the largest file read whole from a server that ignores
/// `Range`) could not be set by a user of `asdf-cli`. `ASDF_RS_WHOLE_LIMIT` sets it, and the
/// warning and the refusal say so.
#[test]
fn a_cli_user_sets_whole_limit_by_the_environment_the_messages_name() {
    let d = dir("remote-edges-whole-limit-env");
    let path = d.join("x.asdf");
    let n = small_asdf(&path, 2).len();
    let server = Server::start("hostile_http.py", &["norange", path.to_str().unwrap()]);
    let url = format!("http://127.0.0.1:{}/x.asdf", server.port);
    let verify = |limit: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_asdf-cli"));
        cmd.args(["verify", &url]).env_remove("ASDF_RS_WHOLE_LIMIT");
        if let Some(l) = limit {
            cmd.env("ASDF_RS_WHOLE_LIMIT", l);
        }
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (ok, text) = verify(None);
    assert!(ok, "{text}");
    assert!(
        text.contains("read whole") && text.contains("set ASDF_RS_WHOLE_LIMIT=BYTES"),
        "{text}"
    );
    let (ok, text) = verify(Some("1000"));
    assert!(!ok, "{text}");
    assert!(
        text.contains("limit of 1000 bytes") && text.contains("set ASDF_RS_WHOLE_LIMIT=BYTES"),
        "{text}"
    );
    let (ok, text) = verify(Some(&n.to_string()));
    assert!(ok, "{text}");
    let (ok, text) = verify(Some("lots"));
    assert!(!ok, "{text}");
    assert!(
        text.contains("ASDF_RS_WHOLE_LIMIT") && text.contains("\"lots\""),
        "{text}"
    );
}

/// Found by the review: a write to a bucket that does not exist said "not found", as if the
/// object were missing. It names the bucket and says it does not exist, for a single PUT and a
/// multipart upload, from the library and from the CLI.
#[test]
fn a_write_to_a_bucket_that_does_not_exist_names_the_bucket() {
    let moto = Server::moto();
    let d = dir("remote-edges-no-bucket");
    let small = d.join("small.asdf");
    small_asdf(&small, 1);
    let big = d.join("big.bin");
    std::fs::write(&big, vec![7u8; 6 << 20]).unwrap();
    let opts = moto.options().setting("part_size", (5 << 20).to_string());
    for file in [&small, &big] {
        let e = asdf::remote::put_file(
            "s3://no-such-bucket/run/x.asdf",
            &opts,
            &std::fs::File::open(file).unwrap(),
            &asdf::remote::upload::Condition::Overwrite,
            &|_, _| {},
        )
        .unwrap_err();
        let text = e.to_string();
        println!("{text}");
        assert!(
            matches!(e, asdf::remote::Error::NoBucket { ref bucket, .. } if bucket == "no-such-bucket"),
            "{file:?}: {text}"
        );
        assert!(text.contains("the bucket \"no-such-bucket\" does not exist"), "{text}");
    }
    // From the CLI, a single PUT and a multipart upload (9 MiB: more than a part). Found by
    // the review: the multipart one first warned that the upload guard could not create the
    // upload and that a killed upload would leave its parts; the bucket's absence is all there
    // is to say.
    let nine = d.join("nine.asdf");
    super::sample(&nine, 9, None);
    for file in [&small, &nine] {
        let out = moto
            .cli()
            .args(["convert", file.to_str().unwrap(), "-o", "s3://no-such-bucket/x.asdf"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        println!("{file:?}: {text}");
        assert!(!out.status.success(), "{text}");
        assert!(text.contains("the bucket \"no-such-bucket\" does not exist"), "{text}");
        assert!(!text.contains("warning"), "{file:?}: {text}");
        assert!(!text.contains("guard") && !text.contains("leave its parts"), "{text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
    }
    assert_eq!(moto.boto3_list(""), Vec::<String>::new());
}

/// Found by the review: a read of a missing key or bucket said "Object at location KEY not
/// found: Error performing GET ... Server returned non-2xx status code: 404 Not Found: <XML>",
/// the same for both. Each says what was not found and what it means.
#[test]
fn a_missing_key_or_bucket_is_named_and_told_apart() {
    let moto = Server::moto();
    let run = |args: &[&str]| {
        let out = moto.cli().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let text = run(&["info", "s3://data/run/missing.asdf"]);
    println!("{text}");
    assert!(
        text.contains(
            "s3://data/run/missing.asdf: not found: no such key: the bucket \"data\" exists but has no object with the key \"run/missing.asdf\""
        ),
        "{text}"
    );
    for args in [
        &["info", "s3://no-such-bucket/run/x.asdf"][..],
        &["verify", "s3://no-such-bucket/run/x.asdf"],
        &["verify", "s3://no-such-bucket/run/"],
        &["info", "s3://no-such-bucket/run/"],
    ] {
        let text = run(args);
        println!("{text}");
        assert!(
            text.contains("no such bucket: the bucket \"no-such-bucket\" does not exist"),
            "{args:?}: {text}"
        );
        assert!(
            !text.contains("<Error>") && !text.contains("Object at location"),
            "{text}"
        );
    }
    // The library: the same errors, told apart by their kind.
    let e = asdf::remote::RemoteSource::open("s3://data/run/missing.asdf", &moto.options()).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    let e = asdf::remote::RemoteSource::open("s3://no-such-bucket/x.asdf", &moto.options()).unwrap_err();
    assert!(
        matches!(e, asdf::remote::Error::NoBucket { ref bucket, .. } if bucket == "no-such-bucket"),
        "{e}"
    );
    assert!(!e.is_not_found(), "{e}");
}

/// Found by the review: a key that starts with `/` (`s3://data//lead.asdf`, or listed so) was
/// listed by object_store without its `/`, and read as the key `lead.asdf`: another object.
/// It is listed as itself and refused by name; `lead.asdf` is read once, as itself.
#[test]
fn a_key_that_starts_with_a_slash_is_refused_by_name_never_read_as_another() {
    let moto = Server::moto();
    let d = dir("remote-edges-leading-slash");
    let (a, b) = (d.join("a.asdf"), d.join("b.asdf"));
    small_asdf(&a, 1);
    small_asdf(&b, 2);
    moto.boto3_put("/lead.asdf", &a);
    moto.boto3_put("lead.asdf", &b);
    let entries = asdf::remote::list_entries("s3://data/", &moto.options(), 100).unwrap();
    let keys: Vec<(&str, Option<String>)> = entries
        .iter()
        .map(|e| (e.key.as_str(), e.problem.map(|p| p.to_string())))
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0].0, "/lead.asdf", "{keys:?}");
    assert!(
        keys[0].1.as_ref().is_some_and(|p| p.starts_with("starts with `/`")),
        "{keys:?}"
    );
    assert_eq!(keys[1], ("lead.asdf", None), "{keys:?}");
    assert_eq!(entries[0].url, "s3://data//lead.asdf");
    assert_eq!(entries[0].size, Some(std::fs::metadata(&a).unwrap().len()));
    let out = moto.cli().args(["verify", "s3://data/"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  s3://data//lead.asdf:") && text.contains("\"/lead.asdf\" starts with `/`"),
        "{text}"
    );
    assert_eq!(
        text.matches("ok    s3://data/lead.asdf (1 blocks)").count(),
        1,
        "{text}"
    );
    assert!(text.contains("2 files: 1 verified, 1 failed"), "{text}");
    // Named in a URL: refused, nothing read or written.
    for args in [
        &["info", "s3://data//lead.asdf"][..],
        &["convert", a.to_str().unwrap(), "-o", "s3://data//new.asdf"],
    ] {
        let out = moto.cli().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {text}");
        assert!(
            text.contains("starts with `/`") && text.contains("nothing was read or written"),
            "{text}"
        );
    }
    assert_eq!(moto.boto3_list(""), ["/lead.asdf", "lead.asdf"]);
}

/// Found by the review: the summary of `verify`/`info` over a prefix gave the time after the
/// listing, not counting it (a listing of a million keys is minutes). On a network where each
/// connection takes 1.5 s to pass, a prefix of no ASDF file says 1.5 s or more.
#[test]
fn the_summarys_time_counts_the_listing() {
    let moto = Server::moto();
    let d = dir("remote-edges-listing-time");
    let note = d.join("readme.txt");
    std::fs::write(&note, b"not ASDF").unwrap();
    moto.boto3_put("slow/readme.txt", &note);
    let proxy = Proxy::start(moto.port, Duration::from_millis(1500));
    for command in ["verify", "info"] {
        let out = moto
            .cli()
            .env("AWS_ENDPOINT_URL", proxy.endpoint())
            .args([command, "s3://data/slow/"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!("{command}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        let summary = stdout.lines().last().unwrap_or_default();
        assert!(summary.starts_with("0 files:"), "{summary}");
        let secs: f64 = summary
            .split(" in ")
            .nth(1)
            .and_then(|r| r.split(" s").next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no time in {summary:?}"));
        assert!(secs >= 1.4, "{command}: the listing's 1.5 s not counted: {summary}");
    }
    assert!(proxy.lists.load(Ordering::SeqCst) >= 2);
}

/// Found by the review: an interrupt that came while an upload was completing (its last part
/// sent, too late to stop it) was swallowed: the command exited 0 and said nothing. It says
/// that the upload had completed, and exits as an interrupt does (130).
#[test]
fn an_interrupt_too_late_to_stop_an_upload_is_said_and_not_swallowed() {
    let moto = Server::moto();
    let d = dir("remote-edges-late-interrupt");
    let nine = d.join("nine.asdf");
    super::sample(&nine, 9, None);
    // The completion is held 3 s on its way: the interrupt comes while it is in flight.
    let proxy = Proxy::with_hold(moto.port, Duration::ZERO, Some(Duration::from_secs(3)));
    let mut child = moto
        .cli()
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .args(["convert", nine.to_str().unwrap(), "-o", "s3://data/late.asdf"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !proxy.held.load(Ordering::SeqCst) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the upload ended before its completion"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no completion came");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) of our own child's pid.
    let r = unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    assert_eq!(r, 0);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    println!("{:?}: {err}", out.status.code());
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted, but too late to stop the upload: it had completed"),
        "{err}"
    );
    assert_eq!(moto.boto3_list(""), ["late.asdf"]);
    assert_eq!(moto.state().1, 0, "no upload left");
}
