//! `avrow sql`: answers in every output format, several tables and partitions, and errors
//! that name the file.

use crate::harness::{avrow, sample};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use std::path::Path;

fn sql(args: &[&str]) -> String {
    let out = avrow().arg("sql").args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn answers_as_table_csv_and_json() {
    let table = format!("o={}", sample("order").display());
    let q = "SELECT paid, count(*) AS n FROM o GROUP BY paid ORDER BY paid";
    let text = sql(&["--table", &table, q]);
    assert!(text.contains("| paid  | n    |"), "{text}");
    assert!(
        text.contains("| false | 168  |") && text.contains("| true  | 1332 |"),
        "{text}"
    );
    let csv = sql(&["--table", &table, "--format", "csv", q]);
    assert_eq!(csv, "paid,n\nfalse,168\ntrue,1332\n");
    let json = sql(&["--table", &table, "--format", "json", q]);
    assert_eq!(
        json,
        "{\"paid\":false,\"n\":168}\n{\"paid\":true,\"n\":1332}\n"
    );
    // An empty answer still has its CSV header.
    let csv = sql(&[
        "--table",
        &table,
        "--format",
        "csv",
        "SELECT id FROM o WHERE id < 0",
    ]);
    assert_eq!(csv, "id\n");
}

#[test]
fn partitions_do_not_change_answers_and_tables_join() {
    let o = format!("o={}", sample("order").display());
    let w = format!("w={}", sample("wide").display());
    let q = "SELECT (SELECT count(*) FROM o) AS orders, (SELECT count(*) FROM w) AS wide, \
             (SELECT sum(total) FROM o WHERE paid) AS paid_total";
    let one = sql(&[
        "--table",
        &o,
        "--table",
        &w,
        "--partitions",
        "1",
        "--format",
        "csv",
        q,
    ]);
    let four = sql(&[
        "--table",
        &o,
        "--table",
        &w,
        "--partitions",
        "4",
        "--format",
        "csv",
        q,
    ]);
    assert_eq!(one, four);
    assert!(one.starts_with("orders,wide,paid_total\n1500,"), "{one}");
    // More partitions than cores share the cores' threads (a thread each aborted the
    // process by the thousand); past 1024 is a usage error.
    let many = sql(&[
        "--table",
        &o,
        "--table",
        &w,
        "--partitions",
        "64",
        "--format",
        "csv",
        q,
    ]);
    assert_eq!(one, many);
    avrow()
        .args(["sql", "--partitions", "100000", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(contains("--partitions"));
}

#[test]
fn errors_name_the_table_and_the_file() {
    avrow()
        .args(["sql", "--table", "t=/no/such/dir/x.avro", "SELECT 1"])
        .assert()
        .failure()
        .stderr(contains("table t (/no/such/dir/x.avro)"));
    avrow()
        .args(["sql", "--table", "nonsense", "SELECT 1"])
        .assert()
        .failure()
        .stderr(contains("NAME=PATH_OR_GLOB"));
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(sample("order")).unwrap();
    bytes.truncate(bytes.len() / 2);
    let cut = dir.path().join("cut.avro");
    std::fs::write(&cut, bytes).unwrap();
    avrow()
        .args([
            "sql",
            "--table",
            &format!("t={}", cut.display()),
            "SELECT sum(total) FROM t",
        ])
        .assert()
        .failure()
        .stderr(contains("cut.avro").and(contains("block")));
}

#[test]
fn a_bad_query_is_a_usage_error() {
    let table = format!("o={}", sample("order").display());
    for (q, says) in [
        ("SELEC 1", "SELEC"),
        ("SELECT nope FROM o", "nope"),
        ("SELECT * FROM missing_table", "missing_table"),
        ("SELECT sum(customer) FROM o", "sum"),
    ] {
        avrow()
            .args(["sql", "--table", &table, q])
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    avrow()
        .args(["sql", "--table", "nonsense", "SELECT 1"])
        .assert()
        .code(2);
    avrow()
        .args(["sql", "--table", &table, "--table", &table, "SELECT 1"])
        .assert()
        .code(2)
        .stderr(contains("--table o is given twice"));
}

#[test]
fn globs_and_lone_files_by_path() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.avro", "b.avro"] {
        std::fs::copy(sample("order"), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("c.txt"), "not avro").unwrap();
    let glob = format!("t={}/*.avro", dir.path().display());
    assert_eq!(
        sql(&[
            "--table",
            &glob,
            "--format",
            "csv",
            "SELECT count(*) AS n FROM t"
        ]),
        "n\n3000\n"
    );
    // A directory: its .avro files.
    let all = format!("t={}/", dir.path().display());
    assert_eq!(
        sql(&[
            "--table",
            &all,
            "--format",
            "csv",
            "SELECT count(*) AS n FROM t"
        ]),
        "n\n3000\n"
    );
    // No --table: the file named in the query.
    let q = format!(
        "SELECT paid, count(*) AS n FROM '{}' GROUP BY paid ORDER BY paid",
        dir.path().join("a.avro").display()
    );
    assert_eq!(
        sql(&["--format", "csv", &q]),
        "paid,n\nfalse,168\ntrue,1332\n"
    );
    // A directory named in the query, with files of other kinds beside the Avro ones (a
    // Spark checksum, a stray JSON file): its .avro files, with or without the slash.
    std::fs::write(dir.path().join(".a.avro.crc"), "crc").unwrap();
    std::fs::write(dir.path().join("0.json"), "{\"x\": 1}\n").unwrap();
    for slash in ["/", ""] {
        let q = format!(
            "SELECT count(*) AS n FROM '{}{slash}'",
            dir.path().display()
        );
        assert_eq!(sql(&["--format", "csv", &q]), "n\n3000\n", "{q}");
    }
    // A table a statement defines under a directory's name is that statement's (the
    // directory is not registered first), and a directory of Parquet files stays one.
    let d = dir.path().display();
    let script = format!(
        "CREATE EXTERNAL TABLE \"{d}\" STORED AS AVRO LOCATION '{d}/'; \
         COPY (SELECT id FROM \"{d}\") TO '{d}/pq/' STORED AS PARQUET; \
         SELECT count(*) AS n FROM '{d}/pq/'"
    );
    assert_eq!(sql(&["--format", "csv", &script]), "count\n3000\nn\n3000\n");
    // A quoted path that names nothing says so (a usage error).
    let missing = format!("SELECT * FROM '{}'", dir.path().join("nope.avro").display());
    avrow()
        .args(["sql", &missing])
        .assert()
        .code(2)
        .stderr(contains("nope.avro: no such file or directory"));
    // A file whose extension is not .avro, a glob, an empty directory: read as `--table`
    // reads them, or the reason they cannot be (not "table not found").
    std::fs::copy(dir.path().join("a.avro"), dir.path().join("a.bin")).unwrap();
    let q = format!(
        "SELECT count(*) AS n FROM '{}'",
        dir.path().join("a.bin").display()
    );
    assert_eq!(sql(&["--format", "csv", &q]), "n\n1500\n");
    let q = format!("SELECT count(*) AS n FROM '{}/nomatch*.avro'", d);
    avrow()
        .args(["sql", &q])
        .assert()
        .failure()
        .stderr(contains("nomatch*.avro").and(contains("not found").not()));
    // A relative path in the current directory (not read as schema `a`, table `bin`); a
    // file rewritten by one statement is read anew by the next.
    let script = "CREATE VIEW w AS SELECT count(*) AS n FROM 'a.bin'; \
                  SELECT n FROM w; \
                  COPY (SELECT 1 AS v) TO 'a.bin' STORED AS AVRO; \
                  SELECT * FROM 'a.bin'";
    let out = avrow()
        .current_dir(dir.path())
        .args(["sql", "--format", "csv", script])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "n\n1500\ncount\n1\nv\n1\n"
    );
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let q = format!("SELECT count(*) AS n FROM '{d}/empty'");
    avrow()
        .args(["sql", &q])
        .assert()
        .failure()
        .stderr(contains("the directory is empty"));
}

#[test]
fn statements_run_in_order_and_each_query_prints() {
    let order = sample("order");
    let statements = format!(
        "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION '{}'; \
         SET datafusion.execution.batch_size = 100; \
         SELECT count(*) AS n FROM o; \
         SELECT paid, count(*) AS n FROM o GROUP BY paid ORDER BY paid;",
        order.display()
    );
    assert_eq!(
        sql(&["--format", "csv", &statements]),
        "n\n1500\npaid,n\nfalse,168\ntrue,1332\n"
    );
    // A table made twice fails at the second, after the answers before it.
    avrow()
        .args(["sql", "--format", "csv"])
        .arg(format!(
            "{statements} CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION 'x.avro'"
        ))
        .assert()
        .failure()
        .stdout(contains("true,1332"))
        .stderr(contains("already exists"));
    // Nothing to run, and a statement that does not parse: nothing runs.
    for (q, says) in [(" ; ", "no SQL statement"), ("SELECT 1; SELEC 2", "SELEC")] {
        avrow()
            .args(["sql", q])
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    // --option takes KEY=VALUE of a store; the key is checked before anything runs.
    for (option, says) in [("novalue", "KEY=VALUE"), ("region=x", "region")] {
        avrow()
            .args(["sql", "--option", option, "SELECT 1"])
            .assert()
            .code(2)
            .stderr(contains(says));
    }
}

/// moto's S3 server: the DataFusion crate's test helper.
#[cfg(feature = "cloud")]
#[path = "../../../datafusion/tests/support/moto.rs"]
mod moto;

#[cfg(feature = "cloud")]
#[test]
fn s3_tables_configured_from_the_environment() {
    let order = sample("order");
    let moto = moto::Moto::start(&[
        "avrow-cli".into(),
        format!("avrow-cli/orders/2024/a.avro={}", order.display()),
        format!("avrow-cli/orders/2025/b.avro={}", order.display()),
        format!("avrow-cli/orders/2025/notes.txt={}", order.display()),
    ]);
    let q = "SELECT paid, count(*) AS n FROM o GROUP BY paid ORDER BY paid";
    let s3 = |table: &str| {
        let out = avrow()
            .env_remove("AWS_ENDPOINT_URL_S3")
            .env_remove("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")
            .env_remove("AWS_SKIP_SIGNATURE")
            .env("AWS_ENDPOINT", &moto.endpoint)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1")
            .args(["sql", "--format", "csv", "--partitions", "2"])
            .args(["--table", table, q])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    // One object, a glob over two, a prefix (its .txt object is not read).
    assert_eq!(
        s3("o=s3://avrow-cli/orders/2024/a.avro"),
        "paid,n\nfalse,168\ntrue,1332\n"
    );
    assert_eq!(
        s3("o=s3://avrow-cli/orders/*/*.avro"),
        "paid,n\nfalse,336\ntrue,2664\n"
    );
    assert_eq!(
        s3("o=s3://avrow-cli/orders/2025/"),
        "paid,n\nfalse,168\ntrue,1332\n"
    );
    // A bucket that does not exist: an error naming the table and location.
    avrow()
        .env("AWS_ENDPOINT", &moto.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .args(["sql", "--table", "o=s3://no-such-bucket/x.avro", q])
        .assert()
        .failure()
        .stderr(contains("no-such-bucket"));
}
/// Every AWS setting the environment could give, so that options alone configure the store.
#[cfg(feature = "cloud")]
const AWS_ENV: [&str; 11] = [
    "AWS_ENDPOINT",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ALLOW_HTTP",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
    "AWS_SKIP_SIGNATURE",
];

#[cfg(feature = "cloud")]
#[test]
fn s3_stores_configured_by_options() {
    let order = sample("order");
    let moto = moto::Moto::start(&[
        "avrow-cli-options".into(),
        format!("avrow-cli-options/o/a.avro={}", order.display()),
    ]);
    let run = |options: &[String], statements: &str| {
        let mut cmd = avrow();
        for var in AWS_ENV {
            cmd.env_remove(var);
        }
        cmd.args(["sql", "--format", "csv"]);
        for option in options {
            cmd.args(["--option", option]);
        }
        cmd.arg(statements).assert()
    };
    let expected = "paid,n\nfalse,168\ntrue,1332\n";
    let q = "SELECT paid, count(*) AS n FROM o GROUP BY paid ORDER BY paid";
    let credentials = [
        format!("aws.endpoint={}", moto.endpoint),
        "aws.allow_http=true".into(),
        "aws.access_key_id=test".into(),
        "aws.secret_access_key=test".into(),
        "aws.region=us-east-1".into(),
    ];
    // --option for a created table and for a URL table.
    let out = run(
        &credentials,
        &format!(
            "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION 's3://avrow-cli-options/o/'; {q}"
        ),
    )
    .success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), expected);
    let url = "SELECT paid, count(*) AS n FROM 's3://avrow-cli-options/o/a.avro' \
               GROUP BY paid ORDER BY paid";
    let out = run(&credentials, url).success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), expected);
    // The statement's own OPTIONS, over --option (a wrong endpoint given by --option).
    let create = format!(
        "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION 's3://avrow-cli-options/o/' \
         OPTIONS ('aws.endpoint' '{}', 'aws.allow_http' true, 'aws.access_key_id' 'test', \
         'aws.secret_access_key' 'test', 'aws.region' 'us-east-1'); {q}",
        moto.endpoint
    );
    let out = run(&["aws.endpoint=http://127.0.0.1:9".into()], &create).success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), expected);
    // A key no store has, in the statement: a usage error naming it.
    run(
        &credentials,
        "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION 's3://avrow-cli-options/o/' \
         OPTIONS ('aws.endpont' 'x')",
    )
    .code(2)
    .stderr(contains("aws.endpont"));
}

#[cfg(not(feature = "cloud"))]
#[test]
fn store_urls_without_the_cloud_feature_are_a_clear_usage_error() {
    avrow()
        .args(["sql", "--table", "o=s3://bucket/orders/*.avro", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(contains("s3://").and(contains("cloud")));
}

/// Random schemas of every type, nested, written by fastavro (`python/tests/random_avro.py`,
/// the Python package's generator): `SELECT *` at 1, 2 and 3 partitions prints the rows
/// `convert` prints as NDJSON, `count(*)` counts them, and every top-level column alone (and
/// the first field of a record column) answers its values.
#[test]
fn random_schemas_answer_as_convert_prints() {
    let dir = tempfile::tempdir().unwrap();
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/tests");
    crate::harness::python(&format!(
        r#"
import random, sys
sys.path.insert(0, {generator})
from random_avro import case, fastavro_file
for seed in range(12):
    schema, records = case(seed)
    rng = random.Random(seed)
    codec = rng.choice(["null", "deflate", "snappy"])
    data = fastavro_file(schema, records, codec, rng.choice([200, 4000]))
    open({dir} + "/s%d.avro" % seed, "wb").write(data)
"#,
        // As JSON strings, which Python reads as the same string literals.
        generator = serde_json::json!(generator.display().to_string()),
        dir = serde_json::json!(dir.path().display().to_string()),
    ));
    let sorted = |text: &str| {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    };
    for seed in 0..12 {
        let path = dir.path().join(format!("s{seed}.avro"));
        let file = path.display().to_string();
        let ndjson = dir.path().join(format!("s{seed}.ndjson"));
        avrow()
            .args(["convert", "-q", &file, "-o"])
            .arg(&ndjson)
            .assert()
            .success();
        let want = std::fs::read_to_string(&ndjson).unwrap();
        for partitions in ["1", "2", "3"] {
            let got = sql(&[
                "-q",
                "-p",
                partitions,
                "--format",
                "json",
                &format!("SELECT * FROM '{file}'"),
            ]);
            assert_eq!(
                sorted(&got),
                sorted(&want),
                "{file}, {partitions} partitions"
            );
        }
        let rows = want.lines().count();
        let count = sql(&[
            "-q",
            "--format",
            "csv",
            &format!("SELECT count(*) AS n FROM '{file}'"),
        ]);
        assert_eq!(count, format!("n\n{rows}\n"), "{file}");
        // Each column alone: the values of that column of every row.
        let schema: serde_json::Value = serde_json::from_slice(
            &avrow()
                .args(["schema", &file])
                .assert()
                .success()
                .get_output()
                .stdout,
        )
        .unwrap();
        let records: Vec<serde_json::Value> = want
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for field in schema["fields"].as_array().unwrap() {
            let name = field["name"].as_str().unwrap();
            let inner = field["type"]["fields"]
                .as_array()
                .and_then(|f| f.first())
                .map(|f| f["name"].as_str().unwrap().to_string());
            let select = match &inner {
                Some(inner) => format!("\"{name}\"['{inner}']"),
                None => format!("\"{name}\""),
            };
            let value = |r: &serde_json::Value| match &inner {
                Some(inner) => r[name][inner.as_str()].clone(),
                None => r[name].clone(),
            };
            let got = sql(&[
                "-q",
                "-p",
                "2",
                "--format",
                "json",
                &format!("SELECT {select} AS v FROM '{file}'"),
            ]);
            let mut got: Vec<String> = got
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["v"].to_string())
                .collect();
            let mut expected: Vec<String> = records.iter().map(|r| value(r).to_string()).collect();
            got.sort();
            expected.sort();
            assert_eq!(got, expected, "{file}: {select}");
        }
    }
}

/// Files written as a schema evolved (an int widened to a long, a record given a field, a
/// new column; and an empty file, which tables skip) are one table of the wider types.
#[test]
fn a_directory_of_evolved_schemas_is_one_table() {
    let dir = tempfile::tempdir().unwrap();
    crate::harness::python(&format!(
        r#"
import fastavro
old = {{"type": "record", "name": "R", "fields": [
    {{"name": "a", "type": "int"}},
    {{"name": "s", "type": {{"type": "record", "name": "S", "fields": [{{"name": "x", "type": "int"}}]}}}}]}}
new = {{"type": "record", "name": "R", "fields": [
    {{"name": "a", "type": "long"}},
    {{"name": "b", "type": "string"}},
    {{"name": "s", "type": {{"type": "record", "name": "S", "fields": [
        {{"name": "x", "type": "long"}}, {{"name": "y", "type": "string"}}]}}}}]}}
d = {dir}  # a JSON string: the same Python string literal
fastavro.writer(open(d + "/1.avro", "wb"), old, [{{"a": 1, "s": {{"x": 2}}}}])
fastavro.writer(open(d + "/2.avro", "wb"), new, [{{"a": 3000000000, "b": "q", "s": {{"x": 1099511627776, "y": "z"}}}}])
open(d + "/3.avro", "wb").close()
"#,
        dir = serde_json::json!(dir.path().display().to_string()),
    ));
    let q = format!(
        "SELECT a, b, s['x'] AS x, s['y'] AS y FROM '{}/' ORDER BY a",
        dir.path().display()
    );
    for partitions in ["1", "2"] {
        assert_eq!(
            sql(&["-p", partitions, "--format", "csv", &q]),
            "a,b,x,y\n1,,2,\n3000000000,q,1099511627776,z\n"
        );
    }
}

#[test]
fn copy_writes_avro_and_parquet_that_other_readers_read() {
    let dir = tempfile::tempdir().unwrap();
    let order = sample("order");
    let avro = dir.path().join("paid.avro");
    let parquet = dir.path().join("paid.parquet");
    let statements = format!(
        "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION '{o}'; \
         COPY (SELECT id, customer, total, lines FROM o WHERE paid) TO '{a}' \
           OPTIONS ('codec' 'zstandard'); \
         COPY (SELECT id, customer, total, lines FROM o WHERE paid) TO '{p}'; \
         SELECT count(*) AS n, sum(id) AS ids FROM '{a}'; \
         SELECT count(*) AS n, sum(id) AS ids FROM '{p}'; \
         SELECT count(*) AS n FROM '{a}' a JOIN '{p}' p ON a.id = p.id AND a.total = p.total;",
        o = order.display(),
        a = avro.display(),
        p = parquet.display()
    );
    let out = sql(&["--format", "csv", &statements]);
    let lines: Vec<&str> = out.lines().collect();
    // Two COPY counts, the two sums (equal), the join.
    assert_eq!(lines[0..2], ["count", "1332"], "{out}");
    assert_eq!(lines[2..4], ["count", "1332"], "{out}");
    assert_eq!(lines[4], "n,ids");
    assert!(lines[5].starts_with("1332,"), "{out}");
    assert_eq!(lines[5], lines[7], "{out}");
    assert_eq!(lines[8..10], ["n", "1332"], "{out}");
    // fastavro reads the Avro file and pyarrow the Parquet file: the same rows.
    let check = crate::harness::python(&format!(
        r#"
import fastavro, pyarrow.parquet as pq
with open({a:?}, "rb") as f:
    r = fastavro.reader(f)
    assert r.codec == "zstandard", r.codec
    records = list(r)
table = pq.read_table({p:?}).to_pylist()
key = lambda x: x["id"]
assert sorted(records, key=key) == sorted(table, key=key), "differ"
print(len(records))
"#,
        a = avro.display().to_string(),
        p = parquet.display().to_string()
    ));
    assert_eq!(check.trim(), "1332");
}

/// A statement that fails part way leaves no output behind, in any format, nor in a
/// partitioned directory, and replaces no existing file; statements before it keep theirs.
/// (DataFusion's Parquet, CSV, JSON and Arrow sinks completed their files when the query
/// failed: a truncated, valid-looking file at the output path.)
#[test]
fn a_failed_copy_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    // Division by zero at row 50 000 of 100 000: several batches are written before it.
    let failing = "SELECT value AS v, value % 3 AS part, CAST(1 / (value - 50000) AS BIGINT) AS y \
                   FROM generate_series(1, 100000)";
    for ext in ["parquet", "avro", "csv", "json", "arrow"] {
        let out = dir.path().join(format!("out.{ext}"));
        avrow()
            .current_dir(dir.path())
            .args(["sql", &format!("COPY ({failing}) TO '{}'", out.display())])
            .assert()
            .failure()
            .stderr(contains("Divide by zero"));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{ext}: {left:?}");
    }
    let parts = dir.path().join("parts");
    avrow()
        .args([
            "sql",
            &format!(
                "COPY ({failing}) TO '{}/' STORED AS PARQUET PARTITIONED BY (part)",
                parts.display()
            ),
        ])
        .assert()
        .failure();
    let files: Vec<_> = walk(&parts);
    assert!(files.is_empty(), "{files:?}");

    // An existing output is kept when the statement replacing it fails; the first of two
    // statements is written, the failing second is not.
    let kept = dir.path().join("kept.csv");
    std::fs::write(&kept, "v\nold\n").unwrap();
    let first = dir.path().join("first.csv");
    avrow()
        .args([
            "sql",
            &format!(
                "COPY (SELECT 1 AS v) TO '{}'; COPY ({failing}) TO '{}'",
                first.display(),
                kept.display()
            ),
        ])
        .assert()
        .failure();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "v\nold\n");
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "v\n1\n");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["first.csv", "kept.csv", "parts"], "{names:?}");

    // A statement that succeeds leaves its files and nothing else.
    sql(&[&format!(
        "COPY (SELECT value AS v, value % 3 AS part FROM generate_series(1, 1000)) TO '{}/' \
         STORED AS PARQUET PARTITIONED BY (part)",
        parts.display()
    )]);
    let files = walk(&parts);
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "parquet")),
        "{files:?}"
    );
}

/// Every file under `dir` (none if it does not exist).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Every fixture (general unions, nullable records, enums, fixed, decimals) copied to Parquet
/// by SQL holds what `avrow convert` writes for it: the same rows, as pyarrow reads them.
/// (DataFusion's own Parquet writer panicked on a union: "not implemented: See ARROW-8817".)
#[test]
fn copy_to_parquet_maps_unions_as_convert_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut pairs = Vec::new();
    for (i, file) in crate::harness::fixtures().iter().enumerate() {
        let by_sql = dir.path().join(format!("sql{i}.parquet"));
        let by_convert = dir.path().join(format!("convert{i}.parquet"));
        avrow()
            .args(["sql"])
            .arg(format!(
                "COPY (SELECT * FROM '{}') TO '{}'",
                file.display(),
                by_sql.display()
            ))
            .assert()
            .success();
        avrow()
            .args(["convert"])
            .arg(file)
            .arg("-o")
            .arg(&by_convert)
            .assert()
            .success();
        pairs.push(format!(
            "({:?}, {:?})",
            by_sql.display().to_string(),
            by_convert.display().to_string()
        ));
    }
    let check = crate::harness::python(&format!(
        r#"
import pyarrow.parquet as pq
unions = 0
for a, b in [{pairs}]:
    ta, tb = pq.read_table(a), pq.read_table(b)
    assert ta.to_pylist() == tb.to_pylist(), (a, ta.to_pylist()[:2], tb.to_pylist()[:2])
    unions += any(f.metadata and b"avrow.parquet.mapping" in f.metadata for f in ta.schema)
print(unions)
"#,
        pairs = pairs.join(", ")
    ));
    assert_ne!(check.trim(), "0", "no fixture has a union");
}

#[test]
fn sql_has_information_schema_and_hash_functions() {
    let order = sample("order");
    let statements = format!(
        "CREATE EXTERNAL TABLE o STORED AS AVRO LOCATION '{}'; \
         SELECT table_name FROM information_schema.tables WHERE table_name = 'o'; \
         SELECT md5('a') AS m, sha256('a') AS s;",
        order.display()
    );
    assert_eq!(
        sql(&["--format", "csv", &statements]),
        "table_name\no\nm,s\n0cc175b9c0f1b6a831c399e269772661,\
         ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb\n"
    );
    // A column Avro cannot name is a usage error that says what to do.
    let dir = tempfile::tempdir().unwrap();
    avrow()
        .args(["sql"])
        .arg(format!(
            "COPY (SELECT count(*) FROM '{}') TO '{}'",
            order.display(),
            dir.path().join("n.avro").display()
        ))
        .assert()
        .code(2)
        .stderr(contains("AS"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn tables_of_other_formats_join_avro_tables() {
    let dir = tempfile::tempdir().unwrap();
    let order = sample("order");
    let d = dir.path().display();
    let copies: String = ["p.parquet", "c.csv", "j.json", "a.arrow"]
        .iter()
        .map(|f| {
            format!(
                "COPY (SELECT id, paid FROM '{}') TO '{d}/{f}'; ",
                order.display()
            )
        })
        .collect();
    sql(&[&copies]);
    let tables = [
        format!("o={}", order.display()),
        format!("p={d}/p.parquet"),
        format!("c={d}/c.csv"),
        format!("j={d}/j.json"),
        format!("a={d}/a.arrow"),
    ];
    let mut args: Vec<&str> = Vec::new();
    for t in &tables {
        args.extend(["--table", t.as_str()]);
    }
    args.extend([
        "--format",
        "csv",
        "SELECT count(*) AS n FROM o JOIN p ON o.id = p.id JOIN c ON o.id = c.id \
         JOIN j ON o.id = j.id JOIN a ON o.id = a.id WHERE p.paid AND c.paid AND j.paid AND a.paid",
    ]);
    assert_eq!(sql(&args), "n\n1332\n");
}

#[test]
fn derived_avro_records_take_the_given_name() {
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("twice.parquet");
    let avro = dir.path().join("twice.avro");
    sql(&[&format!(
        "COPY (SELECT id * 2 AS twice FROM '{}') TO '{}'",
        sample("order").display(),
        parquet.display()
    )]);
    avrow()
        .args(["convert", "--quiet", "--record-name", "com.acme.Twice"])
        .arg(&parquet)
        .arg("-o")
        .arg(&avro)
        .assert()
        .success();
    let schema = avrow()
        .args(["schema", "--canonical"])
        .arg(&avro)
        .assert()
        .success();
    let schema = String::from_utf8(schema.get_output().stdout.clone()).unwrap();
    assert!(
        schema.starts_with(r#"{"name":"com.acme.Twice","#),
        "{schema}"
    );
    avrow()
        .args(["convert", "--record-name", "com..x"])
        .arg(&parquet)
        .arg("-o")
        .arg(dir.path().join("bad.avro"))
        .assert()
        .failure()
        .stderr(contains("not a valid Avro"));
}

#[test]
fn deeply_unrolled_recursive_records_copy_to_parquet() {
    // A linked list read 200 levels deep: arrow's and the parquet crate's writers walk the
    // nested columns recursively, which overflowed tokio's default 2 MiB worker stack (an
    // abort) from depth 180 in a debug build.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("list.avro");
    crate::harness::python(&format!(
        r#"
import fastavro
schema = {{"type": "record", "name": "Node", "fields": [
  {{"name": "v", "type": "int"}}, {{"name": "next", "type": ["null", "Node"]}}]}}
def chain(n):
    node = None
    for v in range(n, 0, -1):
        node = {{"v": v, "next": node}}
    return node
with open({path:?}, "wb") as f:
    fastavro.writer(f, fastavro.parse_schema(schema), [chain(5), chain(1)])
"#,
        path = input.display().to_string()
    ));
    let output = dir.path().join("list.parquet");
    let text = sql(&[&format!(
        "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{}' OPTIONS ('max_recursion_depth' '200'); \
         COPY (SELECT * FROM t) TO '{}'",
        input.display(),
        output.display()
    )]);
    assert!(text.contains("| 2     |"), "{text}");
    assert!(output.exists());
}

#[test]
fn records_without_fields_show_their_row_count() {
    // Rows with no columns: a table of text has nothing to draw, so it says how many there
    // are (arrow's table printer fails on a batch of no columns).
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("no-fields.avro");
    crate::harness::write_no_fields(&input, &[123]);
    let file = format!("SELECT * FROM '{}' LIMIT 3", input.display());
    assert_eq!(sql(&[&file]).trim(), "(3 rows of no columns)");
    // (A header of no names, then three rows of none.)
    assert_eq!(sql(&["--format", "csv", &file]), "\n\n\n\n");
    let out = avrow()
        .args(["head", "-n", "1"])
        .arg(&input)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(text.trim(), "(1 row of no columns)");
}

#[test]
fn plans_are_shown_whole() {
    let table = format!("o={}", sample("order").display());
    let text = sql(&[
        "--table",
        &table,
        "EXPLAIN SELECT id, total FROM o WHERE paid AND total > 100 ORDER BY total DESC LIMIT 3",
    ]);
    // (Data cells are cut at 80 characters with `…`; a plan's lines are not.)
    assert!(!text.contains('…'), "{text}");
    assert!(text.contains("physical_plan"), "{text}");
    assert!(text.lines().any(|l| l.len() > 100), "{text}");
}
