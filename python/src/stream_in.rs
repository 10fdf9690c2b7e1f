//! Arrow streams in from Python (`__arrow_c_stream__`), for writing: [`StreamIn`] imports each
//! batch through the C stream interface with its nested arrays rebased ([`rebase`]) before
//! arrow builds the columns.
//!
//! Why not arrow's `ArrowArrayStreamReader`: in the C interface a struct's offset applies to
//! its children, which stay unsliced, and arrow 59's `StructArray::from` honours that by
//! slicing each child with `ArrayData::slice`; but for a child that is itself a struct, that
//! slice pushes the offset into the grandchildren *and* keeps it, so building the child slices
//! them again. A sliced table holding a struct inside a struct (or a fixed-size list or a
//! sparse union of structs) panicked there, or read rows further on when they existed: what
//! `table.slice(...)` of pyarrow, polars and DuckDB results gives.

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchOptions, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef, UnionMode};
use std::ffi::CStr;
use std::sync::Arc;

/// The batches of an imported C stream, each rebased before its columns are built.
pub(crate) struct StreamIn {
    /// The stream, owned: dropping it releases it.
    stream: FFI_ArrowArrayStream,
    schema: SchemaRef,
}

impl StreamIn {
    /// Import the stream `raw` points to, moving it out (the original is marked released).
    ///
    /// # Safety
    /// `raw` points to a valid `ArrowArrayStream` (the C stream interface's struct).
    pub(crate) unsafe fn from_raw(raw: *mut FFI_ArrowArrayStream) -> Result<Self, ArrowError> {
        // SAFETY: the caller's promise; `from_raw` moves the struct out and marks the
        // original released, so it is released once, when `stream` drops.
        let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(raw) };
        if stream.release.is_none() {
            return Err(ArrowError::CDataInterface(
                "the Arrow stream is already released".into(),
            ));
        }
        let get_schema = stream.get_schema.ok_or_else(|| {
            ArrowError::CDataInterface("the Arrow stream has no get_schema callback".into())
        })?;
        let mut schema = FFI_ArrowSchema::empty();
        // SAFETY: a live stream's callback, called with the stream and an empty schema for it
        // to fill, as the C stream interface specifies.
        let code = unsafe { get_schema(&mut stream, &mut schema) };
        if code != 0 {
            return Err(last_error(&mut stream, code, "its schema"));
        }
        let schema = Arc::new(Schema::try_from(&schema)?);
        Ok(StreamIn { stream, schema })
    }

    /// The stream's schema.
    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The stream's own message for a failed call (`code`, an errno value), or the code.
fn last_error(stream: &mut FFI_ArrowArrayStream, code: i32, what: &str) -> ArrowError {
    let message = stream.get_last_error.and_then(|get_last_error| {
        // SAFETY: a live stream's callback; it returns null or a NUL-terminated string valid
        // until the next call on the stream, copied out at once.
        let text = unsafe { get_last_error(stream) };
        if text.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated and alive until the next call, as above.
        let text = unsafe { CStr::from_ptr(text) };
        Some(text.to_string_lossy().into_owned())
    });
    ArrowError::CDataInterface(match message {
        Some(m) => format!("the Arrow stream failed to give {what}: {m}"),
        None => format!("the Arrow stream failed to give {what} (error code {code})"),
    })
}

impl Iterator for StreamIn {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let Some(get_next) = self.stream.get_next else {
            return Some(Err(ArrowError::CDataInterface(
                "the Arrow stream has no get_next callback".into(),
            )));
        };
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: a live stream's callback, called with the stream and an empty array for it
        // to fill, as the C stream interface specifies.
        let code = unsafe { get_next(&mut self.stream, &mut array) };
        if code != 0 {
            return Some(Err(last_error(&mut self.stream, code, "a batch")));
        }
        if array.is_released() {
            return None; // the end of the stream
        }
        let fields = self.schema.fields().clone();
        // SAFETY: the array the stream just gave, of the stream's schema (a struct of its
        // fields), as the C stream interface specifies; imported as arrow's own reader does.
        let data = unsafe { from_ffi_and_data_type(array, DataType::Struct(fields)) };
        Some(data.and_then(|data| {
            let rows = data.len();
            let data = if needs_rebase(&data) {
                rebase(&data, 0, rows)?
            } else {
                data
            };
            RecordBatch::try_new_with_options(
                self.schema.clone(),
                StructArray::from(data).into_parts().1,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )
        }))
    }
}

/// Arrays whose offset arrow's `From<ArrayData>` applies to their children by slicing them.
fn offset_scale(data_type: &DataType) -> Option<usize> {
    match data_type {
        DataType::Struct(_) | DataType::Union(_, UnionMode::Sparse) => Some(1),
        DataType::FixedSizeList(_, size) => usize::try_from(*size).ok(),
        _ => None,
    }
}

/// Whether any struct, fixed-size list or sparse union in `data` has an offset (only then is
/// a batch rebuilt: an unsliced table is imported as is).
fn needs_rebase(data: &ArrayData) -> bool {
    (data.offset() != 0 && offset_scale(data.data_type()).is_some())
        || data.child_data().iter().any(needs_rebase)
}

/// Values `start..start + len` of `data` (counted from its offset, which for a struct, a
/// fixed-size list or a sparse union applies to its children, as in the C interface), with
/// every struct, fixed-size list and sparse union in it at offset 0 and its children exactly
/// its window. Other arrays keep their own offsets (their children are reached through
/// offsets or keys), their children rebased whole.
fn rebase(data: &ArrayData, start: usize, len: usize) -> Result<ArrayData, ArrowError> {
    let invalid = || {
        ArrowError::InvalidArgumentError(format!(
            "an imported {} array of {} values has no values {start}..{start}+{len}",
            data.data_type(),
            data.len()
        ))
    };
    if start.checked_add(len).is_none_or(|end| end > data.len()) {
        return Err(invalid());
    }
    let Some(scale) = offset_scale(data.data_type()) else {
        if data.child_data().is_empty() {
            return Ok(data.slice(start, len));
        }
        let children = data
            .child_data()
            .iter()
            .map(|child| rebase(child, 0, child.len()))
            .collect::<Result<Vec<_>, _>>()?;
        let whole = data.clone().into_builder().child_data(children).build()?;
        return Ok(whole.slice(start, len));
    };
    let at = data.offset().checked_add(start).ok_or_else(invalid)?;
    let window = |n: usize| n.checked_mul(scale).ok_or_else(invalid);
    let (from, count) = (window(at)?, window(len)?);
    let children = data
        .child_data()
        .iter()
        .map(|child| rebase(child, from, count))
        .collect::<Result<Vec<_>, _>>()?;
    let mut builder = ArrayData::builder(data.data_type().clone())
        .len(len)
        .nulls(data.nulls().map(|nulls| nulls.slice(start, len)))
        .child_data(children);
    if matches!(data.data_type(), DataType::Union(..)) {
        // A sparse union's one buffer, its type ids (one byte each), from its offset.
        let type_ids = data.buffers().first().ok_or_else(invalid)?;
        if at.checked_add(len).is_none_or(|end| end > type_ids.len()) {
            return Err(invalid());
        }
        builder = builder.add_buffer(type_ids.slice_with_length(at, len));
    }
    builder.build()
}
