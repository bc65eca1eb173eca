//! A build without the features `remote` and `zarr` has the same names as one with them, and
//! refuses at run time what it cannot do: a URL is an error of kind `Usage` (never a local
//! file of that name), a chunked array is not written. CI runs these with
//! `--no-default-features`; with the features on they do not apply.

#![allow(clippy::unwrap_used)]

#[cfg(not(feature = "remote"))]
#[test]
fn a_build_without_remote_refuses_urls_and_makes_no_local_file() {
    use asdf::{AsdfFile, ErrorKind, Version, WriteOptions};
    let err = asdf::Open::url("s3://bucket/obs.asdf").open().unwrap_err();
    assert!(matches!(err, asdf::Error::Remote(_)), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert!(err.to_string().contains("feature `remote`"), "{err}");
    assert!(asdf::Open::path_or_url("https://example.org/x.asdf").open().is_err());
    let f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let dir = std::env::temp_dir().join(format!("asdf-features-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let cwd = std::env::current_dir().unwrap();
    let err = f.write("s3://bucket/out.asdf", &WriteOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage, "{err}");
    // Nothing named after the URL was made (`s3:` would be a folder of the working directory).
    assert!(!cwd.join("s3:").exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before.len());
    let remote = asdf::RemoteOptions::default();
    let target = asdf::Target::Url {
        url: "s3://bucket/out.asdf",
        remote: &remote,
        etag: None,
    };
    assert_eq!(
        f.write(target, &WriteOptions::default()).unwrap_err().kind(),
        ErrorKind::Usage
    );
    assert!(!asdf::is_url("obs.asdf") && asdf::is_url("gs://b/k"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(not(feature = "zarr"))]
#[test]
fn a_build_without_zarr_refuses_to_write_chunks() {
    use asdf::{AsdfFile, NewArray, Version};
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let data: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let err = f
        .put_array("/a", NewArray::from_slice(&data, &[8, 8]).unwrap().chunks(&[4, 4]))
        .unwrap_err();
    assert!(matches!(err, asdf::Error::Chunked { .. }), "{err:?}");
    assert!(err.to_string().contains("feature `zarr`"), "{err}");
    // The same array unchunked is written, and the tree has no half-made node.
    f.put_array("/a", NewArray::from_slice(&data, &[8, 8]).unwrap())
        .unwrap();
    let bytes = f
        .write(asdf::Target::Bytes, &asdf::WriteOptions::default())
        .unwrap()
        .into_bytes();
    let g = asdf::Open::bytes(bytes).open().unwrap();
    assert_eq!(g.array("/a").unwrap().read::<Vec<f32>>().unwrap(), data);
    assert!(f.chunk_arrays(&[4, 4], None).is_err());
}

/// Read in a build without `zarr`, a chunked array is refused by a message that names the
/// feature (not called "not an ndarray"), and the file's other arrays read as ever.
#[cfg(not(feature = "zarr"))]
#[test]
fn a_build_without_zarr_names_the_feature_reading_a_chunked_array() {
    let tree = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
        plain: !core/ndarray-1.1.0 {data: [1, 2, 3], datatype: int64, shape: [3]}\n\
        z: !<asdf://asdf-format.org/zarr/tags/zarr-1.0.0>\n  chunk_block_map: 0\n  \
        .zarray: {chunks: [2], compressor: null, dtype: <i8, fill_value: 0, filters: null, order: C, shape: [3], zarr_format: 2}\n...\n";
    let f = asdf::Open::bytes(tree.as_bytes().to_vec()).open().unwrap();
    let err = f.array("/z").unwrap_err();
    assert!(matches!(err, asdf::Error::Chunked { .. }), "{err:?}");
    assert!(err.to_string().contains("feature `zarr`"), "{err}");
    assert_eq!(f.array("/plain").unwrap().read::<Vec<i64>>().unwrap(), [1, 2, 3]);
}
