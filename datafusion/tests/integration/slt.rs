//! The `.slt` files of `tests/slt/` (DataFusion's convention for SQL behaviour), each run
//! twice: with avrow as the `avro` format, and with DataFusion's own Avro source, which
//! serves as a second reader of the same files (the expected answers are DuckDB's); those of
//! `tests/slt/avrow/` (writing Avro, which DataFusion's own format cannot) with avrow only.

use std::path::Path;

use async_trait::async_trait;
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{DBOutput, DefaultColumnType};

use crate::common::rows;

struct Db {
    ctx: SessionContext,
}

#[async_trait]
impl sqllogictest::AsyncDB for Db {
    type Error = DataFusionError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        let df = self.ctx.sql(sql).await?;
        let columns = df.schema().fields().len();
        let batches = df.collect().await?;
        if columns == 0 || sql.trim_start().to_ascii_uppercase().starts_with("CREATE") {
            return Ok(DBOutput::StatementComplete(0));
        }
        Ok(DBOutput::Rows {
            types: vec![DefaultColumnType::Any; columns],
            rows: rows(&batches)?,
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "avrow-datafusion"
    }
}

async fn run_all(with_avrow: bool, folder: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let mut runner = sqllogictest::Runner::new(move || async move {
            let ctx = SessionContext::new_with_config(SessionConfig::new());
            if with_avrow {
                avrow_datafusion::register(&ctx)?;
            }
            Ok(Db { ctx })
        });
        if let Err(e) = runner.run_file_async(&file).await {
            let engine = if with_avrow {
                "avrow"
            } else {
                "DataFusion's Avro source"
            };
            panic!("{} with {engine}: {e}", file.display());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slt_files_with_avrow() {
    run_all(true, "tests/slt").await;
    run_all(true, "tests/slt/avrow").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slt_files_with_datafusions_own_avro_source() {
    run_all(false, "tests/slt").await;
}
