//! What a Python `source` argument names: files (the Python side has expanded globs and
//! path-like objects into a list of paths), bytes in memory, or a binary file-like object read
//! through its `read` method.

use crate::errors::to_py_msg;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList};
use std::io::{self, Read};
use std::sync::{Arc, Mutex};

/// The exception a file object's `read` raised, kept so that the call that read it raises that
/// exception itself (a `KeyboardInterrupt` stays one), not avrow's I/O error about it.
pub(crate) type RaisedSlot = Arc<Mutex<Option<PyErr>>>;

pub(crate) enum Source {
    Paths(Vec<String>),
    Bytes(bytes::Bytes),
    Stream(PyRead),
}

/// A Python `bytes` object lent to the reader without a copy (a copy cost a tenth of reading
/// a 16 MB file from memory, and doubled the memory it takes): `bytes` is immutable, and its
/// buffer lives, unmoved, as long as the object, which this holds. The reader may drop it on
/// a worker thread, without the GIL: pyo3 then releases the reference when the GIL is next
/// taken.
struct Lent {
    _object: Py<PyBytes>,
    data: *const u8,
    len: usize,
}

impl Lent {
    fn new(b: &Bound<'_, PyBytes>) -> Self {
        let data = b.as_bytes();
        Lent {
            data: data.as_ptr(),
            len: data.len(),
            _object: b.clone().unbind(),
        }
    }
}

// SAFETY: the pointer is into the buffer of a `bytes` object this value keeps alive; the
// buffer is never written (bytes are immutable) nor moved or freed while the object lives, so
// reading it from any thread, without the GIL, is sound. `Py<PyBytes>` is itself `Send`.
unsafe impl Send for Lent {}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `data` and `len` are the buffer of the `bytes` object held in `_object`,
        // which is alive, immutable and unmoved for as long as `self` is (see `Send` above).
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl Source {
    pub(crate) fn extract(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        if let Ok(list) = obj.cast::<PyList>() {
            let paths: Vec<String> = list.extract()?;
            if paths.is_empty() {
                return Err(to_py_msg("AvrowIOError", "no files to read"));
            }
            return Ok(Source::Paths(paths));
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Source::Bytes(bytes::Bytes::from_owner(Lent::new(b))));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            return Ok(Source::Bytes(bytes::Bytes::from(b.to_vec())));
        }
        if obj.hasattr("read")? {
            return Ok(Source::Stream(PyRead(
                obj.clone().unbind(),
                RaisedSlot::default(),
            )));
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "source must be a path, a list of paths, bytes or a binary file-like object, not {}",
            obj.get_type().name()?
        )))
    }

    pub(crate) fn open(self, builder: avrow::ReaderBuilder) -> avrow::Result<avrow::Reader> {
        match self {
            Source::Paths(paths) if paths.len() == 1 => builder.open(&paths[0]),
            Source::Paths(paths) => builder.open_many(paths),
            Source::Bytes(b) => builder.read_bytes(b),
            Source::Stream(s) => builder.read_stream(s),
        }
    }

    /// Where a file object's exceptions are kept (`None` for other sources).
    pub(crate) fn raised(&self) -> Option<RaisedSlot> {
        match self {
            Source::Stream(s) => Some(Arc::clone(&s.1)),
            _ => None,
        }
    }

    /// The source's name in messages: its (first) path, `<bytes>` or `<stream>`.
    pub(crate) fn name(&self) -> String {
        match self {
            Source::Paths(paths) => paths[0].clone(),
            Source::Bytes(_) => "<bytes>".into(),
            Source::Stream(_) => "<stream>".into(),
        }
    }

    /// The blocks of the source (of its first file).
    pub(crate) fn blocks(self) -> avrow::Result<avrow::BlockReader> {
        match self {
            Source::Paths(paths) => avrow::BlockReader::open(&paths[0]),
            Source::Bytes(b) => avrow::BlockReader::from_bytes(b),
            Source::Stream(s) => avrow::BlockReader::from_stream(s),
        }
    }
}

/// A Python binary file-like object as [`Read`]: each read takes the GIL and calls
/// `read(n)`, which must return `bytes` (or a bytes-like object) of at most `n` bytes.
pub(crate) struct PyRead(Py<PyAny>, RaisedSlot);

impl Read for PyRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .0
                .bind(py)
                .call_method1("read", (buf.len(),))
                .map_err(|e| {
                    let text = format!("the file object's read() raised {e}");
                    *self.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    io::Error::other(text)
                })?;
            let n = if let Ok(b) = data.cast::<PyBytes>() {
                let b = b.as_bytes();
                copy(buf, b)?
            } else {
                let v: Vec<u8> = data.extract().map_err(|_| {
                    io::Error::other("the file object's read() returned something other than bytes")
                })?;
                copy(buf, &v)?
            };
            Ok(n)
        })
    }
}

fn copy(buf: &mut [u8], b: &[u8]) -> io::Result<usize> {
    if b.len() > buf.len() {
        return Err(io::Error::other(format!(
            "the file object's read({}) returned {} bytes",
            buf.len(),
            b.len()
        )));
    }
    buf[..b.len()].copy_from_slice(b);
    Ok(b.len())
}

/// The Python exception for `e`: the one a file object's `read` raised (taken from `raised`):
/// `e` is then its consequence; else avrow's.
pub(crate) fn to_py_from(e: avrow::Error, raised: Option<&RaisedSlot>) -> PyErr {
    let kept = raised.and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take());
    match kept {
        Some(original) => original,
        None => crate::errors::to_py(e),
    }
}
