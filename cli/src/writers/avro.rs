//! Avro object container file output (`.avro`), through the library's `avrow::Writer`: the
//! writer schema is the one the input was read with (`avro.schema` in the Arrow schema), so a
//! re-encoded file keeps its schema; for Arrow IPC and Parquet input, the schema the mapping
//! table derives.

use super::{BatchWriter, WriterOptions};
use crate::format::Compression;
use crate::output::Out;
use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

/// Avro output.
pub struct AvroWriter(avrow::Writer<Out>);

impl AvroWriter {
    /// Writes the header now.
    pub fn new(out: Out, schema: SchemaRef, options: &WriterOptions) -> Result<Self> {
        let codec = match options.compression {
            Compression::None => avrow::Codec::Null,
            Compression::Deflate => avrow::Codec::Deflate,
            Compression::Snappy => avrow::Codec::Snappy,
            Compression::Zstd => avrow::Codec::Zstandard,
            Compression::Bzip2 => avrow::Codec::Bzip2,
            Compression::Xz => avrow::Codec::Xz,
            other => anyhow::bail!("Avro output cannot be compressed with {other}"),
        };
        let mut builder = avrow::WriterBuilder::new(schema)
            .with_codec(codec)
            .with_block_size(options.block_size)
            .with_threads(options.threads);
        if let Some(level) = options.level {
            builder = builder.with_level(level);
        }
        if let Some(name) = &options.record_name {
            builder = builder.with_record_name(name);
        }
        Ok(AvroWriter(builder.build(out)?))
    }
}

impl BatchWriter for AvroWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        Ok(self.0.write(batch)?)
    }

    fn finish(self: Box<Self>) -> Result<Out> {
        Ok(self.0.finish()?)
    }
}
