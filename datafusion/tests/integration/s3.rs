//! A real S3 API on localhost (moto's server, `tests/moto_s3.py`, started and stopped by the
//! tests): answers through `s3://` equal the local files' for every split count, and no GET
//! is wider than its split plus one block; stores configured by DataFusion CLI's options.

use std::path::Path as FsPath;
use std::sync::Arc;

use crate::common::*;
use crate::object_store::Recording;
use avrow_datafusion::{
    register_store_with, register_stores_for_statement, AvrowReadOptions, SessionContextAvrowExt,
};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::DFParser;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use url::Url;

#[path = "../support/moto.rs"]
mod moto;
use moto::Moto;

/// A client of `bucket` on `moto`'s server.
fn store(moto: &Moto, bucket: &str) -> Arc<dyn ObjectStore> {
    Arc::new(
        AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_endpoint(&moto.endpoint)
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .build()
            .unwrap(),
    )
}

/// The largest block of `path`, with its framing (count, size, sync marker: at most 36 bytes).
fn largest_block(path: &FsPath) -> u64 {
    avrow::BlockReader::open(path)
        .unwrap()
        .map(|b| b.unwrap().data().len() as u64 + 36)
        .max()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_answers_equal_local_answers_and_gets_stay_within_their_split() {
    let moto = Moto::start(&["avrow-test"]);
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 8192);
    let size = std::fs::metadata(&path).unwrap().len();
    // The sample is one large block: the widest tail a split may fetch.
    let block = largest_block(&path).max(largest_block(&sample("order.avro")));
    let s3 = store(&moto, "avrow-test");
    for (key, file) in [
        ("orders/a.avro", path.as_path()),
        ("orders/b.avro", &sample("order.avro")),
        ("other/c.avro", &sample("wide.avro")),
    ] {
        s3.put(&Path::from(key), std::fs::read(file).unwrap().into())
            .await
            .unwrap();
    }
    let queries = [
        "SELECT count(*), sum(id), max(total) FROM t",
        "SELECT paid, count(*), sum(item_count) FROM t GROUP BY paid ORDER BY paid",
        "SELECT customer, note, lines FROM t ORDER BY id, customer LIMIT 5",
    ];
    // The local answers, over the same two files.
    let local = avrow_ctx(3);
    std::fs::copy(sample("order.avro"), dir.path().join("b.avro")).unwrap();
    std::fs::rename(&path, dir.path().join("a.avro")).unwrap();
    local
        .register_avrow(
            "t",
            &format!("{}/*.avro", dir.path().display()),
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
    for partitions in [1, 2, 3, 8] {
        let recording = Arc::new(Recording::new(Arc::clone(&s3)));
        // Without statistics: DataFusion does not split tables it knows to be small (the
        // row counts from the block headers), and the splits are what is tested here.
        let ctx = SessionContext::new_with_config(
            config(partitions).set_bool("datafusion.execution.collect_statistics", false),
        );
        avrow_datafusion::register(&ctx).unwrap();
        ctx.register_object_store(&Url::parse("s3://avrow-test").unwrap(), recording.clone());
        ctx.register_avrow(
            "t",
            "s3://avrow-test/orders/*.avro",
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
        let total = size + std::fs::metadata(sample("order.avro")).unwrap().len();
        for q in queries {
            let before = recording.gets.lock().unwrap().len();
            assert_eq!(
                text(&query(&ctx, q).await),
                text(&query(&local, q).await),
                "{q} at {partitions} partitions"
            );
            let gets = recording.gets.lock().unwrap()[before..].to_vec();
            let fetched: u64 = gets.iter().map(|r| r.end - r.start).sum();
            eprintln!(
                "s3: {partitions} partitions: {q}: {} GETs, {fetched} bytes for {total} bytes \
                 of objects ({:.3}x)",
                gets.len(),
                fetched as f64 / total as f64
            );
            // Splits read their blocks and little else, even where they are smaller than a
            // block (8 partitions: splits of ~149 KB inside a 583 KB block find from block
            // framings alone that they hold no marker).
            assert!(
                fetched as f64 <= 1.05 * total as f64,
                "{q} at {partitions} partitions fetched {fetched} bytes of {total}"
            );
        }
        // Splits of the small-block file are about size / partitions (DataFusion cuts the
        // two files' bytes into `partitions` ranges); a GET beyond the header may cover its
        // split and the tail of the split's last block, nothing wider.
        let split = total.div_ceil(partitions as u64);
        let gets = recording.gets.lock().unwrap().clone();
        assert!(!gets.is_empty());
        for r in gets.iter().filter(|r| r.start > 0) {
            assert!(
                r.end - r.start <= split + block,
                "GET {r:?} wider than a split ({split}) plus a block ({block}) at {partitions} partitions"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_errors_name_the_object() {
    let moto = Moto::start(&["avrow-errors"]);
    let s3 = store(&moto, "avrow-errors");
    let data = std::fs::read(sample("order.avro")).unwrap();
    // Cut inside the last block: the blocks before it read, then an error naming the object.
    s3.put(
        &Path::from("cut.avro"),
        data[..data.len() - 40].to_vec().into(),
    )
    .await
    .unwrap();
    let ctx = avrow_ctx(2);
    ctx.register_object_store(&Url::parse("s3://avrow-errors").unwrap(), s3);
    ctx.register_avrow(
        "t",
        "s3://avrow-errors/cut.avro",
        AvrowReadOptions::default(),
    )
    .await
    .unwrap();
    let err = query_err(&ctx, "SELECT sum(total) FROM t").await;
    assert!(err.contains("cut.avro"), "{err}");
}

/// Parse `sql`'s one statement, register the stores it names and run it.
async fn run_statement(
    ctx: &SessionContext,
    sql: &str,
    options: &[(String, String)],
) -> datafusion::error::Result<Vec<arrow::array::RecordBatch>> {
    let mut statement = DFParser::parse_sql(sql)?.pop_front().unwrap();
    register_stores_for_statement(ctx, &mut statement, options)?;
    let plan = ctx.state().statement_to_plan(statement).await?;
    ctx.execute_logical_plan(plan).await?.collect().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_options_configure_the_client_as_datafusions_cli_does() {
    let order = sample("order.avro");
    let moto = Moto::start(&[
        "avrow-options".to_string(),
        format!("avrow-options/o/a.avro={}", order.display()),
    ]);
    // Endpoint and credentials by options alone: a CREATE EXTERNAL TABLE's own (the store
    // options leave the statement, so DataFusion plans it; keys in any case, values of any
    // literal type), then a URL table with the caller's.
    let ctx = avrow_ctx(2).enable_url_table();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 's3://avrow-options/o/' \
         OPTIONS ('aws.endpoint' '{}', 'aws.allow_http' true, 'AWS.ACCESS_KEY_ID' 'test', \
         'aws.secret_access_key' 'test', 'aws.region' 'us-east-1', 'aws.timeout' '30s')",
        moto.endpoint
    );
    run_statement(&ctx, &create, &[]).await.unwrap();
    let count = "SELECT count(*) AS n, sum(CASE WHEN paid THEN 1 ELSE 0 END) AS paid FROM";
    let local = text(&query(&ctx, &format!("{count} '{}'", order.display())).await);
    assert!(local.contains("| 1500 | 1332 |"), "{local}");
    assert_eq!(text(&query(&ctx, &format!("{count} t")).await), local);

    let ctx = avrow_ctx(2).enable_url_table();
    let options: Vec<(String, String)> = [
        ("aws.endpoint", moto.endpoint.as_str()),
        ("aws.allow_http", "true"),
        ("aws.access_key_id", "test"),
        ("aws.secret_access_key", "test"),
        ("aws.region", "us-east-1"),
        // Another store's options are checked, not used.
        ("gcp.application_credentials_path", "/nonexistent.json"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let sql = format!("{count} 's3://avrow-options/o/a.avro'");
    assert_eq!(
        text(&run_statement(&ctx, &sql, &options).await.unwrap()),
        local
    );

    // A key that names nothing fails before anything is registered, naming the key.
    let ctx = avrow_ctx(2);
    let bad = "CREATE EXTERNAL TABLE u STORED AS AVRO LOCATION 's3://avrow-options/o/' \
               OPTIONS ('aws.endpont' 'http://127.0.0.1:1')";
    let err = run_statement(&ctx, bad, &[]).await.unwrap_err().to_string();
    assert!(err.contains("aws.endpont"), "{err}");
    let unknown = [("s3.region".to_string(), "x".to_string())];
    let err = register_store_with(&ctx, "s3://avrow-options/o/", &unknown)
        .unwrap_err()
        .to_string();
    assert!(err.contains("s3.region"), "{err}");
    // A table option that is not a store's stays in the statement, for DataFusion to judge.
    let other = "CREATE EXTERNAL TABLE u STORED AS AVRO LOCATION 's3://avrow-options/o/' \
                 OPTIONS ('format.no_such_option' 'x')";
    let err = run_statement(&ctx, other, &options)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no_such_option"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_to_s3_writes_avro_that_reads_back() {
    let moto = Moto::start(&["avrow-copy"]);
    let ctx = avrow_ctx(2).enable_url_table();
    let order = sample("order.avro");
    // The store configured by the COPY's own options (taken out of the statement); parts of
    // 5 MiB, S3's smallest, so that the larger file is a multipart upload.
    query(
        &ctx,
        "SET datafusion.execution.objectstore_writer_buffer_size = 5242880",
    )
    .await;
    let store_options = format!(
        "'aws.endpoint' '{}', 'aws.allow_http' 'true', 'aws.access_key_id' 'test', \
         'aws.secret_access_key' 'test', 'aws.region' 'us-east-1'",
        moto.endpoint
    );
    for (name, codec, select) in [
        (
            "paid.avro",
            "snappy",
            format!("SELECT * FROM '{}' WHERE paid", order.display()),
        ),
        (
            "big.avro",
            "null",
            "SELECT value AS v, repeat('x', 100) AS s FROM range(0, 200000)".to_string(),
        ),
    ] {
        let copy = format!(
            "COPY ({select}) TO 's3://avrow-copy/out/{name}' OPTIONS ({store_options}, 'codec' '{codec}')"
        );
        run_statement(&ctx, &copy, &[]).await.unwrap();
        let local = text(&query(&ctx, &format!("SELECT count(*) AS n FROM ({select})")).await);
        let remote = text(
            &query(
                &ctx,
                &format!("SELECT count(*) AS n FROM 's3://avrow-copy/out/{name}'"),
            )
            .await,
        );
        assert_eq!(remote, local, "{name}");
    }
    let s3 = store(&moto, "avrow-copy");
    let big = s3.head(&Path::from("out/big.avro")).await.unwrap();
    assert!(big.size > 10 << 20, "{}", big.size);
    let paid = s3
        .get(&Path::from("out/paid.avro"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reader = avrow::ReaderBuilder::new().read_bytes(paid).unwrap();
    assert_eq!(reader.header().codec(), avrow::Codec::Snappy);
    assert_eq!(reader.map(|b| b.unwrap().num_rows()).sum::<usize>(), 1332);
}
