//! avrow's errors as Python exceptions: the classes of `avrow.errors` (defined in Python, so
//! that they can also derive from `OSError` or `ValueError`), each instance carrying the Rust
//! error's message and, where it has them, `file`, `block`, `offset` (of the block in the
//! file), `offset_in_block`, `record` and `field_path` (`column_path` and `row` for writing).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What stops work done with the GIL released: avrow's error, or a Python exception (a signal
/// seen between batches, a file object's own).
pub(crate) enum Stop {
    Avrow(avrow::Error),
    Python(PyErr),
}

impl From<avrow::Error> for Stop {
    fn from(e: avrow::Error) -> Self {
        Stop::Avrow(e)
    }
}

impl From<Stop> for PyErr {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Avrow(e) => to_py(e),
            Stop::Python(e) => e,
        }
    }
}

/// The Python exception for an avrow error.
pub(crate) fn to_py(e: avrow::Error) -> PyErr {
    let class = match &e {
        avrow::Error::Io { .. } => "AvrowIOError",
        avrow::Error::Header { .. } | avrow::Error::Block { .. } | avrow::Error::Decode { .. } => {
            "InvalidFileError"
        }
        avrow::Error::Plan {
            source: avrow::avrow_engine::PlanError::Internal(_),
            ..
        } => "InternalError",
        avrow::Error::Schema { .. } | avrow::Error::Plan { .. } => "SchemaError",
        avrow::Error::Encode { .. } => "EncodeError",
        avrow::Error::UnknownCodec { .. } => "UnsupportedError",
        avrow::Error::InvalidArgument(_)
        | avrow::Error::Kernel(_)
        | avrow::Error::SchemaMismatch { .. }
        | avrow::Error::SchemaMerge { .. }
        | avrow::Error::NotSeekable { .. }
        | avrow::Error::Level { .. }
        | avrow::Error::WriterFailed
        | avrow::Error::ThreadPool { .. } => "InvalidArgumentError",
        avrow::Error::Internal(_) => "InternalError",
        // (`avrow::Error` is non-exhaustive.)
        #[allow(unreachable_patterns)]
        _ => "AvrowError",
    };
    Python::attach(|py| {
        let attrs = PyDict::new(py);
        let set = |k: &str, v: Bound<'_, PyAny>| attrs.set_item(k, v);
        let _ = (|| -> PyResult<()> {
            if let Some(file) = e.file() {
                set("file", file.into_pyobject(py)?.into_any())?;
            }
            if let Some(block) = e.block() {
                set("block", block.into_pyobject(py)?.into_any())?;
            }
            match &e {
                avrow::Error::Header { offset, .. } | avrow::Error::Block { offset, .. } => {
                    set("offset", offset.into_pyobject(py)?.into_any())?;
                }
                avrow::Error::Decode { offset, source, .. } => {
                    set("offset", offset.into_pyobject(py)?.into_any())?;
                    set(
                        "offset_in_block",
                        source.offset().into_pyobject(py)?.into_any(),
                    )?;
                    if let Some(r) = source.record() {
                        set("record", r.into_pyobject(py)?.into_any())?;
                    }
                    set(
                        "field_path",
                        source.field_path().into_pyobject(py)?.into_any(),
                    )?;
                }
                avrow::Error::Encode { source } => {
                    set("column_path", source.path().into_pyobject(py)?.into_any())?;
                    set("row", source.row().into_pyobject(py)?.into_any())?;
                }
                _ => {}
            }
            Ok(())
        })();
        raise(py, class, &e.to_string(), Some(attrs))
    })
}

/// A Python exception of class `class` (in `avrow.errors`) with `message`.
pub(crate) fn to_py_msg(class: &str, message: &str) -> PyErr {
    Python::attach(|py| raise(py, class, message, None))
}

fn raise(py: Python<'_>, class: &str, message: &str, attrs: Option<Bound<'_, PyDict>>) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("avrow.errors")?.getattr(class)?;
        let exc = cls.call1((message,))?;
        if let Some(attrs) = attrs {
            for (k, v) in attrs.iter() {
                exc.setattr(k.cast::<pyo3::types::PyString>()?, v)?;
            }
        }
        Ok(PyErr::from_value(exc))
    })();
    // Without the Python half (`avrow.errors` not importable): a plain exception, same text.
    made.unwrap_or_else(|_| pyo3::exceptions::PyRuntimeError::new_err(message.to_string()))
}
