//! `avrow sql [--table NAME=PATH]... "SQL"`: a DataFusion session whose `avro` format is
//! avrow's (`avrow-datafusion`), the tables registered, the query run on a tokio runtime of
//! `--partitions` threads, and its answer printed as a table, CSV or NDJSON.

use super::stdout;
use crate::args::{SqlArgs, SqlFormat};
use crate::output;
use crate::writers::csv::CsvWriter;
use crate::writers::json;
use crate::writers::BatchWriter;
use anyhow::{anyhow, bail, Context, Result};
use arrow::json::writer::LineDelimited;
use arrow::util::pretty::pretty_format_batches_with_schema;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::io::Write;
use std::sync::Arc;

/// One `--table NAME=PATH`.
fn table(arg: &str) -> Result<(&str, &str)> {
    match arg.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name, path)),
        _ => bail!("--table takes NAME=PATH_OR_GLOB, not '{arg}'"),
    }
}

/// Runs the query and prints the answer.
///
/// # Errors
/// A table cannot be registered, the query fails (the error names the file and location),
/// or writing fails.
pub fn run(args: &SqlArgs) -> Result<()> {
    let tables = args
        .tables
        .iter()
        .map(|t| table(t))
        .collect::<Result<Vec<_>>>()?;
    let partitions = match args.partitions {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(partitions)
        .enable_all()
        .build()
        .context("cannot start the query runtime")?;
    let (schema, batches) = runtime.block_on(async {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new().with_target_partitions(partitions),
        );
        avrow_datafusion::register(&ctx).map_err(|e| anyhow!(e))?;
        for (name, path) in &tables {
            ctx.register_avrow(name, path, AvrowReadOptions::default())
                .await
                .map_err(|e| anyhow!("table {name} ({path}): {e}"))?;
        }
        let df = ctx.sql(&args.sql).await.map_err(|e| anyhow!(e))?;
        let schema = Arc::new(df.schema().as_arrow().clone());
        let batches = df.collect().await.map_err(|e| anyhow!(e))?;
        Ok::<_, anyhow::Error>((schema, batches))
    })?;
    match args.format {
        SqlFormat::Table => {
            let mut out = stdout();
            let table = pretty_format_batches_with_schema(schema, &batches)?;
            writeln!(out, "{table}")?;
            out.flush()?;
        }
        SqlFormat::Json => {
            let mut out = stdout();
            let mut writer = json::builder().build::<_, LineDelimited>(&mut out);
            for batch in &batches {
                writer.write(batch)?;
            }
            writer.finish()?;
            out.flush()?;
        }
        SqlFormat::Csv => {
            let mut writer: Box<dyn BatchWriter> =
                Box::new(CsvWriter::new(output::stdout(), schema));
            for batch in &batches {
                writer.write(batch)?;
            }
            writer.finish()?.flush()?;
        }
    }
    Ok(())
}
