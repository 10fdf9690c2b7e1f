//! [`ReaderBuilder`]: options, then a source (path, paths, bytes or stream) → [`Reader`].

use crate::error::{Error, Result};
use crate::parallel::{available_threads, max_threads, pool_for, unit_bytes, Parallel};
use crate::reader::{Engine, Reader};
use crate::sequential::Sequential;
use crate::source::{BlockSource, FileInput, OpenOptions};
use crate::unit::WorkerState;
use avrow_engine::varint::{self, KernelKind};
use avrow_engine::{DecodeOptions, DecodePlan, Schema, DEFAULT_BATCH_SIZE};
use bytes::Bytes;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Configures and opens a [`Reader`], in the style of arrow's reader builders: by-value `with_*`
/// setters, then [`open`](ReaderBuilder::open), [`open_many`](ReaderBuilder::open_many),
/// [`read_bytes`](ReaderBuilder::read_bytes) or [`read_stream`](ReaderBuilder::read_stream).
///
/// ```no_run
/// let reader = avrow::ReaderBuilder::new()
///     .with_batch_size(8192)
///     .with_projection(["id", "lines.sku"])
///     .open("data.avro")?;
/// let schema = reader.schema();
/// for batch in reader {
///     let batch = batch?;
///     println!("{} rows", batch.num_rows());
/// }
/// # Ok::<(), avrow::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReaderBuilder {
    batch_size: usize,
    options: DecodeOptions,
    kernel: Option<KernelKind>,
    threads: usize,
    reader_schema: Option<Schema>,
    /// Whether files of different writer schemas read as their merged schema.
    merge_schemas: bool,
    /// How inputs are opened: memory maps, the block size limit, a byte range, bad blocks.
    open: OpenOptions,
}

impl Default for ReaderBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ReaderBuilder {
    /// Defaults: batches of 8192 rows, every column, recursion depth 16, `Utf8`/`Binary`,
    /// the process's varint kernel, all cores, memory-mapped files (those under 256 KiB read
    /// into memory), 1 GiB block limit.
    pub fn new() -> Self {
        ReaderBuilder {
            batch_size: DEFAULT_BATCH_SIZE,
            options: DecodeOptions::default(),
            kernel: None,
            threads: 0,
            reader_schema: None,
            merge_schemas: true,
            open: OpenOptions::default(),
        }
    }

    /// Read the data as `schema` (Avro schema resolution) instead of the writer's schema: the
    /// batches have the reader schema's fields in its order; fields only the writer has are
    /// skipped, fields only the reader has take their defaults, numbers are promoted
    /// (`int` → `long`/`float`/`double`, `long` → `float`/`double`, `float` → `double`),
    /// times and timestamps read in another unit of their kind are converted to it
    /// (`timestamp-millis` as `timestamp-micros`: times 1,000; into a coarser unit divided,
    /// rounding down), `string` and `bytes` read as each other, enum symbols and union branches are matched by
    /// name and type, and record fields and named types also by the reader's aliases. The
    /// projection names reader fields. Files with different writer schemas can be read
    /// together ([`open_many`](ReaderBuilder::open_many)) as long as each resolves.
    ///
    /// A reader schema that cannot read a file's writer schema fails when the file is opened
    /// ([`Error::Plan`]); a writer enum symbol or union branch that has no counterpart fails
    /// only if the data holds one.
    ///
    /// ```
    /// use avrow::{ReaderBuilder, Schema};
    /// # let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/samples/order.avro");
    /// let reader_schema = Schema::parse(r#"{"type": "record", "name": "Order", "fields": [
    ///     {"name": "id", "type": "long"},
    ///     {"name": "total", "type": "double"},
    ///     {"name": "channel", "type": "string", "default": "web"}
    /// ]}"#)?;
    /// let mut reader = ReaderBuilder::new().with_reader_schema(reader_schema).open(file)?;
    /// let batch = reader.next().unwrap()?;
    /// assert_eq!(batch.schema().field(2).name(), "channel");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_reader_schema(mut self, schema: Schema) -> Self {
        self.reader_schema = Some(schema);
        self
    }

    /// Read files whose writer schemas differ ([`open_many`](ReaderBuilder::open_many), no
    /// reader schema given) as one table (default `true`): their schemas are merged into one
    /// reader schema ([`Schema::merge`]: fields some files lack read as null or their
    /// default, numbers widened as Avro promotes them, union branches and enum symbols
    /// joined) and every file is resolved against it. Schemas that do not merge (a string
    /// in one file, a number in another) are an [`Error::SchemaMerge`] naming the file and
    /// the field. With `false`, files must share the first file's schema
    /// ([`Error::SchemaMismatch`] otherwise).
    ///
    /// ```
    /// use avrow::ReaderBuilder;
    /// # use std::sync::Arc;
    /// # use arrow_array::{cast::AsArray, types::Int64Type, Int32Array, Int64Array, RecordBatch, StringArray};
    /// # let dir = tempfile::tempdir()?;
    /// # let (old, new) = (dir.path().join("old.avro"), dir.path().join("new.avro"));
    /// # let a = RecordBatch::try_from_iter_with_nullable([
    /// #     ("id", Arc::new(Int32Array::from(vec![1])) as _, false)])?;
    /// # let b = RecordBatch::try_from_iter_with_nullable([
    /// #     ("id", Arc::new(Int64Array::from(vec![2])) as _, false),
    /// #     ("tag", Arc::new(StringArray::from(vec!["x"])) as _, false)])?;
    /// # for (path, batch) in [(&old, a), (&new, b)] {
    /// #     let mut writer = avrow::WriterBuilder::new(batch.schema()).build(std::fs::File::create(path)?)?;
    /// #     writer.write(&batch)?;
    /// #     writer.finish()?;
    /// # }
    /// // `old.avro` has `id: int`; `new.avro` has `id: long, tag: string`.
    /// let mut reader = ReaderBuilder::new().with_threads(1).open_many([&old, &new])?;
    /// assert_eq!(reader.schema().field(1).name(), "tag");
    /// assert!(reader.schema().field(1).is_nullable());
    /// let (mut ids, mut tags) = (Vec::new(), Vec::new());
    /// for batch in reader {
    ///     let batch = batch?;
    ///     ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter().copied());
    ///     tags.extend(batch.column(1).as_string::<i32>().iter().map(|t| t.map(str::to_string)));
    /// }
    /// assert_eq!(ids, [1, 2]);
    /// assert_eq!(tags, [None, Some("x".to_string())]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_schema_merging(mut self, enabled: bool) -> Self {
        self.merge_schemas = enabled;
        self
    }

    /// Rows per batch (at least 1); batches never exceed it. With several threads, batches may
    /// be shorter where one work unit ends.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Decode only these columns: top-level field names, or dotted paths through records, array
    /// items, map values and nullable unions (`"lines.sku"`). Columns keep the file's order.
    /// Projected-away data is skipped without being decoded.
    pub fn with_projection<I, S>(mut self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// How deep a recursive type (a linked list, a tree) is unrolled into nested Arrow types
    /// (default 16; at least 1: 0 reads as 1, every record being read once). Data nested
    /// deeper is an error naming the field, never truncated. A type that refers to itself
    /// more than once doubles its columns at each level: by default it is unrolled only as
    /// deep as 4,096 columns hold; a depth given here is unrolled as far as a plan holds
    /// (65,536 columns and nodes), so that asking for more levels never gives fewer.
    pub fn with_max_recursion_depth(mut self, depth: usize) -> Self {
        self.options.max_recursion_depth = depth;
        self.options.max_unrolled_columns = usize::MAX;
        self
    }

    /// Map `string` and `bytes` to `Utf8View` and `BinaryView` instead of `Utf8` and `Binary`.
    pub fn with_utf8_view(mut self, enabled: bool) -> Self {
        self.options.utf8_view = enabled;
        self
    }

    /// Force a varint kernel (by default the fastest one this CPU runs, or `AVROW_VARINT`).
    pub fn with_varint_kernel(mut self, kernel: KernelKind) -> Self {
        self.kernel = Some(kernel);
        self
    }

    /// Decoding threads: `1` decodes on the caller's thread with no pool; `0` (the default)
    /// uses every core. Inputs of a single work unit (a few MB) are always decoded on the
    /// caller's thread. More than eight threads a core (at least 16) cannot help decoding,
    /// which uses the CPU only: larger values are capped there (a thread is started for each).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Read only the blocks whose sync marker (the one before the block) starts in
    /// `range` — the way Hadoop and Spark split Avro files. For any partition of the file's
    /// bytes into ranges, the readers of the ranges together return every row exactly once, in
    /// order. Use [`split_ranges`](crate::split_ranges) for balanced ranges. Needs a path or
    /// bytes (not a stream).
    pub fn with_range(mut self, range: Range<u64>) -> Self {
        self.open.range = Some(range);
        self
    }

    /// Refuse blocks that decompress to more than `bytes` (default 1 GiB): a guard against
    /// decompression bombs.
    pub fn with_max_block_size(mut self, bytes: usize) -> Self {
        self.open.max_block_size = bytes;
        self
    }

    /// Skip blocks that cannot be read instead of stopping at the first (default `false`).
    ///
    /// A block whose framing is wrong (truncated, a negative or malformed count or size, a
    /// sync marker mismatch, over the size limit), whose data does not decompress, or one of
    /// whose records does not decode is skipped **whole**: none of its rows are returned. The
    /// reader then resynchronises on the file's sync marker (scanning forward from the bad
    /// block) and goes on with the next block. Nothing is lost silently: every skipped block
    /// is reported by [`Reader::take_skipped`](crate::Reader::take_skipped) with its file,
    /// block index, byte range, declared record count and error. Errors that are not about a
    /// block (I/O, the header, the schema) still end the read.
    ///
    /// ```
    /// # let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/samples/order.avro");
    /// let mut reader = avrow::ReaderBuilder::new().with_skip_bad_blocks(true).open(file)?;
    /// let mut rows = 0;
    /// while let Some(batch) = reader.next() {
    ///     rows += batch?.num_rows();
    /// }
    /// for skipped in reader.take_skipped() {
    ///     eprintln!("skipped block {} of {}: {}", skipped.block, skipped.file, skipped.error);
    /// }
    /// # assert!(rows > 0);
    /// # Ok::<(), avrow::Error>(())
    /// ```
    pub fn with_skip_bad_blocks(mut self, enabled: bool) -> Self {
        self.open.skip_bad_blocks = enabled;
        self
    }

    /// Memory-map files opened by path (default `true`; a file under 256 KiB is read into
    /// memory instead, which costs less). Without it, files are read as streams. A mapped
    /// file must not be truncated by another process while it is read.
    pub fn with_mmap(mut self, enabled: bool) -> Self {
        self.open.use_mmap = enabled;
        self
    }

    fn kernel(&self) -> Result<KernelKind> {
        varint::selected_bulk()?;
        Ok(match self.kernel {
            Some(k) => varint::check_available(k)?,
            None => varint::selected()?,
        })
    }

    fn threads(&self) -> usize {
        match self.threads {
            0 => available_threads(),
            n => n.min(max_threads()),
        }
    }

    /// Open an Avro container file.
    ///
    /// # Errors
    /// The file cannot be opened, or its header or schema is invalid.
    pub fn open(self, path: impl AsRef<Path>) -> Result<Reader> {
        let file = FileInput::open(path.as_ref(), 0, &self.open)?;
        self.build(vec![file])
    }

    /// Read several files with the same writer schema as one stream of batches, in the given
    /// order; blocks of all files are decoded in parallel.
    ///
    /// # Errors
    /// A file cannot be opened, a header is invalid, or the files' schemas differ.
    pub fn open_many<I, P>(self, paths: I) -> Result<Reader>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        if self.open.range.is_some() {
            return Err(Error::InvalidArgument(
                "with_range applies to one file, not to open_many".into(),
            ));
        }
        let files = paths
            .into_iter()
            .enumerate()
            .map(|(i, p)| FileInput::open(p.as_ref(), i, &self.open))
            .collect::<Result<Vec<_>>>()?;
        if files.is_empty() {
            return Err(Error::InvalidArgument(
                "open_many needs at least one file".into(),
            ));
        }
        self.build(files)
    }

    /// Read an Avro container file held in memory.
    ///
    /// # Errors
    /// The header or schema is invalid.
    pub fn read_bytes(self, bytes: impl Into<Bytes>) -> Result<Reader> {
        let file = FileInput::contiguous("<bytes>".to_string(), 0, bytes.into(), None, &self.open)?;
        self.build(vec![file])
    }

    /// Read an Avro container file from a stream (stdin, a pipe, a socket): blocks are read in
    /// order and decoded in parallel.
    ///
    /// # Errors
    /// Reading fails, or the header or schema is invalid.
    pub fn read_stream<R: Read + Send + 'static>(self, reader: R) -> Result<Reader> {
        let file = FileInput::stream(
            "<stream>".to_string(),
            0,
            Box::new(reader),
            None,
            &self.open,
        )?;
        self.build(vec![file])
    }

    /// Read a stream holding a container file's header followed by a run of the file's whole
    /// blocks, the first of which starts at byte `blocks_at` of the file: what a reader of an
    /// object store fetches for one split of a file (the header, then the split's blocks).
    /// Errors name the input `name` and give byte offsets in the whole file; block numbers
    /// count from the run's first block. A `blocks_at` inside the header is the header's end.
    ///
    /// # Errors
    /// Reading fails, or the header or schema is invalid.
    pub fn read_stream_part<R: Read + Send + 'static>(
        self,
        name: impl Into<String>,
        reader: R,
        blocks_at: u64,
    ) -> Result<Reader> {
        let file = FileInput::stream(
            name.into(),
            0,
            Box::new(reader),
            Some(blocks_at),
            &self.open,
        )?;
        self.build(vec![file])
    }

    /// The decode plan for a file with writer schema `writer`.
    fn plan(&self, writer: &Schema, file: &str) -> Result<DecodePlan> {
        match &self.reader_schema {
            Some(reader) => DecodePlan::resolve(writer, reader, &self.options),
            None => DecodePlan::new(writer, &self.options),
        }
        .map_err(|source| Error::Plan {
            file: file.to_string(),
            source,
        })
    }

    fn build(mut self, mut files: Vec<FileInput>) -> Result<Reader> {
        let kernel = self.kernel()?;
        if self.reader_schema.is_none() && self.merge_schemas {
            self.reader_schema = merged_schema(&files)?;
        }
        // One plan per distinct writer schema (by Parsing Canonical Form with logical types:
        // a long of milliseconds and one of microseconds resolve differently). Without a
        // reader schema every file must have the first file's schema; with one, each writer
        // schema resolves to it.
        let first_name = files[0].ctx.file.clone();
        let mut plans: Vec<(String, DecodePlan)> = Vec::new();
        for file in &mut files {
            let writer = file.header.schema();
            let canonical = writer.canonical_form_with_logical_types();
            let known = plans.iter().position(|(c, _)| *c == canonical);
            let index = match known {
                Some(index) if self.reader_schema.is_some() => index,
                _ => {
                    let plan = self.plan(writer, &file.ctx.file)?;
                    match plans.first() {
                        None => {}
                        Some((_, first)) if self.reader_schema.is_some() => {
                            debug_assert_eq!(
                                plan.arrow_schema().fields(),
                                first.arrow_schema().fields()
                            );
                        }
                        Some((_, first))
                            if known.is_some()
                                && plan.arrow_schema().fields()
                                    == first.arrow_schema().fields() => {}
                        Some(_) => {
                            return Err(Error::SchemaMismatch {
                                file: file.ctx.file.to_string(),
                                first: first_name.to_string(),
                            });
                        }
                    }
                    match known {
                        Some(index) => index,
                        None => {
                            plans.push((canonical, plan));
                            plans.len() - 1
                        }
                    }
                }
            };
            Arc::make_mut(&mut file.ctx).plan = index;
        }
        let header = files[0].header.clone();
        let schema = plans[0].1.arrow_schema().clone();
        let decoders: Vec<_> = plans
            .iter()
            .map(|(_, plan)| {
                plan.decoder()
                    .with_kernel(kernel)
                    .with_batch_size(self.batch_size)
            })
            .collect();
        // Fewer rows a batch than asked for where the schema's rows could take more than the
        // decoders allow (the smallest of the files' plans): units are cut on batch bounds.
        let batch_size = decoders
            .iter()
            .map(|d| d.batch_size())
            .min()
            .unwrap_or(self.batch_size);
        let threads = self.threads();
        let source = BlockSource::new(files);
        let one_unit = source
            .known_len()
            .is_some_and(|len| len <= unit_bytes(Some(len), threads, 2 * threads));
        let engine = if threads == 1 || one_unit {
            Engine::Sequential(Box::new(Sequential::new(
                source,
                WorkerState::new(decoders),
            )))
        } else {
            let pool = pool_for(threads)?;
            Engine::Parallel(Box::new(Parallel::new(
                source, pool, threads, decoders, batch_size,
            )))
        };
        Ok(Reader {
            header,
            schema,
            reader_schema: self.reader_schema,
            engine,
            threads,
            batch_size,
        })
    }
}

/// The merged schema of files whose writer schemas differ (`None` where they are all one),
/// merged in the files' order so that the first file's fields come first.
fn merged_schema(files: &[FileInput]) -> Result<Option<Schema>> {
    let first = files[0].header.schema();
    let mut merged: Option<Schema> = None;
    let mut seen = vec![first.json()];
    let mut one_form = true;
    for file in &files[1..] {
        let writer = file.header.schema();
        if seen.contains(&writer.json()) {
            continue;
        }
        seen.push(writer.json());
        one_form &=
            writer.canonical_form_with_logical_types() == first.canonical_form_with_logical_types();
        let base = merged.as_ref().unwrap_or(first);
        merged = Some(base.merge(writer).map_err(|source| Error::SchemaMerge {
            file: file.ctx.file.to_string(),
            first: files[0].ctx.file.to_string(),
            source,
        })?);
    }
    // Schemas that differ only in what reading ignores (docs, defaults, attributes, spacing):
    // each file is read as itself.
    Ok(merged.filter(|_| !one_form))
}
