//! The `avrow._avrow` extension module: the Rust half of the `avrow` Python package (the
//! Python half, in `avrow/`, normalises arguments, expands globs and wraps the results in
//! pyarrow types).
//!
//! Arrow data crosses into Python through the Arrow C data and C stream interfaces, as
//! PyCapsules (`__arrow_c_schema__`, `__arrow_c_array__`, `__arrow_c_stream__`): no copies.
//! Decoding runs with the GIL released, on avrow's threads; between batches the GIL is taken
//! back to check for signals, so Ctrl-C stops a read. Errors become the `avrow.errors`
//! classes with the file, block, offset, record and field path of the Rust error.

mod errors;
mod export;
mod source;
mod stream_in;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use errors::{to_py, to_py_msg, Stop};
use export::{stream_capsule, Batch, Batches, SignalChecked};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use source::{to_py_from, RaisedSlot, Source};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use avrow::parquet_compat::Mapping;

/// Reading options, as the Python keyword arguments give them.
#[derive(Default)]
struct Options {
    columns: Option<Vec<String>>,
    batch_size: Option<usize>,
    threads: Option<usize>,
    reader_schema: Option<String>,
    max_recursion_depth: Option<usize>,
    max_block_size: Option<usize>,
    utf8_view: bool,
    skip_bad_blocks: bool,
}

impl Options {
    fn builder(&self) -> PyResult<avrow::ReaderBuilder> {
        if self.batch_size == Some(0) {
            return Err(to_py(avrow::Error::InvalidArgument(
                "batch_size must be at least 1".into(),
            )));
        }
        let mut b = avrow::ReaderBuilder::new()
            .with_utf8_view(self.utf8_view)
            .with_skip_bad_blocks(self.skip_bad_blocks);
        if let Some(columns) = &self.columns {
            b = b.with_projection(columns.iter().map(String::as_str));
        }
        if let Some(n) = self.batch_size {
            b = b.with_batch_size(n);
        }
        if let Some(n) = self.threads {
            b = b.with_threads(n);
        }
        if let Some(d) = self.max_recursion_depth {
            b = b.with_max_recursion_depth(d);
        }
        if let Some(n) = self.max_block_size {
            b = b.with_max_block_size(n);
        }
        if let Some(json) = &self.reader_schema {
            b = b.with_reader_schema(parse_schema(json, "<reader schema>")?);
        }
        Ok(b)
    }
}

/// A column `parquet_compatible=True` cannot map (a union of only `null`, an interval
/// Parquet's `INTERVAL` cannot hold).
fn unmappable(e: avrow::parquet_compat::ParquetMappingError) -> PyErr {
    to_py_msg("UnsupportedError", &e.to_string())
}

/// An Avro schema given as an argument (`what` names it in the error).
fn parse_schema(json: &str, what: &str) -> PyResult<avrow::Schema> {
    avrow::Schema::parse(json).map_err(|e| {
        to_py(avrow::Error::Schema {
            file: what.into(),
            source: e,
        })
    })
}

/// An open Avro source yielding record batches (`avrow.Reader` wraps it).
#[pyclass(module = "avrow._avrow", frozen)]
struct Reader {
    /// Taken out while a batch decodes (with the GIL released) and for good by
    /// `__arrow_c_stream__`.
    inner: Mutex<Option<avrow::Reader>>,
    /// With `parquet_compatible=True`: every batch mapped (`avrow::parquet_compat`), and
    /// `schema` the mapped one.
    mapping: Option<Arc<Mapping>>,
    schema: SchemaRef,
    /// Set by `close`: a batch decoding on another thread then does not put the reader back.
    closed: AtomicBool,
    /// A file object's exceptions (for a file-object source).
    raised: Option<RaisedSlot>,
}

impl Reader {
    fn take(&self) -> PyResult<avrow::Reader> {
        export::slot(&self.inner).take().ok_or_else(|| {
            to_py_msg(
                "AvrowError",
                "this reader has been handed to an Arrow stream consumer, is in use by \
                 another thread, or is closed",
            )
        })
    }

    fn put_back(&self, r: avrow::Reader) {
        let mut slot = export::slot(&self.inner);
        if !self.closed.load(Ordering::Acquire) {
            *slot = Some(r);
        }
    }

    /// The next batch, decoded with the GIL released.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<RecordBatch>> {
        let mut r = self.take()?;
        let next = py.detach(|| r.next());
        self.put_back(r);
        let next = next
            .transpose()
            .map_err(|e| to_py_from(e, self.raised.as_ref()))?;
        match (&self.mapping, next) {
            (Some(mapping), Some(batch)) => mapping.apply(&batch).map(Some).map_err(unmappable),
            (_, next) => Ok(next),
        }
    }
}

#[pymethods]
impl Reader {
    /// The Arrow schema of the batches, as an `arrow_schema` PyCapsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        export::schema_capsule(py, &self.schema)
    }

    /// The next batch (`None` at the end) as an object with `__arrow_c_array__`.
    fn read_next_batch(&self, py: Python<'_>) -> PyResult<Option<Batch>> {
        Ok(self.next_batch(py)?.map(Batch::new))
    }

    /// Every remaining batch, decoded with the GIL released and signals checked between
    /// batches, as an object with `__arrow_c_stream__` (for `pyarrow.table`).
    fn read_all(&self, py: Python<'_>) -> PyResult<Batches> {
        let mut batches = Vec::new();
        while let Some(b) = self.next_batch(py)? {
            batches.push(b);
            py.check_signals()?;
        }
        Ok(Batches::new(self.schema.clone(), batches))
    }

    /// The remaining batches as an Arrow C stream (an `arrow_array_stream` PyCapsule); the
    /// reader is used up. Decoding errors reach the consumer as the stream's error message.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // A requested schema is a request, not a demand: the batches keep avrow's types.
        let _ = requested_schema;
        let reader = self.take()?;
        match &self.mapping {
            None => stream_capsule(
                py,
                Box::new(SignalChecked::new(self.schema.clone(), reader.into_arrow())),
            ),
            Some(mapping) => {
                let mapping = Arc::clone(mapping);
                let mapped = reader.into_arrow().map(move |batch| {
                    batch.and_then(|b| {
                        mapping
                            .apply(&b)
                            .map_err(|e| arrow_schema::ArrowError::ExternalError(Box::new(e)))
                    })
                });
                stream_capsule(
                    py,
                    Box::new(SignalChecked::new(self.schema.clone(), mapped)),
                )
            }
        }
    }

    /// Stop reading and release the file (also what garbage collection does).
    fn close(&self) {
        let mut slot = export::slot(&self.inner);
        self.closed.store(true, Ordering::Release);
        slot.take();
    }

    /// The blocks skipped since the last call (with `skip_bad_blocks`), as dicts of
    /// `file`, `file_index`, `block`, `start`, `end`, `records` and `error` (the
    /// `avrow.errors` exception the block raised).
    fn take_skipped<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let skipped = match export::slot(&self.inner).as_mut() {
            Some(r) => r.take_skipped(),
            None => Vec::new(),
        };
        skipped
            .into_iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("file", s.file)?;
                d.set_item("file_index", s.file_index)?;
                d.set_item("block", s.block)?;
                d.set_item("start", s.range.start)?;
                d.set_item("end", s.range.end)?;
                d.set_item("records", s.records)?;
                d.set_item("error", to_py(s.error).into_value(py))?;
                Ok(d)
            })
            .collect()
    }
}

#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (source, columns=None, batch_size=None, threads=None, reader_schema=None, max_recursion_depth=None, utf8_view=false, skip_bad_blocks=false, parquet_compatible=false, max_block_size=None))]
fn open(
    py: Python<'_>,
    source: Bound<'_, PyAny>,
    columns: Option<Vec<String>>,
    batch_size: Option<usize>,
    threads: Option<usize>,
    reader_schema: Option<String>,
    max_recursion_depth: Option<usize>,
    utf8_view: bool,
    skip_bad_blocks: bool,
    parquet_compatible: bool,
    max_block_size: Option<usize>,
) -> PyResult<Reader> {
    let options = Options {
        columns,
        batch_size,
        threads,
        reader_schema,
        max_recursion_depth,
        max_block_size,
        utf8_view,
        skip_bad_blocks,
    };
    let builder = options.builder()?;
    let source = Source::extract(&source)?;
    let raised = source.raised();
    let reader = py
        .detach(|| source.open(builder))
        .map_err(|e| to_py_from(e, raised.as_ref()))?;
    let mapping = if parquet_compatible {
        Some(Arc::new(
            Mapping::new(&reader.schema()).map_err(unmappable)?,
        ))
    } else {
        None
    };
    Ok(Reader {
        schema: mapping
            .as_ref()
            .map_or_else(|| reader.schema(), |m| m.schema.clone()),
        mapping,
        inner: Mutex::new(Some(reader)),
        closed: AtomicBool::new(false),
        raised,
    })
}

/// The writer schema of the file as Avro JSON; of several files, the schema they are read as
/// together (merged where their writer schemas differ).
#[pyfunction]
fn read_schema(py: Python<'_>, source: Bound<'_, PyAny>) -> PyResult<String> {
    let source = Source::extract(&source)?;
    if matches!(&source, Source::Paths(paths) if paths.len() > 1) {
        let reader = py
            .detach(|| source.open(avrow::ReaderBuilder::new().with_threads(1)))
            .map_err(to_py)?;
        return Ok(reader.avro_schema().json().to_string());
    }
    let raised = source.raised();
    let blocks = py
        .detach(|| source.blocks())
        .map_err(|e| to_py_from(e, raised.as_ref()))?;
    Ok(blocks.header().schema().json().to_string())
}

/// What the header and the block headers say: codec, sync marker, blocks, records, sizes,
/// metadata (values as bytes).
#[pyfunction]
fn read_info<'py>(py: Python<'py>, source: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let source = Source::extract(&source)?;
    // Codec, sync marker, metadata and header are each file's own: several files have no
    // one answer (and counting only the first one's blocks misled).
    if let Source::Paths(paths) = &source {
        if paths.len() > 1 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "read_info describes one file; {} files were given ({}, ...): call it for each",
                paths.len(),
                paths[0]
            )));
        }
    }
    let name = source.name();
    let raised = source.raised();
    let blocks = py
        .detach(|| source.blocks())
        .map_err(|e| to_py_from(e, raised.as_ref()))?;
    let header = blocks.header().clone();
    let (count, records, compressed) = py
        .detach(|| {
            let mut totals = (0u64, 0u64, 0u64);
            for block in blocks {
                let block = block?;
                totals.0 += 1;
                // Counts are the file's word: a hostile file can declare more than u64 holds.
                totals.1 = totals.1.checked_add(block.record_count()).ok_or_else(|| {
                    Stop::Python(to_py_msg(
                        "InvalidFileError",
                        &format!(
                            "{name}: block {}: the blocks declare more than {} records in all",
                            totals.0 - 1,
                            u64::MAX
                        ),
                    ))
                })?;
                totals.2 += block.data().len() as u64;
                if totals.0.is_multiple_of(1024) {
                    Python::attach(|py| py.check_signals()).map_err(Stop::Python)?;
                }
            }
            Ok::<_, Stop>(totals)
        })
        .map_err(|e| match e {
            Stop::Avrow(e) => to_py_from(e, raised.as_ref()),
            Stop::Python(e) => e,
        })?;
    let info = PyDict::new(py);
    info.set_item("codec", header.codec().name())?;
    let sync: String = header.sync().iter().map(|b| format!("{b:02x}")).collect();
    info.set_item("sync_marker", sync)?;
    info.set_item("blocks", count)?;
    info.set_item("records", records)?;
    info.set_item("compressed_bytes", compressed)?;
    info.set_item("header_bytes", header.len())?;
    let metadata = PyDict::new(py);
    let mut keys: Vec<_> = header.metadata().keys().collect();
    keys.sort();
    for k in keys {
        metadata.set_item(k, PyBytes::new(py, &header.metadata()[k]))?;
    }
    info.set_item("metadata", metadata)?;
    info.set_item("schema", header.schema().json())?;
    Ok(info)
}

/// Write the batches of an Arrow stream (any object with `__arrow_c_stream__`) to `path` as
/// an Avro container file: into a temporary file beside it, renamed on success (synced to
/// disk first if `fsync`).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (data, path, codec="deflate", level=None, block_size=None, threads=None, avro_schema=None, metadata=None, fsync=false, record_name=None))]
fn write(
    py: Python<'_>,
    data: Bound<'_, PyAny>,
    path: std::path::PathBuf,
    codec: &str,
    level: Option<i32>,
    block_size: Option<usize>,
    threads: Option<usize>,
    avro_schema: Option<String>,
    metadata: Option<std::collections::HashMap<String, Vec<u8>>>,
    fsync: bool,
    record_name: Option<String>,
) -> PyResult<u64> {
    let codec = match codec {
        "none" | "null" => avrow::Codec::Null,
        other => avrow::Codec::from_name(if other == "zstd" { "zstandard" } else { other })
            .ok_or_else(|| {
                to_py(avrow::Error::InvalidArgument(format!(
                    "unknown codec {other:?} (none, deflate, snappy, zstd, bzip2, xz)"
                )))
            })?,
    };
    let stream = export::import_stream(&data)?;
    let schema = stream.schema();
    let mut b = avrow::WriterBuilder::new(schema).with_codec(codec);
    if let Some(l) = level {
        b = b.with_level(l);
    }
    if let Some(n) = block_size {
        b = b.with_block_size(n);
    }
    // `None` is every core, as documented (the Rust builder's own default is one thread).
    b = b.with_threads(threads.unwrap_or(0));
    if let Some(json) = avro_schema {
        b = b.with_avro_schema(parse_schema(&json, "<avro schema>")?);
    }
    for (k, v) in metadata.unwrap_or_default() {
        b = b.with_metadata(k, v);
    }
    if let Some(name) = record_name {
        b = b.with_record_name(name);
    }
    export::write_file(py, stream, b, &path, fsync)
}

/// The varint kernel and bulk path this process uses (what `avrow --version` reports).
#[pyfunction]
fn build_info() -> String {
    avrow::avrow_engine::varint::describe()
}

#[pymodule]
fn _avrow(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Reader>()?;
    m.add_class::<Batch>()?;
    m.add_class::<Batches>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(read_schema, m)?)?;
    m.add_function(wrap_pyfunction!(read_info, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    Ok(())
}
