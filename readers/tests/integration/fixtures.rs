//! Conformance on real files written by other implementations (tests/data/fixtures, from
//! apache/arrow-testing and apache/avro): every file must decode to exactly what apache-avro's
//! Reader reads, value by value, and to what fastavro read (tests/data/expected, written by
//! tests/data/fastavro_expected.py), with the Arrow types of the mapping table.

use std::path::{Path, PathBuf};

use crate::harness::{check_decode, kernel_opts, read_avrow, Opts, Src};
use crate::oracle::{apache_rows, diff_rows, json_rows, Container, N};

pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every fixture file, as (name relative to fixtures/, bytes).
pub fn fixture_files() -> Vec<(String, Vec<u8>)> {
    let root = data_dir().join("fixtures");
    let mut out = Vec::new();
    for sub in ["apache", "spark"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(sub))
            .expect("fixture dir")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "avro"))
            .collect();
        names.sort();
        for p in names {
            let name = format!("{sub}/{}", p.file_name().unwrap().to_string_lossy());
            out.push((name, std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Rows per fixture, from the README table (independent of either reader).
const ROWS: [(&str, usize); 23] = [
    ("apache/weather.avro", 5),
    ("apache/weather-deflate.avro", 5),
    ("apache/weather-snappy.avro", 5),
    ("apache/weather-zstd.avro", 5),
    ("apache/with-union.avro", 3),
    ("spark/alltypes_plain.avro", 8),
    ("spark/alltypes_plain.snappy.avro", 8),
    ("spark/alltypes_plain.bzip2.avro", 8),
    ("spark/alltypes_plain.xz.avro", 8),
    ("spark/alltypes_plain.zstandard.avro", 8),
    ("spark/alltypes_nulls_plain.avro", 1),
    ("spark/alltypes_dictionary.avro", 2),
    ("spark/binary.avro", 12),
    ("spark/nested_records.avro", 2),
    ("spark/simple_enum.avro", 4),
    ("spark/simple_fixed.avro", 2),
    ("spark/single_nan.avro", 1),
    ("spark/zero_byte.avro", 3),
    ("spark/int32_decimal.avro", 24),
    ("spark/fixed_length_decimal.avro", 24),
    ("spark/int128_decimal.avro", 24),
    ("spark/list_columns.avro", 3),
    ("spark/repeated_no_annotation.avro", 6),
];

fn fastavro_rows(name: &str, model: &crate::oracle::Model) -> Vec<N> {
    let p = data_dir().join("expected").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/data/fastavro_expected.py)", p.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    json_rows(model, &doc).unwrap_or_else(|e| panic!("{name}: fastavro expectation: {e}"))
}

#[test]
fn fixture_list_matches_readme_table() {
    let files = fixture_files();
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    for (n, _) in ROWS {
        assert!(names.contains(&n), "fixture {n} missing");
    }
    assert_eq!(files.len(), ROWS.len(), "unlisted fixtures: {names:?}");
}

/// The two independent readers agree with each other and with the README's row counts, so
/// either is a valid oracle. (A disagreement here is a finding about apache-avro or fastavro,
/// not about avrow.)
#[test]
fn oracles_agree_on_fixtures() {
    let mut problems = Vec::new();
    for (name, bytes) in fixture_files() {
        let model = Container::parse(&bytes).unwrap().model().unwrap();
        let fast = fastavro_rows(&name, &model);
        let want = ROWS.iter().find(|r| r.0 == name).unwrap().1;
        if fast.len() != want {
            problems.push(format!(
                "{name}: fastavro read {} rows, README says {want}",
                fast.len()
            ));
        }
        match apache_rows(&model, &bytes) {
            Err(e) => problems.push(format!("{name}: apache-avro cannot read it: {e}")),
            Ok(rows) => {
                if let Some(d) = diff_rows(&fast, &rows) {
                    problems.push(format!("{name}: apache-avro vs fastavro: {d}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every fixture, every kernel, batch sizes 1, 3 and 1024, Utf8 and Utf8View: types as the
/// mapping table says and values as fastavro and apache-avro read them.
#[test]
fn fixtures_decode_like_the_oracles() {
    let mut failures = Vec::new();
    for (name, bytes) in fixture_files() {
        let model = Container::parse(&bytes).unwrap().model().unwrap();
        let expected = fastavro_rows(&name, &model);
        let apache = apache_rows(&model, &bytes).ok();
        let mut opts = kernel_opts(&[1, 3, 1024]);
        opts.push(Opts {
            utf8_view: true,
            ..Opts::batch(2)
        });
        opts.push(Opts {
            src: Src::Stream,
            ..Opts::batch(5)
        });
        opts.push(Opts {
            src: Src::Path,
            ..Opts::batch(1024)
        });
        for o in &opts {
            if let Err(e) = check_decode(&model, &bytes, &expected, o) {
                failures.push(format!("{name} with {o:?}: {e}"));
            }
            if let Some(a) = &apache {
                if let Err(e) = check_decode(&model, &bytes, a, o) {
                    failures.push(format!("{name} with {o:?} (vs apache-avro): {e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `weather.json` holds the rows every weather file must give, independently of any reader.
#[test]
fn weather_files_match_weather_json() {
    let dir = data_dir().join("fixtures/apache");
    let json = std::fs::read_to_string(dir.join("weather.json")).unwrap();
    let rows: Vec<serde_json::Value> = json
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    for file in [
        "weather.avro",
        "weather-deflate.avro",
        "weather-snappy.avro",
        "weather-zstd.avro",
    ] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let d = read_avrow(&bytes, &Opts::batch(2)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let names: Vec<_> = d.schema.fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["station", "time", "temp"], "{file}");
        let got = d.rows();
        assert_eq!(got.len(), rows.len(), "{file}");
        for (i, (g, w)) in got.iter().zip(&rows).enumerate() {
            let want = N::Struct(vec![
                (
                    "station".into(),
                    N::Str(w["station"].as_str().unwrap().into()),
                ),
                ("time".into(), N::Long(w["time"].as_i64().unwrap())),
                ("temp".into(), N::Int(w["temp"].as_i64().unwrap() as i32)),
            ]);
            if let Some(d) = crate::oracle::diff(&want, g, &format!("{file} row {i}")) {
                panic!("{d}");
            }
        }
    }
}

/// Header access: metadata bytes (need not be UTF-8), codec, writer schema, sync marker.
#[test]
fn header_exposes_metadata_codec_schema_and_sync() {
    for (name, bytes) in fixture_files() {
        let c = Container::parse(&bytes).unwrap();
        let reader = Opts::default()
            .builder()
            .read_bytes(bytes.clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let h = reader.header();
        for (k, v) in &c.metadata {
            assert_eq!(h.metadata().get(k), Some(v), "{name}: metadata {k}");
        }
        assert_eq!(h.metadata().len(), c.metadata.len(), "{name}");
        assert_eq!(h.sync(), c.sync, "{name}: sync marker");
        let codec = c
            .metadata
            .get("avro.codec")
            .map(|v| String::from_utf8(v.clone()).unwrap())
            .unwrap_or_else(|| "null".into());
        assert_eq!(h.codec().to_string(), codec, "{name}: codec");
        let schema_meta = reader.schema().metadata().get("avro.schema").cloned();
        let want_json = c.schema_json().unwrap();
        let got_json: serde_json::Value =
            serde_json::from_str(&schema_meta.expect("avro.schema metadata")).unwrap();
        assert_eq!(got_json, want_json, "{name}: avro.schema metadata");
        let _ = h.schema();
    }
}

/// Spot values checked by hand against the fixture README, independent of both oracles.
#[test]
fn fixture_spot_values() {
    let dir = data_dir().join("fixtures/spark");
    let read = |f: &str| {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        read_avrow(&bytes, &Opts::default())
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .rows()
    };
    // single_nan: despite its name (and the README's "NaN double"), its one value is null
    // (union branch 1 of ["double","null"]); fastavro, apache-avro and arrow-avro agree.
    let rows = read("single_nan.avro");
    assert_eq!(rows.len(), 1);
    match &rows[0] {
        N::Struct(f) => assert!(matches!(f[0].1, N::Null), "{:?}", f[0]),
        other => panic!("{other:?}"),
    }
    // zero_byte: some values are empty byte strings.
    let rows = read("zero_byte.avro");
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .any(|r| matches!(r, N::Struct(f) if matches!(&f[0].1, N::Bytes(b) if b.is_empty()))),
        "no empty bytes in zero_byte.avro: {rows:?}"
    );
    // int32_decimal: decimal(4,2) on fixed(2): the unscaled values are 100, 200, ..., 2400.
    let rows = read("int32_decimal.avro");
    for (i, r) in rows.iter().enumerate() {
        let N::Struct(f) = r else { panic!() };
        let want = arrow::datatypes::i256::from_i128(100 * (i as i128 + 1));
        assert!(
            matches!(&f[0].1, N::Decimal(d) if *d == want),
            "row {i}: {:?}",
            f[0].1
        );
    }
}

/// `into_arrow()` is a `RecordBatchReader` with the same schema and batches; errors convert to
/// `ArrowError` keeping the message.
#[test]
fn arrow_record_batch_reader() {
    use arrow::record_batch::RecordBatchReader;
    for (name, bytes) in fixture_files() {
        let direct = read_avrow(&bytes, &Opts::batch(3)).unwrap();
        let r = Opts::batch(3)
            .builder()
            .read_bytes(bytes.clone())
            .unwrap()
            .into_arrow();
        assert_eq!(r.schema(), direct.schema, "{name}");
        let batches: Vec<_> = r.collect::<Result<_, arrow::error::ArrowError>>().unwrap();
        let rows: Vec<N> = batches.iter().flat_map(crate::oracle::batch_rows).collect();
        assert!(diff_rows(&direct.rows(), &rows).is_none(), "{name}");
    }
    // An error through the Arrow interface: a bad sync marker after block 0.
    let (_, bytes) = fixture_files()
        .into_iter()
        .find(|f| f.0 == "apache/weather.avro")
        .unwrap();
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 1] ^= 0xff;
    let r = Opts::default()
        .builder()
        .read_bytes(bad)
        .unwrap()
        .into_arrow();
    let e = r
        .collect::<Result<Vec<_>, arrow::error::ArrowError>>()
        .expect_err("bad sync accepted");
    assert!(e.to_string().contains("block 0"), "{e}");
}
