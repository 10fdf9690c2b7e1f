//! CSV output: a header line, flat columns as arrow's CSV writer formats them, nested columns
//! (records, arrays, maps) as JSON text; a union column holds its value, strings unquoted and
//! nested values as JSON text; uuids in their text form (`8-4-4-4-12`); dates and timestamps
//! past the calendar as their raw count.

use super::json::{is_uuid, to_json_text, uuid_strings};
use super::temporal;
use super::BatchWriter;
use crate::output::Out;
use anyhow::Result;
use arrow::array::{Array, AsArray, StringBuilder};
use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::fmt::Write as _;
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

/// CSV with a header line. Each value is formatted as arrow's CSV writer formats it (the same
/// options); the fields are written here so that a null (nothing) and an empty string (`""`)
/// differ, as DuckDB writes them (arrow's writer wrote both as nothing, which every reader then
/// reads back as null). In a one-column file a null is `""` too: an empty line is no row.
pub struct CsvWriter {
    out: Out,
    /// The schema written: nested columns replaced by `Utf8` (their JSON text).
    schema: SchemaRef,
    /// Which columns are nested (written as JSON text) or uuids (as their text form).
    nested: Vec<bool>,
    /// Which columns are uuids.
    uuid: Vec<bool>,
    /// Whether the header line is written.
    started: bool,
    /// A value's text, reused.
    text: String,
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
            out,
            uuid,
            schema: Arc::new(Schema::new(fields)),
            nested,
            started: false,
            text: String::new(),
        }
    }

    fn header(&mut self) -> Result<()> {
        if !self.started {
            self.started = true;
            let names: Vec<&str> = self
                .schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            let mut line = Vec::new();
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                field(&mut line, name, names.len() == 1);
            }
            line.push(b'\n');
            self.out.write_all(&line)?;
        }
        Ok(())
    }

    /// The batch's columns as written: nested ones as JSON text, uuids and dates past the
    /// calendar as text.
    fn flat_columns(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>, ArrowError> {
        batch
            .columns()
            .iter()
            .zip(batch.schema().fields())
            .zip(self.nested.iter().zip(&self.uuid))
            .map(|((column, field), (&nested, &uuid))| {
                if uuid {
                    Ok(uuid_strings(column))
                } else if temporal::has_unshowable(column.as_ref()) {
                    temporal::as_text(column)
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
            .collect()
    }
}

/// Append one CSV field: quoted (its quotes doubled) where it holds a comma, a quote or a line
/// break, or is an empty value (or the only field of its line, empty for a null: a blank
/// line would be no row to a reader).
fn field(line: &mut Vec<u8>, text: &str, quote_empty: bool) {
    let quote = if text.is_empty() {
        quote_empty
    } else {
        text.bytes()
            .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    };
    if !quote {
        line.extend_from_slice(text.as_bytes());
        return;
    }
    line.push(b'"');
    for b in text.bytes() {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

impl BatchWriter for CsvWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.header()?;
        let columns = self.flat_columns(batch)?;
        // As arrow's CSV writer formats values (its options: the defaults, nulls empty).
        let options = FormatOptions::default().with_null("");
        let formatters = columns
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, ArrowError>>()?;
        // Logical nulls: a Null column, a dictionary of null values have no validity buffer.
        let nulls: Vec<_> = columns.iter().map(|c| c.logical_nulls()).collect();
        let only = columns.len() == 1;
        let mut line = Vec::with_capacity(1 << 16);
        for row in 0..batch.num_rows() {
            for (i, (formatter, nulls)) in formatters.iter().zip(&nulls).enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                    field(&mut line, "", only);
                    continue;
                }
                self.text.clear();
                write!(self.text, "{}", formatter.value(row)).map_err(|_| {
                    anyhow::anyhow!(
                        "CSV: column {}, row {row}: the value cannot be written as text",
                        self.schema.field(i).name()
                    )
                })?;
                field(&mut line, &self.text, true);
            }
            line.push(b'\n');
            if line.len() >= 1 << 16 {
                self.out.write_all(&line)?;
                line.clear();
            }
        }
        self.out.write_all(&line)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        // No rows: still the header line.
        self.header()?;
        self.out.flush()?;
        Ok(self.out)
    }
}
