//! Writes to object storage, on moto's S3 server started here on loopback: files written by
//! the library (`write_to_url`), by `asdf-cli convert -o s3://...` and over an object opened
//! from S3 are read back by Python asdf 6 through s3fs and compared value by value; an upload
//! interrupted (SIGTERM) or killed (SIGKILL: its upload guard aborts it) leaves no object and no
//! parts;
//! a write over an object that changed since it was read is refused and changes nothing.
//! The same for `az://` on Azurite (Microsoft's Azure Storage emulator), read back by Azure's
//! own Python client and Python asdf.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Object keys, listings, deadlines and servers that ignore `Range` (EDGES.md's "Names" and
/// "Network" for remote files).
#[path = "remote_edges.rs"]
mod remote_edges;

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A test server's process (`tests/servers/*.py`: moto's S3 server, the hostile HTTP
/// server), stopped when dropped (its standard input closes). The one helper of this file and
/// of `remote_edges`.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts a script that prints `PORT <n>` once it answers and serves until its standard
    /// input closes.
    fn start(script: &str, args: &[&str]) -> Self {
        let mut cmd = Command::new(asdf_testdata::interop_python());
        cmd.arg(root().join("tests/servers").join(script))
            .args(args)
            .stderr(Stdio::null());
        let (child, port) = start_server(cmd, script);
        Server { child, port }
    }

    /// moto's S3 server with a bucket `data`.
    fn moto() -> Self {
        Self::start("s3_server.py", &[])
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn options(&self) -> asdf::RemoteOptions {
        moto_options(self.endpoint())
    }

    /// `asdf-cli` with the endpoint and credentials in its environment, as a user's shell has
    /// them.
    fn cli(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_asdf-cli"));
        cmd.env("AWS_ENDPOINT_URL", self.endpoint())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1");
        cmd
    }

    /// An unsigned request to moto (which does not check signatures): status and body.
    fn http(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let status = String::from_utf8_lossy(&answer[9..12]).parse().unwrap();
        (status, answer[head_end + 4..].to_vec())
    }

    /// The whole object at `url` (a signed request: objects are private).
    fn get(&self, url: &str) -> Vec<u8> {
        let (size, _) = asdf::remote::head(url, &self.options()).unwrap().unwrap();
        asdf::remote::fetch_range(url, &self.options(), 0..size, None).unwrap()
    }

    /// Keys in bucket `data`, and the multipart uploads in progress there.
    fn state(&self) -> (Vec<String>, usize) {
        let (_, list) = self.http("GET", "/data?list-type=2", b"");
        let (_, ups) = self.http("GET", "/data?uploads", b"");
        let text = String::from_utf8_lossy(&list).to_string();
        let keys = text
            .split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_string)
            .collect();
        (keys, String::from_utf8_lossy(&ups).matches("<UploadId>").count())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Starts a test server's script (`cmd`), which prints `PORT <n>` once it answers and serves
/// until its standard input closes: the process and the port.
fn start_server(mut cmd: Command, what: &str) -> (Child, u16) {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .strip_prefix("PORT ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("{what} did not start: {line:?}"));
    (child, port)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A file of `mib` MiB of float64 values (a ramp and a pseudo-random walk), plus a small
/// image and a few scalars.
fn sample(path: &Path, mib: usize, compression: Option<&str>) {
    let n = mib << 17;
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let data: Vec<f64> = (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i as f64 * 0.5 + (x >> 40) as f64
        })
        .collect();
    let img: Vec<i16> = (0..120 * 77).map(|i| i16::try_from(i % 3001).unwrap() - 1500).collect();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let mut a = asdf::NewArray::from_slice(&data, &[n]).unwrap();
    if let Some(c) = compression {
        a = a.compression(asdf::Label::from_name(c).unwrap());
    }
    f.put_array("/sci/data", a).unwrap();
    f.put_array("/sci/image", asdf::NewArray::from_slice(&img, &[120, 77]).unwrap())
        .unwrap();
    f.set("/telescope", asdf::Node::str("JWST")).unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
}

/// Python asdf 6 + s3fs read each URL and compare it with the local file: one JSON line each.
fn read_back(moto: &Server, pairs: &[(&str, &Path)]) -> Vec<serde_json::Value> {
    let mut cmd = Command::new(asdf_testdata::interop_python());
    cmd.arg(root().join("tests/interop/s3_read_back.py"))
        .arg(moto.endpoint());
    for (url, local) in pairs {
        cmd.arg(url).arg(local);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn writes_from_the_library_and_the_cli_read_back_by_python_asdf_and_s3fs() {
    let moto = Server::moto();
    let d = dir("s3-writes");
    let (raw, zstd) = (d.join("raw.asdf"), d.join("zstd.asdf"));
    sample(&raw, 20, None);
    sample(&zstd, 12, Some("zstd"));
    // The library: a file opened locally written to S3 (parts of 8 MiB: 3 parts).
    let f = asdf::Open::path_or_url(&raw).open().unwrap();
    f.write(
        asdf::Target::Url {
            url: "s3://data/lib/raw.asdf",
            remote: &moto.options(),
            etag: None,
        },
        &asdf::WriteOptions::default(),
    )
    .unwrap();
    // The CLI, credentials and endpoint from the environment, as a user's shell has them.
    let out = moto
        .cli()
        .args(["convert", zstd.to_str().unwrap(), "-o", "s3://data/cli/zstd.asdf"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = moto
        .cli()
        .args(["defragment", raw.to_str().unwrap(), "-o", "s3://data/cli/raw.asdf"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A file opened from S3 and written back over itself (unchanged since: allowed).
    let remote = asdf::Open::path_or_url("s3://data/cli/raw.asdf")
        .storage_options(moto.options())
        .open()
        .unwrap();
    remote
        .write(
            asdf::Target::Url {
                url: "s3://data/cli/raw.asdf",
                remote: &moto.options(),
                etag: None,
            },
            &asdf::WriteOptions::default(),
        )
        .unwrap();
    let got = read_back(
        &moto,
        &[
            ("s3://data/lib/raw.asdf", &raw),
            ("s3://data/cli/zstd.asdf", &zstd),
            ("s3://data/cli/raw.asdf", &raw),
        ],
    );
    println!("{got:?}");
    assert_eq!(got.len(), 3);
    for g in &got {
        assert_eq!(g["arrays"], 2, "{g}");
        assert_eq!(g["tree_equal"], true, "{g}");
        assert_eq!(g["arrays_equal"], true, "{g}");
    }
    assert_eq!(got[0]["values"], 20 * 131_072 + 120 * 77);
    let (keys, uploads) = moto.state();
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert_eq!(uploads, 0, "no upload left behind");
}

#[test]
fn a_write_over_an_object_changed_since_it_was_read_is_refused() {
    let moto = Server::moto();
    let d = dir("s3-changed");
    let local = d.join("a.asdf");
    sample(&local, 1, None);
    let f = asdf::Open::path_or_url(&local).open().unwrap();
    let url = "s3://data/a.asdf";
    f.write(
        asdf::Target::Url {
            url,
            remote: &moto.options(),
            etag: None,
        },
        &asdf::WriteOptions::default(),
    )
    .unwrap();
    let opened = asdf::Open::path_or_url(url)
        .storage_options(moto.options())
        .open()
        .unwrap();
    // Another writer replaces the object after it was read.
    let other = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {x: 1}\n...\n";
    let other_path = d.join("other.asdf");
    std::fs::write(&other_path, other).unwrap();
    let other_file = std::fs::File::open(&other_path).unwrap();
    asdf::remote::put_file(
        url,
        &moto.options(),
        &other_file,
        &asdf::remote::upload::Condition::Overwrite,
        &|_, _| {},
    )
    .unwrap();
    let e = opened
        .write(
            asdf::Target::Url {
                url,
                remote: &moto.options(),
                etag: None,
            },
            &asdf::WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), asdf::ErrorKind::Refused, "{e}");
    assert!(e.to_string().contains("changed since it was read"), "{e}");
    assert_eq!(moto.get(url), other, "the other writer's object is kept");
    // Also with an ETag given by the caller (a read made elsewhere).
    let e = f
        .write(
            asdf::Target::Url {
                url,
                remote: &moto.options(),
                etag: Some("\"0123456789abcdef\""),
            },
            &asdf::WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), asdf::ErrorKind::Refused, "{e}");
    assert_eq!(moto.get(url), other);
    assert_eq!(moto.state().1, 0, "refused uploads are aborted");
}

/// Starts `asdf-cli convert BIG -o s3://data/KEY`, waits until its upload has begun, sends
/// `signal`, and returns the exit status.
fn interrupted_upload(moto: &Server, big: &Path, key: &str, signal: i32) -> std::process::ExitStatus {
    let mut child = moto
        .cli()
        .args(["convert", big.to_str().unwrap(), "-o", &format!("s3://data/{key}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while moto.state().1 == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the upload ended before it was interrupted"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no upload began");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) of our own child's pid.
    let r = unsafe { libc::kill(i32::try_from(child.id()).unwrap(), signal) };
    assert_eq!(r, 0);
    child.wait().unwrap()
}

#[test]
fn an_interrupted_or_killed_upload_leaves_no_object_and_no_parts() {
    let moto = Server::moto();
    let d = dir("s3-killed");
    let big = d.join("big.asdf");
    // 192 MiB: 24 parts of 8 MiB, some seconds to moto.
    sample(&big, 192, None);
    let status = interrupted_upload(&moto, &big, "term.asdf", libc::SIGTERM);
    assert!(!status.success());
    let (keys, uploads) = moto.state();
    assert!(keys.is_empty(), "{keys:?}");
    assert_eq!(uploads, 0, "SIGTERM: the upload was aborted, its parts deleted");
    let status = interrupted_upload(&moto, &big, "kill.asdf", libc::SIGKILL);
    assert!(!status.success());
    // A killed process cannot abort; its upload guard (a process of its own, told of the
    // upload through a pipe that closes when the writer dies) does.
    let start = Instant::now();
    let (keys, uploads) = loop {
        let (keys, uploads) = moto.state();
        if uploads == 0 || start.elapsed() > Duration::from_secs(60) {
            break (keys, uploads);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "after SIGKILL: {uploads} upload(s) left, {:.2} s after the kill",
        start.elapsed().as_secs_f64()
    );
    assert!(keys.is_empty(), "{keys:?}");
    assert_eq!(uploads, 0, "SIGKILL: the upload guard aborted the upload");
}

/// The guard creates the upload and answers its id (so that no upload exists that its guard
/// does not know of): a writer that dies before it reads the id, or after, leaves nothing; a
/// writer that says `done` is trusted (the guard does not touch the upload).
#[test]
fn the_upload_guard_creates_the_upload_and_aborts_it_whenever_the_writer_is_gone() {
    let moto = Server::moto();
    let guard = |key: &str| {
        let mut child = moto
            .cli()
            .arg("__upload-guard")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let request = format!("asdf-rs upload guard 2\nurl s3://data/{key}\nanonymous 0\nend\n");
        child.stdin.as_mut().unwrap().write_all(request.as_bytes()).unwrap();
        child
    };
    let id_of = |child: &mut Child| {
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.strip_prefix("upload ")
            .unwrap_or_else(|| panic!("the guard answered {line:?}"))
            .trim_end()
            .to_string()
    };
    let stderr = |child: Child| {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    // The writer dies at once: before the upload exists, or before it learns the id.
    let mut child = guard("gone-before.asdf");
    drop(child.stdin.take());
    let said = stderr(child);
    assert!(said.contains("the upload was aborted"), "{said}");
    assert_eq!(moto.state().1, 0, "an upload nobody but the guard knew of was left");

    // The writer learns the id (the upload is there), then dies.
    let mut child = guard("gone-after.asdf");
    let id = id_of(&mut child);
    assert!(!id.is_empty());
    assert_eq!(moto.state().1, 1, "the guard's upload is there while the writer lives");
    drop(child.stdin.take());
    let said = stderr(child);
    assert!(said.contains("the upload was aborted"), "{said}");
    assert_eq!(moto.state().1, 0, "the guard aborted the upload of a writer gone");

    // The writer settles the upload and says `done`: the guard leaves it alone.
    let mut child = guard("settled.asdf");
    let id = id_of(&mut child);
    child.stdin.as_mut().unwrap().write_all(b"done\n").unwrap();
    let said = stderr(child);
    assert!(!said.contains("aborted"), "{said}");
    let (_, ups) = moto.http("GET", "/data?uploads", b"");
    assert!(
        String::from_utf8_lossy(&ups).contains(&id),
        "`done` must leave the upload as it is"
    );
}

/// Azurite (Microsoft's Azure Storage emulator, from npm: `tests/servers/azurite`'s locked
/// package, installed by `npm ci` when missing) on loopback, set up and read by Azure's own
/// Python client (`tests/servers/azurite_server.py`); stopped when dropped.
struct Azurite {
    child: Child,
    port: u16,
}

/// Azurite's development account and key (public, the same in every installation).
const AZURITE_ACCOUNT: &str = "devstoreaccount1";
const AZURITE_KEY: &str = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl Azurite {
    fn start() -> Self {
        let dir = root().join("tests/servers/azurite");
        let bin = dir.join("node_modules/.bin/azurite-blob");
        if !bin.exists() {
            let st = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--silent"])
                .current_dir(&dir)
                .status()
                .unwrap_or_else(|e| panic!("npm (Node.js) is needed to install Azurite: {e}"));
            assert!(st.success(), "npm ci (azurite) failed");
        }
        let mut cmd = Command::new(asdf_testdata::interop_python());
        cmd.arg(root().join("tests/servers/azurite_server.py"))
            .arg("serve")
            .arg(&bin);
        let (child, port) = start_server(cmd, "azurite");
        Azurite { child, port }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/{AZURITE_ACCOUNT}", self.port)
    }

    fn options(&self) -> asdf::RemoteOptions {
        asdf::RemoteOptions::default()
            .setting("azure_storage_account_name", AZURITE_ACCOUNT)
            .setting("azure_storage_account_key", AZURITE_KEY)
            .setting("azure_storage_endpoint", self.endpoint())
            .setting("azure_allow_http", "true")
    }

    /// `asdf-cli` with the account in the environment, as a user's shell has it.
    fn cli(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_asdf-cli"));
        cmd.env("AZURE_STORAGE_ACCOUNT_NAME", AZURITE_ACCOUNT)
            .env("AZURE_STORAGE_ACCOUNT_KEY", AZURITE_KEY)
            .env("AZURE_STORAGE_ENDPOINT", self.endpoint())
            .env("AZURE_ALLOW_HTTP", "true");
        cmd
    }

    /// Azure's client on `data/BLOB`: its answer's one line.
    fn client(&self, args: &[&str]) -> String {
        let out = Command::new(asdf_testdata::interop_python())
            .arg(root().join("tests/servers/azurite_server.py"))
            .arg(args[0])
            .arg(self.port.to_string())
            .args(&args[1..])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The committed blob `data/BLOB` as Azure's client reads it, if there is one.
    fn get(&self, blob: &str, out: &Path) -> Option<Vec<u8>> {
        let said = self.client(&["get", blob, out.to_str().unwrap()]);
        (said != "missing").then(|| std::fs::read(out).unwrap())
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `az://` on Azurite: files written by the library (3 blocks of 8 MiB and a block list) and by
/// `asdf-cli convert`, fetched by Azure's own client and read by Python asdf equal to the local
/// files, and read back through `az://`; a write over a blob replaced since it was read is
/// refused and changes nothing; a killed upload leaves no blob (Azure has no upload to abort:
/// its uncommitted blocks are invisible and dropped by the service).
#[test]
fn azure_blob_storage_on_azurite_writes_read_back_by_azures_client_and_python_asdf() {
    // Azurite comes from npm: without Node.js this says so loudly (CI sets
    // ASDF_REQUIRE_AZURITE=1, which makes it a failure).
    if Command::new("npm").arg("--version").output().is_err() {
        let msg = "NOT RUN: object_store::azure_blob_storage_on_azurite_writes_read_back_by_azures_client_and_python_asdf (needs Node.js with npm to install Azurite)";
        assert!(std::env::var_os("ASDF_REQUIRE_AZURITE").is_none(), "{msg}");
        eprintln!("{msg}");
        return;
    }
    let t0 = Instant::now();
    let az = Azurite::start();
    println!("azurite up in {:.1} s", t0.elapsed().as_secs_f64());
    let d = dir("az-writes");
    let (raw, zstd) = (d.join("raw.asdf"), d.join("zstd.asdf"));
    sample(&raw, 20, None);
    sample(&zstd, 12, Some("zstd"));
    let f = asdf::Open::path_or_url(&raw).open().unwrap();
    f.write(
        asdf::Target::Url {
            url: "az://data/lib/raw.asdf",
            remote: &az.options(),
            etag: None,
        },
        &asdf::WriteOptions::default(),
    )
    .unwrap();
    let out = az
        .cli()
        .args(["convert", zstd.to_str().unwrap(), "-o", "az://data/cli/zstd.asdf"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (got_raw, got_zstd) = (d.join("got-raw.asdf"), d.join("got-zstd.asdf"));
    assert!(az.get("lib/raw.asdf", &got_raw).is_some());
    assert!(az.get("cli/zstd.asdf", &got_zstd).is_some());
    let mut cmd = Command::new(asdf_testdata::interop_python());
    cmd.arg(root().join("tests/interop/s3_read_back.py")).arg("-");
    for (got, local) in [(&got_raw, &raw), (&got_zstd, &zstd)] {
        cmd.arg(got).arg(local);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    println!("{got:?}");
    assert_eq!(got.len(), 2);
    for g in &got {
        assert_eq!(g["arrays"], 2, "{g}");
        assert_eq!(g["tree_equal"], true, "{g}");
        assert_eq!(g["arrays_equal"], true, "{g}");
    }
    assert_eq!(got[0]["values"], 20 * 131_072 + 120 * 77);
    // Read back through az:// by this library: the same values as the local file.
    for (url, local) in [("az://data/lib/raw.asdf", &raw), ("az://data/cli/zstd.asdf", &zstd)] {
        let remote = asdf::Open::path_or_url(url)
            .storage_options(az.options())
            .open()
            .unwrap();
        let local = asdf::Open::path_or_url(local).open().unwrap();
        for p in ["/sci/data", "/sci/image"] {
            let (a, b) = (remote.array(p).unwrap(), local.array(p).unwrap());
            assert!(a.values().unwrap() == b.values().unwrap(), "{url} {p}");
        }
    }

    println!("written and read back at {:.1} s", t0.elapsed().as_secs_f64());
    // A blob replaced after it was read: the write over it is refused and changes nothing.
    let opened = asdf::Open::path_or_url("az://data/lib/raw.asdf")
        .storage_options(az.options())
        .open()
        .unwrap();
    let other = d.join("other.asdf");
    std::fs::write(
        &other,
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {x: 1}\n...\n",
    )
    .unwrap();
    assert_eq!(az.client(&["put", "lib/raw.asdf", other.to_str().unwrap()]), "put");
    let e = opened
        .write(
            asdf::Target::Url {
                url: "az://data/lib/raw.asdf",
                remote: &az.options(),
                etag: None,
            },
            &asdf::WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), asdf::ErrorKind::Refused, "{e}");
    assert_eq!(
        az.get("lib/raw.asdf", &d.join("after.asdf")).unwrap(),
        std::fs::read(&other).unwrap(),
        "the other writer's blob is kept"
    );

    println!("refused at {:.1} s", t0.elapsed().as_secs_f64());
    // A writer killed in the middle of its upload: no blob.
    let big = d.join("big.asdf");
    sample(&big, 192, None);
    let mut child = az
        .cli()
        .args(["convert", big.to_str().unwrap(), "-o", "az://data/killed.asdf"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while az.client(&["uncommitted", "killed.asdf"]) == "0" {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the upload ended before it was killed"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no upload began");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(
        az.get("killed.asdf", &d.join("killed-got.asdf")).is_none(),
        "a killed upload left a blob"
    );
    println!("killed upload checked at {:.1} s", t0.elapsed().as_secs_f64());
}

/// The options that reach moto at `endpoint` (its test credentials and region).
fn moto_options(endpoint: String) -> asdf::RemoteOptions {
    asdf::RemoteOptions::default()
        .setting("endpoint_url", endpoint)
        .setting("key", "testing")
        .setting("secret", "testing")
        .setting("region", "us-east-1")
}

/// The words of a README command line, as a shell splits them (double and single quotes; a
/// `#` after a space starts a comment).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None::<char>, false);
    let mut prev = ' ';
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c == '#' && prev.is_whitespace() => break,
            None if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            None => word.push(c),
        }
        prev = c;
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Every command line of the README (`asdf-cli ...`, and the `cargo run` of the main job)
/// runs and succeeds on the bundled example (`examples/data/small.asdf`, standing for the
/// README's `obs.asdf`, its `/image` for `/sci`), object-store lines on moto's S3 server
/// (`s3://bucket/` standing for its bucket `data`).
#[test]
fn every_command_line_of_the_readme_runs_on_the_bundled_example() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut in_code = false;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let words = shell_words(line.trim());
        match words.first().map(String::as_str) {
            Some("asdf-cli") if in_code => commands.push(words[1..].to_vec()),
            // The main job: `cargo run ... -p asdf-tools -- ARGS` is `asdf-cli ARGS`.
            Some("cargo") if in_code && words.iter().any(|w| w == "asdf-tools") => {
                if let Some(i) = words.iter().position(|w| w == "--") {
                    commands.push(words[i + 1..].to_vec());
                }
            }
            _ => {}
        }
    }
    assert!(
        commands.len() >= 10,
        "only {} command lines found in README.md",
        commands.len()
    );
    let d = dir("readme-commands");
    std::fs::copy(root().join("examples/data/small.asdf"), d.join("obs.asdf")).unwrap();
    std::fs::create_dir_all(d.join("examples/data")).unwrap();
    std::fs::copy(
        root().join("examples/data/small.asdf"),
        d.join("examples/data/small.asdf"),
    )
    .unwrap();
    let moto = Server::moto();
    // A prefix for the README's "every file under a prefix".
    let put = moto
        .cli()
        .current_dir(&d)
        .args(["convert", "obs.asdf", "-o", "s3://data/run42/obs.asdf"])
        .output()
        .unwrap();
    assert!(put.status.success(), "{}", String::from_utf8_lossy(&put.stderr));
    let mut failed = Vec::new();
    for words in &commands {
        let args: Vec<String> = words
            .iter()
            .map(|w| match w.as_str() {
                "/sci" => "/image".to_owned(),
                w => w.replace("s3://bucket/", "s3://data/"),
            })
            .collect();
        let out = moto.cli().current_dir(&d).args(&args).output().unwrap();
        if !out.status.success() {
            failed.push(format!(
                "asdf-cli {}: {:?}\n{}",
                words.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "README command lines that fail:\n{}",
        failed.join("\n")
    );
    // What the lines made is there (a FITS file, a cutout, a picture, an object).
    for made in ["out.fits", "cut.npy", "tiled.asdf", "sci.png"] {
        assert!(d.join(made).is_file(), "{made} was not made");
    }
    assert!(moto.state().0.iter().any(|k| k == "obs.asdf"), "{:?}", moto.state());
}

#[test]
fn readme_lines_split_as_a_shell_splits_them() {
    assert_eq!(
        shell_words(r#"get obs.asdf /sci --slice "0:100, 50:60" -o cut.npy   # a region"#),
        ["get", "obs.asdf", "/sci", "--slice", "0:100, 50:60", "-o", "cut.npy"]
    );
    assert_eq!(shell_words("a 'b c' \"\" d#e"), ["a", "b c", "", "d#e"]);
}
