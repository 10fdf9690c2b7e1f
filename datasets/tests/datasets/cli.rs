//! The `avrow-datasets` binary: output matches the library, writes atomically, fails cleanly.

use std::process::Command;

use avrow_datasets::{generate, Codec, GenOptions, Shape};

use crate::container;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_avrow-datasets"))
}

#[test]
fn cli_writes_the_same_bytes_as_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("order.avro");
    let status = bin()
        .args([
            "order",
            "--rows",
            "1234",
            "--codec",
            "zstd",
            "--block-rows",
            "500",
        ])
        .args(["--seed", "9", "--quiet", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let expected = generate(
        Shape::Order,
        &GenOptions {
            rows: 1234,
            codec: Codec::Zstandard,
            block_rows: 500,
            seed: 9,
        },
    )
    .unwrap();
    assert!(std::fs::read(&out).unwrap() == expected);
    // Only the output is left in the directory: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["order.avro"]);
}

#[test]
fn cli_target_mb_sizes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.avro");
    let output = bin()
        .args(["telemetry", "--target-mb", "2", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("telemetry rows"), "{stderr}");
    let bytes = std::fs::read(&out).unwrap();
    let err = (bytes.len() as f64 - 2e6).abs() / 2e6;
    assert!(err < 0.02, "{} bytes", bytes.len());
    let blocks = container::parse(&bytes).block_rows;
    assert!(blocks.len() > 1 && blocks[0] == 4096, "{blocks:?}");
}

#[test]
fn cli_rejects_bad_arguments_without_leaving_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.avro");
    for args in [
        &["order", "--codec", "lz4"][..],
        &["orders"][..],
        &["order", "--block-rows", "0"][..],
        &["order", "--rows", "5", "--target-mb", "1"][..],
    ] {
        let output = bin().args(args).arg("-o").arg(&out).output().unwrap();
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(!output.stderr.is_empty());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    let output = bin()
        .args(["order", "--codec", "lz4", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("unknown codec `lz4`"), "{stderr}");
}
