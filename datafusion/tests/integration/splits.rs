//! Byte-range splits: for any partition of a file into ranges, the ranges' scans together
//! return every row exactly once, in order (the Hadoop rule at sync markers).

use crate::common::*;
use proptest::prelude::*;

fn ids(batches: &[arrow::array::RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let col = b.column_by_name("id").unwrap();
            let col = arrow::compute::cast(col, &arrow::datatypes::DataType::Int64).unwrap();
            col.as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect()
}

fn cuts_to_ranges(len: u64, mut cuts: Vec<u64>) -> Vec<(u64, u64)> {
    cuts.iter_mut().for_each(|c| *c %= len + 1);
    cuts.sort_unstable();
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(len);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

#[test]
fn any_partition_reads_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 2048);
    let len = std::fs::metadata(&path).unwrap().len();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let whole = ids(&rt.block_on(read_ranges(&path, &[(0, len)])));
    assert_eq!(whole.len(), 1500);
    let config = ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    };
    proptest!(config, |(cuts in proptest::collection::vec(0u64..u64::MAX, 0..12))| {
        let ranges = cuts_to_ranges(len, cuts);
        let got = ids(&rt.block_on(read_ranges(&path, &ranges)));
        prop_assert_eq!(&got, &whole, "ranges {:?}", ranges);
    });
}

#[test]
fn ranges_that_cut_markers_and_headers_read_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 4096);
    let bytes = std::fs::read(&path).unwrap();
    let len = bytes.len() as u64;
    let header = avrow::BlockReader::open(&path).unwrap().header().clone();
    let sync = header.sync();
    // Cut on, just before and just after every sync marker, and inside the header.
    let mut cuts = vec![
        1,
        header.len() - 17,
        header.len() - 16,
        header.len() - 15,
        header.len(),
    ];
    for (i, w) in bytes.windows(16).enumerate() {
        if w == sync && cuts.len() < 60 {
            cuts.extend([i as u64 - 1, i as u64, i as u64 + 1, i as u64 + 16]);
        }
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let whole = ids(&rt.block_on(read_ranges(&path, &[(0, len)])));
    for chunk in cuts.chunks(3) {
        let ranges = cuts_to_ranges(len, chunk.to_vec());
        let got = ids(&rt.block_on(read_ranges(&path, &ranges)));
        assert_eq!(got, whole, "ranges {ranges:?}");
    }
}

#[tokio::test]
async fn sql_answers_do_not_depend_on_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_blocks(dir.path(), 8192);
    let queries = [
        "SELECT count(*), sum(id), min(total), max(total) FROM t",
        "SELECT paid, count(*), sum(item_count) FROM t GROUP BY paid ORDER BY paid",
        "SELECT count(*) FROM t WHERE total > 1000",
        "SELECT id FROM t ORDER BY id LIMIT 5",
    ];
    let mut answers = Vec::new();
    for partitions in [1, 2, 3, 8] {
        // Without statistics: 1 500 rows fit one batch, and DataFusion would not split so
        // small a table.
        let ctx = datafusion::prelude::SessionContext::new_with_config(
            config(partitions).set_bool("datafusion.execution.collect_statistics", false),
        );
        avrow_datafusion::register(&ctx).unwrap();
        create(&ctx, "t", &path).await;
        let plan = text(&query(&ctx, "EXPLAIN SELECT sum(id) FROM t").await);
        if partitions > 1 {
            assert!(
                plan.contains(&format!("file_groups={{{partitions} groups")),
                "{plan}"
            );
        }
        let mut got = Vec::new();
        for q in queries {
            got.push(text(&query(&ctx, q).await));
        }
        answers.push(got);
    }
    for a in &answers[1..] {
        assert_eq!(a, &answers[0]);
    }
}
