//! `asdf::open_url` over the range-counting HTTP server of tests/servers (Python's standard
//! library only), on loopback: what a remote open fetches, and that reads equal a local open's;
//! writes by `PUT` to a server that takes them.
#![allow(clippy::unwrap_used, clippy::panic)]

use asdf_conformance::{serve, serve_writable, stop};
use std::process::Command;

/// A file of `big` (raw, of `shape`) and 50,000 zlib-compressed `i32`s at `/z` (returned).
fn big_and_z(big: &[f64], shape: &[usize]) -> (asdf::AsdfFile, Vec<i32>) {
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_DEFAULT).unwrap();
    f.put_array("/big", asdf::NewArray::from_slice(big, shape).unwrap())
        .unwrap();
    let z: Vec<i32> = (0..50_000).collect();
    f.put_array(
        "/z",
        asdf::NewArray::from_slice(&z, &[50_000])
            .unwrap()
            .compression(asdf::Label::ZLIB),
    )
    .unwrap();
    (f, z)
}

#[test]
fn a_remote_file_reads_as_the_local_one_with_few_requests() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test");
    std::fs::create_dir_all(&dir).unwrap();
    let big: Vec<f64> = (0..300_000).map(f64::from).collect();
    let (f, z) = big_and_z(&big, &[300_000]);
    f.write(dir.join("r.asdf"), &asdf::WriteOptions::default()).unwrap();

    let (mut server, port) = serve("python3", &dir);
    let url = format!("http://127.0.0.1:{port}/r.asdf");
    let result = std::panic::catch_unwind(|| {
        let remote = asdf::Open::url(&url).open().unwrap();
        let stats = remote.source().remote_stats().unwrap();
        assert!(stats.requests() <= 3, "open took {} requests", stats.requests());
        assert_eq!(
            remote
                .array("/big")
                .unwrap()
                .read_region::<Vec<f64>>(&"299999".parse().unwrap())
                .unwrap()[0],
            299_999.0
        );
        assert_eq!(remote.array("/z").unwrap().read::<Vec<i32>>().unwrap(), z);
        assert_eq!(remote.array("/big").unwrap().read::<Vec<f64>>().unwrap(), big);
        let before = stats.requests();
        let _ = remote
            .array("/big")
            .unwrap()
            .read_region::<Vec<f64>>(&"5".parse().unwrap())
            .unwrap();
        assert!(stats.requests() <= before + 1);
        // Errors name the URL.
        let missing = format!("http://127.0.0.1:{port}/missing.asdf");
        let e = asdf::Open::url(&missing).open().unwrap_err();
        assert!(e.to_string().contains("missing.asdf"), "{e}");
        assert_eq!(e.kind(), asdf::ErrorKind::Io);
        let e = asdf::Open::url("ftp://x/y").open().unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Usage);
        // A picture of a remote array is the picture of the local one (`asdf-cli preview URL`).
        let local = asdf::open(dir.join("r.asdf")).unwrap();
        let options = asdf_preview::Options::default();
        let here = asdf_preview::draw(&local, "/big", Some(&"1000:3000".parse().unwrap()), &options).unwrap();
        let there = asdf_preview::draw(&remote, "/big", Some(&"1000:3000".parse().unwrap()), &options).unwrap();
        assert_eq!(here, there);
    });
    stop(&mut server, result);
}

/// A cutout of a chunked array (asdf-zarr's layout) over HTTP: only the chunk map and the
/// blocks of the chunks the region touches are fetched, the chunks of one grid row (neighbour
/// blocks) in one request with their headers.
#[test]
fn a_remote_cutout_of_a_chunked_array_fetches_only_its_chunks_coalesced() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test-chunked");
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_DEFAULT).unwrap();
    let n = 1024usize;
    let data: Vec<f32> = (0..n * n).map(|i| ((i % 7919) as f32).sin() * 1000.0).collect();
    f.put_array(
        "/image",
        asdf::NewArray::from_slice(&data, &[n, n])
            .unwrap()
            .chunks(&[128, 128])
            .compression(asdf::Label::ZSTD),
    )
    .unwrap();
    let path = dir.join("c.asdf");
    f.write(&path, &asdf::WriteOptions::default()).unwrap();
    // What the touched chunks' blocks hold (read locally): rows 2..=3, columns 1..=4 of the grid.
    let local = asdf::open(&path).unwrap();
    let map = local.array("/image").unwrap().chunk_map().unwrap();
    let mut touched = 0u64;
    for r in 2..=3 {
        for c in 1..=4 {
            let b = local.source().block(map.blocks[r * 8 + c].unwrap()).unwrap();
            touched += b.header().unwrap().used_size + 54;
        }
    }
    let (mut server, port) = serve("python3", &dir);
    let url = format!("http://127.0.0.1:{port}/c.asdf");
    let result = std::panic::catch_unwind(|| {
        let remote = asdf::Open::url(&url).open().unwrap();
        let stats = remote.source().remote_stats().unwrap();
        let a = remote.array("/image").unwrap();
        let (r0, b0) = (stats.requests(), stats.bytes());
        let region: asdf::Region = "300:500, 200:600".parse().unwrap();
        let cut = a.read_region::<Vec<f32>>(&region).unwrap();
        let want: Vec<f32> = (300..500)
            .flat_map(|i| (200..600).map(move |j| (i, j)))
            .map(|(i, j)| data[i * n + j])
            .collect();
        assert_eq!(cut, want);
        let (requests, bytes) = (stats.requests() - r0, stats.bytes() - b0);
        println!(
            "remote cutout of 8 chunks: {requests} requests, {bytes} bytes (the chunks' blocks: {touched}); file {} bytes",
            std::fs::metadata(&path).unwrap().len()
        );
        // Two grid rows of four neighbour chunks: two requests (the chunk map came with the
        // array handle).
        assert_eq!(requests, 2, "{:?}", stats.ranges());
        assert!(
            bytes >= touched && bytes <= touched + 2 * 4096,
            "{bytes} fetched, {touched} touched"
        );
    });
    stop(&mut server, result);
}

/// An asdf-zarr array whose chunks are in a Zarr store on the same server as the file
/// (zarr-python's `FSStore` over HTTP, as Python asdf + asdf-zarr write it): read over HTTP
/// equal to what zarr-python reads; refused from a local open and from another origin.
#[test]
fn a_url_store_beside_a_remote_file_reads_as_zarr_python_reads_it() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test-url-store");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let py = asdf_testdata::interop_python();
    let (mut server, port) = serve(&py, &dir);
    let result = std::panic::catch_unwind(|| {
        let script = r#"
import json, sys
import asdf, numcodecs, numpy as np, zarr
d, base = sys.argv[1], sys.argv[2]
a = (np.arange(37 * 23, dtype="<f8").reshape(37, 23) * 0.5) ** 1.5
z = zarr.create(a.shape, chunks=(10, 7), dtype="<f8", compressor=numcodecs.Zstd(3), fill_value=0,
                store=zarr.DirectoryStore(d + "/s.zarr"))
z[:30] = a[:30]  # the last rows' chunks never written: the fill value
r = zarr.open_array(zarr.storage.FSStore(base + "/s.zarr", mode="r"), mode="r")
asdf.AsdfFile({"r": r}).write_to(d + "/u.asdf")
with asdf.open(d + "/u.asdf") as af:
    json.dump(np.asarray(af["r"][...]).ravel().tolist(), open(d + "/u.json", "w"))
"#;
        let base = format!("http://127.0.0.1:{port}");
        let out = Command::new(&py)
            .args(["-c", script])
            .arg(&dir)
            .arg(&base)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let want: Vec<f64> = serde_json::from_slice(&std::fs::read(dir.join("u.json")).unwrap()).unwrap();
        let remote = asdf::Open::url(&format!("{base}/u.asdf")).open().unwrap();
        let a = remote.array("/r").unwrap();
        assert_eq!(a.shape(), [37, 23]);
        assert_eq!(a.read::<Vec<f64>>().unwrap(), want);
        let fresh = asdf::Open::url(&format!("{base}/u.asdf")).open().unwrap();
        let region: asdf::Region = "25:37:3, 5:9".parse().unwrap();
        let cut = fresh.array("/r").unwrap().read_region::<Vec<f64>>(&region).unwrap();
        let expect: Vec<f64> = (25..37)
            .step_by(3)
            .flat_map(|i| (5..9).map(move |j| (i, j)))
            .map(|(i, j)| want[i * 23 + j])
            .collect();
        assert_eq!(cut, expect);
        // A local open does not fetch what the file names on a server.
        let local = asdf::open(dir.join("u.asdf")).unwrap();
        let e = local.array("/r").and_then(|a| a.read::<Vec<f64>>()).unwrap_err();
        assert!(e.to_string().contains("opened from a URL"), "{e}");
        // Nor does a remote file make its reader fetch from another origin.
        let text = std::fs::read_to_string(dir.join("u.asdf")).unwrap();
        std::fs::write(
            dir.join("other.asdf"),
            text.replace(&format!("'{base}/s.zarr'"), "'http://127.0.0.2:9/s.zarr'"),
        )
        .unwrap();
        let other = asdf::Open::url(&format!("{base}/other.asdf")).open().unwrap();
        match other.array("/r").and_then(|a| a.read::<Vec<f64>>()) {
            Err(asdf::Error::Chunked {
                source: asdf::ChunkedError::StoreRefused(_),
                ..
            }) => {}
            x => panic!("{x:?}"),
        }
    });
    stop(&mut server, result);
}

/// Writes to a plain HTTP server by one conditional `PUT`: the bytes the server stores are the
/// bytes of the same file written locally; a write over a file that changed since it was read
/// is refused and the other bytes kept; a server that takes no writes says so.
#[test]
fn a_file_written_by_put_is_the_local_write_and_a_changed_one_is_refused() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test-put");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("served")).unwrap();
    // 12 MiB: the body goes in pieces.
    let big: Vec<f64> = (0..1_572_864).map(|i| f64::from(i) * 0.5).collect();
    let (f, z) = big_and_z(&big, &[1024, 1536]);
    let options = asdf::WriteOptions::default();
    f.write(dir.join("local.asdf"), &options).unwrap();
    let local = std::fs::read(dir.join("local.asdf")).unwrap();

    let (mut server, port) = serve_writable("python3", &dir.join("served"));
    let url = format!("http://127.0.0.1:{port}/run/new.asdf");
    let served = dir.join("served/run/new.asdf");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        f.write(&url, &options).unwrap();
        assert!(
            std::fs::read(&served).unwrap() == local,
            "the server holds the local write's bytes"
        );
        let remote = asdf::Open::url(&url).open().unwrap();
        assert_eq!(remote.array("/big").unwrap().read::<Vec<f64>>().unwrap(), big);
        assert_eq!(remote.array("/z").unwrap().read::<Vec<i32>>().unwrap(), z);
        // Written again over itself (the version a HEAD sees): fine.
        f.write(&url, &options).unwrap();
        // Another writer replaces the file after it was read: the write over it is refused.
        let other = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {y: 2}\n...\n";
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&served, other).unwrap();
        let e = remote.write(&url, &options).unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Refused, "{e}");
        assert!(e.to_string().contains("changed since it was read"), "{e}");
        assert_eq!(std::fs::read(&served).unwrap(), other);
        // A stale ETag given by the caller: refused too.
        let e = f
            .write(
                asdf::Target::Url {
                    url: &url,
                    remote: &asdf::RemoteOptions::default(),
                    etag: Some("\"1-1\""),
                },
                &options,
            )
            .unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Refused, "{e}");
        assert_eq!(std::fs::read(&served).unwrap(), other);
    }));
    stop(&mut server, result);

    // A server that takes no writes (405): a usage error naming the URL.
    let (mut server, port) = serve("python3", &dir.join("served"));
    let url = format!("http://127.0.0.1:{port}/run/other.asdf");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let e = f.write(&url, &options).unwrap_err();
        assert_eq!(e.kind(), asdf::ErrorKind::Usage, "{e}");
        assert!(
            e.to_string().contains("takes no writes") && e.to_string().contains("other.asdf"),
            "{e}"
        );
        assert!(!dir.join("served/run/other.asdf").exists());
    }));
    stop(&mut server, result);
}

/// A remote file finds its blocks past the first on first need: an open and a read of the
/// whole first block are two requests (the head, the block's bytes) and fetch nothing of the
/// file's tail (its block index); a block past the first finds them, and what finding them
/// warns of (here a damaged index, the blocks then found by scanning) is among the file's
/// warnings from then on, as a local open has it at once.
#[test]
fn a_remote_files_first_block_is_read_without_its_block_index() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test-lazy-blocks");
    std::fs::create_dir_all(&dir).unwrap();
    let big: Vec<f64> = (0..400_000).map(|i| f64::from(i) * 0.5).collect();
    let (f, z) = big_and_z(&big, &[400, 1000]);
    let path = dir.join("l.asdf");
    f.write(&path, &asdf::WriteOptions::default()).unwrap();
    // The same file with its block index damaged (its first entry made to point nowhere).
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(17).rposition(|w| w == b"#ASDF BLOCK INDEX").unwrap();
    let entry = at + bytes[at..].windows(3).position(|w| w == b"\n- ").unwrap() + 3;
    bytes[entry] = b'9';
    std::fs::write(dir.join("damaged.asdf"), &bytes).unwrap();
    let local = asdf::open(dir.join("damaged.asdf")).unwrap();
    let local_warnings: Vec<String> = local.warnings().iter().map(ToString::to_string).collect();
    assert!(local_warnings.iter().any(|w| w.contains("index")), "{local_warnings:?}");
    let tail = u64::try_from(at).unwrap();

    let (mut server, port) = serve("python3", &dir);
    let result = std::panic::catch_unwind(|| {
        for name in ["l.asdf", "damaged.asdf"] {
            let remote = asdf::Open::url(&format!("http://127.0.0.1:{port}/{name}"))
                .open()
                .unwrap();
            let stats = remote.source().remote_stats().unwrap();
            // The first block's handle (as Python's reads take it) finds nothing more either.
            let first = remote.source().block(0).unwrap();
            assert_eq!(first.header().unwrap().data_size, 3_200_000);
            assert_eq!(remote.array("/big").unwrap().read::<Vec<f64>>().unwrap(), big);
            assert_eq!(stats.requests(), 2, "{name}: {:?}", stats.ranges());
            assert!(
                stats.ranges().iter().all(|&(_, end)| end <= tail),
                "{name}: {:?}",
                stats.ranges()
            );
            // The second block finds the rest: its values, and the index's damage reported.
            assert_eq!(remote.array("/z").unwrap().read::<Vec<i32>>().unwrap(), z);
            assert_eq!(remote.source().blocks().len(), 2);
            let warnings: Vec<String> = remote.warnings().iter().map(ToString::to_string).collect();
            if name == "damaged.asdf" {
                assert_eq!(warnings, local_warnings);
            } else {
                assert!(warnings.is_empty(), "{warnings:?}");
            }
        }
    });
    stop(&mut server, result);
}

/// A remote file replaced by another writer after its first block was read: finding the
/// other blocks (now, on need) meets the other version, and every read of a block is that
/// error, naming the file, never the other version's bytes nor a block said to be missing.
#[test]
fn blocks_found_after_the_file_was_replaced_are_an_error() {
    let root = asdf_testdata::workspace_root();
    let dir = root.join("target/remote-test-lazy-replaced");
    std::fs::create_dir_all(&dir).unwrap();
    let big: Vec<f64> = (0..100_000).map(f64::from).collect();
    let (f, _) = big_and_z(&big, &[100_000]);
    let path = dir.join("m.asdf");
    f.write(&path, &asdf::WriteOptions::default()).unwrap();
    let (mut server, port) = serve("python3", &dir);
    let result = std::panic::catch_unwind(|| {
        let remote = asdf::Open::url(&format!("http://127.0.0.1:{port}/m.asdf"))
            .open()
            .unwrap();
        assert_eq!(remote.array("/big").unwrap().read::<Vec<f64>>().unwrap(), big);
        // Another writer replaces it (same layout, other values), as a write does: renamed
        // into place, so its ETag (size and mtime) changes.
        let zeros = vec![0.0f64; 100_000];
        let (g, _) = big_and_z(&zeros, &[100_000]);
        let tmp = dir.join("m.asdf.new");
        g.write(&tmp, &asdf::WriteOptions::default()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::rename(&tmp, &path).unwrap();
        let e = remote.array("/z").and_then(|a| a.read::<Vec<i32>>()).unwrap_err();
        assert!(e.to_string().contains("m.asdf"), "{e}");
        assert!(e.to_string().contains("finding the file's blocks"), "{e}");
        let e = remote.source().block(1).unwrap_err();
        assert!(e.to_string().contains("m.asdf"), "{e}");
        // The first block too, from then on: nothing reads on as if the file had one block.
        assert!(remote.array("/big").and_then(|a| a.read::<Vec<f64>>()).is_err());
    });
    stop(&mut server, result);
}
