//! CSV output: a header line, flat columns as arrow's CSV writer formats them, nested columns
//! (records, arrays, maps) as JSON text; a union column holds its value, strings unquoted and
//! nested values as JSON text; uuids in their text form (`8-4-4-4-12`).

use super::json::{is_uuid, to_json_text, uuid_strings};
use super::BatchWriter;
use crate::output::Out;
use anyhow::Result;
use arrow::array::{Array, AsArray, StringBuilder};
use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use std::io::Write;
use std::sync::Arc;

/// A top-level union column holds scalars of several types: a value whose JSON text is a
/// string is written as the string itself (like a string column), other scalars (numbers,
/// booleans) are already written as they would be in their own column; records, arrays and
/// maps stay JSON text.
fn unquote_strings(text: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let text = text.as_string::<i32>();
    let mut builder = StringBuilder::with_capacity(text.len(), text.value_data().len());
    for value in text.iter() {
        match value {
            Some(v) if v.starts_with('"') => {
                let s: String = serde_json::from_str(v)
                    .map_err(|e| ArrowError::JsonError(format!("invalid JSON string: {e}")))?;
                builder.append_value(s);
            }
            other => builder.append_option(other),
        }
    }
    Ok(Arc::new(builder.finish()))
}

/// CSV with a header line.
pub struct CsvWriter {
    writer: arrow::csv::Writer<Out>,
    /// The schema written: nested columns replaced by `Utf8` (their JSON text).
    schema: SchemaRef,
    /// Which columns are nested (written as JSON text) or uuids (as their text form).
    nested: Vec<bool>,
    /// Which columns are uuids.
    uuid: Vec<bool>,
    /// Whether anything was written (the header goes with the first batch).
    started: bool,
}

impl CsvWriter {
    /// Starts CSV output for batches of `schema`.
    pub fn new(out: Out, schema: SchemaRef) -> Self {
        let nested: Vec<bool> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().is_nested() || is_uuid(f))
            .collect();
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .zip(&nested)
            .map(|(f, &nested)| {
                if nested {
                    Field::new(f.name(), DataType::Utf8, true)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect();
        let uuid = schema.fields().iter().map(|f| is_uuid(f)).collect();
        CsvWriter {
            uuid,
            writer: arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out),
            schema: Arc::new(Schema::new(fields)),
            nested,
            started: false,
        }
    }
}

impl BatchWriter for CsvWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.started = true;
        if !self.nested.contains(&true) {
            return Ok(self.writer.write(batch)?);
        }
        let columns = batch
            .columns()
            .iter()
            .zip(batch.schema().fields())
            .zip(self.nested.iter().zip(&self.uuid))
            .map(|((column, field), (&nested, &uuid))| {
                if uuid {
                    Ok(uuid_strings(column))
                } else if nested {
                    let text = to_json_text(field, column)?;
                    if matches!(field.data_type(), DataType::Union(..)) {
                        unquote_strings(&text)
                    } else {
                        Ok(text)
                    }
                } else {
                    Ok(column.clone())
                }
            })
            .collect::<Result<Vec<ArrayRef>, ArrowError>>()?;
        let flat = RecordBatch::try_new(self.schema.clone(), columns)?;
        Ok(self.writer.write(&flat)?)
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        if !self.started {
            // No rows: still write the header line.
            self.writer
                .write(&RecordBatch::new_empty(self.schema.clone()))?;
        }
        let mut out = self.writer.into_inner();
        out.flush()?;
        Ok(out)
    }
}
