//! Arrow data across the C data and C stream interfaces, as PyCapsules: schemas, batches and
//! streams out to Python; a stream in from any object with `__arrow_c_stream__` (for writing).

use crate::errors::{to_py, to_py_msg, Stop};
use crate::stream_in::StreamIn;
use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use std::ffi::CStr;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A C interface struct (`FFI_ArrowSchema`, `FFI_ArrowArray`, `FFI_ArrowArrayStream`: arrow
/// declares each `Send`, as the specification lets a consumer release them on any thread)
/// moved into a capsule.
fn capsule<'py, T: 'static + Send>(
    py: Python<'py>,
    value: T,
    name: &'static CStr,
) -> PyResult<Bound<'py, PyAny>> {
    // The capsule's pointer is the boxed value: a consumer moves the struct out (setting its
    // `release` to null), and the capsule's destructor drops what is left (releasing the data
    // if nobody took it).
    Ok(PyCapsule::new_with_value(py, value, name)?.into_any())
}

/// An `arrow_schema` capsule of `schema`.
pub(crate) fn schema_capsule<'py>(
    py: Python<'py>,
    schema: &SchemaRef,
) -> PyResult<Bound<'py, PyAny>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(arrow_to_py)?;
    capsule(py, ffi, c"arrow_schema")
}

/// An `arrow_array_stream` capsule of `reader`.
pub(crate) fn stream_capsule<'py>(
    py: Python<'py>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'py, PyAny>> {
    capsule(py, FFI_ArrowArrayStream::new(reader), c"arrow_array_stream")
}

/// The value behind a mutex that only moves values in and out (so a panic while it was held
/// left nothing half-done: the poison is ignored).
pub(crate) fn slot<T>(m: &Mutex<Option<T>>) -> std::sync::MutexGuard<'_, Option<T>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn arrow_to_py(e: ArrowError) -> PyErr {
    to_py_msg("AvrowError", &e.to_string())
}

/// One record batch, for `pyarrow.record_batch(...)` (`__arrow_c_array__`).
#[pyclass(module = "avrow._avrow", frozen)]
pub(crate) struct Batch(RecordBatch);

impl Batch {
    pub(crate) fn new(batch: RecordBatch) -> Self {
        Batch(batch)
    }
}

#[pymethods]
impl Batch {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let data = StructArray::from(self.0.clone()).into_data();
        let (array, _) = to_ffi(&data).map_err(arrow_to_py)?;
        // The batch's schema (its metadata included), not the bare struct type.
        let schema = schema_capsule(py, &self.0.schema())?;
        let array = capsule::<FFI_ArrowArray>(py, array, c"arrow_array")?;
        PyTuple::new(py, [schema, array])
    }

    /// The batch's rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.0.num_rows()
    }
}

/// Decoded batches, for `pyarrow.table(...)` (`__arrow_c_stream__`, once).
#[pyclass(module = "avrow._avrow", frozen)]
pub(crate) struct Batches {
    schema: SchemaRef,
    batches: Mutex<Option<Vec<RecordBatch>>>,
}

impl Batches {
    pub(crate) fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Batches {
            schema,
            batches: Mutex::new(Some(batches)),
        }
    }
}

#[pymethods]
impl Batches {
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        schema_capsule(py, &self.schema)
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = requested_schema;
        let batches = slot(&self.batches)
            .take()
            .ok_or_else(|| to_py_msg("AvrowError", "these batches were already exported"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.schema.clone());
        stream_capsule(py, Box::new(reader))
    }
}

/// A reader whose consumer may be a C stream: before each batch it takes the GIL to check
/// for signals (a pending Ctrl-C ends the stream with an error), then decodes with the GIL
/// released, also when the consumer called with it held (a file object source is read on
/// another thread, which needs the GIL).
pub(crate) struct SignalChecked<R> {
    schema: SchemaRef,
    inner: R,
    done: bool,
}

impl<R> SignalChecked<R> {
    pub(crate) fn new(schema: SchemaRef, inner: R) -> Self {
        SignalChecked {
            schema,
            inner,
            done: false,
        }
    }
}

impl<R: Iterator<Item = Result<RecordBatch, ArrowError>> + Send> Iterator for SignalChecked<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let inner = &mut self.inner;
        let next = Python::attach(|py| match py.check_signals() {
            Err(e) => Err(e),
            Ok(()) => Ok(py.detach(|| inner.next())),
        });
        let next = match next {
            Ok(next) => next,
            Err(e) => {
                self.done = true;
                return Some(Err(ArrowError::ExternalError(Box::new(
                    std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        format!("interrupted: {e}"),
                    ),
                ))));
            }
        };
        if matches!(next, None | Some(Err(_))) {
            self.done = true;
        }
        next
    }
}

impl<R: Iterator<Item = Result<RecordBatch, ArrowError>> + Send> RecordBatchReader
    for SignalChecked<R>
{
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The Arrow stream of `data` (`data.__arrow_c_stream__()`).
pub(crate) fn import_stream(data: &Bound<'_, PyAny>) -> PyResult<StreamIn> {
    if !data.hasattr("__arrow_c_stream__")? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "data must be an Arrow table, batch or stream (an object with __arrow_c_stream__), \
             not {}",
            data.get_type().name()?
        )));
    }
    let capsule = data.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule is named `arrow_array_stream`, so by the PyCapsule interface its
    // pointer is a valid `ArrowArrayStream`; `from_raw` moves the struct out and marks the
    // original released, so the capsule's destructor will not release it again.
    unsafe { StreamIn::from_raw(ptr.as_ptr().cast()) }.map_err(arrow_to_py)
}

/// Write `stream` with `builder` to a temporary file beside `path`, renamed to `path` once
/// complete (removed on error), synced to disk before the rename if `fsync`: the rule of
/// [`avrow::output::output_target`] (a symbolic link's file replaced, the link kept; the
/// replaced file's permissions kept; a named pipe or character device written in place).
/// The GIL is released but between batches. Returns the rows.
pub(crate) fn write_file(
    py: Python<'_>,
    stream: StreamIn,
    builder: avrow::WriterBuilder,
    path: &Path,
    fsync: bool,
) -> PyResult<u64> {
    let io = |e: std::io::Error, file: &Path| avrow::Error::Io {
        file: file.display().to_string(),
        source: e,
    };
    let (path, permissions) =
        match avrow::output::output_target(path).map_err(|e| to_py(io(e, path)))? {
            avrow::output::OutputTarget::Replace { path, permissions } => (path, permissions),
            avrow::output::OutputTarget::InPlace(path) => {
                return write_in_place(py, stream, builder, &path)
            }
        };
    let path = path.as_path();
    let name = path.file_name().ok_or_else(|| {
        to_py(avrow::Error::InvalidArgument(format!(
            "{} is not a file name",
            path.display()
        )))
    })?;
    // A name no other writer uses: the process, a per-process counter, and `create_new` (a
    // stale file of an earlier process with the same pid is never truncated or renamed).
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_file_name(format!(
        ".{}.avrow-{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let result = py.detach(|| {
        // Removes the temporary file unless it was renamed: on errors and on panics alike.
        let mut guard = TempFile(Some(tmp.as_path()));
        (|| -> Result<u64, Stop> {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                // (Named as the destination: the temporary name is ours, not the caller's.)
                .map_err(|e| io(e, path))?;
            let (rows, mut out) = write_stream(stream, builder, file)?;
            out.flush().map_err(|e| io(e, &tmp))?;
            let file = out.into_inner().map_err(|e| io(e.into_error(), &tmp))?;
            if let Some(permissions) = permissions {
                file.set_permissions(permissions).map_err(|e| io(e, &tmp))?;
            }
            // (After the mode: the sync makes both durable.)
            if fsync {
                file.sync_all().map_err(|e| io(e, &tmp))?;
            }
            std::fs::rename(&tmp, path).map_err(|e| io(e, path))?;
            guard.0 = None;
            Ok(rows)
        })()
    });
    result.map_err(PyErr::from)
}

/// [`write_file`] into a named pipe or character device, opened for writing: no temporary
/// file, nothing to rename or sync.
fn write_in_place(
    py: Python<'_>,
    stream: StreamIn,
    builder: avrow::WriterBuilder,
    path: &Path,
) -> PyResult<u64> {
    let io = |e: std::io::Error| avrow::Error::Io {
        file: path.display().to_string(),
        source: e,
    };
    let result = py.detach(|| -> Result<u64, Stop> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(io)?;
        let (rows, mut out) = write_stream(stream, builder, file)?;
        out.flush().map_err(io)?;
        Ok(rows)
    });
    result.map_err(PyErr::from)
}

/// Every batch of `stream` written to `file` (buffered) by a writer from `builder`, with
/// Ctrl-C checked between batches: the rows and the buffered file, to flush.
fn write_stream(
    stream: StreamIn,
    builder: avrow::WriterBuilder,
    file: std::fs::File,
) -> Result<(u64, std::io::BufWriter<std::fs::File>), Stop> {
    let mut w = builder.build(std::io::BufWriter::with_capacity(1 << 20, file))?;
    for batch in stream {
        let batch = batch
            .map_err(|e| avrow::Error::InvalidArgument(format!("reading the Arrow stream: {e}")))?;
        w.write(&batch)?;
        Python::attach(|py| py.check_signals()).map_err(Stop::Python)?;
    }
    let rows = w.rows();
    Ok((rows, w.finish()?))
}

/// A temporary file removed when dropped, unless taken out (`.0 = None`) once renamed.
struct TempFile<'a>(Option<&'a Path>);

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if let Some(path) = self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
