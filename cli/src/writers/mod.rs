//! The output formats of `convert`, each behind [`BatchWriter`]: Arrow IPC file and stream,
//! Parquet (columns encoded in parallel), CSV, NDJSON and Avro.

mod avro;
pub mod compat;
pub mod csv;
mod encoding;
mod ipc;
pub mod json;
mod parquet;
pub mod temporal;

use crate::format::{Compression, Format};
use crate::output::Out;
use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

/// Writes record batches in one output format.
pub trait BatchWriter {
    /// Writes one batch.
    ///
    /// # Errors
    /// Encoding or writing fails.
    fn write(&mut self, batch: &RecordBatch) -> Result<()>;

    /// Writes what the format needs at the end (footers, buffered row groups) and returns the
    /// byte sink, flushed.
    ///
    /// # Errors
    /// Encoding or writing fails.
    fn finish(self: Box<Self>) -> Result<Out>;
}

/// Options of the format writers.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Compression (already checked against the format).
    pub compression: Compression,
    /// Its level (checked), or the default.
    pub level: Option<i32>,
    /// Rows per Parquet row group, at most.
    pub row_group_size: usize,
    /// Bytes of data (PLAIN-encoded values) per Parquet row group, about.
    pub row_group_bytes: usize,
    /// Rows per batch the reader yields (all but the last, when read on one thread).
    pub batch_size: usize,
    /// Parquet and Avro encoding threads (0: every core, 1: on the caller's thread).
    pub threads: usize,
    /// Avro output: uncompressed bytes per block, about.
    pub block_size: usize,
    /// Avro output: the record's name where the schema is derived.
    pub record_name: Option<String>,
}

/// A writer of `format` for batches of `schema`, writing into `out`.
///
/// # Errors
/// The schema cannot be written in this format (e.g. a union in Parquet).
pub fn create(
    format: Format,
    schema: SchemaRef,
    out: Out,
    options: &WriterOptions,
) -> Result<Box<dyn BatchWriter>> {
    Ok(match format {
        Format::IpcFile => Box::new(ipc::IpcFile::new(out, &schema, options.compression)?),
        Format::IpcStream => Box::new(ipc::IpcStream::new(out, &schema, options.compression)?),
        Format::Parquet => Box::new(parquet::ParquetWriter::new(out, schema, options)?),
        Format::Csv => Box::new(csv::CsvWriter::new(out, schema)),
        Format::Ndjson => Box::new(json::NdjsonWriter::new(out)),
        Format::Avro => Box::new(avro::AvroWriter::new(out, schema, options)?),
    })
}
