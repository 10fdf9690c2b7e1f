//! `schema`, `info`, `count`, `head`, `validate`, `completions`, `--version`, `--help`,
//! checked against fastavro where it has an answer.

use crate::harness::{
    avrow, fastavro_facts, fixture, fixtures, generated, one_error_line, oracle_all, sample, Check,
};
use serde_json::Value;
use std::path::Path;

fn stdout_of(args: &[&str], file: &Path) -> String {
    let out = avrow().args(args).arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(args: &[&str], file: &Path) -> Value {
    serde_json::from_str(&stdout_of(args, file)).unwrap()
}

#[test]
fn schema_matches_fastavro() {
    let g = generated();
    let mut files = fixtures();
    files.extend([sample("order"), g.order.clone()]);
    let all = fastavro_facts(&files.iter().map(|f| f.as_path()).collect::<Vec<_>>());
    for (file, facts) in files.iter().zip(&all) {
        // The default output is the writer schema, pretty-printed JSON.
        let pretty = stdout_of(&["schema"], file);
        assert!(pretty.contains("\n  "), "not pretty: {pretty}");
        assert_eq!(
            serde_json::from_str::<Value>(&pretty).unwrap(),
            facts["schema"]
        );
        assert_eq!(
            json_of(&["schema", "--json"], file)["schema"],
            facts["schema"]
        );
        assert_eq!(
            stdout_of(&["schema", "--canonical"], file).trim_end(),
            facts["canonical"]
        );
        assert_eq!(
            json_of(&["schema", "--canonical", "--json"], file)["canonical_form"],
            facts["canonical"]
        );
        for algorithm in ["rabin", "md5", "sha256"] {
            assert_eq!(
                stdout_of(&["schema", "--fingerprint", algorithm], file).trim_end(),
                facts[algorithm],
                "{algorithm} of {}",
                file.display()
            );
            let json = json_of(&["schema", "--json", "--fingerprint", algorithm], file);
            assert_eq!(json["fingerprint"]["hex"], facts[algorithm]);
            assert_eq!(json["fingerprint"]["algorithm"], algorithm);
        }
    }
}

#[test]
fn schema_arrow() {
    let text = stdout_of(&["schema", "--arrow"], &sample("order"));
    assert!(
        text.starts_with("id: Int64 not null\ncustomer: Utf8 not null\n"),
        "{text}"
    );
    assert!(
        text.contains("\nlines: List not null\n  item: Struct not null\n    sku: Utf8 not null\n"),
        "{text}"
    );
    assert!(text.contains("\nnote: Utf8\n"), "{text}");
    let json = json_of(&["schema", "--arrow", "--json"], &sample("order"));
    let names: Vec<&str> = json["arrow_schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "customer",
            "total",
            "item_count",
            "paid",
            "note",
            "lines",
            "counters",
            "attributes"
        ]
    );
    assert_eq!(json["arrow_schema"]["fields"][8]["type"], "Map");
    assert!(json["arrow_schema"]["metadata"]["avro.schema"].is_string());
    // Unions, enums and decimals.
    let text = stdout_of(&["schema", "--arrow"], &fixture("apache/with-union.avro"));
    assert!(text.contains("data1: Union(Dense)"), "{text}");
    let text = stdout_of(&["schema", "--arrow"], &fixture("spark/simple_enum.avro"));
    assert!(text.contains("Dictionary(Int32, Utf8)"), "{text}");
}

#[test]
fn schema_flags_are_exclusive() {
    avrow()
        .args(["schema", "--arrow", "--canonical"])
        .arg(sample("order"))
        .assert()
        .code(2);
}

#[test]
fn info_matches_fastavro() {
    let g = generated();
    let files = [
        g.order.clone(),
        g.telemetry.clone(),
        sample("wide"),
        fixture("spark/alltypes_plain.xz.avro"),
        fixture("spark/alltypes_plain.bzip2.avro"),
        fixture("apache/weather-zstd.avro"),
        fixture("apache/weather-deflate.avro"),
    ];
    let all = fastavro_facts(&files.iter().map(|f| f.as_path()).collect::<Vec<_>>());
    for (file, facts) in files.iter().zip(&all) {
        let info = json_of(&["info", "--json"], file);
        assert_eq!(info["codec"], facts["codec"], "{}", file.display());
        assert_eq!(info["sync_marker"], facts["sync"]);
        assert_eq!(info["blocks"], facts["blocks"]);
        assert_eq!(info["records"], facts["records"]);
        assert_eq!(info["uncompressed_size"], facts["uncompressed"]);
        for algorithm in ["rabin", "md5", "sha256"] {
            assert_eq!(info["fingerprints"][algorithm], facts[algorithm]);
        }
        assert_eq!(info["file_size"], std::fs::metadata(file).unwrap().len());
        assert!(info["compressed_size"].as_u64().unwrap() < info["file_size"].as_u64().unwrap());
        assert_eq!(info["metadata"]["avro.codec"]["value"], facts["codec"]);
    }
    let info = json_of(&["info", "--json"], &g.order);
    assert_eq!(info["blocks"], 7); // 5 000 rows in blocks of 777
    assert_eq!(info["schema_name"], "bench.Order");
    assert!(info["compressed_size"].as_u64() < info["uncompressed_size"].as_u64());

    let text = stdout_of(&["info"], &g.order);
    for line in [
        "codec:              zstandard\n",
        "blocks:             7\n",
        "records:            5000\n",
        "schema:             bench.Order\n",
        "metadata:\n  avro.codec: zstandard\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
}

fn zigzag(v: i64, out: &mut Vec<u8>) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn avro_bytes(b: &[u8], out: &mut Vec<u8>) {
    zigzag(b.len() as i64, out);
    out.extend_from_slice(b);
}

/// A container file written by hand: a metadata value that is not UTF-8, and an empty block
/// between two others (records 1, -2 | none | 300). With `corrupt`, the last block's record
/// is an overlong varint instead.
fn handmade(dir: &Path, corrupt: bool) -> std::path::PathBuf {
    let sync: Vec<u8> = (0u8..16).collect();
    let mut file = b"Obj\x01".to_vec();
    zigzag(3, &mut file);
    avro_bytes(b"avro.schema", &mut file);
    avro_bytes(
        br#"{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}"#,
        &mut file,
    );
    avro_bytes(b"avro.codec", &mut file);
    avro_bytes(b"null", &mut file);
    avro_bytes(b"user.bin", &mut file);
    avro_bytes(&[0xff, 0x00, 0x80], &mut file);
    zigzag(0, &mut file);
    file.extend_from_slice(&sync);
    for values in [&[1i64, -2][..], &[], &[300]] {
        let mut data = Vec::new();
        for &v in values {
            zigzag(v, &mut data);
        }
        if corrupt && values == [300] {
            data = vec![0xff; 11];
        }
        zigzag(values.len() as i64, &mut file);
        zigzag(data.len() as i64, &mut file);
        file.extend_from_slice(&data);
        file.extend_from_slice(&sync);
    }
    let path = dir.join(if corrupt {
        "corrupt.avro"
    } else {
        "handmade.avro"
    });
    std::fs::write(&path, file).unwrap();
    path
}

#[test]
fn info_shows_binary_metadata_in_hex_and_empty_blocks() {
    let dir = tempfile::tempdir().unwrap();
    // fastavro cannot open this file (it decodes metadata values as UTF-8): its values are
    // known by construction.
    let file = handmade(dir.path(), false);
    let info = json_of(&["info", "--json"], &file);
    assert_eq!(
        info["metadata"]["user.bin"],
        serde_json::json!({"encoding": "hex", "value": "ff0080"})
    );
    assert_eq!(info["sync_marker"], "000102030405060708090a0b0c0d0e0f");
    assert_eq!(info["blocks"], 3);
    assert_eq!(info["empty_blocks"], 1);
    assert_eq!(info["records"], 3);
    assert_eq!(info["compressed_size"], 4);
    assert_eq!(info["uncompressed_size"], 4);
    assert_eq!(info["schema_name"], "R");
    let text = stdout_of(&["info"], &file);
    assert!(
        text.contains("  user.bin: 0xff0080 (not UTF-8)\n"),
        "{text}"
    );
    assert!(text.contains("blocks:             3 (1 empty)\n"), "{text}");
    // The same file converts, counts and validates.
    assert_eq!(stdout_of(&["count"], &file), "3\n");
    let output = dir.path().join("handmade.ndjson");
    crate::harness::convert(&file, &output, &[]);
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "{\"x\":1}\n{\"x\":-2}\n{\"x\":300}\n"
    );
    avrow().arg("validate").arg(&file).assert().success();
}

#[test]
fn count_matches_fastavro() {
    let g = generated();
    let mut files = fixtures();
    files.extend([sample("telemetry"), g.order.clone(), g.empty.clone()]);
    let all = fastavro_facts(&files.iter().map(|f| f.as_path()).collect::<Vec<_>>());
    for (file, facts) in files.iter().zip(&all) {
        let count = stdout_of(&["count"], file);
        assert_eq!(
            count,
            format!("{}\n", facts["records"]),
            "{}",
            file.display()
        );
    }
    // Several files: one line each, then the total.
    let out = avrow()
        .arg("count")
        .arg(&g.telemetry)
        .arg(&g.telemetry_b)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!(
            " 8000 {}\n 2000 {}\n10000 total\n",
            g.telemetry.display(),
            g.telemetry_b.display()
        )
    );
    let json: Value = serde_json::from_slice(
        &avrow()
            .args(["count", "--json"])
            .arg(&g.telemetry)
            .arg(&g.telemetry_b)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["total"], 10_000);
    assert_eq!(json["files"][1]["records"], 2_000);
}

#[test]
fn count_reports_bad_files_and_goes_on() {
    let g = generated();
    let out = avrow()
        .arg("count")
        .arg(&g.truncated)
        .arg(&g.telemetry)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = one_error_line(&out.stderr);
    assert!(err.contains("truncated.avro: block "), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("8000 "), "{text}");
    let json: Value = serde_json::from_slice(
        &avrow()
            .args(["count", "--json"])
            .arg(&g.truncated)
            .arg(&g.telemetry)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(json["files"][0]["error"]
        .as_str()
        .unwrap()
        .contains("block"));
    assert_eq!(json["total"], 8_000);
}

/// A block declaring more records than its bytes can hold is a bad file for `count` too (it
/// counted the header's word while every read of the file failed).
#[test]
fn count_refuses_a_count_the_block_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.avro");
    let mut file = std::fs::read(sample("telemetry")).unwrap();
    std::fs::write(&good, &file).unwrap();
    let start = avrow::BlockReader::from_bytes(file.clone())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .offset() as usize;
    // The first block's count, a varint, made 2^40 (framing is read in sequence: a longer
    // varint shifts the rest of the file, which stays well formed).
    let mut end = start;
    while file[end] & 0x80 != 0 {
        end += 1;
    }
    let mut z = (1u64 << 40) << 1;
    let mut bytes = Vec::new();
    while z >= 0x80 {
        bytes.push((z as u8) | 0x80);
        z >>= 7;
    }
    bytes.push(z as u8);
    file.splice(start..=end, bytes);
    let lying = dir.path().join("lying.avro");
    std::fs::write(&lying, &file).unwrap();
    let out = avrow().arg("count").arg(&lying).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = one_error_line(&out.stderr);
    assert!(
        err.contains("lying.avro: block 0") && err.contains("cannot hold"),
        "{err}"
    );
}

#[test]
fn head_prints_a_table() {
    let text = stdout_of(&["head"], &sample("telemetry"));
    let lines: Vec<&str> = text.lines().collect();
    // Border, header, border, 10 rows, border.
    assert_eq!(lines.len(), 14, "{text}");
    assert!(lines[1].starts_with("| device_id "), "{text}");
    let text = stdout_of(
        &["head", "-n", "3", "--columns", "seq,status"],
        &sample("telemetry"),
    );
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(text.lines().nth(1).unwrap().contains("| seq "), "{text}");
    assert!(!text.contains("device_id"), "{text}");
    // n = 0 and an empty file: the header only.
    let text = stdout_of(&["head", "-n", "0"], &sample("telemetry"));
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines().nth(1).unwrap().starts_with("| device_id "),
        "{text}"
    );
    let text = stdout_of(&["head"], &generated().empty);
    assert_eq!(text.lines().count(), 4, "{text}");
}

#[test]
fn head_json_is_ndjson() {
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    for (i, file) in [
        sample("order"),
        fixture("spark/nested_records.avro"),
        fixture("apache/with-union.avro"),
    ]
    .iter()
    .enumerate()
    {
        let text = stdout_of(&["head", "--json", "-n", "4"], file);
        let output = dir.path().join(format!("{i}.ndjson"));
        std::fs::write(&output, text).unwrap();
        let mut check = Check::new("ndjson", &output, &[file]);
        check.limit = Some(4);
        check.stdlib_json = file.ends_with("with-union.avro");
        checks.push(check);
    }
    oracle_all(&checks);
}

#[test]
fn validate_reports_each_file() {
    let g = generated();
    let out = avrow()
        .arg("validate")
        .arg(sample("order"))
        .arg(&g.telemetry)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!(
            "ok       {}: 1500 records\nok       {}: 8000 records\n",
            sample("order").display(),
            g.telemetry.display()
        )
    );
    for file in fixtures() {
        avrow().arg("validate").arg(&file).assert().success();
    }

    let out = avrow()
        .arg("validate")
        .arg(&g.truncated)
        .arg(sample("order"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    // The first error, with its location: file, block, byte offset.
    assert!(
        first.starts_with(&format!("invalid  {}: block ", g.truncated.display())),
        "{text}"
    );
    assert!(
        first.contains(" at byte ") && first.contains("truncated"),
        "{text}"
    );
    assert!(text.lines().nth(1).unwrap().starts_with("ok "), "{text}");

    let json: Value = serde_json::from_slice(
        &avrow()
            .args(["validate", "--json"])
            .arg(&g.truncated)
            .arg(sample("order"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["valid"], false);
    assert_eq!(json["files"][0]["valid"], false);
    assert!(json["files"][0]["error"]
        .as_str()
        .unwrap()
        .contains("block"));
    assert_eq!(json["files"][1]["records"], 1500);
}

#[test]
fn validate_finds_corrupt_records() {
    let dir = tempfile::tempdir().unwrap();
    let file = handmade(dir.path(), true);
    let out = avrow().arg("validate").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    // The location: file, block index and offset, record, field.
    assert!(
        text.starts_with(&format!("invalid  {}: block 2 at byte ", file.display())),
        "{text}"
    );
    assert!(text.contains("varint"), "{text}");
    assert!(text.contains('x'), "{text}");
    // convert reports the same error and writes nothing.
    let output = dir.path().join("out.arrow");
    let out = avrow()
        .arg("convert")
        .arg(&file)
        .arg("-o")
        .arg(&output)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = crate::harness::one_error_line(&out.stderr);
    assert!(err.contains("block 2 at byte"), "{err}");
    assert!(!output.exists());
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = avrow().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            script.contains("avrow") && script.contains("convert"),
            "{shell}"
        );
        assert!(script.contains("output-dir"), "{shell}");
    }
    avrow().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn version_names_the_varint_kernel() {
    let out = avrow().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("avrow {}", env!("CARGO_PKG_VERSION"))
    );
    let kernel = lines.next().unwrap();
    assert!(
        ["varint: scalar", "varint: fast", "varint: bmi2"].contains(&kernel),
        "{kernel}"
    );
    let bulk = lines.next().unwrap();
    assert!(
        ["bulk: baseline", "bulk: v3", "bulk: v4"].contains(&bulk),
        "{bulk}"
    );
    assert_eq!(lines.next(), None);
    // A forced kernel and a forced bulk path show up (scalar and baseline run everywhere).
    let out = avrow()
        .arg("--version")
        .env("AVROW_VARINT", "scalar")
        .env("AVROW_BULK", "baseline")
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .ends_with("\nvarint: scalar\nbulk: baseline\n"));
    // A rejected one is named (and --version still succeeds).
    let out = avrow()
        .arg("--version")
        .env("AVROW_BULK", "warp")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with("bulk: unavailable (AVROW_BULK=warp: unknown bulk path"),
        "{text}"
    );
}

#[test]
fn every_subcommand_help_has_an_example() {
    for sub in [
        "convert",
        "schema",
        "info",
        "count",
        "head",
        "validate",
        "sql",
        "completions",
    ] {
        let out = avrow().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Example"), "{sub}: {text}");
        assert!(text.contains(&format!("avrow {sub} ")), "{sub}: {text}");
    }
    let text =
        String::from_utf8(avrow().args(["convert", "--help"]).output().unwrap().stdout).unwrap();
    assert!(
        text.contains("Avro output (.avro) takes --compression"),
        "{text}"
    );
    assert!(text.contains("--reader-schema"), "{text}");
    assert!(text.contains("Ctrl-C"), "{text}");
}

#[test]
fn inspection_reads_standard_input() {
    let g = generated();
    let run = |args: &[&str]| -> String {
        let out = avrow()
            .args(args)
            .pipe_stdin(&g.order)
            .unwrap()
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run(&["count", "-"]), "5000\n");
    let info: Value = serde_json::from_str(&run(&["info", "--json", "-"])).unwrap();
    assert_eq!(info["file"], "<stdin>");
    assert_eq!(info["records"], 5000);
    assert_eq!(info["blocks"], 7);
    assert_eq!(
        info["file_size"],
        std::fs::metadata(&g.order).unwrap().len()
    );
    let schema: Value = serde_json::from_str(&run(&["schema", "-"])).unwrap();
    assert_eq!(schema["name"], "Order");
    assert!(run(&["schema", "--arrow", "-"]).starts_with("id: Int64 not null\n"));
    assert_eq!(run(&["head", "-n", "2", "--json", "-"]).lines().count(), 2);
    assert_eq!(run(&["validate", "-"]), "ok       <stdin>: 5000 records\n");
}

/// `schema --arrow --reader-schema`: the Arrow schema under schema resolution (reader fields,
/// in the reader's order, promotions applied); usage errors for a missing schema or one without
/// `--arrow`; an incompatible reader schema names the field.
#[test]
fn schema_arrow_under_a_reader_schema() {
    let dir = tempfile::tempdir().unwrap();
    let order = sample("order");
    let reader = dir.path().join("reader.avsc");
    let schema_under = |reader: &Path| {
        avrow()
            .args(["schema", "--arrow", "--reader-schema"])
            .arg(reader)
            .arg(&order)
            .output()
            .unwrap()
    };
    std::fs::write(
        &reader,
        r#"{"type":"record","name":"Order","namespace":"bench","fields":[
            {"name":"item_count","type":"double"},
            {"name":"id","type":"long"},
            {"name":"region","type":"string","default":"eu"}]}"#,
    )
    .unwrap();
    let out = schema_under(&reader);
    assert!(out.status.success(), "{}", one_error_line(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "item_count: Float64 not null\nid: Int64 not null\nregion: Utf8 not null\n"
        ),
        "{text}"
    );
    assert!(!text.contains("customer"), "{text}");
    // Without --arrow, or with a missing file: usage errors.
    let without_arrow = avrow()
        .args(["schema", "--reader-schema"])
        .arg(&reader)
        .arg(&order)
        .output()
        .unwrap();
    assert_eq!(without_arrow.status.code(), Some(2));
    let out = schema_under(&dir.path().join("missing.avsc"));
    assert_eq!(out.status.code(), Some(2));
    assert!(one_error_line(&out.stderr).contains("missing.avsc"));
    // Incompatible: names the field.
    std::fs::write(
        &reader,
        r#"{"type":"record","name":"Order","namespace":"bench","fields":[
            {"name":"customer","type":"long"}]}"#,
    )
    .unwrap();
    let out = schema_under(&reader);
    assert_eq!(out.status.code(), Some(1));
    let err = one_error_line(&out.stderr);
    assert!(err.contains("at customer"), "{err}");
}

/// Timestamps and dates past the calendar (`Long.MAX_VALUE` milliseconds, the "valid until
/// forever" of many tables; `Integer.MAX_VALUE` days), at the top level and in an array: NDJSON
/// writes their raw count as a number (it wrote arrow's error message, unescaped, as the
/// value), CSV and `head` as text (CSV failed naming no column; `head` printed the error), and
/// the values a calendar shows as before.
#[test]
fn dates_and_timestamps_past_the_calendar_are_their_raw_count() {
    use arrow::array::{ArrayRef, Date32Array, ListArray, RecordBatch, TimestampMillisecondArray};
    use arrow::datatypes::{DataType, Field, TimeUnit};
    use std::sync::Arc;
    let ts =
        || TimestampMillisecondArray::from(vec![0, i64::MAX, i64::MIN]).with_timezone("+00:00");
    let item = Arc::new(Field::new(
        "item",
        DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())),
        false,
    ));
    let list = ListArray::new(
        item,
        arrow::buffer::OffsetBuffer::from_lengths([1, 1, 1]),
        Arc::new(ts()),
        None,
    );
    let batch = RecordBatch::try_from_iter([
        ("ts", Arc::new(ts()) as ArrayRef),
        (
            "d",
            Arc::new(Date32Array::from(vec![0, i32::MAX, -1])) as ArrayRef,
        ),
        ("l", Arc::new(list) as ArrayRef),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("forever.avro");
    let mut w = avrow::WriterBuilder::new(batch.schema())
        .build(std::fs::File::create(&file).unwrap())
        .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let (max, min) = (i64::MAX.to_string(), i64::MIN.to_string());

    let ndjson = stdout_of(&["convert", "-q", "-f", "ndjson", "-o", "-"], &file);
    let rows: Vec<Value> = ndjson
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(rows[0]["ts"], "1970-01-01T00:00:00Z");
    assert_eq!(rows[1]["ts"], Value::from(i64::MAX));
    assert_eq!(rows[2]["ts"], Value::from(i64::MIN));
    assert_eq!(rows[1]["d"], Value::from(i32::MAX));
    assert_eq!(rows[2]["d"], "1969-12-31");
    assert_eq!(rows[1]["l"][0], Value::from(i64::MAX));

    let csv = stdout_of(&["convert", "-q", "-f", "csv", "-o", "-"], &file);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "ts,d,l");
    assert!(lines[1].starts_with("1970-01-01T00:00:00"), "{csv}");
    assert!(
        lines[2].starts_with(&format!("{max},{},[{max}]", i32::MAX)),
        "{csv}"
    );
    assert!(lines[3].starts_with(&format!("{min},1969-12-31,")), "{csv}");

    for args in [&["head"][..], &["head", "--json"][..]] {
        let text = stdout_of(args, &file);
        assert!(
            text.contains(&max) && text.contains(&min) && !text.contains("ERROR"),
            "{args:?}: {text}"
        );
    }
}

/// `head`'s table is safe for a terminal: control characters escaped (an escape sequence in
/// the data reached the terminal, a line break or tab broke the table), long values cut at 80
/// characters, an empty string shown as `""` (a null is blank).
#[test]
fn head_escapes_control_characters_and_cuts_long_values() {
    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use std::sync::Arc;
    let long = "x".repeat(5000);
    let batch = RecordBatch::try_from_iter([(
        "s",
        Arc::new(StringArray::from(vec![
            Some("\u{1b}[31mRED\u{1b}[0m"),
            Some("a\tb\rc\nd"),
            Some(long.as_str()),
            Some(""),
            None,
        ])) as ArrayRef,
    )])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("strings.avro");
    let mut w = avrow::WriterBuilder::new(batch.schema())
        .build(std::fs::File::create(&file).unwrap())
        .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let table = stdout_of(&["head"], &file);
    assert!(!table.contains('\u{1b}') && !table.contains('\t') && !table.contains('\r'));
    assert!(
        table.contains(r"\x1b[31mRED\x1b[0m") && table.contains(r"a\tb\rc\nd"),
        "{table}"
    );
    assert!(table.lines().all(|l| l.chars().count() < 100), "{table}");
    assert!(table.contains(&format!("{}…", "x".repeat(80))), "{table}");
    assert!(table.contains("| \"\""), "{table}");
    assert_eq!(table.lines().count(), 5 + 4, "{table}");
}
