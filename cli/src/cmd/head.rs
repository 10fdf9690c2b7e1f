//! `avrow head FILE [-n N]`: the first rows as a table (arrow's pretty printer) or as NDJSON.
//! Decodes on one thread and stops after the blocks it needs.

use super::stdout;
use crate::config::HeadConfig;
use crate::inputs::ByteCounter;
use crate::writers::json;
use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::json::writer::LineDelimited;
use arrow::util::pretty::pretty_format_batches_with_schema;
use std::io::Write;

/// Prints the first rows.
///
/// # Errors
/// The file cannot be read or decoded, or writing fails.
pub fn run(config: &HeadConfig) -> Result<()> {
    let mut reader = config
        .input
        .open(config.read.builder(), &ByteCounter::default())?;
    let schema = reader.schema();
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut left = config.rows;
    while left > 0 {
        let Some(batch) = reader.next() else {
            break;
        };
        let batch = batch?;
        let batch = if batch.num_rows() > left {
            batch.slice(0, left)
        } else {
            batch
        };
        left -= batch.num_rows();
        batches.push(batch);
    }
    drop(reader);
    let mut out = stdout();
    if config.json {
        let mut writer = json::builder().build::<_, LineDelimited>(&mut out);
        for batch in &batches {
            writer.write(batch)?;
        }
        writer.finish()?;
    } else {
        let table = pretty_format_batches_with_schema(schema, &batches)?;
        writeln!(out, "{table}")?;
    }
    out.flush()?;
    Ok(())
}
