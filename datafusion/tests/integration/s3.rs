//! A real S3 API on localhost (moto's server, `tests/moto_s3.py`, started and stopped by the
//! tests): answers through `s3://` equal the local files' for every split count, and no GET
//! is wider than its split plus one block.

use std::path::Path as FsPath;
use std::sync::Arc;

use crate::common::*;
use crate::object_store::Recording;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
use datafusion::prelude::SessionContext;
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
