//! `avrow convert` to every format, checked by pyarrow against fastavro.

use crate::harness::{
    avrow, convert, fixture, fixtures, generated, oracle_all, python, sample, Check,
};
use std::path::{Path, PathBuf};

/// Every input the format tests convert: the samples, the fixtures, the generated files.
fn all_inputs() -> Vec<PathBuf> {
    let g = generated();
    let mut inputs: Vec<PathBuf> = ["order", "wide", "telemetry", "counters"]
        .into_iter()
        .map(sample)
        .collect();
    inputs.extend(fixtures());
    inputs.extend([
        g.order.clone(),
        g.telemetry.clone(),
        g.wide.clone(),
        g.empty.clone(),
    ]);
    inputs
}

fn is_union_fixture(path: &Path) -> bool {
    path.ends_with("apache/with-union.avro")
}

/// Converts every input to `extension` (with `extra` options) and checks each output as
/// `format`.
fn convert_all(format: &'static str, extension: &str, extra: &[&str], skip: fn(&Path) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    for (i, input) in all_inputs().iter().enumerate() {
        if skip(input) {
            continue;
        }
        let stem = input.file_stem().unwrap().to_string_lossy();
        let output = dir.path().join(format!("{i}-{stem}.{extension}"));
        convert(input, &output, extra);
        let mut check = Check::new(format, &output, &[input]);
        check.stdlib_json = is_union_fixture(input);
        checks.push(check);
    }
    let reports = oracle_all(&checks);
    let rows: u64 = reports.iter().map(|r| r["rows"].as_u64().unwrap()).sum();
    assert!(rows > 20_000, "{rows} rows checked");
}

#[test]
fn readme_quick_start_command_works() {
    // The README runs exactly this from the repository root.
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("order.arrow");
    std::fs::write(&output, b"an older output").unwrap();
    avrow()
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args(["convert", "datasets/samples/order.avro", "-o"])
        .arg(&output)
        .arg("--force")
        .assert()
        .success();
    oracle_all(&[Check::new("arrow", &output, &[&sample("order")])]);
}

#[test]
fn ipc_file_outputs_match_fastavro() {
    convert_all("arrow", "arrow", &[], |_| false);
}

#[test]
fn ipc_stream_outputs_match_fastavro() {
    convert_all("arrows", "arrows", &[], |_| false);
}

#[test]
fn parquet_outputs_match_fastavro() {
    // Every fixture, unions included (mapped: see parquet_mapping_of_unions_durations_and_empty_records).
    convert_all("parquet", "parquet", &[], |_| false);
}

#[test]
fn parquet_mapping_of_unions_durations_and_empty_records() {
    // Written by fastavro: a general union at the top level, in an array and in a map; a
    // duration, plain and nullable; records without fields, plain and nullable.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mapped.avro");
    crate::harness::python(&format!(
        r#"
import fastavro, struct
schema = {{"type": "record", "name": "M", "fields": [
  {{"name": "u", "type": ["null", "string", "long", "double",
     {{"type": "record", "name": "P", "fields": [{{"name": "a", "type": "int"}}]}}]}},
  {{"name": "us", "type": {{"type": "array", "items": ["int", "string"]}}}},
  {{"name": "um", "type": {{"type": "map", "values": ["boolean", "bytes", "null"]}}}},
  {{"name": "d", "type": {{"type": "fixed", "name": "D", "size": 12, "logicalType": "duration"}}}},
  {{"name": "dn", "type": ["null", "D"]}},
  {{"name": "e", "type": {{"type": "record", "name": "E", "fields": []}}}},
  {{"name": "en", "type": ["null", "E"]}}
]}}
def dur(m, d, ms):
    return struct.pack("<III", m, d, ms)
rows = []
for i in range(300):
    u = [None, "s%d" % i, i * 1000003, i / 7.0, {{"a": i}}][i % 5]
    rows.append({{
        "u": u,
        "us": [i, "x%d" % i] if i % 3 else [],
        "um": {{"k": True, "b": b"\x00\xff", "n": None}} if i % 2 else {{}},
        "d": dur(i, 2 * i, 4294967295 - i),
        "dn": None if i % 4 == 0 else dur(2147483647, i, 3),
        "e": {{}},
        "en": None if i % 3 == 0 else {{}},
    }})
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows, sync_interval=2000)
"#,
        path = input.display().to_string()
    ));
    let output = dir.path().join("mapped.parquet");
    convert(&input, &output, &[]);
    let reports = oracle_all(&[Check::new("parquet", &output, &[&input])]);
    assert_eq!(reports[0]["rows"], 300);
    // The Parquet types as another reader sees them.
    let layout = crate::harness::python(&format!(
        r#"
import pyarrow.parquet as pq
s = pq.ParquetFile({path:?}).schema
for name in ["u", "d", "e"]:
    col = [c for c in s if c.path.split(".")[0] == name]
    print(name, [(c.path, c.physical_type, c.logical_type.type) for c in col])
"#,
        path = output.display().to_string()
    ));
    assert!(
        layout.contains("('u.member0', 'BYTE_ARRAY', 'STRING')"),
        "{layout}"
    );
    assert!(layout.contains("('u.member3.a', 'INT32'"), "{layout}");
    assert!(layout.contains("('d', 'FIXED_LEN_BYTE_ARRAY'"), "{layout}");
    assert!(layout.contains("('e.__empty'"), "{layout}");
    // Durations read back from the Parquet file whole: arrow's Parquet reader alone drops
    // their months (sources.rs reads them twice).
    let back = dir.path().join("back.avro");
    convert(&output, &back, &["--columns", "d,dn"]);
    let same = crate::harness::python(&format!(
        r#"
import fastavro
a = list(fastavro.reader(open({input:?}, "rb")))
b = list(fastavro.reader(open({back:?}, "rb")))
assert len(a) == len(b) == 300, (len(a), len(b))
for x, y in zip(a, b):
    assert (x["d"], x["dn"]) == (y["d"], y["dn"]), (x["d"], x["dn"], y["d"], y["dn"])
print("same", a[7]["d"].hex())
"#,
        input = input.display().to_string(),
        back = back.display().to_string()
    ));
    assert!(same.starts_with("same 07000000"), "{same}");
}

#[test]
fn a_duration_inside_a_record_is_refused_when_read_from_parquet() {
    // Written to Parquet as an INTERVAL in a group, which arrow's Parquet reader would read
    // without its months: refused by name, not read wrong.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("nested-duration.avro");
    crate::harness::python(&format!(
        r#"
import fastavro, struct
schema = {{"type": "record", "name": "N", "fields": [
  {{"name": "r", "type": {{"type": "record", "name": "R", "fields": [
    {{"name": "d", "type": {{"type": "fixed", "name": "D", "size": 12, "logicalType": "duration"}}}}]}}}}
]}}
rows = [{{"r": {{"d": struct.pack("<III", 5, 6, 7)}}}}]
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows)
"#,
        path = input.display().to_string()
    ));
    let parquet = dir.path().join("nested-duration.parquet");
    convert(&input, &parquet, &[]);
    let out = crate::harness::avrow()
        .args(["convert"])
        .arg(&parquet)
        .arg("-o")
        .arg(dir.path().join("back.avro"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("nested-duration.parquet")
            && err.contains("\"r.d\" is a Parquet INTERVAL inside a group"),
        "{err}"
    );
    assert!(!dir.path().join("back.avro").exists());
}

#[test]
fn a_record_without_fields_keeps_its_row_count_in_parquet() {
    // fastavro's `no-fields.avro` shape: records with no fields at all, 5 of them in two
    // blocks. A Parquet file counts rows through its columns, so they are kept as `__empty`.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("no-fields.avro");
    crate::harness::write_no_fields(&input, &[3, 2]);
    let output = dir.path().join("no-fields.parquet");
    convert(&input, &output, &[]);
    let read = crate::harness::python(&format!(
        r#"
import duckdb, pyarrow.parquet as pq
t = pq.read_table({path:?})
print(t.num_rows, t.column_names, duckdb.sql("SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0])
"#,
        path = output.display().to_string()
    ));
    assert_eq!(read.trim(), "5 ['__empty'] 5");
}

/// `input` converted to Parquet with each codec, in row groups of `rows`, beside it
/// (`STEM-CODEC.parquet`).
fn parquet_per_codec(input: &Path, codecs: &[&str], rows: &str) -> Vec<PathBuf> {
    let stem = input.file_stem().unwrap().to_string_lossy();
    codecs
        .iter()
        .map(|codec| {
            let output = input.with_file_name(format!("{stem}-{codec}.parquet"));
            convert(
                input,
                &output,
                &["--compression", codec, "--row-group-size", rows],
            );
            output
        })
        .collect()
}

#[test]
fn parquet_enum_columns_read_back_by_pyarrow_and_duckdb() {
    // Enums are written from their keys (writers/parquet/dictionary.rs) at the top level,
    // nullable, and in nullable records; in arrays and maps the parquet crate writes them.
    // Enough rows for several pages and row groups, with each codec (gzip: the crate's).
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("enums.avro");
    crate::harness::python(&format!(
        r#"
import fastavro
level = {{"type": "enum", "name": "Level", "symbols": ["DEBUG", "INFO", "WARN", "ERROR"]}}
big = {{"type": "enum", "name": "Big", "symbols": ["S%02d" % i for i in range(50)]}}
schema = {{"type": "record", "name": "R", "fields": [
  {{"name": "level", "type": level}},
  {{"name": "big", "type": ["null", big]}},
  {{"name": "rec", "type": ["null", {{"type": "record", "name": "In", "fields": [
     {{"name": "kind", "type": ["null", "Level"]}}, {{"name": "n", "type": "long"}}]}}]}},
  {{"name": "tags", "type": {{"type": "array", "items": "Big"}}}},
  {{"name": "by", "type": {{"type": "map", "values": "Level"}}}},
  {{"name": "never", "type": ["null", "Big"]}}
]}}
names = ["DEBUG", "INFO", "WARN", "ERROR"]
rows = []
for i in range(50000):
    rows.append({{
        "level": names[(i * 7) % 4] if i < 40000 else "ERROR",
        "big": None if i % 3 == 0 else "S%02d" % ((i // 5) % 50),
        "rec": None if i % 11 == 0 else {{"kind": None if i % 4 == 1 else names[i % 3], "n": i}},
        "tags": ["S%02d" % (i % 50)] * (i % 3),
        "by": {{"k": names[i % 4]}} if i % 2 else {{}},
        "never": None,
    }})
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows, sync_interval=16000)
"#,
        path = input.display().to_string()
    ));
    let outputs = parquet_per_codec(&input, &["zstd", "snappy", "none", "gzip"], "20000");
    let checks: Vec<Check> = outputs
        .iter()
        .map(|output| Check::new("parquet", output, &[&input]))
        .collect();
    let reports = oracle_all(&checks);
    assert!(reports.iter().all(|r| r["rows"] == 50000));
    // Another reader of the pages, and the statistics as pyarrow reads them.
    let report = crate::harness::python(&format!(
        r#"
import duckdb, pyarrow.parquet as pq
for path in {paths:?}:
    q = "select count(*), count(big), min(big), max(big), count(distinct big), " \
        "count(rec.kind), min(rec.kind), max(level), sum(len(tags)), count(never) " \
        "from '%s'" % path
    print(duckdb.sql(q).fetchall())
    meta = pq.ParquetFile(path).metadata
    for g in range(meta.num_row_groups):
        for c in range(3):
            col = meta.row_group(g).column(c)
            s = col.statistics
            print(g, col.path_in_schema, s.min, s.max, s.null_count, col.encodings)
"#,
        paths = outputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    ));
    let mut lines = report.lines();
    for _ in &outputs {
        assert_eq!(
            lines.next().unwrap(),
            "[(50000, 33333, 'S00', 'S49', 50, 34090, 'DEBUG', 'WARN', 49999, 0)]",
            "{report}"
        );
        let groups: Vec<&str> = lines.by_ref().take(9).collect();
        // Row group 2 (rows 40000..50000) has only ERROR levels.
        assert!(groups[0].starts_with("0 level DEBUG WARN 0"), "{report}");
        assert!(groups[6].starts_with("2 level ERROR ERROR 0"), "{report}");
        assert!(groups[1].starts_with("0 big S00 S49 6667"), "{report}");
        assert!(groups[2].contains("RLE_DICTIONARY"), "{report}");
    }
}

#[test]
fn parquet_string_dictionaries_read_back_by_pyarrow_and_duckdb() {
    // Low-cardinality strings get a dictionary interned by avrow
    // (writers/parquet/dictionary.rs): top-level, nullable, bytes, in a nullable record; and a
    // column whose first rows repeat few values (so the sample gives it a dictionary) and
    // whose later ones are distinct, long and not ASCII: its dictionary outgrows its 1 MB page
    // and the rest of the chunk is PLAIN, with bounds shortened to 64 bytes.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("strings.avro");
    crate::harness::python(&format!(
        r#"
import fastavro
schema = {{"type": "record", "name": "R", "fields": [
  {{"name": "op", "type": "string"}},
  {{"name": "status", "type": ["null", "string"]}},
  {{"name": "code", "type": "bytes"}},
  {{"name": "src", "type": ["null", {{"type": "record", "name": "Src", "fields": [
     {{"name": "db", "type": "string"}}, {{"name": "table", "type": ["null", "string"]}}]}}]}},
  {{"name": "drift", "type": "string"}}
]}}
rows = []
for i in range(60000):
    rows.append({{
        "op": "cud"[(i // 7) % 3],
        "status": None if i % 5 == 0 else "status-%d" % (i % 4),
        "code": bytes([i % 3, 255]),
        "src": None if i % 9 == 0 else {{"db": "db%d" % (i // 20000),
                                          "table": None if i % 4 == 1 else "t%d" % (i % 6)}},
        "drift": "d%d" % (i % 3) if i < 10000 else "é" + "x" * (70 + i % 13) + "-%d" % i,
    }})
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows, sync_interval=16000)
"#,
        path = input.display().to_string()
    ));
    let outputs = parquet_per_codec(&input, &["zstd", "snappy", "none"], "25000");
    let checks: Vec<Check> = outputs
        .iter()
        .map(|output| Check::new("parquet", output, &[&input]))
        .collect();
    let reports = oracle_all(&checks);
    assert!(reports.iter().all(|r| r["rows"] == 60000));
    // Another reader of the pages, and the statistics and encodings as pyarrow reads them.
    let report = crate::harness::python(&format!(
        r#"
import duckdb, fastavro, pyarrow.parquet as pq
rows = list(fastavro.reader(open({input:?}, "rb")))
for path in {paths:?}:
    q = "select count(*), count(status), count(distinct status), min(op), max(op), " \
        "count(src.table), max(src.db), count(distinct drift), max(drift), min(code) " \
        "from '%s'" % path
    got = duckdb.sql(q).fetchall()[0]
    drifts = [r["drift"] for r in rows]
    want = (60000, sum(r["status"] is not None for r in rows), 4, "c", "u",
            sum(r["src"] is not None and r["src"]["table"] is not None for r in rows), "db2",
            len(set(drifts)), max(drifts), bytes([0, 255]))
    assert got == want, (got, want)
    meta = pq.ParquetFile(path).metadata
    for g in range(meta.num_row_groups):
        start = g * 25000
        part = rows[start:start + meta.row_group(g).num_rows]
        for c in range(meta.num_columns):
            col = meta.row_group(g).column(c)
            s = col.statistics
            name = col.path_in_schema
            if name == "drift":
                values = [r["drift"].encode() for r in part]
                # The dictionary stopped near its 1 MiB page (25 000 distinct values
                # would take 2.2 MB): the rest is PLAIN pages, which both readers read.
                if path.endswith("none.parquet"):
                    page = col.data_page_offset - col.dictionary_page_offset
                    assert page < 1_200_000 and (g != 1 or page > 1_000_000), (g, page)
                low, high = s.min.encode(), s.max.encode()
                assert low <= min(values) and high >= max(values), (g, low, high)
                assert len(low) <= 64 and len(high) <= 64, (g, low, high)
            elif name == "op":
                assert (s.min, s.max, s.null_count) == ("c", "u", 0), (g, s)
print("ok")
"#,
        input = input.display().to_string(),
        paths = outputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    ));
    assert_eq!(report.trim(), "ok", "{report}");
}

#[test]
fn csv_outputs_match_fastavro() {
    convert_all("csv", "csv", &[], |_| false);
}

#[test]
fn ndjson_outputs_match_fastavro() {
    convert_all("ndjson", "ndjson", &[], |_| false);
}

#[test]
fn other_extensions_and_format_names() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("telemetry");
    let cases: [(&str, &[&str], &'static str); 5] = [
        ("a.feather", &[], "arrow"),
        ("b.jsonl", &[], "ndjson"),
        ("c.data", &["--format", "csv"], "csv"),
        ("d.out", &["--format", "feather"], "arrow"),
        ("e.x", &["--format", "jsonl"], "ndjson"),
    ];
    let mut checks = Vec::new();
    for (name, extra, format) in cases {
        let output = dir.path().join(name);
        convert(&input, &output, extra);
        checks.push(Check::new(format, &output, &[&input]));
    }
    // --format wins over the extension.
    let output = dir.path().join("f.csv");
    convert(&input, &output, &["--format", "parquet"]);
    checks.push(Check::new("parquet", &output, &[&input]));
    oracle_all(&checks);
}

#[test]
fn projection_limit_and_batch_size() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    for (format, ext) in [
        ("parquet", "parquet"),
        ("ndjson", "ndjson"),
        ("arrow", "arrow"),
        ("csv", "csv"),
    ] {
        let output = dir.path().join(format!("projected.{ext}"));
        convert(
            &g.order,
            &output,
            &[
                "--columns",
                "id,lines.sku,attributes",
                "--limit",
                "1234",
                "--batch-size",
                "100",
            ],
        );
        let mut check = Check::new(format, &output, &[&g.order]);
        check.columns = Some("id,lines.sku,attributes".into());
        check.limit = Some(1234);
        checks.push(check);
    }
    let reports = oracle_all(&checks);
    for report in &reports {
        assert_eq!(report["rows"], 1234);
        assert_eq!(
            report["columns"],
            serde_json::json!(["id", "lines", "attributes"])
        );
    }
    // Batches never exceed --batch-size: the IPC file holds batches of at most 100 rows.
    let sizes = python(&format!(
        "import pyarrow.ipc as ipc\nr = ipc.open_file({:?})\n\
         print(max(r.get_batch(i).num_rows for i in range(r.num_record_batches)))",
        dir.path().join("projected.arrow").display().to_string()
    ));
    assert_eq!(sizes.trim(), "100");
}

#[test]
fn limit_zero_and_limit_beyond_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("spark/alltypes_plain.avro");
    let none = dir.path().join("none.parquet");
    convert(&input, &none, &["--limit", "0"]);
    let all = dir.path().join("all.csv");
    convert(&input, &all, &["-n", "1000000"]);
    let mut zero = Check::new("parquet", &none, &[&input]);
    zero.limit = Some(0);
    let reports = oracle_all(&[zero, Check::new("csv", &all, &[&input])]);
    assert_eq!(reports[0]["rows"], 0);
    assert_eq!(reports[1]["rows"], 8);
}

/// For each Parquet file: row groups, the compression of the first column chunk, rows.
fn parquet_layouts(paths: &[PathBuf]) -> Vec<String> {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    python(&format!(
        "import json, pyarrow.parquet as pq\n\
         for path in json.loads({:?}):\n    \
             m = pq.ParquetFile(path).metadata\n    \
             print(m.num_row_groups, m.row_group(0).column(0).compression, m.num_rows)",
        serde_json::to_string(&paths).unwrap()
    ))
    .lines()
    .map(str::to_string)
    .collect()
}

#[test]
fn parquet_compression_and_row_groups() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    let mut expected_layouts = Vec::new();
    for (arg, expected) in [
        (None, "ZSTD"),
        (Some("zstd"), "ZSTD"),
        (Some("snappy"), "SNAPPY"),
        (Some("gzip"), "GZIP"),
        (Some("lz4"), "LZ4"),
        (Some("brotli"), "BROTLI"),
        (Some("none"), "UNCOMPRESSED"),
    ] {
        let output = dir
            .path()
            .join(format!("{}.parquet", arg.unwrap_or("default")));
        let mut extra = vec!["--row-group-size", "3000"];
        if let Some(arg) = arg {
            extra.extend(["--compression", arg]);
        }
        convert(&g.telemetry, &output, &extra);
        // 8 000 rows in row groups of 3 000.
        expected_layouts.push(format!("3 {expected} 8000"));
        checks.push(Check::new("parquet", &output, &[&g.telemetry]));
    }
    // Levels: zstd 19 and gzip 9 are smaller than their defaults.
    for (codec, level, expected) in [("zstd", "19", "ZSTD"), ("gzip", "9", "GZIP")] {
        let output = dir.path().join(format!("{codec}-{level}.parquet"));
        convert(
            &g.telemetry,
            &output,
            &[
                "--row-group-size",
                "3000",
                "--compression",
                codec,
                "--level",
                level,
            ],
        );
        let default = dir.path().join(format!("{codec}.parquet"));
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        assert!(size(&output) < size(&default), "{codec} {level}");
        expected_layouts.push(format!("3 {expected} 8000"));
        checks.push(Check::new("parquet", &output, &[&g.telemetry]));
    }
    // Row groups by size: 8 000 rows of about 100 bytes in row groups of 200 KB are two
    // groups of at least 4096 rows.
    let output = dir.path().join("by-bytes.parquet");
    convert(&g.telemetry, &output, &["--row-group-bytes", "200K"]);
    expected_layouts.push("2 ZSTD 8000".to_string());
    checks.push(Check::new("parquet", &output, &[&g.telemetry]));
    let outputs: Vec<PathBuf> = checks.iter().map(|c| c.output.clone()).collect();
    assert_eq!(parquet_layouts(&outputs), expected_layouts);
    oracle_all(&checks);
}

#[test]
fn parallel_parquet_encoding_is_deterministic() {
    // Columns are encoded on several threads but appended in order: the file does not
    // depend on the thread count.
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for threads in ["1", "2", "8"] {
        let output = dir.path().join(format!("t{threads}.parquet"));
        convert(
            &g.wide,
            &output,
            &["--threads", threads, "--row-group-size", "600"],
        );
        files.push(std::fs::read(&output).unwrap());
    }
    assert_eq!(files[0], files[1]);
    assert_eq!(files[0], files[2]);
    oracle_all(&[Check::new(
        "parquet",
        &dir.path().join("t8.parquet"),
        &[&g.wide],
    )]);
    // The encodings are chosen from exactly the first rows, whatever the batches they come in
    // (this file's columns fit one page each, so only that choice could differ).
    let mut files = Vec::new();
    for (threads, batch) in [("1", "8192"), ("1", "100"), ("2", "777"), ("2", "3000")] {
        let output = dir
            .path()
            .join(format!("telemetry-{threads}-{batch}.parquet"));
        convert(
            &g.telemetry,
            &output,
            &["--threads", threads, "--batch-size", batch],
        );
        files.push(std::fs::read(&output).unwrap());
    }
    assert!(files.iter().all(|f| *f == files[0]));
}

#[test]
fn ipc_compression() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    let mut sizes = Vec::new();
    for (codec, ext) in [("none", "arrow"), ("zstd", "arrow"), ("lz4", "arrows")] {
        let output = dir.path().join(format!("{codec}.{ext}"));
        convert(&g.wide, &output, &["--compression", codec]);
        sizes.push(std::fs::metadata(&output).unwrap().len());
        checks.push(Check::new(
            if ext == "arrow" { "arrow" } else { "arrows" },
            &output,
            &[&g.wide],
        ));
    }
    assert!(sizes[1] < sizes[0] && sizes[2] < sizes[0], "{sizes:?}");
    oracle_all(&checks);
}

#[test]
fn summary_on_stderr_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("order.parquet");
    let out = avrow()
        .arg("convert")
        .arg(sample("order"))
        .arg("-o")
        .arg(&output)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    // No progress bar when stderr is not a terminal: just the summary line.
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("avrow: 1,500 rows: "), "{stderr}");
    assert!(stderr.contains("order.avro (570.30 KiB) -> "), "{stderr}");
    assert!(
        stderr.contains("order.parquet (") && stderr.contains(" rows/s"),
        "{stderr}"
    );

    let out = avrow()
        .arg("convert")
        .arg(sample("order"))
        .arg("-o")
        .arg(&output)
        .args(["--force", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
}

#[test]
fn new_outputs_get_ordinary_permissions() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("x.csv");
        convert(&fixture("apache/weather.avro"), &output, &[]);
        let mode = std::fs::metadata(&output).unwrap().permissions().mode();
        // Not the 0600 of a temporary file: readable by others unless the umask says no.
        let reference = dir.path().join("reference");
        std::fs::write(&reference, b"").unwrap();
        let expected = std::fs::metadata(&reference).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, expected & 0o777);
    }
}

/// Avro `uuid`s (string and fixed) are Parquet UUID columns (they were bare 16-byte fixed
/// columns, which DuckDB read as BLOB): DuckDB reads them as UUID and pyarrow as its uuid
/// type, and converting the Parquet file back to Avro gives `uuid`s again.
#[test]
fn uuids_are_parquet_uuid_columns() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("uuids.avro");
    crate::harness::python(&format!(
        r#"
import fastavro, uuid
schema = {{"type": "record", "name": "R", "fields": [
  {{"name": "id", "type": {{"type": "string", "logicalType": "uuid"}}}},
  {{"name": "fx", "type": ["null", {{"type": "fixed", "name": "F", "size": 16, "logicalType": "uuid"}}]}}]}}
rows = [{{"id": str(uuid.UUID(int=i * 7919)), "fx": None if i % 2 else uuid.UUID(int=i).bytes}}
        for i in range(5)]
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows)
"#,
        path = input.display().to_string()
    ));
    let output = dir.path().join("uuids.parquet");
    convert(&input, &output, &[]);
    let report = crate::harness::python(&format!(
        r#"
import duckdb, pyarrow.parquet as pq
p = {path:?}
print(duckdb.sql("select typeof(id), typeof(fx), id::varchar from '%s' order by id limit 1" % p).fetchall())
meta = pq.ParquetFile(p).schema
print(meta.column(0).logical_type, meta.column(1).logical_type)
"#,
        path = output.display().to_string()
    ));
    let mut lines = report.lines();
    assert_eq!(
        lines.next().unwrap(),
        "[('UUID', 'UUID', '00000000-0000-0000-0000-000000000000')]",
        "{report}"
    );
    assert_eq!(lines.next().unwrap(), "UUID UUID", "{report}");
    let back = dir.path().join("back.avro");
    convert(&output, &back, &[]);
    let schema = avrow().arg("schema").arg(&back).output().unwrap();
    let schema = String::from_utf8(schema.stdout).unwrap();
    assert_eq!(schema.matches("\"uuid\"").count(), 2, "{schema}");
}

/// CSV tells a null (nothing) from an empty string (`""`), as DuckDB's `COPY ... TO` writes
/// them: both were nothing, read back as null by every reader. DuckDB's reader (with
/// `allow_quoted_nulls=false`) reads them back apart.
#[test]
fn csv_writes_nulls_and_empty_strings_apart() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("strings.avro");
    python(&format!(
        r#"
import fastavro
schema = {{"type": "record", "name": "R", "fields": [
  {{"name": "s", "type": ["null", "string"]}}, {{"name": "n", "type": "int"}},
  {{"name": "z", "type": "null"}}]}}
rows = [{{"s": v, "n": i, "z": None}} for i, v in enumerate([None, "", "a,b", 'q"x', "line\nbreak", " "])]
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows)
"#,
        path = input.display().to_string()
    ));
    let output = dir.path().join("strings.csv");
    convert(&input, &output, &[]);
    let text = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        text,
        "s,n,z\n,0,\n\"\",1,\n\"a,b\",2,\n\"q\"\"x\",3,\n\"line\nbreak\",4,\n ,5,\n"
    );
    let back = python(&format!(
        "import duckdb\nprint(duckdb.sql(\"select s from read_csv('{}', allow_quoted_nulls=false) order by n\").fetchall())",
        output.display()
    ));
    assert_eq!(
        back.trim(),
        "[(None,), ('',), ('a,b',), ('q\"x',), ('line\\nbreak',), (' ',)]"
    );
}
