//! Several inputs (list, directory, glob) into one output or one output each; standard input
//! and standard output.

use crate::harness::{
    avrow, generated, names_in, one_error_line, oracle_all, python, sample, Check,
};

#[test]
fn several_inputs_into_one_output() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("both.parquet");
    avrow()
        .arg("convert")
        .arg(&g.telemetry)
        .arg(&g.telemetry_b)
        .arg("-o")
        .arg(&output)
        .assert()
        .success()
        .stderr(predicates::str::contains("avrow: 10,000 rows: 2 files"));
    let reports = oracle_all(&[Check::new(
        "parquet",
        &output,
        &[&g.telemetry, &g.telemetry_b],
    )]);
    assert_eq!(reports[0]["rows"], 10_000);
}

/// A directory with both telemetry files and a file that is not Avro (ignored: no .avro).
fn telemetry_dir() -> tempfile::TempDir {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&g.telemetry, dir.path().join("a.avro")).unwrap();
    std::fs::copy(&g.telemetry_b, dir.path().join("b.avro")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"not avro").unwrap();
    dir
}

#[test]
fn a_directory_is_its_avro_files() {
    let inputs = telemetry_dir();
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("all.arrow");
    avrow()
        .arg("convert")
        .arg(inputs.path())
        .arg("-o")
        .arg(&output)
        .arg("-q")
        .assert()
        .success();
    let a = inputs.path().join("a.avro");
    let b = inputs.path().join("b.avro");
    oracle_all(&[Check::new("arrow", &output, &[&a, &b])]);
}

#[test]
fn a_glob_pattern_is_expanded() {
    let inputs = telemetry_dir();
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("all.csv");
    avrow()
        .arg("convert")
        .arg(inputs.path().join("*.avro"))
        .arg("-o")
        .arg(&output)
        .arg("-q")
        .assert()
        .success();
    let a = inputs.path().join("a.avro");
    let b = inputs.path().join("b.avro");
    oracle_all(&[Check::new("csv", &output, &[&a, &b])]);
    // count takes patterns too.
    avrow()
        .arg("count")
        .arg(inputs.path().join("?.avro"))
        .assert()
        .success()
        .stdout(predicates::str::ends_with("10000 total\n"));
}

#[test]
fn output_dir_writes_one_output_per_input() {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("new/sub");
    let samples: Vec<_> = ["order", "wide", "telemetry", "counters"]
        .into_iter()
        .map(sample)
        .collect();
    avrow()
        .arg("convert")
        .args(&samples)
        .arg("--output-dir")
        .arg(&target)
        .args(["--format", "arrows", "-q"])
        .assert()
        .success();
    assert_eq!(
        names_in(&target),
        [
            "counters.arrows",
            "order.arrows",
            "telemetry.arrows",
            "wide.arrows"
        ]
    );
    let checks: Vec<Check> = samples
        .iter()
        .map(|s| {
            let name = format!("{}.arrows", s.file_stem().unwrap().to_string_lossy());
            Check::new("arrows", &target.join(name), &[s])
        })
        .collect();
    oracle_all(&checks);
}

#[test]
fn output_dir_checks_every_output_before_converting() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("wide.csv"), b"keep").unwrap();
    let assert = avrow()
        .arg("convert")
        .arg(sample("order"))
        .arg(sample("wide"))
        .arg("--output-dir")
        .arg(out.path())
        .args(["--format", "csv"])
        .assert()
        .code(1);
    let err = one_error_line(&assert.get_output().stderr);
    assert!(err.contains("wide.csv already exists"), "{err}");
    // Nothing converted, nothing replaced.
    assert_eq!(names_in(out.path()), ["wide.csv"]);
    assert_eq!(std::fs::read(out.path().join("wide.csv")).unwrap(), b"keep");
}

#[test]
fn output_dir_refuses_two_inputs_with_one_name() {
    let inputs = tempfile::tempdir().unwrap();
    std::fs::create_dir(inputs.path().join("x")).unwrap();
    std::fs::create_dir(inputs.path().join("y")).unwrap();
    std::fs::copy(sample("order"), inputs.path().join("x/data.avro")).unwrap();
    std::fs::copy(sample("order"), inputs.path().join("y/data.avro")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let assert = avrow()
        .arg("convert")
        .arg(inputs.path().join("x/data.avro"))
        .arg(inputs.path().join("y/data.avro"))
        .arg("--output-dir")
        .arg(out.path())
        .args(["--format", "parquet"])
        .assert()
        .code(1);
    let err = one_error_line(&assert.get_output().stderr);
    assert!(err.contains("would both be written to"), "{err}");
    assert!(names_in(out.path()).is_empty());
}

#[test]
fn schemas_that_differ_cannot_share_one_output() {
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("mixed.arrow");
    let assert = avrow()
        .arg("convert")
        .arg(sample("order"))
        .arg(sample("telemetry"))
        .arg("-o")
        .arg(&output)
        .assert()
        .code(1);
    let err = one_error_line(&assert.get_output().stderr);
    assert!(err.contains("writer schema cannot be merged"), "{err}");
    assert!(
        err.contains("the root type: record bench.Order in one schema, record bench.Reading"),
        "{err}"
    );
    assert!(err.contains("--output-dir"), "{err}");
    assert!(names_in(out.path()).is_empty());
}

/// Inputs with different writer schemas, read as one reader schema into one output; fastavro
/// reads the inputs with the same reader schema.
#[test]
fn a_reader_schema_joins_different_writer_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let evolved = dir.path().join("evolved.avro");
    let reader_schema = dir.path().join("reader.avsc");
    std::fs::write(
        &reader_schema,
        r#"{"type":"record","name":"Reading","namespace":"bench","fields":[
            {"name":"seq","type":"long"},
            {"name":"device_id","type":"long"},
            {"name":"temperature","type":"double"},
            {"name":"humidity","type":["null","double"],"default":null},
            {"name":"status","type":{"type":"enum","name":"Status",
                "symbols":["OFFLINE","FAIL","WARN","OK","UNKNOWN"]}},
            {"name":"site","type":"string","default":"unknown"},
            {"name":"samples","type":{"type":"array","items":"double"}}]}"#,
    )
    .unwrap();
    python(&format!(
        r#"
import fastavro
schema = {{"type": "record", "name": "Reading", "namespace": "bench", "fields": [
    {{"name": "site", "type": "string"}},
    {{"name": "device_id", "type": "int"}},
    {{"name": "seq", "type": "long"}},
    {{"name": "status", "type": {{"type": "enum", "name": "Status", "symbols": ["OK", "UNKNOWN"]}}}},
    {{"name": "temperature", "type": "float"}},
    {{"name": "samples", "type": {{"type": "array", "items": "float"}}}},
    {{"name": "extra", "type": ["null", "string"]}}]}}
rows = [{{"site": "s%d" % i, "device_id": i * 7 - 300, "seq": 2**40 + i,
          "status": ["OK", "UNKNOWN"][i % 2], "temperature": i / 4.0,
          "samples": [float(j) / 8 for j in range(i % 5)], "extra": None if i % 3 else "x"}}
        for i in range(500)]
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), rows, codec="deflate", sync_interval=2000)
"#,
        path = evolved.to_str().unwrap()
    ));
    let telemetry = sample("telemetry");
    let mut checks = Vec::new();
    for format in ["parquet", "arrow"] {
        let output = dir.path().join(format!("joined.{format}"));
        avrow()
            .arg("convert")
            .arg(&telemetry)
            .arg(&evolved)
            .arg("--reader-schema")
            .arg(&reader_schema)
            .arg("-o")
            .arg(&output)
            .arg("--quiet")
            .assert()
            .success();
        let mut check = Check::new(format, &output, &[&telemetry, &evolved]);
        check.reader_schema = Some(reader_schema.clone());
        checks.push(check);
    }
    let reports = oracle_all(&checks);
    for report in &reports {
        assert_eq!(
            report["columns"],
            serde_json::json!([
                "seq",
                "device_id",
                "temperature",
                "humidity",
                "status",
                "site",
                "samples"
            ])
        );
        assert!(report["values_checked"].as_u64().unwrap() > 0);
    }
}

/// Inputs whose schema evolved (a column widened, a field added with and without a default)
/// convert into one output without a reader schema: their merged schema, which fastavro reads
/// both inputs with to the same values.
#[test]
fn evolved_inputs_convert_into_one_output_as_their_merged_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old.avro"), dir.path().join("new.avro"));
    python(&format!(
        r#"
import fastavro
old = {{"type": "record", "name": "Event", "namespace": "app", "fields": [
    {{"name": "id", "type": "int"}},
    {{"name": "amount", "type": "float"}},
    {{"name": "tags", "type": {{"type": "array", "items": "int"}}}},
    {{"name": "kind", "type": {{"type": "enum", "name": "Kind", "symbols": ["A", "B"]}}}}]}}
new = {{"type": "record", "name": "Event", "namespace": "app", "fields": [
    {{"name": "id", "type": "long"}},
    {{"name": "amount", "type": "double"}},
    {{"name": "tags", "type": {{"type": "array", "items": "long"}}}},
    {{"name": "kind", "type": {{"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}}}},
    {{"name": "note", "type": "string"}},
    {{"name": "level", "type": "int", "default": 3}}]}}
with open({old:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(old), [
        {{"id": i, "amount": i / 8.0, "tags": list(range(i % 4)), "kind": "AB"[i % 2]}}
        for i in range(300)], codec="deflate", sync_interval=1000)
with open({new:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(new), [
        {{"id": 2**40 + i, "amount": i / 3.0, "tags": [2**35, i], "kind": "ABC"[i % 3],
          "note": "n%d" % i, "level": i % 5}}
        for i in range(200)], codec="snappy", sync_interval=1000)
"#,
        old = old.to_str().unwrap(),
        new = new.to_str().unwrap()
    ));
    let merged = dir.path().join("merged.avsc");
    std::fs::write(
        &merged,
        r#"{"type":"record","name":"Event","namespace":"app","fields":[
            {"name":"id","type":"long"},
            {"name":"amount","type":"double"},
            {"name":"tags","type":{"type":"array","items":"long"}},
            {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B","C"]}},
            {"name":"note","type":["null","string"],"default":null},
            {"name":"level","type":"int","default":3}]}"#,
    )
    .unwrap();
    let mut checks = Vec::new();
    for format in ["parquet", "arrow"] {
        let output = dir.path().join(format!("events.{format}"));
        avrow()
            .arg("convert")
            .arg(&old)
            .arg(&new)
            .arg("-o")
            .arg(&output)
            .arg("--quiet")
            .assert()
            .success();
        let mut check = Check::new(format, &output, &[&old, &new]);
        check.reader_schema = Some(merged.clone());
        checks.push(check);
    }
    for report in &oracle_all(&checks) {
        assert_eq!(
            report["columns"],
            serde_json::json!(["id", "amount", "tags", "kind", "note", "level"])
        );
        assert_eq!(report["rows"], 500, "{report}");
    }
    // `avrow schema` of both files: the merged schema.
    let out = avrow()
        .arg("schema")
        .arg(&old)
        .arg(&new)
        .args(["--canonical", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["canonical_form"],
        r#"{"name":"app.Event","type":"record","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"},{"name":"tags","type":{"type":"array","items":"long"}},{"name":"kind","type":{"name":"app.Kind","type":"enum","symbols":["A","B","C"]}},{"name":"note","type":["null","string"]},{"name":"level","type":"int"}]}"#
    );
}

#[test]
fn stdin_to_stdout() {
    let g = generated();
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    for format in ["ndjson", "csv", "arrows", "arrow", "parquet"] {
        let out = avrow()
            .args(["convert", "-", "-o", "-", "--format", format])
            .pipe_stdin(&g.order)
            .unwrap()
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("5,000 rows: <stdin> ("), "{stderr}");
        assert!(stderr.contains("-> <stdout> ("), "{stderr}");
        let output = dir.path().join(format!("stdout.{format}"));
        std::fs::write(&output, &out.stdout).unwrap();
        checks.push(Check::new(format, &output, &[&g.order]));
    }
    // Standard input to a file.
    let output = dir.path().join("from-stdin.parquet");
    avrow()
        .args(["convert", "-", "-q", "-o"])
        .arg(&output)
        .pipe_stdin(&g.telemetry)
        .unwrap()
        .assert()
        .success();
    checks.push(Check::new("parquet", &output, &[&g.telemetry]));
    oracle_all(&checks);
}
