//! `avrow head FILE [-n N]`: the first rows as a table (arrow's pretty printer) or as NDJSON.
//! Decodes on one thread and stops after the blocks it needs.

use super::stdout;
use crate::config::HeadConfig;
use crate::inputs::ByteCounter;
use crate::writers::json;
use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::json::writer::LineDelimited;
use arrow::util::pretty::pretty_format_batches_with_schema;
use std::io::Write;
use std::sync::Arc;

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
        // As CSV shows them: uuids in their text form, dates and timestamps past the calendar
        // as their raw count (arrow's table printed 32 bare digits, and an error as the value).
        writeln!(out, "{}", table_text(schema, &batches)?)?;
    }
    out.flush()?;
    Ok(())
}

/// `batch` as the text a table shows: uuid, date and timestamp columns as CSV writes them,
/// and every value made safe for a terminal ([`for_terminal`]).
pub(super) fn shown_as_text(batch: &RecordBatch) -> Result<RecordBatch> {
    use crate::writers::temporal;
    use arrow::datatypes::{Field, Schema};
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let column = if json::is_uuid(field) {
            json::uuid_strings(column)
        } else if temporal::is_temporal(field.data_type()) {
            temporal::as_text(column)?
        } else if field.data_type().is_nested() && temporal::has_unshowable_within(column) {
            // (As JSON text, whose encoder writes those values as their count.)
            json::to_json_text(field, column)?
        } else {
            column.clone()
        };
        let column = for_terminal(&column)?;
        fields.push(Field::new(field.name(), column.data_type().clone(), true));
        columns.push(column);
    }
    // (The row count given: a record of no fields has rows and no columns to count them.)
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &options,
    )?)
}

/// `batches` (of `schema`) as a table of text for a terminal ([`shown_as_text`]); rows of
/// no columns (records with no fields) as their count, which a table of no columns cannot
/// show.
pub(super) fn table_text(schema: SchemaRef, batches: &[RecordBatch]) -> Result<String> {
    if schema.fields().is_empty() {
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let s = if rows == 1 { "" } else { "s" };
        return Ok(format!("({rows} row{s} of no columns)"));
    }
    let shown = batches
        .iter()
        .map(shown_as_text)
        .collect::<Result<Vec<_>>>()?;
    let schema = shown.first().map_or(schema, RecordBatch::schema);
    Ok(pretty_format_batches_with_schema(schema, &shown)?.to_string())
}

/// The most characters a table cell shows (a 5,000-character string made 5,000-wide lines).
const CELL_CHARS: usize = 80;

/// `column`'s values as arrow formats them, for a terminal: control characters escaped (`\n`,
/// `\t`, `\x1b`: an escape sequence in the data reached the terminal, a line break broke the
/// table), cut at [`CELL_CHARS`] with `…`, and an empty string shown as `""` (a null is blank).
fn for_terminal(column: &arrow::array::ArrayRef) -> Result<arrow::array::ArrayRef> {
    use arrow::array::{Array, StringBuilder};
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    use std::fmt::Write as _;
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(column.as_ref(), &options)?;
    let nulls = column.logical_nulls();
    let mut out = StringBuilder::with_capacity(column.len(), column.len() * 16);
    let (mut text, mut shown) = (String::new(), String::new());
    for i in 0..column.len() {
        if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            out.append_null();
            continue;
        }
        text.clear();
        write!(text, "{}", formatter.value(i))?;
        shown.clear();
        if text.is_empty() {
            shown.push_str("\"\"");
        }
        for (n, c) in text.chars().enumerate() {
            if n == CELL_CHARS {
                shown.push('…');
                break;
            }
            match c {
                '\n' => shown.push_str("\\n"),
                '\r' => shown.push_str("\\r"),
                '\t' => shown.push_str("\\t"),
                c if c.is_control() => write!(shown, "\\x{:02x}", c as u32)?,
                c => shown.push(c),
            }
        }
        out.append_value(&shown);
    }
    Ok(Arc::new(out.finish()))
}
