//! Row counts from block headers: `count(*)` is answered from statistics without a scan;
//! with statistics off the scan counts rows correctly (decoding one column).

use crate::common::*;
use datafusion::prelude::SessionContext;

fn rows_of(path: &std::path::Path) -> usize {
    avrow::ReaderBuilder::new()
        .open(path)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum()
}

#[tokio::test]
async fn count_star_reads_no_record_data() {
    for name in ["order.avro", "wide.avro", "telemetry.avro", "counters.avro"] {
        let path = sample(name);
        let ctx = avrow_ctx(2);
        create(&ctx, "t", &path).await;
        let plan = text(&query(&ctx, "EXPLAIN SELECT count(*) FROM t").await);
        assert!(!plan.contains("DataSourceExec"), "{name}: {plan}");
        assert!(
            plan.contains(&format!("{} as count(*)", rows_of(&path))),
            "{name}: {plan}"
        );
    }
}

#[tokio::test]
async fn count_star_without_statistics_scans_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 4096);
    for partitions in [1, 4] {
        let ctx = SessionContext::new_with_config(
            config(partitions).set_bool("datafusion.execution.collect_statistics", false),
        );
        avrow_datafusion::register(&ctx).unwrap();
        create(&ctx, "t", &path).await;
        let plan = text(&query(&ctx, "EXPLAIN SELECT count(*) FROM t").await);
        assert!(plan.contains("DataSourceExec"), "{plan}");
        let got = text(&query(&ctx, "SELECT count(*) AS n FROM t").await);
        assert!(got.contains("| 1500 |"), "{got}");
    }
}

#[tokio::test]
async fn many_files_add_up() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::copy(
            sample("order.avro"),
            dir.path().join(format!("part-{i}.avro")),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not avro").unwrap();
    let ctx = avrow_ctx(2);
    let mut location = dir.path().display().to_string();
    location.push('/');
    create(&ctx, "t", std::path::Path::new(&location)).await;
    let got = text(&query(&ctx, "SELECT count(*) AS n, count(DISTINCT id) AS d FROM t").await);
    assert!(got.contains("| 4500 | 1500 |"), "{got}");
}

/// A block whose header declares more records than its bytes can hold: `count(*)` is the
/// error reading it gives (it answered the header's count), for every partitioning.
#[tokio::test]
async fn a_count_the_block_cannot_hold_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = lying_count_file(dir.path());
    for partitions in [1, 2] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", &path).await;
        for sql in ["SELECT count(*) FROM t", "SELECT count(id) FROM t"] {
            let e = query_err(&ctx, sql).await;
            assert!(
                e.contains("lying.avro") && e.contains("cannot hold 5 records"),
                "{sql}: {e}"
            );
        }
    }
}
