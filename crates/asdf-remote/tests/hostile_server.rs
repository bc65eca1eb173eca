//! Servers that lie or stall, on loopback (a small HTTP/1.1 server in a thread of the test):
//! a file whose later answers carry another ETag (ignoring `If-Match`) or another total size,
//! a body that never ends behind an honest `Content-Range`, headers dripped a byte at a time.
//! Each read fails with an error, within the deadline and without taking the claimed bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use asdf_layout::ReadAt;
use asdf_remote::{RemoteOptions, RemoteSource};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How the server misbehaves after (or from) its first answer.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Answers honestly.
    Honest,
    /// Later answers carry another ETag, and `If-Match` is ignored.
    Etag,
    /// Later answers give another total in `Content-Range`.
    Size,
    /// Later answers claim `Content-Length: 2^40` and send bytes without end.
    Endless,
    /// Every answer's headers come a byte every 200 ms.
    Drip,
    /// `/f.asdf` redirects to the same file on another origin (this port).
    RedirectElsewhere(u16),
    /// `/f.asdf` redirects to `/g.asdf` on the same server, which answers honestly.
    RedirectHere,
    /// `/f.asdf` redirects to itself.
    RedirectLoop,
    /// Later answers' `Content-Range` names other bytes than those asked for (one later).
    WrongRange,
    /// Later answers send half their body and close the connection.
    Short,
    /// Later answers' bodies come a byte every 200 ms.
    SlowBody,
    /// Every answer is `503 Service Unavailable`.
    Storm,
    /// Honest, but the first answer's body stops after 64 KiB (the connection closed).
    CutFirst,
    /// Honest, but later answers' bodies come in pieces of 16 KiB, 5 ms apart (a slow link).
    Paced,
    /// `Range` ignored: every answer is 200 with the whole file (`python -m http.server`).
    NoRange,
    /// Every answer is `404 Not Found`.
    Missing,
}

fn serve(stream: TcpStream, file: &[u8], mode: Mode, count: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut range = None;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" {
                break;
            }
            let lower = h.to_ascii_lowercase();
            if let Some(r) = lower.strip_prefix("range: bytes=") {
                let (a, b) = r.trim().split_once('-').unwrap();
                // `bytes=A-` (to the end) too.
                range = Some((a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap_or(u64::MAX)));
            }
        }
        let target = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let redirect = match mode {
            Mode::RedirectElsewhere(port) if target == "/f.asdf" => Some(format!("http://127.0.0.1:{port}/f.asdf")),
            Mode::RedirectHere if target == "/f.asdf" => Some("/g.asdf".to_owned()),
            Mode::RedirectLoop => Some("/f.asdf".to_owned()),
            _ => None,
        };
        if let Some(location) = redirect {
            let head = format!("HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n");
            if out.write_all(head.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let n = count.fetch_add(1, Ordering::SeqCst);
        if matches!(mode, Mode::Missing) {
            let head = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            if out.write_all(head.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        if matches!(mode, Mode::Storm) {
            let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
            if out.write_all(head.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let len = file.len() as u64;
        if matches!(mode, Mode::NoRange) {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
            if out.write_all(head.as_bytes()).is_err() || out.write_all(file).is_err() {
                return;
            }
            continue;
        }
        let (a, b) = range.unwrap_or((0, len - 1));
        let b = b.min(len - 1);
        let later = n > 0;
        let etag = if later && matches!(mode, Mode::Etag) {
            "\"v2\""
        } else {
            "\"v1\""
        };
        let total = if later && matches!(mode, Mode::Size) {
            len + 100
        } else {
            len
        };
        let body = &file[usize::try_from(a).unwrap()..=usize::try_from(b).unwrap()];
        let length = if later && matches!(mode, Mode::Endless) {
            1u64 << 40
        } else {
            body.len() as u64
        };
        let (ra, rb) = if later && matches!(mode, Mode::WrongRange) && b + 1 < len {
            (a + 1, b + 1)
        } else {
            (a, b)
        };
        let head = format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {ra}-{rb}/{total}\r\nContent-Length: {length}\r\nETag: {etag}\r\nAccept-Ranges: bytes\r\n\r\n"
        );
        if matches!(mode, Mode::Drip) {
            for byte in head.as_bytes() {
                if out.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        } else if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        if later && matches!(mode, Mode::Endless) {
            let junk = vec![0x5a; 1 << 16];
            let start = Instant::now();
            // Bounded: at most 60 s or 8 GiB, whichever comes first.
            for _ in 0..(1 << 17) {
                if out.write_all(&junk).is_err() || start.elapsed() > Duration::from_secs(60) {
                    return;
                }
            }
            return;
        }
        if later && matches!(mode, Mode::Short) {
            let _ = out.write_all(&body[..body.len() / 2]);
            return;
        }
        if later && matches!(mode, Mode::SlowBody) {
            for byte in body {
                if out.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            return;
        }
        if !later && matches!(mode, Mode::CutFirst) {
            let _ = out.write_all(&body[..body.len().min(64 << 10)]);
            return;
        }
        if later && matches!(mode, Mode::Paced) {
            for piece in body.chunks(16 << 10) {
                if out.write_all(piece).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            continue;
        }
        if out.write_all(body).is_err() {
            return;
        }
    }
}

/// Starts a server on 127.0.0.1 serving `file` in `mode`; returns its URL and request count.
fn start(file: Vec<u8>, mode: Mode) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let file = Arc::new(file);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(stream) = stream else { return };
            let (file, c) = (Arc::clone(&file), Arc::clone(&c));
            std::thread::spawn(move || serve(stream, &file, mode, &c));
        }
    });
    (format!("http://127.0.0.1:{port}/f.asdf"), count)
}

fn options() -> RemoteOptions {
    RemoteOptions {
        head_bytes: 4096,
        page_size: 4096,
        retries: 1,
        request_timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(4),
        ..RemoteOptions::default()
    }
}

fn file() -> Vec<u8> {
    (0..200_000u32).map(|i| (i % 251) as u8).collect()
}

#[test]
fn an_honest_server_reads_back_the_bytes() {
    let data = file();
    let (url, _) = start(data.clone(), Mode::Honest);
    let src = RemoteSource::open(&url, &options()).unwrap();
    let mut buf = vec![0u8; 100_000];
    src.read_exact_at(50_000, &mut buf).unwrap();
    assert!(buf == data[50_000..150_000]);
    let mut small = [0u8; 10];
    src.read_exact_at(199_990, &mut small).unwrap();
    assert_eq!(small, data[199_990..]);
}

/// A large read is one request while that request is fast enough, and split between
/// `concurrency` requests once its first part comes slower than `split_below`: the same bytes
/// either way, each fetched once (the first request stops where the others begin).
#[test]
fn a_large_read_is_split_only_when_one_request_is_slow() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
    let (url, count) = start(data.clone(), Mode::Paced);
    let default = RemoteOptions::default().split_below;
    for (split_below, requests) in [(1u64, 1usize), (default, 4)] {
        let opts = RemoteOptions {
            part_size: 64 << 10,
            concurrency: 4,
            split_below,
            ..options()
        };
        let src = RemoteSource::open(&url, &opts).unwrap();
        let before = count.load(Ordering::SeqCst);
        let logged = src.stats().ranges().len();
        let mut buf = vec![0u8; 900_000];
        src.read_exact_at(10_000, &mut buf).unwrap();
        assert!(buf == data[10_000..910_000], "split_below {split_below}: other bytes");
        assert_eq!(
            count.load(Ordering::SeqCst) - before,
            requests,
            "split_below {split_below}"
        );
        let mut ranges = src.stats().ranges().split_off(logged);
        ranges.sort_unstable();
        assert_eq!(ranges.len(), requests, "{ranges:?}");
        assert_eq!(ranges.first().map(|r| r.0), Some(10_000), "{ranges:?}");
        // The first request stops with the piece of its body that passes where the next
        // begins; the others fetch exactly their parts.
        for (i, w) in ranges.windows(2).enumerate() {
            if i == 0 {
                assert!(w[0].1 >= w[1].0 && w[0].1 - w[1].0 <= 128 << 10, "gap: {ranges:?}");
            } else {
                assert_eq!(w[0].1, w[1].0, "gaps or overlaps: {ranges:?}");
            }
        }
        assert_eq!(ranges.last().map(|r| r.1), Some(910_000), "{ranges:?}");
    }
}

/// With `park`, the open asks from byte 0 to the end and reads its head: a large read from
/// there goes on with that answer (one request in all), and when that answer broke off
/// meanwhile, one new request fetches the rest. Without, the open asks for the head only.
#[test]
fn a_read_after_the_open_goes_on_with_its_answer() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 241) as u8).collect();
    for (mode, requests) in [(Mode::Honest, 1usize), (Mode::CutFirst, 2)] {
        let (url, count) = start(data.clone(), mode);
        let parking = RemoteOptions {
            park: true,
            ..options()
        };
        let src = RemoteSource::open(&url, &parking).unwrap();
        let mut buf = vec![0u8; 990_000];
        src.read_exact_at(1_000, &mut buf).unwrap();
        assert!(buf == data[1_000..991_000], "{mode:?}: other bytes");
        assert_eq!(count.load(Ordering::SeqCst), requests, "{mode:?}");
        // (object_store asks again itself for the rest of a body cut off: not counted.)
        assert!((1..=requests as u64).contains(&src.stats().requests()), "{mode:?}");
        assert!(src.stats().bytes() >= 991_000, "{mode:?}: {}", src.stats().bytes());
    }
    let (url, count) = start(data.clone(), Mode::Honest);
    let src = RemoteSource::open(&url, &options()).unwrap();
    assert_eq!(src.stats().ranges(), [(0, 4096)]);
    let mut buf = vec![0u8; 990_000];
    src.read_exact_at(1_000, &mut buf).unwrap();
    assert!(buf == data[1_000..991_000]);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    // A setting that is not true or false says what it takes.
    let e = RemoteSource::open(&url, &options().setting("park", "maybe"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("park") && e.contains("true or false"), "{e}");
}

/// The open's answer measures the connection's pace: at `split_below` or faster, reads go
/// one at a time (a chunked array's chunks read in one run, one request), slower they go
/// `concurrency` at once.
#[test]
fn reads_go_one_at_a_time_while_the_answers_are_fast() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 239) as u8).collect();
    let (url, _) = start(data, Mode::Honest);
    for (split_below, at_once) in [(1u64, 1usize), (u64::MAX, 6)] {
        let opts = RemoteOptions {
            head_bytes: 256 << 10,
            concurrency: 6,
            split_below,
            ..options()
        };
        let src = RemoteSource::open(&url, &opts).unwrap();
        assert_eq!(src.reads_at_once(), at_once, "split_below {split_below}");
    }
}

#[test]
fn later_answers_of_another_version_fail_the_read() {
    for mode in [Mode::Etag, Mode::Size] {
        let (url, _) = start(file(), mode);
        let src = RemoteSource::open(&url, &options()).unwrap();
        for (at, n) in [(100_000u64, 100usize), (10_000, 100_000)] {
            let mut buf = vec![0u8; n];
            let e = src.read_exact_at(at, &mut buf).unwrap_err().to_string();
            assert!(e.contains("changed"), "{mode:?}: {e}");
        }
        // What a Dask task reads, with the version opened.
        let version = src.stats().version();
        assert_eq!(version.as_ref().map(|v| v.0), Some(200_000));
        let e = asdf_remote::fetch_range(&url, &options(), 10..20, version).unwrap_err();
        assert!(e.to_string().contains("changed"), "{mode:?}: {e}");
    }
}

#[test]
fn an_endless_body_is_cut_off_at_the_bytes_asked_for() {
    let (url, _) = start(file(), Mode::Endless);
    let src = RemoteSource::open(&url, &options()).unwrap();
    let t = Instant::now();
    let mut buf = vec![0u8; 100];
    let e = src.read_exact_at(150_000, &mut buf).unwrap_err().to_string();
    assert!(e.contains("longer than"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn dripped_headers_fail_within_the_deadline() {
    let (url, _) = start(file(), Mode::Drip);
    let t = Instant::now();
    let e = RemoteSource::open(&url, &options()).unwrap_err().to_string();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(10), "{took:?}: {e}");
}

#[test]
fn redirects_stay_on_their_origin_unless_allowed() {
    let data = file();
    let (other, other_count) = start(data.clone(), Mode::Honest);
    let port: u16 = other
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (url, _) = start(data.clone(), Mode::RedirectElsewhere(port));
    let e = RemoteSource::open(&url, &options()).unwrap_err().to_string();
    assert!(e.contains("redirect"), "{e}");
    names_what_a_user_sets(
        &e,
        "ASDF_RS_CROSS_ORIGIN_REDIRECTS=true",
        "storage option cross_origin_redirects=true",
    );
    assert_eq!(other_count.load(Ordering::SeqCst), 0, "the other origin was asked");
    // Allowed as a user allows it (the storage option).
    let allowed = options().setting("cross_origin_redirects", "true");
    let src = RemoteSource::open(&url, &allowed).unwrap();
    let mut buf = vec![0u8; 10];
    src.read_exact_at(1000, &mut buf).unwrap();
    assert_eq!(buf, data[1000..1010]);
    // On the same origin a redirect is followed.
    let (url, _) = start(data.clone(), Mode::RedirectHere);
    let src = RemoteSource::open(&url, &options()).unwrap();
    src.read_exact_at(5000, &mut buf).unwrap();
    assert_eq!(buf, data[5000..5010]);
}

#[test]
fn lying_short_slow_looping_and_failing_servers_are_errors_in_bounded_time() {
    for (mode, large) in [
        (Mode::WrongRange, false),
        (Mode::WrongRange, true),
        (Mode::Short, false),
        (Mode::Short, true),
        (Mode::SlowBody, false),
        (Mode::SlowBody, true),
    ] {
        let (url, _) = start(file(), mode);
        let src = RemoteSource::open(&url, &options()).unwrap();
        let t = Instant::now();
        // A small read (through the cache) and a large one (direct, in parts).
        let (at, n) = if large {
            (10_000u64, 150_000usize)
        } else {
            (150_000, 100)
        };
        let mut buf = vec![0u8; n];
        let r = src.read_exact_at(at, &mut buf);
        let took = t.elapsed();
        assert!(r.is_err(), "{mode:?} large={large}: read succeeded");
        assert!(took < Duration::from_secs(20), "{mode:?} large={large}: {took:?}");
        println!("{mode:?} large={large}: {} ({took:?})", r.unwrap_err());
    }
    for mode in [Mode::RedirectLoop, Mode::Storm] {
        let (url, count) = start(file(), mode);
        let t = Instant::now();
        let e = RemoteSource::open(&url, &options()).unwrap_err().to_string();
        let took = t.elapsed();
        assert!(took < Duration::from_secs(20), "{mode:?}: {took:?}: {e}");
        assert!(count.load(Ordering::SeqCst) <= 4, "{mode:?}: retried without bound");
        println!("{mode:?}: {e} ({took:?})");
    }
}

/// Found by the review: a request that reached the client's own time limit (`request_timeout`,
/// shorter than the deadline) failed with "Generic HTTP error", no limit named. Every timeout
/// now names the limit kept and what was waited for: the headers, or the body.
#[test]
fn every_timeout_names_its_limit_and_what_was_waited_for() {
    let opts = RemoteOptions {
        retries: 0,
        request_timeout: Duration::from_secs(1),
        deadline: Duration::from_secs(30),
        ..options()
    };
    // Headers dripped a byte every 200 ms: the request's limit passes before they are in.
    let (url, _) = start(file(), Mode::Drip);
    let t = Instant::now();
    let e = RemoteSource::open(&url, &opts).unwrap_err().to_string();
    println!("{e} ({:?})", t.elapsed());
    assert!(
        e.contains("timed out waiting for the answer's headers") && e.contains("each request is given 1s"),
        "{e}"
    );
    assert!(!e.contains("Generic HTTP error"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    names_what_a_user_sets(&e, "ASDF_RS_REQUEST_TIMEOUT=SECONDS", "storage option request_timeout");
    // A body that comes a byte every 200 ms, after the open: small and large reads.
    let (url, _) = start(file(), Mode::SlowBody);
    // The limit set as a user sets it (a storage option, in seconds), not by the field.
    let set = RemoteOptions {
        request_timeout: Duration::from_secs(30),
        ..opts.clone()
    }
    .setting("request_timeout", "1");
    let src = RemoteSource::open(&url, &set).unwrap();
    for (at, n) in [(150_000u64, 100usize), (10_000, 150_000)] {
        let mut buf = vec![0u8; n];
        let t = Instant::now();
        let e = src.read_exact_at(at, &mut buf).unwrap_err().to_string();
        println!("{n} bytes: {e} ({:?})", t.elapsed());
        assert!(
            e.contains("timed out waiting for the answer's body") && e.contains("each request is given 1s"),
            "{n} bytes: {e}"
        );
        assert!(e.contains(&format!("bytes {at}..")), "{e}");
        assert!(!e.contains("Generic HTTP error"), "{e}");
        names_what_a_user_sets(&e, "ASDF_RS_REQUEST_TIMEOUT=SECONDS", "storage option request_timeout");
    }
    // The deadline, when it comes first, is the one named, with what was waited for.
    let opts = RemoteOptions {
        request_timeout: Duration::from_secs(30),
        deadline: Duration::from_secs(2),
        ..opts
    };
    let (url, _) = start(file(), Mode::Drip);
    let t = Instant::now();
    let e = RemoteSource::open(&url, &opts).unwrap_err().to_string();
    assert!(
        e.contains("waiting for the answer's headers") && e.contains("deadline of 2s"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    names_what_a_user_sets(&e, "ASDF_RS_DEADLINE=SECONDS", "storage option deadline");
    let (url, _) = start(file(), Mode::SlowBody);
    let set = RemoteOptions {
        deadline: Duration::from_secs(60),
        ..opts
    }
    .setting("deadline", "2");
    let src = RemoteSource::open(&url, &set).unwrap();
    let mut buf = vec![0u8; 100];
    let e = src.read_exact_at(150_000, &mut buf).unwrap_err().to_string();
    assert!(e.contains("the answer's body") && e.contains("deadline of 2s"), "{e}");
    names_what_a_user_sets(&e, "ASDF_RS_DEADLINE=SECONDS", "storage option deadline");
    // A time that is not a number is refused, the setting named.
    let e = RemoteSource::open(&url, &options().setting("deadline", "soon"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the storage option deadline = \"soon\"") && e.contains("a positive number of seconds"),
        "{e}"
    );
}

/// Found by the review: timeouts named `RemoteOptions::request_timeout` and
/// `RemoteOptions::deadline`, fields a user of the CLI or of Python cannot set. Each names
/// the environment variable (asdf-cli) and the storage option (Python) that set it.
fn names_what_a_user_sets(e: &str, variable: &str, option: &str) {
    assert!(!e.contains("RemoteOptions"), "a Rust-only name: {e}");
    assert!(e.contains(variable) && e.contains(option), "{variable}, {option}: {e}");
}

/// Found by the review: a password or token in a URL (`user:secret@`, a SAS `sig`, a presigned
/// `X-Amz-Signature`) was echoed in errors. Every message names the URL with them hidden.
#[test]
fn secrets_in_a_url_never_reach_a_message() {
    let secrets = ["hunter2", "SIGSECRET", "AMZSECRET"];
    let with_secrets = |url: &str| {
        url.replace("http://", "http://reader:hunter2@") + "?sv=2022-11-02&sig=SIGSECRET&X-Amz-Signature=AMZSECRET"
    };
    let check = |e: &str| {
        for s in secrets {
            assert!(!e.contains(s), "{s} in: {e}");
        }
        assert!(
            e.contains("http://reader:***@127.0.0.1:") && e.contains("sig=***") && e.contains("X-Amz-Signature=***"),
            "{e}"
        );
    };
    // The open's error (a server that answers 503).
    let (url, _) = start(file(), Mode::Storm);
    check(
        &RemoteSource::open(&with_secrets(&url), &options())
            .unwrap_err()
            .to_string(),
    );
    // A read's error (a body that stalls), and a setting's.
    let (url, _) = start(file(), Mode::SlowBody);
    let opts = RemoteOptions {
        retries: 0,
        request_timeout: Duration::from_secs(1),
        ..options()
    };
    let src = RemoteSource::open(&with_secrets(&url), &opts).unwrap();
    let mut buf = vec![0u8; 100];
    check(&src.read_exact_at(150_000, &mut buf).unwrap_err().to_string());
    let e = asdf_remote::fetch_range(&with_secrets(&url), &opts.setting("whole_limit", "x"), 0..1, None).unwrap_err();
    check(&e.to_string());
    // Found by the review: the message was redacted but its chain of sources (the store's
    // error, the HTTP client's) and its Debug form (what `unwrap` prints) were not.
    let (url, _) = start(file(), Mode::Storm);
    let e = RemoteSource::open(&with_secrets(&url), &options()).unwrap_err();
    let mut levels = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(level) = next {
        levels.push(level.to_string());
        next = level.source();
    }
    assert!(levels.len() >= 3, "the chain is kept: {levels:?}");
    for level in &levels {
        for s in secrets {
            assert!(!level.contains(s), "{s} in a source: {levels:?}");
        }
    }
    assert!(levels.iter().skip(1).any(|l| l.contains("sig=***")), "{levels:?}");
    let debug = format!("{e:?}");
    for s in secrets {
        assert!(!debug.contains(s), "{s} in Debug: {debug}");
    }
    // And through the facade's error, as a library user meets it.
    let wrapped: Box<dyn std::error::Error> = Box::new(e);
    let mut next = wrapped.source();
    while let Some(level) = next {
        assert!(!secrets.iter().any(|s| level.to_string().contains(s)), "{level}");
        next = level.source();
    }
}

/// Found by the review: a 404 said "Object at location ... not found: Error performing GET
/// ... Server returned non-2xx status code" and was followed by a HEAD. It says what was not
/// found (the URL, its secrets hidden) and what that means, after one request.
#[test]
fn a_missing_file_is_said_as_such_after_one_request() {
    let (url, count) = start(file(), Mode::Missing);
    let url = url.replace("http://", "http://reader:hunter2@") + "?sig=SIGSECRET";
    let e = RemoteSource::open(&url, &options()).unwrap_err();
    let text = e.to_string();
    println!("{text}");
    assert!(e.is_not_found(), "{text}");
    assert!(
        text.contains("http://reader:***@127.0.0.1:")
            && text.contains("sig=***")
            && text.contains("not found: the server has no file at this URL (HTTP 404 Not Found)"),
        "{text}"
    );
    assert!(!text.contains("hunter2") && !text.contains("SIGSECRET"), "{text}");
    assert_eq!(count.load(Ordering::SeqCst), 1, "one request, no HEAD after a 404");
    let e = asdf_remote::fetch_range(&url, &options(), 0..10, None).unwrap_err();
    assert!(e.is_not_found() && e.to_string().contains("no file at this URL"), "{e}");
    assert_eq!(asdf_remote::head(&url, &options()).unwrap(), None);
}

/// This test binary run again as a child process, for the test `name` with `env` set (the
/// environment is the process's: set in a child, it reaches no other test).
fn run_child(name: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("ASDF_REMOTE_TEST_CHILD", name);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {text}");
    text
}

fn is_child(name: &str) -> bool {
    std::env::var_os("ASDF_REMOTE_TEST_CHILD").is_some_and(|c| c == name)
}

/// Found by the review: `ASDF_RS_RANGE_LOG` wrote each request's URL as given, a password and
/// a presigned URL's signature included. The log names the URL as messages do, secrets hidden.
#[test]
fn the_range_log_hides_a_urls_secrets() {
    let name = "the_range_log_hides_a_urls_secrets";
    if is_child(name) {
        let (url, _) = start(file(), Mode::Honest);
        let url = url.replace("http://", "http://reader:hunter2@")
            + "?X-Amz-Credential=AKIASECRET&X-Amz-Signature=AMZSECRET&token=TOKSECRET";
        let src = RemoteSource::open(&url, &options()).unwrap();
        let mut buf = vec![0u8; 100_000];
        src.read_exact_at(50_000, &mut buf).unwrap();
        asdf_remote::fetch_range(&url, &options(), 10..20, None).unwrap();
        return;
    }
    let log = std::env::temp_dir().join(format!("asdf-remote-range-log-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&log);
    run_child(name, &[("ASDF_RS_RANGE_LOG", log.to_str().unwrap())]);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for secret in ["hunter2", "AKIASECRET", "AMZSECRET", "TOKSECRET"] {
        assert!(!text.contains(secret), "{secret} in the range log: {text}");
    }
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 3, "URL START END: {line}");
        assert!(
            fields[0].starts_with("http://reader:***@127.0.0.1:")
                && fields[0].ends_with("/f.asdf?X-Amz-Credential=***&X-Amz-Signature=***&token=***"),
            "{line}"
        );
    }
}

/// Found by the review: `ASDF_RS_WHOLE_LIMIT=18446744073709551615` (or `1e30`, or more digits
/// than a u64 holds) was refused as not a positive number. Any number is taken (beyond
/// `u64::MAX`, as `u64::MAX`); what is not a number is refused, the variable named. The
/// environment's timeouts (`ASDF_RS_REQUEST_TIMEOUT`, `ASDF_RS_DEADLINE`) are read the same.
#[test]
fn the_environments_settings_take_any_number() {
    let name = "the_environments_settings_take_any_number";
    if is_child(name) {
        let data = file();
        let limit = std::env::var("ASDF_RS_WHOLE_LIMIT").unwrap();
        let (url, _) = start(data.clone(), Mode::NoRange);
        let got = asdf_remote::fetch_range(&url, &options(), 10..20, None);
        match limit.as_str() {
            "lots" | "0" | "-1" => {
                let e = got.unwrap_err().to_string();
                assert!(
                    e.contains(&format!("the environment variable ASDF_RS_WHOLE_LIMIT = \"{limit}\""))
                        && e.contains("a positive number of bytes"),
                    "{e}"
                );
            }
            _ => assert_eq!(got.unwrap(), data[10..20], "{limit}"),
        }
        if let Ok(t) = std::env::var("ASDF_RS_REQUEST_TIMEOUT") {
            let (url, _) = start(file(), Mode::SlowBody);
            let opts = RemoteOptions {
                request_timeout: Duration::from_secs(60),
                retries: 0,
                ..options()
            };
            let src = RemoteSource::open(&url, &opts).unwrap();
            let mut buf = vec![0u8; 100];
            let e = src.read_exact_at(150_000, &mut buf).unwrap_err().to_string();
            assert!(e.contains(&format!("each request is given {t}s")), "{e}");
        }
        return;
    }
    for limit in [
        "18446744073709551615",
        "18446744073709551616",
        "1000000000000000000000000000000",
        "1e30",
        "1E+30",
        "5e5",
    ] {
        run_child(name, &[("ASDF_RS_WHOLE_LIMIT", limit)]);
    }
    for refused in ["lots", "0", "-1"] {
        run_child(name, &[("ASDF_RS_WHOLE_LIMIT", refused)]);
    }
    run_child(
        name,
        &[("ASDF_RS_WHOLE_LIMIT", "1e9"), ("ASDF_RS_REQUEST_TIMEOUT", "1")],
    );
}

/// Found by the review: the crate printed its warnings on standard error itself, where a
/// library user could not take them. They go to the hook the caller sets (the URL's secrets
/// hidden), and to standard error only while none is set.
#[test]
fn warnings_go_to_the_hook_the_caller_sets() {
    let data = file();
    let (url, _) = start(data.clone(), Mode::NoRange);
    let url = url.replace("http://", "http://reader:hunter2@");
    let got: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&got);
    asdf_remote::set_warning_hook(Some(Arc::new(move |w: &str| {
        sink.lock().unwrap().push(w.to_string());
    })));
    let src = RemoteSource::open(&url, &options());
    let bytes = asdf_remote::fetch_range(&url, &options(), 10..20, None);
    asdf_remote::set_warning_hook(None);
    let src = src.unwrap();
    assert!(src.stats().read_whole());
    assert_eq!(bytes.unwrap(), data[10..20]);
    let got = got.lock().unwrap().clone();
    let ours: Vec<&String> = got.iter().filter(|w| w.contains("reader:***@127.0.0.1")).collect();
    // Once per URL: the open's, not again for the range fetched after it.
    assert_eq!(ours.len(), 1, "{got:?}");
    assert!(
        ours[0].contains("does not answer range requests")
            && ours[0].contains("200000 bytes were read whole")
            && ours[0].contains("ASDF_RS_WHOLE_LIMIT"),
        "{got:?}"
    );
    assert!(!got.iter().any(|w| w.contains("hunter2")), "{got:?}");
}
