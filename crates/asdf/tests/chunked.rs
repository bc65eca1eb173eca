//! Chunked arrays read through the facade: streamed chunk runs cut anywhere, hostile chunk
//! maps and metadata, the block limit, and stores beside the file under the reference policy.

use std::path::Path;

use asdf::core_types::ByteOrder;
use asdf::{ChunkedError, Node, ZARR_TAG_PREFIX};
use asdf_chunked::json_node;

/// A source that hands its streamed reads on in pieces of odd sizes (1 to 997 bytes, so
/// that block headers and data are cut everywhere) and takes `at_once` reads at once.
struct Dribble {
    bytes: Vec<u8>,
    at_once: usize,
}

impl asdf_layout::ReadAt for Dribble {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        self.bytes.as_slice().read_at(offset, buf)
    }
    fn reads_at_once(&self) -> usize {
        self.at_once
    }
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut asdf_layout::source::Sink<'_>) -> std::io::Result<()> {
        let start = usize::try_from(offset).unwrap();
        let mut piece = &self.bytes[start..start + usize::try_from(len).unwrap()];
        let mut k = start;
        while !piece.is_empty() {
            k = (k * 7919 + 13) % 997;
            let n = (k + 1).min(piece.len());
            sink(&piece[..n])?;
            piece = &piece[n..];
        }
        Ok(())
    }
}

/// Chunks streamed in pieces cut anywhere, by one reader or several, read as the whole
/// file in memory reads them: every region of a few shapes, zstd and raw chunks, chunk
/// shapes that do not divide the array's.
#[test]
fn streamed_runs_cut_anywhere_read_as_the_bytes_do() {
    use asdf::{AsdfFile, Label, NewArray, Region, Version, WriteOptions};
    let (rows, cols) = (37usize, 29usize);
    let a: Vec<f64> = (0..rows * cols)
        .map(|i| ((i * 2_654_435_761) % 10_007) as f64 * 0.5)
        .collect();
    for compression in [Some(Label::ZSTD), None] {
        let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
        let mut arr = NewArray::from_slice(&a, &[rows, cols]).unwrap().chunks(&[5, 7]);
        if let Some(c) = compression {
            arr = arr.compression(c);
        }
        f.put_array("/a", arr).unwrap();
        let bytes = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
        for at_once in [1, 3, 8] {
            let file = asdf::Open::source(Dribble {
                bytes: bytes.clone(),
                at_once,
            })
            .open()
            .unwrap();
            for (region, (r0, r1), (c0, c1)) in [
                (":, :", (0, rows), (0, cols)),
                ("0:1, 0:1", (0, 1), (0, 1)),
                ("3:36, 6:22", (3, 36), (6, 22)),
                ("35:37, 28:29", (35, 37), (28, 29)),
                ("10:11, :", (10, 11), (0, cols)),
                (":, 14:15", (0, rows), (14, 15)),
            ] {
                let a = &a;
                let want: Vec<f64> = (r0..r1).flat_map(|i| (c0..c1).map(move |j| a[i * cols + j])).collect();
                // A fresh handle each time: nothing cached from an earlier read.
                let asdf::RegionBytes {
                    bytes: got,
                    byte_order: order,
                    ..
                } = file
                    .array("/a")
                    .unwrap()
                    .read_region(&region.parse::<Region>().unwrap())
                    .unwrap();
                let got: Vec<f64> = got
                    .chunks_exact(8)
                    .map(|b| {
                        let b: [u8; 8] = b.try_into().unwrap();
                        if order == ByteOrder::Big {
                            f64::from_be_bytes(b)
                        } else {
                            f64::from_le_bytes(b)
                        }
                    })
                    .collect();
                assert!(got == want, "{region}, {at_once} at once, {compression:?}");
            }
        }
    }
}

/// A file with a chunked array `/a` (4 x 4 float32 in 2 x 2 zstd chunks), a plain float64
/// array `/b` and an int32 array `/m`, written and opened again with `options`.
fn hostile_base(options: asdf::OpenOptions) -> asdf::AsdfFile {
    use asdf::{AsdfFile, Label, NewArray, Version, WriteOptions};
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let a: Vec<f32> = (0..16u8).map(f32::from).collect();
    f.put_array(
        "/a",
        NewArray::from_slice(&a, &[4, 4])
            .unwrap()
            .chunks(&[2, 2])
            .compression(Label::ZSTD),
    )
    .unwrap();
    f.put_array("/b", NewArray::from_slice(&[1.5f64; 10], &[10]).unwrap())
        .unwrap();
    f.put_array("/m", NewArray::from_slice(&[0i32, 0, 0, 0], &[4]).unwrap())
        .unwrap();
    let bytes = crate::common::bytes(&f, &WriteOptions::default()).unwrap();
    asdf::Open::bytes(bytes).options(options).open().unwrap()
}

fn source_of(f: &asdf::AsdfFile, pointer: &str) -> i64 {
    f.get(&format!("{pointer}/source")).unwrap().as_i64().unwrap()
}

#[test]
fn hostile_chunk_maps_and_metadata_are_errors_not_panics() {
    let chunked_err = |f: &asdf::AsdfFile| match f.array("/a").and_then(|a| a.read::<Vec<f32>>()) {
        Err(asdf::Error::Chunked { source, .. }) => source,
        other => panic!("expected a chunked-array error, got {other:?}"),
    };
    let f = hostile_base(asdf::OpenOptions::default());
    let a: Vec<f32> = (0..16u8).map(f32::from).collect();
    assert_eq!(f.array("/a").unwrap().read::<Vec<f32>>().unwrap(), a);
    // A map naming a block of another array for every chunk (int32 zeros: /b's block
    // after renumbering is 0): that block is not a zstd chunk.
    let mut g = hostile_base(asdf::OpenOptions::default());
    let m = source_of(&g, "/m");
    g.set("/a/chunk_block_map", Node::int(m)).unwrap();
    assert!(
        matches!(chunked_err(&g), ChunkedError::Decode(_)),
        "{}",
        chunked_err(&g)
    );
    // The map is a block of the wrong length (/b: 80 bytes for 4 chunks of 4 bytes).
    let mut g = hostile_base(asdf::OpenOptions::default());
    let b = source_of(&g, "/b");
    g.set("/a/chunk_block_map", Node::int(b)).unwrap();
    assert!(matches!(
        chunked_err(&g),
        ChunkedError::MapSize { have: 80, want: 16, .. }
    ));
    // A map the file does not have.
    let mut g = hostile_base(asdf::OpenOptions::default());
    g.set("/a/chunk_block_map", Node::int(99)).unwrap();
    assert!(matches!(chunked_err(&g), ChunkedError::MissingBlock { block: 99, .. }));
    // A shape of 2^40 x 2^40 elements with the same small map: refused before anything
    // is allocated (the grid would need a map of terabytes).
    let mut g = hostile_base(asdf::OpenOptions::default());
    g.set(
        "/a/.zarray/shape",
        json_node(&serde_json::json!([1u64 << 40, 1u64 << 40])),
    )
    .unwrap();
    assert!(matches!(
        chunked_err(&g),
        ChunkedError::TooLarge | ChunkedError::MapSize { .. }
    ));
    // A chunk that decodes to the wrong size: the chunk shape changed under the chunks.
    let mut g = hostile_base(asdf::OpenOptions::default());
    g.set("/a/.zarray/chunks", json_node(&serde_json::json!([2, 4])))
        .unwrap();
    assert!(matches!(
        chunked_err(&g),
        ChunkedError::MapSize { .. } | ChunkedError::Decode(_)
    ));
}

#[test]
fn whole_reads_are_held_to_the_block_limit_and_regions_are_not() {
    let mut options = asdf::OpenOptions::default();
    options.layout_limits.max_block_bytes = 48;
    let f = hostile_base(options);
    let a = f.array("/a").unwrap();
    // Held by the array's check, which every read goes through, before the chunks' own.
    match a.read::<Vec<f32>>() {
        Err(asdf::Error::ReadTooLarge {
            bytes: 64, limit: 48, ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let r: asdf::Region = "1:3, 2:".parse().unwrap();
    assert_eq!(a.read_region::<Vec<f32>>(&r).unwrap(), [6.0, 7.0, 10.0, 11.0]);
}

/// Writes at `path` a file whose `/z` is an asdf-zarr array in the store `store` of
/// `kind` (a path beside the file).
fn write_store_file(path: &Path, store: &str, kind: &str) {
    let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
    let node = Node::map(vec![(
        Node::str("store"),
        Node::map(vec![
            (Node::str("type_string"), Node::str(kind)),
            (Node::str("path"), Node::str(store)),
        ]),
    )])
    .with_tag(format!("{ZARR_TAG_PREFIX}1.0.0"));
    f.set("/z", node).unwrap();
    f.write(path, &asdf::WriteOptions::default()).unwrap();
}

#[test]
fn stores_outside_the_files_directory_are_refused() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-store-{}", std::process::id()));
    let inner = dir.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    let outside = dir.join("outside.zarr");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join(".zarray"),
        r#"{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f8", "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#,
    )
    .unwrap();
    std::fs::write(outside.join("0"), 1.25f64.to_le_bytes().repeat(2)).unwrap();
    let path = inner.join("f.asdf");
    let write = |store: &str, kind: &str| write_store_file(&path, store, kind);
    let err = |policy: asdf::ReferencePolicy| {
        let f = asdf::Open::path(&path)
            .options(asdf::OpenOptions::default().references(policy))
            .open()
            .unwrap();
        f.array("/z").and_then(|a| a.read::<Vec<f64>>())
    };
    for store in ["../outside.zarr", outside.to_str().unwrap()] {
        write(store, "DirectoryStore");
        assert!(matches!(
            err(asdf::ReferencePolicy::default()),
            Err(asdf::Error::Chunked {
                source: ChunkedError::StoreRefused(_),
                ..
            })
        ));
        // Allowed when the policy says so, and read.
        assert_eq!(err(asdf::ReferencePolicy::AnyLocalPath).unwrap(), [1.25, 1.25]);
    }
    // A local FSStore (zarr-python's `FSStore` of a path) is a directory store.
    let local_fs = |store: &str| {
        let mut f = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST).unwrap();
        let node = Node::map(vec![(
            Node::str("store"),
            Node::map(vec![
                (Node::str("type_string"), Node::str("FSStore")),
                (Node::str("path"), Node::str(store)),
                (
                    Node::str("fs"),
                    Node::str(r#"{"cls": "fsspec.implementations.local:LocalFileSystem", "protocol": "file"}"#),
                ),
            ]),
        )])
        .with_tag(format!("{ZARR_TAG_PREFIX}1.0.0"));
        f.set("/z", node).unwrap();
        f.write(&path, &asdf::WriteOptions::default()).unwrap();
    };
    for store in ["../outside.zarr", outside.to_str().unwrap()] {
        local_fs(store);
        assert!(matches!(
            err(asdf::ReferencePolicy::default()),
            Err(asdf::Error::Chunked {
                source: ChunkedError::StoreRefused(_),
                ..
            })
        ));
        assert_eq!(err(asdf::ReferencePolicy::AnyLocalPath).unwrap(), [1.25, 1.25]);
        let f = asdf::Open::path(&path).open().unwrap();
        assert_eq!(f.source().input_folders(), [outside.canonicalize().unwrap()]);
    }
    // An FSStore that does not say its file system is local is not read as a folder.
    write("../outside.zarr", "FSStore");
    assert!(matches!(
        err(asdf::ReferencePolicy::AnyLocalPath),
        Err(asdf::Error::Chunked {
            source: ChunkedError::ExternalStore(_),
            ..
        })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store inside the file's folder whose chunk (or metadata) file is a symbolic link to a
/// file outside it: refused under the default policy (the policy applies where links
/// lead), read when the policy allows any local path; a link that stays inside is read.
#[cfg(unix)]
#[test]
fn store_files_linked_out_of_the_files_directory_are_refused() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-store-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let inner = dir.join("inner");
    let store = inner.join("s.zarr");
    std::fs::create_dir_all(&store).unwrap();
    let zarray = r#"{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f8", "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#;
    std::fs::write(store.join(".zarray"), zarray).unwrap();
    // The secret outside the file's folder, and a chunk that is a link to it.
    std::fs::write(dir.join("secret"), 7.5f64.to_le_bytes().repeat(2)).unwrap();
    std::os::unix::fs::symlink(dir.join("secret"), store.join("0")).unwrap();
    let path = inner.join("f.asdf");
    write_store_file(&path, "s.zarr", "DirectoryStore");
    let read = |policy: asdf::ReferencePolicy| {
        let f = asdf::Open::path(&path)
            .options(asdf::OpenOptions::default().references(policy))
            .open()
            .unwrap();
        f.array("/z").and_then(|a| a.read::<Vec<f64>>())
    };
    match read(asdf::ReferencePolicy::default()) {
        Err(asdf::Error::Chunked {
            source: ChunkedError::StoreFileRefused(link, real),
            ..
        }) => {
            assert!(link.ends_with("s.zarr/0"), "{}", link.display());
            assert!(real.ends_with("secret"), "{}", real.display());
        }
        other => panic!("a chunk linked out of the folder was read: {other:?}"),
    }
    assert_eq!(read(asdf::ReferencePolicy::AnyLocalPath).unwrap(), [7.5, 7.5]);
    // The metadata as a link out: refused too.
    std::fs::remove_file(store.join("0")).unwrap();
    std::fs::write(store.join("0"), 2.5f64.to_le_bytes().repeat(2)).unwrap();
    std::fs::rename(store.join(".zarray"), dir.join("meta")).unwrap();
    std::os::unix::fs::symlink(dir.join("meta"), store.join(".zarray")).unwrap();
    assert!(matches!(
        asdf::Open::path(&path).open().unwrap().array("/z"),
        Err(asdf::Error::Chunked {
            source: ChunkedError::StoreFileRefused(..),
            ..
        })
    ));
    // A link that stays inside the folder is read.
    std::fs::remove_file(store.join(".zarray")).unwrap();
    std::fs::write(inner.join("meta-inside"), zarray).unwrap();
    std::os::unix::fs::symlink(inner.join("meta-inside"), store.join(".zarray")).unwrap();
    assert_eq!(read(asdf::ReferencePolicy::default()).unwrap(), [2.5, 2.5]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file named by a bare relative name (`f.asdf`, whose parent is empty) finds its
/// directory store beside it, as `./f.asdf` does; and a chunked array of complex values
/// with `fill_value: null` (as zarr-python 2 and asdf-zarr write it) is read.
#[test]
fn bare_relative_names_and_complex_null_fills() {
    let dir = std::env::temp_dir().join(format!("asdf-rs-store-bare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("s.zarr");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(
        store.join(".zarray"),
        r#"{"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<c16", "compressor": null, "fill_value": null, "order": "C", "filters": null}"#,
    )
    .unwrap();
    let values: Vec<u8> = [1.0f64, -1.0, 2.0, 0.5, 3.0, 9.0, 4.0, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(store.join("0"), &values[..32]).unwrap();
    std::fs::write(store.join("1"), &values[32..]).unwrap();
    write_store_file(&dir.join("f.asdf"), "s.zarr", "DirectoryStore");
    // The current folder is the process's: a child process runs the bare-name open.
    let exe = std::env::current_exe().unwrap();
    if std::env::var_os("ASDF_RS_BARE_NAME_CHILD").is_some() {
        let f = asdf::open("f.asdf").unwrap();
        let got = f.array("/z").unwrap().values().unwrap().elements;
        assert_eq!(
            got,
            [
                asdf::Element::Complex(asdf::Complex::new(1.0, -1.0)),
                asdf::Element::Complex(asdf::Complex::new(2.0, 0.5)),
                asdf::Element::Complex(asdf::Complex::new(3.0, 9.0))
            ]
        );
        return;
    }
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "chunked::bare_relative_names_and_complex_null_fills",
            "--nocapture",
        ])
        .env("ASDF_RS_BARE_NAME_CHILD", "1")
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
