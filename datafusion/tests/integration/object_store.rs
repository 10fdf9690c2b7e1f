//! Reading through `object_store` (the in-memory store standing in for S3, GCS or Azure):
//! answers equal the local ones, and a split is read with ranged GETs of the split and the
//! tail of its last block, never the whole object.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::common::*;
use async_trait::async_trait;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
use datafusion::prelude::SessionContext;
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use url::Url;

/// A store (in memory, or any other) that records the byte ranges of every GET and counts
/// HEADs.
pub struct Recording {
    inner: Arc<dyn ObjectStore>,
    pub gets: Mutex<Vec<Range<u64>>>,
    pub heads: std::sync::atomic::AtomicUsize,
    /// Each GET first waits this long on the runtime's timer, as a network client needs its
    /// runtime's drivers (a GET on a runtime that is gone fails).
    pub timer: Option<std::time::Duration>,
}

impl Recording {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Recording {
            inner,
            gets: Mutex::default(),
            heads: Default::default(),
            timer: None,
        }
    }
}

impl fmt::Display for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recording")
    }
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recording")
    }
}

#[async_trait]
impl ObjectStore for Recording {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if let Some(wait) = self.timer {
            tokio::time::sleep(wait).await;
        }
        let head = options.head;
        let range = options.range.clone();
        let result = self.inner.get_opts(location, options).await?;
        if head {
            self.heads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        } else {
            let r = match range {
                Some(GetRange::Bounded(r)) => r,
                _ => result.range.clone(),
            };
            self.gets.lock().unwrap().push(r);
        }
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

async fn remote_ctx(
    partitions: usize,
    stats: bool,
    files: &[&std::path::Path],
) -> (SessionContext, Arc<Recording>) {
    let store = Arc::new(Recording::new(Arc::new(InMemory::new())));
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap();
        store
            .put(
                &Path::from(format!("data/{name}")),
                std::fs::read(f).unwrap().into(),
            )
            .await
            .unwrap();
    }
    let ctx = SessionContext::new_with_config(
        config(partitions).set_bool("datafusion.execution.collect_statistics", stats),
    );
    avrow_datafusion::register(&ctx).unwrap();
    ctx.register_object_store(&Url::parse("memory://bucket").unwrap(), store.clone());
    (ctx, store)
}

#[tokio::test]
async fn object_store_answers_equal_local_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 8192);
    let queries = [
        "SELECT count(*), sum(id), max(total) FROM t",
        "SELECT paid, count(*), sum(item_count) FROM t GROUP BY paid ORDER BY paid",
        "SELECT customer, note FROM t ORDER BY id LIMIT 3",
    ];
    let local = avrow_ctx(3);
    create(&local, "t", &path).await;
    for partitions in [1, 3] {
        let (ctx, _) = remote_ctx(partitions, true, &[&path]).await;
        let name = path.file_name().unwrap().to_str().unwrap();
        query(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'"
            ),
        )
        .await;
        for q in queries {
            assert_eq!(
                text(&query(&ctx, q).await),
                text(&query(&local, q).await),
                "{q}"
            );
        }
    }
}

#[test]
fn a_plan_runs_again_in_another_runtime() {
    // The scan's file cache keeps a file until its last split opens. The first run of a plan
    // stops after one batch (as a LIMIT stops a scan), so splits of the file never open, and
    // its runtime ends; the next run (state reset, as DataFusion requires to run a plan
    // again), in a new runtime, reads the cached file's splits. Every GET of that run must
    // use the runtime it runs in.
    use datafusion::physical_plan::execution_plan::reset_plan_states;
    use datafusion::physical_plan::{collect, ExecutionPlanProperties};
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 8 << 10);
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    let first = runtime();
    let (ctx, plan) = first.block_on(async {
        let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        inner
            .put(
                &Path::from(format!("data/{name}")),
                std::fs::read(&path).unwrap().into(),
            )
            .await
            .unwrap();
        let mut store = Recording::new(inner);
        store.timer = Some(std::time::Duration::from_millis(1));
        let ctx = SessionContext::new_with_config(
            config(4)
                .with_batch_size(64)
                .set_bool("datafusion.execution.collect_statistics", false),
        );
        avrow_datafusion::register(&ctx).unwrap();
        ctx.register_object_store(&Url::parse("memory://bucket").unwrap(), Arc::new(store));
        query(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'"
            ),
        )
        .await;
        let plan = ctx
            .sql("SELECT id FROM t")
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        assert_eq!(plan.output_partitioning().partition_count(), 4);
        let mut stream = plan.execute(0, ctx.task_ctx()).unwrap();
        let batch = stream.next().await.unwrap().unwrap();
        assert!(batch.num_rows() > 0);
        (ctx, plan)
    });
    drop(first);
    for round in 0..2 {
        let plan = reset_plan_states(Arc::clone(&plan)).unwrap();
        let rows: usize = runtime().block_on(async {
            collect(plan, ctx.task_ctx())
                .await
                .unwrap_or_else(|e| panic!("run {round} in a new runtime: {e}"))
                .iter()
                .map(|b| b.num_rows())
                .sum()
        });
        assert_eq!(rows, 1500, "run {round} in a new runtime");
    }
}

#[tokio::test]
async fn a_split_gets_its_own_bytes_not_the_whole_object() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 16 << 10);
    let size = std::fs::metadata(&path).unwrap().len();
    let (ctx, store) = remote_ctx(4, false, &[&path]).await;
    let name = path.file_name().unwrap().to_str().unwrap();
    query(
        &ctx,
        &format!("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'"),
    )
    .await;
    // Schema inference fetched the header only.
    let header_gets: Vec<_> = store.gets.lock().unwrap().drain(..).collect();
    assert!(
        header_gets
            .iter()
            .all(|r| r.start == 0 && r.end <= 64 << 10),
        "{header_gets:?}"
    );
    let heads = store.heads.load(std::sync::atomic::Ordering::Relaxed);
    let got = text(&query(&ctx, "SELECT count(*) AS n, sum(id) FROM t").await);
    assert!(got.contains("| 1500 |"), "{got}");
    let gets: Vec<_> = store.gets.lock().unwrap().clone();
    // The four splits of the one file share one HEAD and one header GET (DataFusion's
    // listing of the table's location makes one more HEAD).
    assert_eq!(
        store.heads.load(std::sync::atomic::Ordering::Relaxed) - heads,
        2
    );
    assert_eq!(gets.iter().filter(|r| r.start == 0).count(), 1, "{gets:?}");
    assert!(
        gets.iter().all(|r| !(r.start == 0 && r.end >= size)),
        "a GET of the whole object: {gets:?}"
    );
    let header_bytes: u64 = gets
        .iter()
        .filter(|r| r.start == 0)
        .map(|r| r.end - r.start)
        .sum();
    let body: u64 = gets
        .iter()
        .filter(|r| r.start != 0)
        .map(|r| r.end - r.start)
        .sum();
    // Each split's body is its own bytes, plus the search for its first marker and the tail
    // of its last block: well under twice the object.
    assert!(
        body < size * 3 / 2,
        "{body} bytes of block data fetched for a {size}-byte object: {gets:?}"
    );
    assert!(header_bytes <= 64 << 10, "{header_bytes}");
}

#[tokio::test]
async fn statistics_check_the_sync_markers_they_walk_past() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 16 << 10);
    let mut bytes = std::fs::read(&path).unwrap();
    let header = avrow::BlockReader::open(&path).unwrap().header().clone();
    // The marker that ends the second block, just before the third.
    let blocks: Vec<_> = avrow::BlockReader::open(&path)
        .unwrap()
        .take(3)
        .map(Result::unwrap)
        .collect();
    let second = blocks[1].offset();
    let marker = (blocks[2].offset() - 16) as usize;
    assert_eq!(bytes[marker..marker + 16], header.sync());
    bytes[marker + 3] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let (ctx, _) = remote_ctx(2, true, &[&path]).await;
    let name = path.file_name().unwrap().to_str().unwrap();
    // The walk for statistics finds the damage, so `count(*)` is not answered from a count
    // the file does not back: the scan reads the blocks and reports the damaged one.
    let err = match ctx
        .sql(&format!(
            "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'"
        ))
        .await
    {
        Ok(_) => query_err(&ctx, "SELECT count(*) FROM t").await,
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains(name) && err.contains("sync marker") && err.contains(&second.to_string()),
        "{err}"
    );
}

#[tokio::test]
async fn statistics_from_an_object_store_count_rows() {
    let (ctx, _) = remote_ctx(2, true, &[&sample("order.avro"), &sample("order.avro")]).await;
    query(
        &ctx,
        "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/'",
    )
    .await;
    let plan = text(&query(&ctx, "EXPLAIN SELECT count(*) FROM t").await);
    assert!(plan.contains("1500 as count(*)"), "{plan}");
}

/// A block declaring more records than its bytes hold, in a store: the walk for statistics
/// refuses the count (as a local file's and the reader's checks do) instead of answering it.
#[tokio::test]
async fn statistics_from_an_object_store_check_each_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = lying_count_file(dir.path());
    let (ctx, _) = remote_ctx(2, true, &[&path]).await;
    let err = match ctx
        .sql("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/lying.avro'")
        .await
    {
        Ok(_) => query_err(&ctx, "SELECT count(*) FROM t").await,
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("lying.avro") && err.contains("cannot hold 5 records"),
        "{err}"
    );
}

/// `copies` of the order sample in one file of `block`-byte blocks.
fn repeated_order(dir: &std::path::Path, copies: usize, block: usize) -> std::path::PathBuf {
    let batches: Vec<_> = avrow::ReaderBuilder::new()
        .open(sample("order.avro"))
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    let path = dir.join(format!("order-x{copies}-{block}.avro"));
    let mut writer = avrow::WriterBuilder::new(batches[0].schema())
        .with_block_size(block)
        .with_codec(avrow::Codec::Null)
        .build(std::fs::File::create(&path).unwrap())
        .unwrap();
    for _ in 0..copies {
        for b in &batches {
            writer.write(b).unwrap();
        }
    }
    writer.finish().unwrap();
    path
}

#[tokio::test]
async fn statistics_of_large_objects_cost_a_few_requests() {
    use datafusion::common::stats::Precision;
    use datafusion::physical_plan::{StatisticsArgs, StatisticsContext};
    let dir = tempfile::tempdir().unwrap();
    // Small blocks: walking every framing would fetch the whole object; the walk stops
    // within its budget (32 GETs, 4 MiB) and estimates, so count(*) scans (and is right).
    let small = repeated_order(dir.path(), 8, 8 << 10);
    // Large blocks: a few framings, 36 bytes each after the first chunk: exact.
    let large = repeated_order(dir.path(), 8, 4 << 20);
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&small) > 6 << 20, "{}", size(&small));
    for (path, exact) in [(&small, false), (&large, true)] {
        let (ctx, store) = remote_ctx(2, true, &[path]).await;
        let name = path.file_name().unwrap().to_str().unwrap();
        query(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'"
            ),
        )
        .await;
        // Registration (schema inference, the header's GET) and the first plan: whichever of
        // them collects the table's statistics walks the block headers.
        let plan = ctx
            .sql("SELECT * FROM t")
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let gets: Vec<_> = store.gets.lock().unwrap().drain(..).collect();
        let fetched: u64 = gets.iter().map(|r| r.end - r.start).sum();
        assert!(!gets.is_empty(), "{name}: no walk");
        assert!(
            gets.len() <= 36 && fetched <= (4 << 20) + (512 << 10),
            "{name}: the walk fetched {fetched} bytes in {} GETs",
            gets.len()
        );
        if exact {
            // Two 4 MiB blocks: after the header's GET, framings only.
            assert!(
                gets.iter()
                    .filter(|r| r.start > 0)
                    .all(|r| r.end - r.start <= 36),
                "{name}: {gets:?}"
            );
        }
        let rows = StatisticsContext::new()
            .compute(plan.as_ref(), &StatisticsArgs::new())
            .unwrap()
            .num_rows;
        if exact {
            assert_eq!(rows, Precision::Exact(12_000), "{name}");
        } else {
            let Precision::Inexact(n) = rows else {
                panic!("{name}: {rows:?}")
            };
            assert!((9_000..=15_000).contains(&n), "{name}: estimate {n}");
        }
        let explained = text(&query(&ctx, "EXPLAIN SELECT count(*) FROM t").await);
        assert_eq!(
            explained.contains("12000 as count(*)"),
            exact,
            "{explained}"
        );
        let got = text(&query(&ctx, "SELECT count(*) AS n, sum(id) FROM t").await);
        assert!(got.contains("| 12000 |"), "{name}: {got}");
    }
}

#[tokio::test]
async fn an_object_that_is_not_avro_costs_one_small_get() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.avro");
    std::fs::write(&junk, vec![b'x'; 4 << 20]).unwrap();
    let (ctx, store) = remote_ctx(2, true, &[&junk]).await;
    let err = ctx
        .sql("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/junk.avro'")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("junk.avro") && err.contains("magic"), "{err}");
    // Not a header cut short: no larger prefix is fetched after the first.
    let gets = store.gets.lock().unwrap().clone();
    let fetched: u64 = gets.iter().map(|r| r.end - r.start).sum();
    assert!(fetched <= 64 << 10, "{fetched} bytes in {gets:?}");
}

#[tokio::test]
async fn globs_across_levels_on_stores_and_local_paths() {
    use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
    let dir = tempfile::tempdir().unwrap();
    let order = sample("order.avro");
    for (sub, name) in [("2024", "a.avro"), ("2025", "b.avro"), ("2025", "c.txt")] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        std::fs::copy(&order, dir.path().join(sub).join(name)).unwrap();
    }
    // Deeper than the pattern: not matched (`*` stays within one level).
    std::fs::create_dir_all(dir.path().join("2025/old")).unwrap();
    std::fs::copy(&order, dir.path().join("2025/old/d.avro")).unwrap();
    let (ctx, store) = remote_ctx(2, true, &[]).await;
    for (sub, name) in [
        ("2024", "a.avro"),
        ("2025", "b.avro"),
        ("2025", "c.txt"),
        ("2025/old", "d.avro"),
    ] {
        store
            .put(
                &Path::from(format!("data/{sub}/{name}")),
                std::fs::read(&order).unwrap().into(),
            )
            .await
            .unwrap();
    }
    let local = format!("{}/*/*.avro", dir.path().display());
    for (c, location) in [
        (&ctx, "memory://bucket/data/*/*.avro"),
        (&avrow_ctx(2), local.as_str()),
    ] {
        c.register_avrow("t", location, AvrowReadOptions::default())
            .await
            .unwrap();
        let got = text(&query(c, "SELECT count(*) AS n FROM t").await);
        assert!(got.contains("| 3000 |"), "{location}: {got}");
    }
    // Files with different schemas under one glob, one with `#` and a space in its name: the
    // table's schema is merged over all of them (DataFusion infers a table of several paths
    // from the first one alone).
    let wide = sample("wide.avro");
    let wide_rows: usize = avrow::ReaderBuilder::new()
        .open(&wide)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    for (sub, name, from) in [("2024", "a.avro", &order), ("2025", "w #1.avro", &wide)] {
        std::fs::create_dir_all(dir.path().join("mixed").join(sub)).unwrap();
        std::fs::copy(from, dir.path().join("mixed").join(sub).join(name)).unwrap();
    }
    let mixed = avrow_ctx(2);
    mixed
        .register_avrow(
            "m",
            &format!("{}/mixed/*/*.avro", dir.path().display()),
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
    let got = text(
        &query(
            &mixed,
            "SELECT count(*) AS n, count(id) AS i, sum(CASE WHEN id IS NULL THEN 1 ELSE 0 END) AS w \
             FROM m",
        )
        .await,
    );
    assert!(
        got.contains(&format!("| {} | 1500 | {wide_rows} |", 1500 + wide_rows)),
        "{got}"
    );
    // A pattern that matches nothing is DataFusion's "no files" error.
    let err = ctx
        .register_avrow(
            "u",
            "memory://bucket/data/*/*.parquet",
            AvrowReadOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("No files found"), "{err}");
}

/// A zigzag varint, as Avro writes longs.
fn zigzag(v: i64) -> Vec<u8> {
    let mut x = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
    out
}

#[tokio::test]
async fn splits_inside_large_blocks_fetch_framings_not_themselves() {
    let dir = tempfile::tempdir().unwrap();
    // A file of two to four blocks, split four ways per block: most splits lie inside a
    // block and hold no sync marker.
    let (path, blocks) = [128usize << 10, 256 << 10, 512 << 10, 64 << 10]
        .into_iter()
        .map(|b| {
            let path = small_blocks(dir.path(), b);
            let blocks: Vec<_> = avrow::BlockReader::open(&path)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (path, blocks)
        })
        .find(|(_, blocks)| (2..=4).contains(&blocks.len()))
        .expect("a block size giving 2 to 4 blocks");
    let size = std::fs::metadata(&path).unwrap().len();
    let partitions = 4 * blocks.len();
    let sql = "SELECT count(*) AS n, sum(id), max(total), min(customer) FROM t";
    let local = avrow_ctx(1);
    local
        .register_avrow("t", path.to_str().unwrap(), AvrowReadOptions::default())
        .await
        .unwrap();
    let want = text(&query(&local, sql).await);
    let name = path.file_name().unwrap().to_str().unwrap();
    let create =
        format!("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/{name}'");
    let (ctx, store) = remote_ctx(partitions, false, &[&path]).await;
    query(&ctx, &create).await;
    store.gets.lock().unwrap().clear();
    assert_eq!(text(&query(&ctx, sql).await), want);
    let fetched: u64 = store
        .gets
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.end - r.start)
        .sum();
    assert!(
        fetched as f64 <= 1.05 * size as f64,
        "{fetched} bytes fetched for a {size}-byte object in {} blocks, {partitions} splits",
        blocks.len()
    );

    // The first block's byte size lies (100 bytes short, same varint length): the splits
    // that hop over it land in the wrong place, and the split reading it finds no sync
    // marker where the size says: an error naming the file, never an answer.
    let mut bytes = std::fs::read(&path).unwrap();
    let first = blocks[0].offset() as usize;
    let count = zigzag(blocks[0].record_count() as i64);
    let old = zigzag(blocks[0].data().len() as i64);
    let new = zigzag(blocks[0].data().len() as i64 - 100);
    assert_eq!(old.len(), new.len());
    let at = first + count.len();
    assert_eq!(bytes[at..at + old.len()], old[..]);
    bytes[at..at + new.len()].copy_from_slice(&new);
    let damaged = dir.path().join("lying.avro");
    std::fs::write(&damaged, &bytes).unwrap();
    let (ctx, _) = remote_ctx(partitions, false, &[&damaged]).await;
    query(
        &ctx,
        "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 'memory://bucket/data/lying.avro'",
    )
    .await;
    let err = query_err(&ctx, sql).await;
    assert!(err.contains("lying.avro"), "{err}");
}
