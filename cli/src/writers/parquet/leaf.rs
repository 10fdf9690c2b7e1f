//! The leaf columns of a row group, each with the writer of its kind: the `parquet` crate's
//! `ArrowColumnWriter`, or for dictionary columns `dictionary.rs`'s; and the closed chunks,
//! appended to the row group alike.

use super::dictionary::{KeyLeaf, KeyWriter};
use crate::output::Out;
use anyhow::{bail, Result};
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::writer::SerializedRowGroupWriter;

/// One batch of a leaf column, for the writer of its kind.
pub enum Leaf {
    Arrow(ArrowLeafColumn),
    Keys(KeyLeaf),
}

/// The writer of one leaf column of a row group: the `parquet` crate's, or for dictionary
/// columns `dictionary.rs`'s.
pub enum LeafWriter {
    Arrow(Box<ArrowColumnWriter>),
    Keys(Box<KeyWriter>),
}

/// A closed leaf column of a row group, to append.
pub enum Closed {
    Arrow(ArrowColumnChunk),
    Keys(bytes::Bytes, ColumnCloseResult),
}

impl LeafWriter {
    pub fn write(&mut self, leaf: &Leaf) -> Result<()> {
        match (self, leaf) {
            (LeafWriter::Arrow(writer), Leaf::Arrow(leaf)) => Ok(writer.write(leaf)?),
            (LeafWriter::Keys(writer), Leaf::Keys(leaf)) => writer.write(leaf),
            _ => bail!("a leaf column reached the writer of another kind"),
        }
    }

    pub fn close(self) -> Result<Closed> {
        Ok(match self {
            LeafWriter::Arrow(writer) => Closed::Arrow((*writer).close()?),
            LeafWriter::Keys(writer) => {
                let (bytes, close) = writer.close()?;
                Closed::Keys(bytes, close)
            }
        })
    }
}

impl Closed {
    pub fn append(self, row_group: &mut SerializedRowGroupWriter<'_, Out>) -> Result<()> {
        match self {
            Closed::Arrow(chunk) => chunk.append_to_row_group(row_group)?,
            Closed::Keys(bytes, close) => row_group.append_column(&bytes, close)?,
        }
        Ok(())
    }
}
