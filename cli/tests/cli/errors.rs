//! Every error path: one line on stderr, exit 1 for data and I/O errors, 2 for usage errors,
//! no panic, no backtrace (RUST_BACKTRACE=1 is set), no partial or destroyed output.

use crate::harness::{avrow, convert, fixture, generated, names_in, one_error_line, sample};
use std::path::Path;
use std::sync::Arc;

/// Runs avrow with `args`, expects exit status `code` and one error line; returns the line.
fn fails(args: &[&std::ffi::OsStr], code: i32) -> String {
    let out = avrow().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    one_error_line(&out.stderr)
}

fn os(s: &(impl AsRef<std::ffi::OsStr> + ?Sized)) -> &std::ffi::OsStr {
    s.as_ref()
}

#[test]
fn missing_input_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.avro");
    let output = dir.path().join("out.arrow");
    let err = fails(&[os("convert"), os(&missing), os("-o"), os(&output)], 1);
    assert!(
        err.contains("missing.avro: No such file or directory"),
        "{err}"
    );
    // Said once, not repeated by the error chain.
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    for sub in ["schema", "info", "count", "head"] {
        let err = fails(&[os(sub), os(&missing)], 1);
        assert!(
            err.contains("missing.avro: No such file or directory"),
            "{sub}: {err}"
        );
    }
    let out = avrow().arg("validate").arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(one_error_line(&out.stderr).contains("missing.avro"));
    assert_eq!(names_in(dir.path()), Vec::<String>::new());
}

#[test]
fn not_an_avro_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.avro");
    std::fs::write(&text, "just some text\n").unwrap();
    let empty = dir.path().join("empty.avro");
    std::fs::write(&empty, "").unwrap();
    let output = dir.path().join("out.parquet");
    for input in [&text, &empty] {
        let err = fails(&[os("convert"), os(input), os("-o"), os(&output)], 1);
        assert!(err.contains("not an Avro container file"), "{err}");
        for sub in ["schema", "info", "count", "head"] {
            let err = fails(&[os(sub), os(input)], 1);
            assert!(err.contains("not an Avro container file"), "{sub}: {err}");
        }
        let out = avrow().arg("validate").arg(input).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stdout).contains("not an Avro container file"));
    }
    assert!(!output.exists());
}

#[test]
fn truncated_file_never_leaves_or_destroys_an_output() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    for ext in ["arrow", "arrows", "parquet", "csv", "ndjson"] {
        let output = dir.path().join(format!("out.{ext}"));
        let err = fails(&[os("convert"), os(&g.truncated), os("-o"), os(&output)], 1);
        assert!(err.contains("truncated.avro: block "), "{err}");
        assert!(err.contains("truncated file"), "{err}");
        assert!(!output.exists());
        // An existing output survives a failed --force conversion.
        std::fs::write(&output, b"precious").unwrap();
        fails(
            &[
                os("convert"),
                os(&g.truncated),
                os("-o"),
                os(&output),
                os("--force"),
            ],
            1,
        );
        assert_eq!(std::fs::read(&output).unwrap(), b"precious");
    }
    // No temporary file left behind.
    assert_eq!(
        names_in(dir.path()),
        [
            "out.arrow",
            "out.arrows",
            "out.csv",
            "out.ndjson",
            "out.parquet"
        ]
    );
    let err = fails(&[os("info"), os(&g.truncated)], 1);
    assert!(err.contains("block "), "{err}");
    let err = fails(&[os("head"), os("-n"), os("100000"), os(&g.truncated)], 1);
    assert!(err.contains("block "), "{err}");
}

#[test]
fn existing_output_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.csv");
    std::fs::write(&output, b"keep me").unwrap();
    let input = fixture("apache/weather.avro");
    let err = fails(&[os("convert"), os(&input), os("-o"), os(&output)], 1);
    assert!(
        err.contains("out.csv already exists (use --force to replace it)"),
        "{err}"
    );
    assert_eq!(std::fs::read(&output).unwrap(), b"keep me");
    // Replaced with --force, and with the data also synced to disk before the rename.
    for flags in [&["--force", "-q"][..], &["--force", "--fsync", "-q"]] {
        std::fs::write(&output, b"replace me").unwrap();
        avrow()
            .arg("convert")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .args(flags)
            .assert()
            .success();
        assert!(std::fs::read_to_string(&output)
            .unwrap()
            .starts_with("station,time,temp\n"));
        assert_eq!(names_in(dir.path()), ["out.csv"]);
    }
}

#[test]
fn unknown_output_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("order");
    let err = fails(
        &[
            os("convert"),
            os(&input),
            os("-o"),
            os(&dir.path().join("out.xlsx")),
        ],
        2,
    );
    assert!(err.contains("unknown output extension .xlsx"), "{err}");
    let err = fails(
        &[
            os("convert"),
            os(&input),
            os("-o"),
            os(&dir.path().join("noext")),
        ],
        2,
    );
    assert!(err.contains("no extension"), "{err}");
    // An unknown --format value is clap's usage error.
    let out = avrow()
        .arg("convert")
        .arg(&input)
        .args(["-o", "x.out", "--format", "xlsx"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'xlsx'"));
    assert_eq!(names_in(dir.path()), Vec::<String>::new());
}

#[test]
fn avro_output_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("order");
    let out = dir.path().join("out.avro");
    for (extra, message) in [
        (
            &["--compression", "gzip"][..],
            "does not apply to Avro output",
        ),
        (
            &["--compression", "snappy", "--level", "3"][..],
            "--level applies to",
        ),
        (
            &["--compression", "zstd", "--level", "40"][..],
            "out of range",
        ),
    ] {
        let mut args = vec![os("convert"), os(&input), os("-o"), os(&out)];
        args.extend(extra.iter().map(os));
        let err = fails(&args, 2);
        assert!(err.contains(message), "{extra:?}: {err}");
    }
    // Parquet does not take the Avro codecs.
    let err = fails(
        &[
            os("convert"),
            os(&input),
            os("-o"),
            os(&dir.path().join("out.parquet")),
            os("--compression"),
            os("xz"),
        ],
        2,
    );
    assert!(err.contains("does not apply to Parquet"), "{err}");
    assert_eq!(names_in(dir.path()), Vec::<String>::new());
}

#[test]
fn bad_reader_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("order");
    let output = dir.path().join("out.arrow");
    let convert = |schema: &Path, code: i32| {
        fails(
            &[
                os("convert"),
                os(&input),
                os("-o"),
                os(&output),
                os("--reader-schema"),
                os(schema),
            ],
            code,
        )
    };
    // Missing or invalid: a usage error, before any input is read.
    let err = convert(&dir.path().join("missing.avsc"), 2);
    assert!(
        err.contains("--reader-schema") && err.contains("missing.avsc"),
        "{err}"
    );
    let invalid = dir.path().join("invalid.avsc");
    std::fs::write(&invalid, r#"{"type":"record","name":"r"}"#).unwrap();
    let err = convert(&invalid, 2);
    assert!(
        err.contains("invalid.avsc") && err.contains("invalid Avro schema"),
        "{err}"
    );
    // Valid, but it cannot read the file: names the field and the reason.
    let incompatible = dir.path().join("incompatible.avsc");
    std::fs::write(
        &incompatible,
        r#"{"type":"record","name":"Order","fields":[{"name":"customer","type":"long"}]}"#,
    )
    .unwrap();
    let err = convert(&incompatible, 1);
    assert!(
        err.contains("at customer") && err.contains("string cannot be read as the reader's long"),
        "{err}"
    );
    assert_eq!(names_in(dir.path()), ["incompatible.avsc", "invalid.avsc"]);
}

#[test]
fn stdout_needs_a_format() {
    let err = fails(&[os("convert"), os(&sample("order")), os("-o"), os("-")], 2);
    assert!(err.contains("needs --format"), "{err}");
    let err = fails(
        &[
            os("convert"),
            os(&sample("order")),
            os("--output-dir"),
            os("out"),
        ],
        2,
    );
    assert!(err.contains("--output-dir needs --format"), "{err}");
}

#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["convert"],
        &["convert", "a.avro"],
        &["convert", "a.avro", "-o", "x.arrow", "--output-dir", "d"],
        &["convert", "a.avro", "-o", "x.arrow", "--batch-size", "0"],
        &["convert", "a.avro", "-o", "x.arrow", "--no-such-flag"],
        &["head", "a.avro", "-n", "minus-one"],
        &["schema", "a.avro", "--fingerprint", "crc32"],
        &["count"],
    ] {
        let out = avrow().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn options_that_do_not_fit_the_format() {
    let input = sample("order");
    let err = fails(
        &[
            os("convert"),
            os(&input),
            os("-o"),
            os("x.arrow"),
            os("--compression"),
            os("snappy"),
        ],
        2,
    );
    assert!(
        err.contains("--compression snappy does not apply to Arrow IPC file output"),
        "{err}"
    );
    let err = fails(
        &[
            os("convert"),
            os(&input),
            os("-o"),
            os("x.csv"),
            os("--compression"),
            os("zstd"),
        ],
        2,
    );
    assert!(err.contains("only Parquet, Arrow IPC and Avro"), "{err}");
    for (format, codec, level, message) in [
        (
            "x.parquet",
            "snappy",
            "3",
            "--level applies to zstd, gzip and brotli",
        ),
        (
            "x.arrow",
            "zstd",
            "3",
            "--level applies to zstd, gzip and brotli Parquet",
        ),
        (
            "x.parquet",
            "zstd",
            "23",
            "--level 23 is out of range for zstd (-7 to 22)",
        ),
        (
            "x.parquet",
            "gzip",
            "-1",
            "--level -1 is out of range for gzip (0 to 9)",
        ),
    ] {
        let err = fails(
            &[
                os("convert"),
                os(&input),
                os("-o"),
                os(format),
                os("--compression"),
                os(codec),
                os("--level"),
                os(level),
            ],
            2,
        );
        assert!(err.contains(message), "{err}");
    }
    let err = fails(
        &[os("convert"), os("-"), os(&input), os("-o"), os("x.csv")],
        2,
    );
    assert!(err.contains("cannot be combined"), "{err}");
    let err = fails(
        &[
            os("convert"),
            os("-"),
            os("--output-dir"),
            os("d"),
            os("--format"),
            os("csv"),
        ],
        2,
    );
    assert!(err.contains("standard input has no name"), "{err}");
}

/// A `--columns` path no input has is a usage error (exit 2, as the help says of bad
/// arguments); spaces after the commas are not part of the names.
#[test]
fn unknown_projection_column() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("p.arrow");
    let err = fails(
        &[
            os("convert"),
            os(&sample("order")),
            os("-o"),
            os(&output),
            os("--columns"),
            os("id, nope"),
        ],
        2,
    );
    assert!(err.contains("\"nope\""), "{err}");
    assert!(err.contains("nope"), "{err}");
    assert_eq!(err.matches("nope").count(), 1, "{err}");
    let err = fails(
        &[
            os("head"),
            os(&sample("order")),
            os("--columns"),
            os("lines.nope"),
        ],
        2,
    );
    assert!(err.contains("nope"), "{err}");
    assert!(!output.exists());
    convert(&sample("order"), &output, &["--columns", "id, total"]);
    assert!(output.exists());
}

#[test]
fn unwritable_output() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("no/such/dir/out.arrow");
    let err = fails(
        &[os("convert"), os(&sample("order")), os("-o"), os(&output)],
        1,
    );
    assert!(err.contains("cannot create a temporary file in"), "{err}");
    // A directory as the output.
    let err = fails(
        &[
            os("convert"),
            os(&sample("order")),
            os("-o"),
            os(dir.path()),
            os("--format"),
            os("csv"),
            os("--force"),
        ],
        1,
    );
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn patterns_and_directories_that_match_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let err = fails(&[os("count"), os(&dir.path().join("*.avro"))], 1);
    assert!(err.contains("no file matches"), "{err}");
    let err = fails(&[os("count"), os(dir.path())], 1);
    assert!(err.contains("holds no .avro file"), "{err}");
    let out = dir.path().join("x.arrow");
    let err = fails(&[os("convert"), os(dir.path()), os("-o"), os(&out)], 1);
    assert!(err.contains("holds no .avro file"), "{err}");
}

/// `var=warp` (an unknown choice of a decoding path) does not stop `count`, which does not
/// decode, and fails `head` with one line naming it.
fn unknown_choice_is_reported(var: &str) {
    let out = avrow()
        .args(["count"])
        .arg(sample("order"))
        .env(var, "warp")
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = avrow()
        .args(["head"])
        .arg(sample("order"))
        .env(var, "warp")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(one_error_line(&out.stderr).contains(&format!("{var}=warp")));
}

#[test]
fn invalid_varint_kernel_is_reported() {
    unknown_choice_is_reported("AVROW_VARINT");
}

#[test]
fn invalid_bulk_path_is_reported() {
    unknown_choice_is_reported("AVROW_BULK");
    // The baseline runs everywhere and decodes like the default.
    let default = avrow()
        .args(["head"])
        .arg(sample("order"))
        .output()
        .unwrap();
    let forced = avrow()
        .args(["head"])
        .arg(sample("order"))
        .env("AVROW_BULK", "baseline")
        .output()
        .unwrap();
    assert!(forced.status.success());
    assert_eq!(forced.stdout, default.stdout);
}

#[test]
fn damaged_arrow_ipc_inputs_are_one_error_line() {
    // An IPC file whose footer (schema and block list) has each byte flipped in turn: arrow-ipc
    // panics on some (an unknown type); each must still be one error line naming the file,
    // not an internal error, and never a crash.
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    let dir = tempfile::tempdir().unwrap();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..50));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..50).map(|i| format!("n{i}")),
    ));
    let batch = arrow::array::RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
    let mut good = Vec::new();
    {
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut good, &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }
    let footer_len = i32::from_le_bytes(good[good.len() - 10..good.len() - 6].try_into().unwrap());
    let footer_start = good.len() - 10 - footer_len as usize;
    let input = dir.path().join("damaged.arrow");
    let output = dir.path().join("out.avro");
    let mut failures = 0;
    for at in footer_start..good.len() - 10 {
        let mut bytes = good.clone();
        bytes[at] ^= 0xff;
        std::fs::write(&input, &bytes).unwrap();
        let out = avrow()
            .args([
                os("convert"),
                os(&input),
                os("-o"),
                os(&output),
                os("--force"),
            ])
            .output()
            .unwrap();
        if out.status.success() {
            continue;
        }
        failures += 1;
        assert_eq!(
            out.status.code(),
            Some(1),
            "byte {at}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = one_error_line(&out.stderr);
        assert!(line.contains("damaged.arrow"), "byte {at}: {line}");
        assert!(!line.contains("internal error"), "byte {at}: {line}");
    }
    assert!(failures > 0, "no flipped footer byte was refused");
}
