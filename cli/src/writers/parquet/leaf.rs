//! The leaf columns of a row group: how they come from the batches' top-level fields
//! ([`LeafPlan`]) and a chunk of batches whose leaves the encoding tasks compute as they
//! reach them ([`Chunk`]); each with the writer of its kind: the `parquet` crate's
//! `ArrowColumnWriter`, or for dictionary columns `dictionary.rs`'s; and the closed chunks,
//! appended to the row group alike.

use super::dictionary::KeyWriter;
use super::paths::{KeyColumns, KeyLeaf};
use crate::output::Out;
use anyhow::{anyhow, bail, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::SchemaDescriptor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

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

/// A chunk of batches, whose leaf columns are computed by the encoding tasks as they need
/// them: a top-level field's leaves (with their definition and repetition levels, as large as
/// the values for lists of numbers) by the first task of its leaf columns to reach a batch,
/// and each leaf dropped once its column has encoded it. Computed up front for the whole
/// chunk, the levels were held, with the batches, until every column had encoded the chunk
/// (Order at two threads: about 70 MB of its 222 MB peak of live memory).
pub struct Chunk {
    pub batches: Vec<RecordBatch>,
    /// `fields[b][f]`: the leaf columns of top-level field `f` of batch `b`, once computed;
    /// each is taken by its column's task.
    fields: Vec<Vec<FieldLeaves>>,
}

/// The leaf columns of one top-level field of one batch, once computed; each taken by its
/// column's task.
type FieldLeaves = Mutex<Option<Vec<Option<Leaf>>>>;

impl Chunk {
    pub fn new(batches: Vec<RecordBatch>, fields: usize) -> Self {
        let slots = batches
            .iter()
            .map(|_| (0..fields).map(|_| Mutex::new(None)).collect())
            .collect();
        Chunk {
            batches,
            fields: slots,
        }
    }

    /// Encode leaf column `c` of every batch of the chunk, in order, with `writer` (the pool's
    /// tasks and the one-thread path alike). A panic of the writer is an error, not the
    /// process's end.
    pub fn encode(&self, plan: &LeafPlan, c: usize, writer: &mut LeafWriter) -> Result<()> {
        catch_unwind(AssertUnwindSafe(|| {
            (0..self.batches.len()).try_for_each(|b| writer.write(&self.take(plan, b, c)?))
        }))
        .unwrap_or_else(|panic| Err(panicked(panic)))
    }

    /// Leaf column `c` of batch `b`, computed (with the other leaves of its top-level field)
    /// if no column of that field has asked for this batch yet.
    pub fn take(&self, plan: &LeafPlan, b: usize, c: usize) -> Result<Leaf> {
        let (top, index) = plan.roots[c];
        let mut slot = self.fields[b][top]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let leaves = plan.field_leaves(top, &self.batches[b])?;
            *slot = Some(leaves.into_iter().map(Some).collect());
        }
        slot.as_mut()
            .and_then(|leaves| leaves.get_mut(index))
            .and_then(Option::take)
            .ok_or_else(|| anyhow!("leaf column {c} of a batch was asked for twice"))
    }
}

/// How the leaf columns of the Parquet schema come from the batches' top-level fields.
pub struct LeafPlan {
    schema: SchemaRef,
    /// The dictionary columns written by `dictionary.rs`.
    pub keys: KeyColumns,
    /// Per leaf column: its top-level field and its position among that field's leaves.
    roots: Vec<(usize, usize)>,
    /// Per top-level field: its first leaf column and how many it has.
    spans: Vec<(usize, usize)>,
}

impl LeafPlan {
    /// # Errors
    /// A leaf column of the Parquet schema is under no top-level field of `schema`.
    pub fn new(
        schema: SchemaRef,
        keys: KeyColumns,
        parquet_schema: &SchemaDescriptor,
    ) -> Result<Self> {
        let mut roots = Vec::with_capacity(parquet_schema.num_columns());
        let mut spans = vec![(0, 0); schema.fields().len()];
        for c in 0..parquet_schema.num_columns() {
            let top = parquet_schema.get_column_root_idx(c);
            let Some(span) = spans.get_mut(top) else {
                bail!("Parquet column {c} is under no field of the Arrow schema");
            };
            if span.1 == 0 {
                span.0 = c;
            }
            roots.push((top, span.1));
            span.1 += 1;
        }
        Ok(LeafPlan {
            schema,
            keys,
            roots,
            spans,
        })
    }

    /// The leaf columns of top-level field `top` of `batch`, in the Parquet schema's order:
    /// the crate's, those that `dictionary.rs` writes replaced.
    fn field_leaves(&self, top: usize, batch: &RecordBatch) -> Result<Vec<Leaf>> {
        let field = &self.schema.fields()[top];
        let column = batch.column(top);
        let (start, count) = self.spans[top];
        let paths = &self.keys.paths[start..start + count];
        let leaves: Vec<Leaf> = if self.keys.whole[top] {
            paths
                .iter()
                .flatten()
                .map(|path| Ok(Leaf::Keys(path.leaf(batch)?)))
                .collect::<Result<_>>()?
        } else {
            compute_leaves(field, column)?
                .into_iter()
                .zip(paths)
                .map(|(leaf, path)| {
                    Ok(match path {
                        Some(path) => Leaf::Keys(path.leaf(batch)?),
                        None => Leaf::Arrow(leaf),
                    })
                })
                .collect::<Result<_>>()?
        };
        if leaves.len() != count {
            bail!(
                "column {:?} has other leaf columns than its schema",
                field.name()
            );
        }
        Ok(leaves)
    }
}

/// The error for a column writer that panicked, with the panic's message.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> anyhow::Error {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    anyhow!("a Parquet column writer panicked: {message}")
}
