//! Arrow IPC file (`.arrow`, `.feather`) and stream (`.arrows`) output.

use super::BatchWriter;
use crate::format::Compression;
use crate::output::Out;
use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::Schema;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
use std::io::Write;

fn options(compression: Compression) -> Result<IpcWriteOptions> {
    let codec = match compression {
        Compression::Zstd => Some(CompressionType::ZSTD),
        Compression::Lz4 => Some(CompressionType::LZ4_FRAME),
        _ => None,
    };
    Ok(IpcWriteOptions::default().try_with_compression(codec)?)
}

/// The Arrow IPC file format.
pub struct IpcFile(FileWriter<Out>);

impl IpcFile {
    /// Starts an IPC file.
    pub fn new(out: Out, schema: &Schema, compression: Compression) -> Result<Self> {
        Ok(IpcFile(FileWriter::try_new_with_options(
            out,
            schema,
            options(compression)?,
        )?))
    }
}

impl BatchWriter for IpcFile {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        Ok(self.0.write(batch)?)
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        self.0.finish()?;
        let mut out = self.0.into_inner()?;
        out.flush()?;
        Ok(out)
    }
}

/// The Arrow IPC stream format.
pub struct IpcStream(StreamWriter<Out>);

impl IpcStream {
    /// Starts an IPC stream.
    pub fn new(out: Out, schema: &Schema, compression: Compression) -> Result<Self> {
        Ok(IpcStream(StreamWriter::try_new_with_options(
            out,
            schema,
            options(compression)?,
        )?))
    }
}

impl BatchWriter for IpcStream {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        Ok(self.0.write(batch)?)
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        self.0.finish()?;
        let mut out = self.0.into_inner()?;
        out.flush()?;
        Ok(out)
    }
}
