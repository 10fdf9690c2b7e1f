//! Shared helpers: the binary, test data, generated multi-block files, the Python oracle.

use assert_cmd::Command;
use avrow_datasets::{Codec, GenOptions, Shape};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `avrow` binary, with `RUST_BACKTRACE=1` (errors must still be one line), the default
/// varint kernel and the default bulk path.
pub fn avrow() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_avrow"));
    cmd.env("RUST_BACKTRACE", "1")
        .env_remove("AVROW_VARINT")
        .env_remove("AVROW_BULK");
    cmd
}

/// The crate directory.
fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture copied from `shared/fixtures/avro` (`spark/binary.avro`).
pub fn fixture(name: &str) -> PathBuf {
    let path = crate_dir().join("tests/data").join(name);
    assert!(path.exists(), "missing fixture {}", path.display());
    path
}

/// Every fixture, sorted.
pub fn fixtures() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in ["apache", "spark"] {
        for entry in std::fs::read_dir(crate_dir().join("tests/data").join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "avro") {
                all.push(path);
            }
        }
    }
    all.sort();
    all
}

/// Writes with fastavro a file of records without fields (fastavro's `no-fields.avro` shape),
/// one block per entry of `blocks`, that many records each.
pub fn write_no_fields(path: &Path, blocks: &[usize]) {
    python(&format!(
        r#"
import fastavro
schema = fastavro.parse_schema({{"type": "record", "name": "Empty", "fields": []}})
with open({path:?}, "wb") as f:
    w = fastavro.write.Writer(f, schema)
    for n in {blocks:?}:
        for _ in range(n):
            w.write({{}})
        w.flush()
"#,
        path = path.display().to_string()
    ));
}

/// A sample from `datasets/samples/` (`order`, `wide`, `telemetry`, `counters`).
pub fn sample(name: &str) -> PathBuf {
    crate_dir()
        .join("../datasets/samples")
        .join(format!("{name}.avro"))
}

/// The generated multi-block files, written once per test process.
pub struct Generated {
    _dir: tempfile::TempDir,
    /// Order, 5 000 rows, blocks of 777 rows (7 blocks, the last one short), zstandard.
    pub order: PathBuf,
    /// Telemetry, 8 000 rows, blocks of 500 rows, snappy.
    pub telemetry: PathBuf,
    /// Telemetry, 2 000 rows, blocks of 333 rows, deflate: same schema as `telemetry`.
    pub telemetry_b: PathBuf,
    /// Wide, 1 500 rows, blocks of 250, null codec.
    pub wide: PathBuf,
    /// Counters, 0 rows: a header and no block.
    pub empty: PathBuf,
    /// `order` cut in the middle of its third block.
    pub truncated: PathBuf,
}

fn write(
    dir: &Path,
    name: &str,
    shape: Shape,
    rows: usize,
    block_rows: usize,
    codec: Codec,
) -> PathBuf {
    let path = dir.join(name);
    let opts = GenOptions {
        rows,
        codec,
        block_rows,
        seed: 7,
    };
    let file = std::fs::File::create(&path).unwrap();
    avrow_datasets::write(shape, &opts, std::io::BufWriter::new(file)).unwrap();
    path
}

/// The generated files.
pub fn generated() -> &'static Generated {
    static FILES: OnceLock<Generated> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let order = write(d, "order.avro", Shape::Order, 5_000, 777, Codec::Zstandard);
        let telemetry = write(
            d,
            "telemetry.avro",
            Shape::Telemetry,
            8_000,
            500,
            Codec::Snappy,
        );
        let telemetry_b = write(
            d,
            "telemetry_b.avro",
            Shape::Telemetry,
            2_000,
            333,
            Codec::Deflate,
        );
        let wide = write(d, "wide.avro", Shape::Wide, 1_500, 250, Codec::Null);
        let empty = write(d, "empty.avro", Shape::Counters, 0, 100, Codec::Null);
        let bytes = std::fs::read(&order).unwrap();
        let truncated = d.join("truncated.avro");
        // Cut inside the third block: blocks are about equal in size.
        std::fs::write(&truncated, &bytes[..bytes.len() * 3 / 10]).unwrap();
        Generated {
            _dir: dir,
            order,
            telemetry,
            telemetry_b,
            wide,
            empty,
            truncated,
        }
    })
}

/// Runs a short Python program with pyarrow and returns its standard output.
pub fn python(program: &str) -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", program])
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What fastavro says about each file: writer schema, canonical form and fingerprints,
/// sync marker, codec, blocks, records, decompressed block bytes. One Python process for all.
pub fn fastavro_facts(paths: &[&Path]) -> Vec<Value> {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let program = format!(
        r#"
import fastavro, json
from fastavro.read import HEADER_SCHEMA
from fastavro.schema import to_parsing_canonical_form, fingerprint
facts = []
for path in json.loads({paths:?}):
    with open(path, 'rb') as f:
        header = fastavro.schemaless_reader(f, HEADER_SCHEMA)
    schema = json.loads(header['meta']['avro.schema'])
    pcf = to_parsing_canonical_form(schema)
    with open(path, 'rb') as f:
        blocks = list(fastavro.block_reader(f))
    facts.append({{
        'schema': schema,
        'canonical': pcf,
        'rabin': fingerprint(pcf, 'CRC-64-AVRO'),
        'md5': fingerprint(pcf, 'MD5'),
        'sha256': fingerprint(pcf, 'SHA-256'),
        'sync': header['sync'].hex(),
        'codec': header['meta'].get('avro.codec', b'null').decode(),
        'blocks': len(blocks),
        'records': sum(b.num_records for b in blocks),
        'uncompressed': sum(len(b.bytes_.getvalue()) for b in blocks),
    }})
print(json.dumps(facts))
"#,
        paths = serde_json::to_string(&paths).unwrap()
    );
    serde_json::from_str(&python(&program)).unwrap()
}

/// The standard error of a failed run: exactly one line, `avrow: error: ...`, with no panic
/// or backtrace.
pub fn one_error_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got: {text}");
    assert!(lines[0].starts_with("avrow: error: "), "{text}");
    assert!(
        !text.contains("panicked") && !text.contains("backtrace"),
        "{text}"
    );
    text
}

/// The file names in `dir`, sorted (to check that no temporary file was left behind).
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// One check for [`oracle_all`].
#[derive(Debug, Clone)]
pub struct Check {
    /// `parquet`, `arrow`, `arrows`, `csv` or `ndjson`.
    pub format: &'static str,
    /// The output to check.
    pub output: PathBuf,
    /// The Avro inputs it was converted from.
    pub inputs: Vec<PathBuf>,
    /// `--columns` of the conversion.
    pub columns: Option<String>,
    /// `--limit` of the conversion.
    pub limit: Option<u64>,
    /// Read NDJSON with Python's json module only (pyarrow cannot read a column whose values
    /// change type, as a union of string and int does).
    pub stdlib_json: bool,
    /// `--reader-schema` of the conversion (fastavro reads the inputs with it too).
    pub reader_schema: Option<PathBuf>,
}

impl Check {
    /// A check of `output` against `inputs`, no projection, no limit.
    pub fn new(format: &'static str, output: &Path, inputs: &[&Path]) -> Check {
        Check {
            format,
            output: output.to_path_buf(),
            inputs: inputs.iter().map(|p| p.to_path_buf()).collect(),
            columns: None,
            limit: None,
            stdlib_json: false,
            reader_schema: None,
        }
    }
}

/// Runs many checks in one Python process; returns the reports in order.
pub fn oracle_all(checks: &[Check]) -> Vec<Value> {
    let jobs: Vec<Value> = checks
        .iter()
        .map(|c| {
            serde_json::json!({
                "format": c.format,
                "output": c.output,
                "inputs": c.inputs,
                "columns": c.columns,
                "limit": c.limit,
                "json_reader": if c.stdlib_json { "stdlib" } else { "pyarrow" },
                "reader_schema": c.reader_schema,
            })
        })
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_vec(&jobs).unwrap()).unwrap();
    let script = crate_dir().join("tests/oracle.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--jobs")
        .arg(file.path())
        .output()
        .expect("python3 must be installed (with pyarrow and fastavro: see .ci/run)");
    assert!(
        out.status.success(),
        "the oracle rejects an output: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reports.len(), checks.len());
    reports
}

/// Converts `input` to `output` (`extra`: further options), quietly; panics on failure.
pub fn convert(input: &Path, output: &Path, extra: &[&str]) {
    avrow()
        .arg("convert")
        .arg(input)
        .arg("-o")
        .arg(output)
        .args(["--quiet", "--force"])
        .args(extra)
        .assert()
        .success();
}
