//! `asdf::open_url` over the range-counting HTTP server of tests/servers (Python's standard
//! library only), on loopback: what a remote open fetches, and that reads equal a local open's.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::BufRead;
use std::process::{Command, Stdio};

#[test]
fn a_remote_file_reads_as_the_local_one_with_few_requests() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test");
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_DEFAULT).unwrap();
    let big: Vec<f64> = (0..300_000).map(f64::from).collect();
    f.put_array("/big", asdf::NewArray::from_slice(&big, &[300_000]).unwrap())
        .unwrap();
    let z: Vec<i32> = (0..50_000).collect();
    f.put_array(
        "/z",
        asdf::NewArray::from_slice(&z, &[50_000])
            .unwrap()
            .compression(asdf::Label::ZLIB),
    )
    .unwrap();
    f.write_to(dir.join("r.asdf"), &asdf::WriteOptions::default()).unwrap();

    let mut server = Command::new("python3")
        .arg(root.join("tests/servers/range_server.py"))
        .arg(&dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.split_whitespace().nth(1).unwrap().to_string();
    let url = format!("http://127.0.0.1:{port}/r.asdf");
    let result = std::panic::catch_unwind(|| {
        let remote = asdf::Open::url(&url).open().unwrap();
        let stats = remote.source().remote_stats().unwrap();
        assert!(stats.requests() <= 3, "open took {} requests", stats.requests());
        assert_eq!(remote.array("/big").unwrap().get::<f64>(&[299_999]).unwrap(), 299_999.0);
        assert_eq!(remote.array("/z").unwrap().read::<i32>().unwrap(), z);
        assert_eq!(remote.array("/big").unwrap().read::<f64>().unwrap(), big);
        let before = stats.requests();
        let _ = remote.array("/big").unwrap().get::<f64>(&[5]).unwrap();
        assert!(stats.requests() <= before + 1);
        // Errors name the URL.
        let missing = format!("http://127.0.0.1:{port}/missing.asdf");
        let e = asdf::Open::url(&missing).open().unwrap_err();
        assert!(e.to_string().contains("missing.asdf"), "{e}");
        assert_eq!(e.kind(), asdf::ErrorKind::Io);
        let e = asdf::Open::url("ftp://x/y").open().unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Usage);
    });
    let _ = server.kill();
    let _ = server.wait();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
