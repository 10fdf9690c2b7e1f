//! Query results equal DataFusion's own Avro source (arrow-avro) on the real fixtures, the
//! benchmark shapes' samples and random schemas written by fastavro, wherever that source
//! reads the file.

use std::path::Path;

use crate::common::*;
use datafusion::prelude::{AvroReadOptions, SessionContext};

/// Both readers' answers to `sql` over table `t` = `path`; `None` when DataFusion's own
/// source cannot read the file.
async fn both(path: &Path, sql: &str) -> Option<(String, String)> {
    let builtin = SessionContext::new_with_config(config(1));
    builtin
        .register_avro("t", path.to_str().unwrap(), AvroReadOptions::default())
        .await
        .ok()?;
    let theirs = builtin.sql(sql).await.ok()?.collect().await.ok()?;
    let ctx = avrow_ctx(1);
    create(&ctx, "t", path).await;
    let ours = query(&ctx, sql).await;
    Some((text(&ours), text(&theirs)))
}

/// Columns whose Arrow types the two readers agree on (the mapping tables differ on a few
/// logical types); only these are compared.
async fn common_columns(path: &Path) -> Vec<String> {
    let builtin = SessionContext::new();
    builtin
        .register_avro("t", path.to_str().unwrap(), AvroReadOptions::default())
        .await
        .unwrap();
    let theirs = builtin
        .table("t")
        .await
        .unwrap()
        .schema()
        .as_arrow()
        .clone();
    let ctx = avrow_ctx(1);
    create(&ctx, "t", path).await;
    let ours = ctx.table("t").await.unwrap().schema().as_arrow().clone();
    ours.fields()
        .iter()
        .filter(|f| {
            theirs
                .field_with_name(f.name())
                .is_ok_and(|t| t.data_type() == f.data_type())
        })
        .map(|f| format!("\"{}\"", f.name()))
        .collect()
}

#[tokio::test]
async fn every_fixture_and_sample_answers_as_datafusions_own_source() {
    let mut files = fixtures();
    for s in ["order.avro", "wide.avro", "telemetry.avro", "counters.avro"] {
        files.push(sample(s));
    }
    let mut compared = 0;
    for path in &files {
        let columns = common_columns(path).await;
        let count = "SELECT count(*) FROM t";
        let Some((ours, theirs)) = both(path, count).await else {
            continue;
        };
        assert_eq!(ours, theirs, "{}: {count}", path.display());
        if !columns.is_empty() {
            let select = format!("SELECT {} FROM t", columns.join(", "));
            if let Some((ours, theirs)) = both(path, &select).await {
                assert_eq!(ours, theirs, "{}: {select}", path.display());
                compared += 1;
            }
        }
    }
    assert!(compared >= 20, "only {compared} files compared");
}

/// Random schemas written by fastavro: the columns both readers type alike answer alike.
#[tokio::test]
async fn random_schemas_answer_as_datafusions_own_source() {
    let dir = tempfile::tempdir().unwrap();
    let files = fastavro_files(dir.path(), 24);
    let mut compared = 0;
    for path in &files {
        // Records of no bytes (every field of type `null`): DataFusion 55's source counts
        // none of them (fastavro and avrow count every one).
        let schema = avrow::ReaderBuilder::new().open(path).unwrap().schema();
        if schema.fields().iter().all(|f| f.data_type().is_null()) {
            continue;
        }
        let columns = common_columns(path).await;
        let Some((ours, theirs)) = both(path, "SELECT count(*) FROM t").await else {
            continue;
        };
        assert_eq!(ours, theirs, "{}: count", path.display());
        if columns.is_empty() {
            continue;
        }
        let select = format!("SELECT {} FROM t", columns.join(", "));
        let (ours, theirs) = both(path, &select)
            .await
            .unwrap_or_else(|| panic!("{}: DataFusion's source fails {select}", path.display()));
        assert_eq!(ours, theirs, "{}: {select}", path.display());
        compared += 1;
    }
    assert!(
        compared >= files.len() / 3,
        "only {compared} files compared"
    );
}

#[tokio::test]
async fn aggregates_on_the_shapes_answer_as_datafusions_own_source() {
    let queries = [
        (
            "order.avro",
            "SELECT paid, count(*), sum(total), max(item_count) FROM t GROUP BY paid ORDER BY paid",
        ),
        (
            "order.avro",
            "SELECT count(*), sum(total) FROM t WHERE item_count > 10",
        ),
        ("wide.avro", "SELECT count(*) FROM t"),
        ("counters.avro", "SELECT count(*) FROM t"),
        ("telemetry.avro", "SELECT count(*) FROM t"),
    ];
    for (file, sql) in queries {
        let (ours, theirs) = both(&sample(file), sql)
            .await
            .expect("both read the sample");
        assert_eq!(ours, theirs, "{file}: {sql}");
    }
}
