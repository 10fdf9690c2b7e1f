//! `convert -o out.avro`: every fixture, sample and generated file re-encoded under every
//! codec, then read by independent implementations — fastavro (records and writer schema
//! equal to the input's), Apache's Python reader, Apache Avro for Java 1.8.2 (a small reader
//! compiled here) and the C implementation's `avrocat` — each of which must read the output
//! exactly as it reads the input, wherever it supports the codecs of both.

use crate::harness::{avrow, convert, fixtures, generated, python, sample};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Python: deep equality of records as fastavro reads them, NaN equal to NaN.
const SAME_PY: &str = r#"def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
"#;

const CODECS: [&str; 6] = ["none", "deflate", "snappy", "zstd", "bzip2", "xz"];

/// Avro's name for a `--compression` value.
fn avro_codec(c: &str) -> &str {
    match c {
        "none" => "null",
        "zstd" => "zstandard",
        other => other,
    }
}

/// Every input, each converted under two codecs: (input, output, codec).
fn conversions(dir: &Path) -> Vec<(PathBuf, PathBuf, &'static str)> {
    let g = generated();
    let mut inputs = fixtures();
    inputs.extend(["order", "wide", "telemetry", "counters"].map(sample));
    inputs.extend([
        g.order.clone(),
        g.telemetry.clone(),
        g.wide.clone(),
        g.empty.clone(),
    ]);
    let mut out = Vec::new();
    for (i, input) in inputs.into_iter().enumerate() {
        for k in 0..2 {
            let codec = CODECS[(i + 3 * k) % CODECS.len()];
            let stem = input.file_stem().unwrap().to_string_lossy().into_owned();
            let output = dir.join(format!("{i}-{stem}-{codec}.avro"));
            let mut extra = vec!["--compression", codec];
            // Small blocks for some, so that outputs have many.
            if i % 3 == 0 {
                extra.extend(["--block-size", "4K"]);
            }
            convert(&input, &output, &extra);
            out.push((input.clone(), output, codec));
        }
    }
    out
}

/// The codec in a file's header.
fn codec_of(path: &Path) -> String {
    let out = avrow().arg("info").arg(path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("codec:"))
        .map(|c| c.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn converted_avro_reads_back_the_same_in_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = conversions(dir.path());
    assert!(pairs.len() >= 50, "{} conversions", pairs.len());

    // fastavro and Apache's Python reader, one process for all.
    let jobs: Vec<Value> = pairs
        .iter()
        .map(|(i, o, c)| {
            serde_json::json!({"input": i, "output": o, "codec": avro_codec(c),
                               "input_codec": codec_of(i)})
        })
        .collect();
    let program = format!(
        r#"
import json, math, fastavro
import avro.datafile, avro.io
jobs = json.loads({jobs:?})

{SAME}
def fast(path):
    with open(path, 'rb') as f:
        r = fastavro.reader(f)
        return r.writer_schema, r.metadata.get('avro.codec', 'null'), list(r)

def apache(path):
    with avro.datafile.DataFileReader(open(path, 'rb'), avro.io.DatumReader()) as r:
        return list(r)

# Codecs Apache's Python reader has here (snappy needs python-snappy; no xz).
APACHE = {{'null', 'deflate', 'bzip2', 'zstandard'}}
report = []
for j in jobs:
    si, _, ri = fast(j['input'])
    so, codec, ro = fast(j['output'])
    entry = {{'output': j['output'], 'rows': len(ro), 'codec': codec}}
    entry['fastavro'] = codec == j['codec'] and si == so and same(ri, ro)
    if j['codec'] in APACHE and j['input_codec'] in APACHE:
        entry['apache'] = same(apache(j['input']), apache(j['output']))
    report.append(entry)
print(json.dumps(report))
"#,
        jobs = serde_json::to_string(&jobs).unwrap(),
        SAME = SAME_PY,
    );
    let report: Vec<Value> = serde_json::from_str(&python(&program)).unwrap();
    let mut apache_checked = 0;
    for r in &report {
        assert_eq!(r["fastavro"], true, "fastavro: {r}");
        if let Some(a) = r.get("apache") {
            assert_eq!(a, true, "Apache Python: {r}");
            apache_checked += 1;
        }
    }
    assert!(
        apache_checked >= 15,
        "Apache's Python reader checked {apache_checked} files"
    );

    // Apache Avro for Java 1.8.2 (no zstandard; one JVM for every file) and avrocat (null,
    // deflate, snappy).
    let java = JavaReader::compile(dir.path());
    let for_java: Vec<&(PathBuf, PathBuf, &str)> = pairs
        .iter()
        .filter(|(i, _, c)| avro_codec(c) != "zstandard" && codec_of(i) != "zstandard")
        .collect();
    let files: Vec<&Path> = for_java
        .iter()
        .flat_map(|(i, o, _)| [i.as_path(), o.as_path()])
        .collect();
    let dumps = java.dump(&files);
    for (input, output, _) in &for_java {
        assert!(
            dumps[input.as_path()] == dumps[output.as_path()],
            "Java reads {} differently from {}",
            output.display(),
            input.display()
        );
    }
    let mut c_checked = 0;
    for (input, output, codec) in &pairs {
        let c_codecs = ["null", "deflate", "snappy"];
        if c_codecs.contains(&avro_codec(codec)) && c_codecs.contains(&codec_of(input).as_str()) {
            let (a, b) = (avrocat(input), avrocat(output));
            assert!(
                a == b,
                "avrocat reads {} differently from {}",
                output.display(),
                input.display()
            );
            c_checked += 1;
        }
    }
    assert!(
        for_java.len() >= 20 && c_checked >= 10,
        "Java {}, avrocat {c_checked}",
        for_java.len()
    );
}

/// `AvroDump`, compiled against the system's Avro for Java.
struct JavaReader {
    classpath: String,
}

impl JavaReader {
    fn compile(dir: &Path) -> JavaReader {
        let java = "/usr/share/java";
        let jars = [
            "avro",
            "jackson-core-asl",
            "jackson-mapper-asl",
            "commons-compress",
            "xz",
            "snappy-java",
            "slf4j-api",
            "slf4j-nop",
            "paranamer",
        ];
        let mut classpath: Vec<String> = jars.iter().map(|j| format!("{java}/{j}.jar")).collect();
        assert!(
            Path::new(&classpath[0]).exists(),
            "Apache Avro for Java is needed (Debian: apt-get install libavro-java)"
        );
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/AvroDump.java");
        let status = std::process::Command::new("javac")
            .args([
                "-d",
                &dir.display().to_string(),
                "-cp",
                &classpath.join(":"),
            ])
            .arg(&source)
            .status()
            .expect("javac is needed");
        assert!(status.success(), "javac failed");
        classpath.push(dir.display().to_string());
        JavaReader {
            classpath: classpath.join(":"),
        }
    }

    /// Each file's records as Java prints them.
    fn dump<'a>(&self, files: &[&'a Path]) -> HashMap<&'a Path, String> {
        let out = std::process::Command::new("java")
            .args(["-cp", &self.classpath, "AvroDump"])
            .args(files)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "Java cannot read them: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut dumps = HashMap::new();
        let mut parts = text.split("==AvroDump== ").skip(1);
        for file in files {
            let part = parts.next().expect("one dump per file");
            let (head, records) = part.split_once('\n').unwrap_or((part, ""));
            assert!(head.starts_with(&file.display().to_string()), "{head}");
            dumps.insert(*file, records.to_string());
        }
        dumps
    }
}

fn avrocat(file: &Path) -> Vec<u8> {
    let out = std::process::Command::new("avrocat")
        .arg(file)
        .output()
        .expect("avrocat is needed (Debian: apt-get install avro-bin)");
    assert!(
        out.status.success(),
        "avrocat cannot read {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Arrow IPC files and streams and Parquet files on standard input are told by their magic
/// bytes as files are (copied to a temporary file first), Avro still streams; a damaged one is
/// an error naming `<stdin>`, and the options that apply only to Avro are refused.
#[test]
fn arrow_and_parquet_on_standard_input_convert_as_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let input = sample("order");
    for ext in ["parquet", "arrow", "arrows", "avro"] {
        let middle = dir.path().join(format!("order.{ext}"));
        convert(&input, &middle, &[]);
        let from_file = dir.path().join(format!("from-file-{ext}.arrow"));
        convert(&middle, &from_file, &[]);
        let from_stdin = dir.path().join(format!("from-stdin-{ext}.arrow"));
        avrow()
            .args(["convert", "-", "-o"])
            .arg(&from_stdin)
            .arg("--quiet")
            .pipe_stdin(&middle)
            .unwrap()
            .assert()
            .success();
        // The same table (the batches of a stream may be cut where a file's are not).
        let same = python(&format!(
            r#"
import pyarrow as pa
read = lambda p: pa.ipc.open_file(p).read_all()
print(read({a:?}).equals(read({b:?}), check_metadata=True))
"#,
            a = from_file.display().to_string(),
            b = from_stdin.display().to_string()
        ));
        assert_eq!(same.trim(), "True", "{ext}");
        if ext != "avro" {
            avrow()
                .args(["convert", "-", "-o"])
                .arg(dir.path().join("x.avro"))
                .args(["--quiet", "--skip-bad-blocks"])
                .pipe_stdin(&middle)
                .unwrap()
                .assert()
                .code(2);
        }
    }
    let out = avrow()
        .args(["convert", "-", "-o"])
        .arg(dir.path().join("bad.avro"))
        .arg("--quiet")
        .write_stdin(&b"PAR1 not a parquet file"[..])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("<stdin>"), "{stderr}");
    assert!(!dir.path().join("bad.avro").exists());
}

/// A Parquet file avrow wrote from Avro converts back to the Avro file: its recorded schema
/// (general unions that Parquet stores as structs, enums, fixed decimals, record names) and its
/// records, for every fixture that Parquet can hold and a record without fields.
#[test]
fn avro_to_parquet_to_avro_gives_the_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = fixtures();
    let no_fields = dir.path().join("no-fields.avro");
    crate::harness::write_no_fields(&no_fields, &[3]);
    inputs.push(no_fields);
    let mut jobs = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let parquet = dir.path().join(format!("{i}.parquet"));
        convert(input, &parquet, &[]);
        let back = dir.path().join(format!("{i}.avro"));
        convert(&parquet, &back, &[]);
        jobs.push(serde_json::json!([input, back]));
    }
    let program = format!(
        r#"
import json, math, fastavro
{SAME}def read(p):
    with open(p, 'rb') as f:
        r = fastavro.reader(f)
        return fastavro.schema.to_parsing_canonical_form(r.writer_schema), list(r)
bad = []
for i, o in json.loads({jobs:?}):
    (si, ri), (so, ro) = read(i), read(o)
    if si != so:
        bad.append([i, "schema", si, so])
    elif not same(ri, ro):
        bad.append([i, "records"])
print(json.dumps(bad))
"#,
        jobs = serde_json::to_string(&jobs).unwrap(),
        SAME = SAME_PY,
    );
    let bad: Vec<Value> = serde_json::from_str(&python(&program)).unwrap();
    assert!(bad.is_empty(), "not given back: {bad:#?}");
}

#[test]
fn parquet_and_arrow_ipc_inputs_convert_to_avro() {
    // Each sample to Parquet, an IPC file and an IPC stream, then each of those to Avro: the
    // records are the sample's (the Avro schema recorded in the Arrow schema is kept).
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    for name in ["order", "wide", "telemetry", "counters"] {
        let input = sample(name);
        for ext in ["parquet", "arrow", "arrows"] {
            let middle = dir.path().join(format!("{name}.{ext}"));
            convert(&input, &middle, &[]);
            let output = dir.path().join(format!("{name}-from-{ext}.avro"));
            convert(&middle, &output, &["--compression", "zstd"]);
            jobs.push(serde_json::json!([input, output]));
        }
    }
    let program = format!(
        r#"
import json, math, fastavro
{SAME}def read(p):
    with open(p, 'rb') as f:
        r = fastavro.reader(f)
        return r.writer_schema, list(r)
bad = []
for i, o in json.loads({jobs:?}):
    (si, ri), (so, ro) = read(i), read(o)
    if si != so or not same(ri, ro):
        bad.append(o)
print(json.dumps(bad))
"#,
        jobs = serde_json::to_string(&jobs).unwrap(),
        SAME = SAME_PY,
    );
    let bad: Vec<String> = serde_json::from_str(&python(&program)).unwrap();
    assert!(bad.is_empty(), "differ from their sample: {bad:?}");
    // Options that only apply to Avro input are refused for the others.
    let parquet = dir.path().join("order.parquet");
    avrow()
        .args(["convert", "--quiet", "--skip-bad-blocks"])
        .arg(&parquet)
        .arg("-o")
        .arg(dir.path().join("x.avro"))
        .assert()
        .code(2);
    // A damaged Parquet or IPC input: an error naming the file, and no output.
    for (name, bytes) in [
        ("bad.parquet", &b"PAR1 not a parquet file"[..]),
        ("bad.arrow", b"ARROW1\0\0garbage"),
    ] {
        let bad = dir.path().join(name);
        std::fs::write(&bad, bytes).unwrap();
        let out = dir.path().join(format!("{name}.avro"));
        let run = avrow()
            .args(["convert", "--quiet"])
            .arg(&bad)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(name), "{name}: {stderr}");
        assert!(!out.exists(), "{name}: output left behind");
    }
    // Top-level columns can be chosen.
    let some = dir.path().join("some.avro");
    convert(&parquet, &some, &["--columns", "id,total"]);
    let schema = avrow().arg("schema").arg(&some).output().unwrap();
    let text = String::from_utf8_lossy(&schema.stdout);
    assert!(
        text.contains("\"total\"") && !text.contains("customer"),
        "{text}"
    );
}
