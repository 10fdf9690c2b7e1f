//! Running avrow: reader options, collecting batches, and checking a decode against the oracle.

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::oracle::{batch_rows, check_schema, diff_rows, Model, N};

// ---------------------------------------------------------------------------------------------
// avrow side
// ---------------------------------------------------------------------------------------------

/// Where avrow reads the bytes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// `read_bytes`
    Bytes,
    /// `read_stream` over a reader that hands out at most 7 bytes per call.
    Stream,
    /// `open` on a temporary file.
    Path,
}

/// Reader options of one decode.
#[derive(Clone, Debug)]
pub struct Opts {
    pub src: Src,
    pub batch_size: usize,
    pub projection: Option<Vec<String>>,
    pub max_depth: Option<usize>,
    pub utf8_view: bool,
    pub kernel: Option<avrow_engine::varint::KernelKind>,
    /// Decode threads (`with_threads`); `None` leaves avrow's default.
    pub threads: Option<usize>,
    /// `with_skip_bad_blocks`
    pub skip_bad_blocks: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            src: Src::Bytes,
            batch_size: 1024,
            projection: None,
            max_depth: None,
            utf8_view: false,
            kernel: None,
            threads: None,
            skip_bad_blocks: false,
        }
    }
}

impl Opts {
    pub fn batch(n: usize) -> Opts {
        Opts {
            batch_size: n,
            ..Opts::default()
        }
    }

    pub fn builder(&self) -> avrow::ReaderBuilder {
        let mut b = avrow::ReaderBuilder::new()
            .with_batch_size(self.batch_size)
            .with_utf8_view(self.utf8_view);
        if let Some(p) = &self.projection {
            b = b.with_projection(p.iter().map(String::as_str));
        }
        if let Some(d) = self.max_depth {
            b = b.with_max_recursion_depth(d);
        }
        if let Some(k) = self.kernel {
            b = b.with_varint_kernel(k);
        }
        if let Some(t) = self.threads {
            b = b.with_threads(t);
        }
        b.with_skip_bad_blocks(self.skip_bad_blocks)
    }
}

/// What one avrow decode produced.
pub struct Decoded {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    /// `reader.header().metadata()`
    pub metadata: std::collections::HashMap<String, Vec<u8>>,
}

impl Decoded {
    pub fn rows(&self) -> Vec<N> {
        self.batches.iter().flat_map(batch_rows).collect()
    }

    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// No test input has this many rows; more means a hostile count was believed.
pub const MAX_ROWS: usize = 2_000_000;

/// Decode `bytes` with avrow. Also checks the batch invariants every decode must keep: no batch
/// over the batch size, every batch with the reader's schema. A violation panics (a test failure).
pub fn read_avrow(bytes: &[u8], opts: &Opts) -> Result<Decoded, avrow::Error> {
    let reader = open(bytes, opts)?;
    let schema = reader.schema();
    let metadata = reader.header().metadata().clone();
    let mut batches = Vec::new();
    let mut rows = 0usize;
    for b in reader {
        let b = b?;
        rows += b.num_rows();
        assert!(
            rows <= MAX_ROWS,
            "avrow produced more than {MAX_ROWS} rows: an unbounded count was trusted"
        );
        assert!(
            b.num_rows() <= opts.batch_size,
            "batch of {} rows exceeds the batch size {}",
            b.num_rows(),
            opts.batch_size
        );
        assert_eq!(
            b.schema().fields(),
            schema.fields(),
            "a batch's schema differs from reader.schema()"
        );
        for (f, c) in b.schema().fields().iter().zip(b.columns()) {
            if let Err(e) = c.to_data().validate_full() {
                panic!("column {} is not a valid Arrow array: {e}", f.name());
            }
            check_nulls(f, c.as_ref(), None);
        }
        batches.push(b);
    }
    Ok(Decoded {
        schema,
        batches,
        metadata,
    })
}

/// A non-nullable field's array has no null that its parent does not also have (Arrow's
/// `validate_full` does not check nested nullability).
fn check_nulls(
    f: &arrow::datatypes::Field,
    a: &dyn arrow::array::Array,
    parent: Option<&arrow::buffer::NullBuffer>,
) {
    use arrow::array::AsArray;
    use arrow::datatypes::DataType;
    if !f.is_nullable() && !matches!(f.data_type(), DataType::Null | DataType::Union(..)) {
        if let Some(n) = a.logical_nulls() {
            for i in 0..a.len() {
                let parent_null = parent.is_some_and(|p| p.is_null(i));
                assert!(
                    n.is_valid(i) || parent_null,
                    "non-nullable field {} holds a null at {i}",
                    f.name()
                );
            }
        }
    }
    let own = a.logical_nulls();
    let combined = arrow::buffer::NullBuffer::union(own.as_ref(), parent);
    match f.data_type() {
        DataType::Struct(fields) => {
            let s = a.as_struct();
            for (cf, c) in fields.iter().zip(s.columns()) {
                check_nulls(cf, c.as_ref(), combined.as_ref());
            }
        }
        DataType::List(cf) => {
            let l = a.as_list::<i32>();
            check_nulls(cf, l.values().as_ref(), None);
        }
        DataType::Map(ef, _) => {
            let m = a.as_map();
            check_nulls(ef, m.entries(), None);
        }
        _ => {}
    }
}

/// A reader over `bytes` from the source `opts.src`.
pub fn open(bytes: &[u8], opts: &Opts) -> Result<avrow::Reader, avrow::Error> {
    match opts.src {
        Src::Bytes => opts.builder().read_bytes(bytes.to_vec()),
        Src::Stream => opts.builder().read_stream(Trickle {
            data: bytes.to_vec(),
            pos: 0,
        }),
        Src::Path => {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("input.avro");
            std::fs::write(&path, bytes).expect("write temp file");
            let r = opts.builder().open(&path);
            // Unlinking an open (mapped) file is fine on Unix; keep the directory alive anyway
            // until the reader is built.
            drop(dir);
            r
        }
    }
}

/// A `Read` that returns at most 7 bytes per call, to exercise refills at every position.
pub struct Trickle {
    pub data: Vec<u8>,
    pub pos: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Run `f` on its own thread; panic naming `what` if it takes longer than `limit`.
pub fn with_timeout<T: Send + 'static>(
    what: &str,
    limit: std::time::Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => panic!("{what}: still running after {limit:?} (a hang or an unbounded loop)"),
    }
}

/// Like [`read_avrow`] but turns a panic into an `Err` describing it, so callers can name the
/// input that panicked.
pub fn read_avrow_caught(bytes: &[u8], opts: &Opts) -> Result<Result<Decoded, String>, String> {
    let b = bytes.to_vec();
    let o = opts.clone();
    match std::panic::catch_unwind(move || read_avrow(&b, &o).map_err(|e| e.to_string())) {
        Ok(r) => Ok(r),
        Err(p) => Err(panic_message(&p)),
    }
}

pub fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic>".into()
    }
}

/// Decode with avrow and compare with the oracle rows and the mapping table. Returns a message
/// describing the first problem.
pub fn check_decode(
    model: &Model,
    bytes: &[u8],
    expected: &[N],
    opts: &Opts,
) -> Result<(), String> {
    let d = match read_avrow_caught(bytes, opts) {
        Err(panic) => return Err(format!("avrow panicked: {panic}")),
        Ok(Err(e)) => return Err(format!("avrow returned an error: {e}")),
        Ok(Ok(d)) => d,
    };
    let container = crate::oracle::Container::parse(bytes).ok();
    if let Some(c) = &container {
        let want: std::collections::HashMap<String, Vec<u8>> =
            c.metadata.clone().into_iter().collect();
        if d.metadata != want {
            return Err(format!(
                "header metadata {:?} differs from the file's {:?}",
                d.metadata, want
            ));
        }
    }
    let header_json = container.and_then(|c| c.schema_json().ok());
    check_schema(model, &d.schema, opts.utf8_view, header_json.as_ref())?;
    if let Some(m) = diff_rows(expected, &d.rows()) {
        return Err(m);
    }
    Ok(())
}

/// All the decode options to try for one file: every kernel, and the given batch sizes.
pub fn kernel_opts(batch_sizes: &[usize]) -> Vec<Opts> {
    let mut v = Vec::new();
    for k in avrow_engine::varint::available_kernels() {
        for &bs in batch_sizes {
            v.push(Opts {
                batch_size: bs,
                kernel: Some(k),
                ..Opts::default()
            });
        }
    }
    v
}
