//! A child process killed in the middle of writing a large file over an existing path leaves
//! the old file intact and readable (writes go to a temporary file that is renamed at the end).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

use asdf::{AsdfFile, ByteOrder, Datatype, Element, Version, WriteOptions};
use asdf_core_types::ScalarType;

const CHILD_ENV: &str = "ASDF_RS_CRASH_CHILD";

fn write_file(path: &std::path::Path, mib: usize, fill: u8) {
    let mut f = AsdfFile::new(Version::STANDARD_LATEST).unwrap();
    let n = mib << 20;
    f.put_array(
        "/data",
        asdf::NewArray::from_bytes(Datatype::Scalar(ScalarType::UInt8), &[n], ByteOrder::Big, vec![fill; n]),
    )
    .unwrap();
    f.write(path, &WriteOptions::default()).unwrap();
}

/// `crash_child`'s name as the test harness knows it (`module::crash_child`).
fn child_test_name() -> String {
    let module = module_path!();
    match module.split_once("::") {
        Some((_, rest)) => format!("{rest}::crash_child"),
        None => "crash_child".to_owned(),
    }
}

/// In the child: write a large file over the target, slowly enough to be killed midway.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    write_file(std::path::Path::new(&path), 1536, 7);
}

#[test]
fn killed_writer_leaves_the_old_file() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("asdf-rs-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("target.asdf");
    write_file(&path, 1, 3);
    let before = std::fs::read(&path).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        // This test's own binary, running only `crash_child` (named by its module path, as the
        // harness names it, whatever binary the file is compiled into).
        .args([child_test_name().as_str(), "--exact", "--nocapture"])
        .env(CHILD_ENV, &path)
        .spawn()
        .unwrap();
    // Kill it once its temporary file has started to grow.
    let start = Instant::now();
    loop {
        let growing = std::fs::read_dir(&dir).unwrap().flatten().any(|e| {
            e.file_name().to_string_lossy().ends_with(".tmp") && e.metadata().is_ok_and(|m| m.len() > (64 << 20))
        });
        if growing || start.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child should have been killed mid-write");
    // The target is the old file, byte for byte, and reads.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let f = asdf::open(&path).unwrap();
    assert_eq!(
        f.array("/data").and_then(|a| a.values()).unwrap().elements[0],
        Element::UInt(3)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
