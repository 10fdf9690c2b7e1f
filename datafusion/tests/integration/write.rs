//! Writing Avro from SQL: `COPY ... TO 'out.avro'` and `INSERT INTO` an Avro table, through
//! avrow's `Writer`; read back by avrow and by fastavro. And Avro's types written to Parquet
//! (`COPY ... TO 'out.parquet'`, feature `parquet`).

use std::path::{Path, PathBuf};

#[cfg(feature = "parquet")]
use arrow::array::RecordBatch;

use crate::common::*;

/// Every row of the file at `path` as avrow reads it, as text.
fn read_back(path: &Path) -> Vec<Vec<String>> {
    let batches = avrow::ReaderBuilder::new()
        .open(path)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows(&batches).unwrap()
}

/// fastavro's count of records in `path`, its codec, and the sum of the field `id`.
fn fastavro_summary(path: &Path) -> (u64, String, i64) {
    let program = r#"
import sys, fastavro
with open(sys.argv[1], "rb") as f:
    r = fastavro.reader(f)
    codec = r.codec
    n, total = 0, 0
    for rec in r:
        n += 1
        total += rec["id"]
print(n, codec, total)
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(path)
        .output()
        .expect("python3 with fastavro (scripts/test installs it)");
    assert!(
        out.status.success(),
        "fastavro failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace();
    (
        parts.next().unwrap().parse().unwrap(),
        parts.next().unwrap().to_string(),
        parts.next().unwrap().parse().unwrap(),
    )
}

/// The files under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn copy_to_avro_writes_the_answer_under_every_codec() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(2);
    create(&ctx, "t", &sample("order.avro")).await;
    let select = "SELECT id, customer, total, note, lines, counters FROM t \
                  WHERE item_count > 2 ORDER BY id";
    let expected = rows(&query(&ctx, select).await).unwrap();
    let ids: i64 = query(&ctx, &format!("SELECT sum(id) FROM ({select})"))
        .await
        .iter()
        .map(|b| {
            use arrow::array::AsArray;
            b.column(0)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(0)
        })
        .sum();
    assert!(expected.len() > 100, "{}", expected.len());
    for (option, codec) in [
        ("null", "null"),
        ("none", "null"),
        ("deflate", "deflate"),
        ("snappy", "snappy"),
        ("zstd", "zstandard"),
        ("zstandard", "zstandard"),
        ("bzip2", "bzip2"),
        ("xz", "xz"),
    ] {
        let out = dir.path().join(format!("out-{option}.avro"));
        // Small blocks: many of them, each compressed alone.
        let answer = query(
            &ctx,
            &format!(
                "COPY ({select}) TO '{}' OPTIONS ('codec' '{option}', 'block_size' '4096')",
                out.display()
            ),
        )
        .await;
        assert!(
            text(&answer).contains(&format!("| {} ", expected.len())),
            "{option}"
        );
        assert_eq!(read_back(&out), expected, "{option}");
        let reader = avrow::ReaderBuilder::new().open(&out).unwrap();
        assert_eq!(reader.header().codec().name(), codec);
        drop(reader);
        assert_eq!(
            fastavro_summary(&out),
            (expected.len() as u64, codec.to_string(), ids),
            "{option}"
        );
        // And SQL reads it back as it wrote it.
        let table = format!("back_{option}");
        create(&ctx, &table, &out).await;
        let again =
            rows(&query(&ctx, &format!("SELECT * FROM {table} ORDER BY id")).await).unwrap();
        assert_eq!(again, expected, "{option}");
    }
}

#[tokio::test]
async fn copy_takes_a_writer_schema_threads_and_a_level() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(1);
    create(&ctx, "t", &sample("order.avro")).await;
    let schema = r#"{"type": "record", "name": "Slim", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"}, {"name": "paid", "type": "boolean"}]}"#;
    let out = dir.path().join("slim.avro");
    query(
        &ctx,
        &format!(
            "COPY (SELECT id, paid FROM t) TO '{}' STORED AS AVRO OPTIONS \
             ('format.avro_schema' '{schema}', 'threads' '2', 'codec' 'deflate', 'level' '9')",
            out.display()
        ),
    )
    .await;
    let reader = avrow::ReaderBuilder::new().open(&out).unwrap();
    assert!(reader.avro_schema().lookup("shop.Slim").is_some());
    assert_eq!(reader.header().codec(), avrow::Codec::Deflate);
    let n: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(n, 1500);
}

#[tokio::test]
async fn insert_into_an_avro_table_appends_files() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(2);
    query(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE events (id BIGINT NOT NULL, name VARCHAR, at TIMESTAMP) \
             STORED AS AVRO LOCATION '{}/' OPTIONS ('codec' 'snappy')",
            dir.path().display()
        ),
    )
    .await;
    query(
        &ctx,
        "INSERT INTO events VALUES (1, 'a', TIMESTAMP '2026-01-02T03:04:05'), (2, NULL, NULL)",
    )
    .await;
    query(
        &ctx,
        "INSERT INTO events SELECT id + 10, upper(name), at FROM events",
    )
    .await;
    let files = files_under(dir.path());
    assert_eq!(files.len(), 2, "{files:?}");
    for file in &files {
        let reader = avrow::ReaderBuilder::new().open(file).unwrap();
        assert_eq!(reader.header().codec(), avrow::Codec::Snappy);
    }
    let got = text(&query(&ctx, "SELECT * FROM events ORDER BY id").await);
    let want = "\
+----+------+---------------------+
| id | name | at                  |
+----+------+---------------------+
| 1  | a    | 2026-01-02T03:04:05 |
| 2  |      |                     |
| 11 | A    | 2026-01-02T03:04:05 |
| 12 |      |                     |
+----+------+---------------------+";
    assert_eq!(got, want);
}

#[tokio::test]
async fn copy_partitioned_by_writes_a_file_per_value() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(2);
    create(&ctx, "t", &sample("order.avro")).await;
    query(
        &ctx,
        &format!(
            "COPY (SELECT id, paid, total FROM t) TO '{}/' STORED AS AVRO PARTITIONED BY (paid)",
            dir.path().display()
        ),
    )
    .await;
    let files = files_under(dir.path());
    let mut total = 0;
    for (value, wanted) in [("true", "paid = true"), ("false", "paid = false")] {
        let mine: Vec<_> = files
            .iter()
            .filter(|f| f.to_string_lossy().contains(&format!("paid={value}/")))
            .collect();
        assert!(!mine.is_empty(), "{files:?}");
        let n: usize = mine.iter().map(|f| read_back(f).len()).sum();
        let count = text(&query(&ctx, &format!("SELECT count(*) FROM t WHERE {wanted}")).await);
        assert!(count.contains(&format!("| {n} ")), "{count} against {n}");
        total += n;
    }
    assert_eq!(total, 1500);
    // Read back through the registration helper: the partition directories are a column, as
    // with CREATE EXTERNAL TABLE.
    use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
    let back = avrow_ctx(2);
    back.register_avrow(
        "p",
        &format!("{}/", dir.path().display()),
        AvrowReadOptions::default(),
    )
    .await
    .unwrap();
    let want = text(
        &query(
            &ctx,
            "SELECT paid, count(*) AS n FROM t GROUP BY paid ORDER BY paid",
        )
        .await,
    );
    let got = text(
        &query(
            &back,
            "SELECT CAST(paid AS BOOLEAN) AS paid, count(*) AS n FROM p GROUP BY paid ORDER BY paid",
        )
        .await,
    );
    assert_eq!(got, want);
}

#[tokio::test]
async fn what_avro_cannot_hold_is_a_planning_error() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(1);
    create(&ctx, "t", &sample("order.avro")).await;
    let out = dir.path().join("x.avro");
    for (select, wanted) in [
        // A map whose keys are not strings.
        (
            "SELECT map([1, 2], [3, 4]) AS m",
            "keys that are not strings",
        ),
        // A column named by its expression.
        ("SELECT count(*) FROM t", "not a valid Avro field name"),
        ("SELECT count(*) FROM t", "AS"),
    ] {
        let err = query_err(&ctx, &format!("COPY ({select}) TO '{}'", out.display())).await;
        assert!(err.contains(wanted), "{select}: {err}");
    }
    for (options, wanted) in [
        ("'codec' 'lz4'", "avro option 'codec'"),
        ("'level' 'high'", "avro option 'level'"),
        ("'block_size' '0'", "avro option 'block_size'"),
        ("'avro_schema' '{\"type\": 1}'", "avro option 'avro_schema'"),
        // A level the codec does not take.
        ("'codec' 'deflate', 'level' '99'", "level"),
        // A writer schema that does not fit the rows.
        (
            "'avro_schema' '{\"type\": \"record\", \"name\": \"r\", \"fields\": [{\"name\": \"id\", \"type\": \"string\"}]}'",
            "cannot write Avro",
        ),
    ] {
        let err = query_err(
            &ctx,
            &format!("COPY (SELECT id FROM t) TO '{}' OPTIONS ({options})", out.display()),
        )
        .await;
        assert!(err.contains(wanted), "{options}: {err}");
    }
    assert!(files_under(dir.path()).is_empty());
    // The writing keys are no reading options (a table's factory splits them apart).
    let writing = std::collections::HashMap::from([("codec".to_string(), "snappy".to_string())]);
    let err = avrow_datafusion::AvrowReadOptions::default()
        .apply(&writing)
        .unwrap_err();
    assert!(err.to_string().contains("for writing"), "{err}");
    let options = avrow_datafusion::AvrowWriteOptions::default()
        .apply(&writing)
        .unwrap();
    assert_eq!(options.codec, avrow::Codec::Snappy);
}

#[tokio::test]
async fn a_query_that_fails_while_writing_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(1);
    query(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{}' OPTIONS ('batch_size' '100')",
            sample("order.avro").display()
        ),
    )
    .await;
    // The last id of the file: every batch before it has been written when the division
    // by zero fails the query.
    let last = text(&query(&ctx, "SELECT max(id) AS m FROM t").await);
    let last: i64 = last
        .lines()
        .nth(3)
        .unwrap()
        .trim_matches(|c: char| c == '|' || c.is_whitespace())
        .parse()
        .unwrap();
    let out = dir.path().join("partial.avro");
    let err = query_err(
        &ctx,
        &format!(
            "COPY (SELECT id, 1 / (id - {last}) AS x FROM t) TO '{}' OPTIONS ('block_size' '64')",
            out.display()
        ),
    )
    .await;
    assert!(err.to_lowercase().contains("divide by zero"), "{err}");
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
    // Tens of megabytes sent to the store (a multipart upload: a local staging file) before
    // the failure: dropped too. And the same rows without the failure arrive whole.
    let rows_of = |failing: bool| {
        format!(
            "SELECT value AS v, repeat('x', 100) AS s, 1 / (value - {}) AS x FROM range(0, 300000)",
            if failing { 250000 } else { -1 }
        )
    };
    let big = dir.path().join("big.avro");
    let copy = |select: String| {
        format!(
            "COPY ({select}) TO '{}' OPTIONS ('codec' 'null')",
            big.display()
        )
    };
    let err = query_err(&ctx, &copy(rows_of(true))).await;
    assert!(err.to_lowercase().contains("divide by zero"), "{err}");
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
    query(&ctx, &copy(rows_of(false))).await;
    assert_eq!(files_under(dir.path()), std::slice::from_ref(&big));
    assert!(std::fs::metadata(&big).unwrap().len() > 30_000_000);
    let n: usize = avrow::ReaderBuilder::new()
        .open(&big)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(n, 300_000);
    std::fs::remove_file(&big).unwrap();
    // INSERT OVERWRITE would delete files: refused, and the table's file stays.
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    query(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE o (id BIGINT NOT NULL) STORED AS AVRO LOCATION '{}/'",
            kept.display()
        ),
    )
    .await;
    query(&ctx, "INSERT INTO o VALUES (1)").await;
    let err = query_err(&ctx, "INSERT OVERWRITE o VALUES (2)").await;
    assert!(err.contains("Overwrite"), "{err}");
    assert_eq!(files_under(&kept).len(), 1);
    assert!(text(&query(&ctx, "SELECT * FROM o").await).contains("| 1  |"));
}

/// Registers `file` as table `r{i}` and copies all of it to `out` by SQL (the format from
/// `out`'s extension); the error names the file.
async fn copy_file(
    ctx: &datafusion::prelude::SessionContext,
    i: usize,
    file: &Path,
    out: &Path,
) -> Result<(), String> {
    let table = format!("r{i}");
    create(ctx, &table, file).await;
    let copy = format!("COPY (SELECT * FROM {table}) TO '{}'", out.display());
    let written = match ctx.sql(&copy).await {
        Ok(df) => df.collect().await.map(drop),
        Err(e) => Err(e),
    };
    written.map_err(|e| format!("{}: {e}", file.display()))
}

/// Random schemas written by fastavro (every Avro type, nested): each file read by SQL and
/// written back by `COPY`, then read by avrow, holds the rows of the original.
#[tokio::test]
async fn random_schemas_copied_by_sql_read_back_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let files = fastavro_files(dir.path(), 40);
    let ctx = avrow_ctx(2);
    let mut failures = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let out = dir.path().join(format!("copy{i}.avro"));
        if let Err(e) = copy_file(&ctx, i, file, &out).await {
            failures.push(e);
            continue;
        }
        assert_eq!(read_back(&out), read_back(file), "{}", file.display());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The rows of `batches` mapped for Parquet as `avrow convert` maps them.
#[cfg(feature = "parquet")]
fn mapped_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    use avrow::parquet_compat::Mapping;
    let Some(first) = batches.first() else {
        return Vec::new();
    };
    let mapping = Mapping::new(&first.schema()).unwrap();
    let mapped: Vec<RecordBatch> = batches.iter().map(|b| mapping.apply(b).unwrap()).collect();
    rows(&mapped).unwrap()
}

/// Random schemas written by fastavro (every Avro type: general unions and durations among
/// them, nested) and the real fixtures, copied to Parquet by SQL: DataFusion's Parquet reader
/// reads back the rows of the original, mapped as `avrow convert` maps them
/// (`avrow::parquet_compat`). DataFusion's own Parquet format panicked on a union or a
/// duration (the `parquet` crate's `unimplemented!`).
#[cfg(feature = "parquet")]
#[tokio::test]
async fn every_avro_type_copied_to_parquet_reads_back_as_mapped() {
    use datafusion::prelude::ParquetReadOptions;
    let dir = tempfile::tempdir().unwrap();
    let mut files = fastavro_files(dir.path(), 40);
    files.extend(fixtures());
    let ctx = avrow_ctx(2);
    let mut failures = Vec::new();
    let mut unions = 0;
    for (i, file) in files.iter().enumerate() {
        let out = dir.path().join(format!("copy{i}.parquet"));
        if let Err(e) = copy_file(&ctx, i, file, &out).await {
            failures.push(e);
            continue;
        }
        let original = avrow::ReaderBuilder::new()
            .open(file)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        if original.first().is_some_and(|b| {
            b.schema()
                .fields()
                .iter()
                .any(|f| avrow::parquet_compat::needs_mapping(f.data_type()))
        }) {
            unions += 1;
        }
        let back = ctx
            .read_parquet(out.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(
            rows(&back).unwrap(),
            mapped_rows(&original),
            "{}",
            file.display()
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // (The files exercise the mapping: several have unions or durations.)
    assert!(unions >= 5, "only {unions} files need the mapping");
}

/// A query whose columns need no mapping plans exactly DataFusion's Parquet write; one with
/// a union goes through the mapping, and the file holds the union's members.
#[cfg(feature = "parquet")]
#[tokio::test]
async fn only_writes_of_avro_only_types_are_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(1);
    let union = fixtures()
        .into_iter()
        .find(|f| f.ends_with("apache/with-union.avro"))
        .unwrap();
    create(&ctx, "u", &union).await;
    let out = dir.path().join("out.parquet");
    let explain = |sql: String| {
        let ctx = ctx.clone();
        async move { text(&query(&ctx, &format!("EXPLAIN {sql}")).await) }
    };
    let plain = explain(format!(
        "COPY (SELECT 1 AS a, 'x' AS b) TO '{}'",
        out.display()
    ))
    .await;
    assert!(plain.contains("ParquetSink"), "{plain}");
    assert!(!plain.contains("AvroTypesForParquet"), "{plain}");
    let mapped = explain(format!("COPY u TO '{}'", out.display())).await;
    assert!(
        mapped.contains("AvroTypesForParquet: ParquetSink"),
        "{mapped}"
    );
    query(&ctx, &format!("COPY u TO '{}'", out.display())).await;
    ctx.register_parquet("p", out.to_str().unwrap(), Default::default())
        .await
        .unwrap();
    let back = query(
        &ctx,
        "SELECT data1['member0'] AS s, data1['member1'] AS i FROM p",
    )
    .await;
    assert_eq!(
        rows(&back).unwrap(),
        [["textValue", "NULL"], ["NULL", "123"], ["NULL", "3"]]
    );
}

/// SQL intervals copied to Parquet: whole milliseconds with unsigned parts become their 12
/// bytes; a negative one or one with a fraction of a millisecond fails the query (Parquet's
/// `INTERVAL` cannot hold it). (DataFusion's Parquet sink leaves the file it had started.)
#[cfg(feature = "parquet")]
#[tokio::test]
async fn sql_intervals_copied_to_parquet_are_their_bytes_or_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = avrow_ctx(1);
    let out = dir.path().join("i.parquet");
    query(
        &ctx,
        &format!(
            "COPY (SELECT INTERVAL '1 month 2 days 3 seconds' AS i) TO '{}'",
            out.display()
        ),
    )
    .await;
    ctx.register_parquet("i", out.to_str().unwrap(), Default::default())
        .await
        .unwrap();
    let back = query(&ctx, "SELECT i FROM i").await;
    assert_eq!(rows(&back).unwrap(), [["0100000002000000b80b0000"]]);
    for bad in ["-1 day", "1 microsecond"] {
        let out = dir.path().join("bad.parquet");
        let e = query_err(
            &ctx,
            &format!("COPY (SELECT INTERVAL '{bad}' AS i) TO '{}'", out.display()),
        )
        .await;
        assert!(e.contains("has no Parquet INTERVAL"), "{bad}: {e}");
    }
}
