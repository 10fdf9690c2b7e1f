//! The scan: [`AvrowSource`] (DataFusion's `FileSource`) and its opener, which reads one file
//! or one byte range of it with avrow on a blocking thread and hands batches to the stream
//! in groups through a channel of one group (memory stays bounded; a dropped stream, at a
//! `LIMIT` for example, stops the read); a small uncompressed local file is decoded as the
//! stream is polled instead ([`INLINE_BYTES`]).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::physical_expr_adapter::BatchAdapterFactory;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::{DisplayFormatType, PhysicalExpr};
use futures::StreamExt;
use object_store::{GetOptions, GetResultPayload, ObjectMeta, ObjectStore};

use crate::nested;
use crate::options::AvrowReadOptions;
use crate::schemas::{file_key, FileFacts, Known, SchemaCache};
use crate::store::{self, Object, RowCount, SplitStream};

/// DataFusion's `FileSource` for Avro container files, read by avrow.
#[derive(Clone)]
pub struct AvrowSource {
    table_schema: TableSchema,
    options: AvrowReadOptions,
    batch_size: Option<usize>,
    projection: SplitProjection,
    metrics: ExecutionPlanMetricsSet,
    /// Files located (and store headers read) by this scan's openers, shared by its
    /// partitions so that a file's splits cost one HEAD and one header GET in all.
    files: Arc<FileCache>,
    /// Arrow schemas by writer schema, and what schema inference learned of small local
    /// files (the format's, where the format made this source).
    schemas: Arc<SchemaCache>,
    facts: Arc<FileFacts>,
}

impl AvrowSource {
    /// A source for a table of this schema, read with `options`.
    pub fn new(table_schema: impl Into<TableSchema>, options: AvrowReadOptions) -> Self {
        let table_schema = table_schema.into();
        AvrowSource {
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            options,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
            files: Arc::default(),
            schemas: Arc::default(),
            facts: Arc::default(),
        }
    }

    /// This source with the schemas its format has turned into Arrow and what it learned of
    /// its files.
    pub(crate) fn with_format_caches(
        mut self,
        schemas: Arc<SchemaCache>,
        facts: Arc<FileFacts>,
    ) -> Self {
        self.schemas = schemas;
        self.facts = facts;
        self
    }

    /// The read options.
    pub fn options(&self) -> &AvrowReadOptions {
        &self.options
    }

    fn projected_file_schema(&self) -> Result<SchemaRef> {
        Ok(Arc::new(
            self.table_schema
                .file_schema()
                .project(&self.projection.file_indices)?,
        ))
    }
}

impl FileSource for AvrowSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let exprs: Vec<_> = self.projection.source.expr_iter().collect();
        let nested = nested::field_projections(&exprs, self.table_schema.table_schema());
        let opener = Arc::new(AvrowOpener {
            nested: Arc::new(nested),
            options: self.options.clone(),
            batch_size: self.batch_size.or(base_config.batch_size),
            projected: self.projected_file_schema()?,
            limit: base_config.limit,
            store: object_store,
            files: Arc::clone(&self.files),
            schemas: Arc::clone(&self.schemas),
            facts: Arc::clone(&self.facts),
            splits: Arc::new(splits_per_file(base_config)),
        }) as Arc<dyn FileOpener>;
        ProjectionOpener::try_new(
            self.projection.clone(),
            opener,
            self.table_schema.file_schema(),
        )
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.batch_size = Some(batch_size);
        Arc::new(source)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        let mut source = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        source.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(source)))
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "avro"
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, ", reader=avrow")?;
                if self.options.reader_schema.is_some() {
                    write!(f, ", reader_schema=true")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => writeln!(f, "reader=avrow"),
        }
    }

    /// Byte ranges split a file at its sync markers (the Hadoop rule), so any partition of a
    /// file into ranges reads every row once: the default `repartitioned` (ranges of about
    /// equal size) is correct as it is.
    fn supports_repartitioning(&self) -> bool {
        true
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)
    }
}

/// Local files up to this size are opened, counted and their schemas read on the task that
/// asks, not on a blocking thread, and a scan of an uncompressed one read on one thread
/// decodes as DataFusion's stream polls it (as DataFusion's own sources decode): handing such
/// a file to another thread and its batches back cost more than reading it. A query over
/// 1,000 files of 83 KB spent most of its time waking threads (docs/perf/sql.md).
pub(crate) const INLINE_BYTES: u64 = 1 << 20;

/// Where a file's bytes come from: a local path (read or memory-mapped by avrow, split with
/// the reader's own ranges) or an object store (ranged GETs).
pub(crate) enum Input {
    Local(PathBuf),
    Remote(Object),
}

impl Input {
    /// Ask the store where `meta` lives: the local file system hands out paths.
    pub(crate) async fn locate(store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> Result<Self> {
        let options = GetOptions {
            head: true,
            ..Default::default()
        };
        let result = store.get_opts(&meta.location, options).await?;
        Ok(match result.payload {
            GetResultPayload::File(_, path) => Input::Local(path),
            GetResultPayload::Stream(_) => Input::Remote(Object {
                store: Arc::clone(store),
                location: meta.location.clone(),
                size: meta.size,
            }),
        })
    }

    /// Whether a file of `size` bytes here has its header and block headers read without a
    /// blocking thread ([`INLINE_BYTES`]).
    pub(crate) fn inline(&self, size: u64) -> bool {
        matches!(self, Input::Local(_)) && size <= INLINE_BYTES
    }

    /// The name errors give the file: a local file's path, an object's location.
    pub(crate) fn name(&self) -> String {
        match self {
            Input::Local(path) => path.display().to_string(),
            Input::Remote(object) => object.name(),
        }
    }

    /// The file's Arrow schema as avrow reads it with `builder`'s options (`schemas`: those
    /// already made with them). Blocking.
    pub(crate) fn schema(
        &self,
        builder: avrow::ReaderBuilder,
        schemas: &SchemaCache,
    ) -> Result<SchemaRef> {
        self.open()?.schema(builder, schemas)
    }

    /// A local file's Arrow schema, rows (from its block headers; `None` where they cannot
    /// be counted) and codec, from one read of the file; `None` for any other input.
    /// Blocking.
    pub(crate) fn local_facts(
        &self,
        builder: avrow::ReaderBuilder,
        schemas: &SchemaCache,
    ) -> Result<Option<Known>> {
        let Input::Local(path) = self else {
            return Ok(None);
        };
        let blocks = avrow::BlockReader::open(path).map_err(external)?;
        let writer = blocks.header().schema().json();
        let codec = blocks.header().codec();
        let schema = Opened::Local(path).arrow_schema(writer, builder, schemas)?;
        Ok(Some(Known {
            path: path.clone(),
            schema,
            rows: blocks.count_records().ok(),
            codec,
        }))
    }

    /// Rows in the file, from its block headers (every one of a local file; an object's
    /// within a budget of requests, else an estimate). Blocking.
    pub(crate) fn count_rows(&self) -> Result<RowCount> {
        match self {
            Input::Local(path) => {
                // Each count is checked against its block's size, as decoding checks it: a
                // count the records could not fill is an error, not the answer.
                let rows = avrow::BlockReader::open(path)
                    .and_then(avrow::BlockReader::count_records)
                    .map_err(external)?;
                Ok(RowCount::Exact(rows))
            }
            Input::Remote(object) => {
                let header = store::read_header(object).map_err(external)?;
                store::count_rows(object, &header).map_err(|e| io(object, e))
            }
        }
    }

    /// The file with its header read (one GET for a remote object). Blocking.
    fn open(&self) -> Result<Opened<'_>> {
        Ok(match self {
            Input::Local(path) => Opened::Local(path),
            Input::Remote(object) => {
                Opened::Remote(object, store::read_header(object).map_err(external)?)
            }
        })
    }
}

/// A file as a scan opens it: where it lives and, for a store object, its header.
pub(crate) struct Located {
    input: Input,
    header: Option<store::HeaderBytes>,
}

impl Located {
    fn open(&self) -> Result<Opened<'_>> {
        match (&self.input, &self.header) {
            (Input::Remote(object), Some(header)) => Ok(Opened::Remote(object, header.clone())),
            (input, _) => input.open(),
        }
    }
}

/// The files one scan has located, by object and version: the first split of a file to open
/// asks the store where it lives and reads its header; the file's other splits, in any
/// partition, wait for that and reuse it. A file leaves the cache when its last split has
/// opened, so the cache holds the files being opened, not every file of the scan.
#[derive(Default)]
pub(crate) struct FileCache {
    files: Mutex<HashMap<FileKey, Entry>>,
}

struct Entry {
    located: Arc<tokio::sync::OnceCell<Arc<Located>>>,
    /// Splits of the file still to open.
    remaining: usize,
}

/// An object's location, size, entity tag and modification time (microseconds).
type FileKey = (object_store::path::Path, u64, Option<String>, i64);

impl FileCache {
    /// The file of `meta`, one of whose `splits` splits (in the scan's file groups) is
    /// opening.
    async fn locate(
        &self,
        store: &Arc<dyn ObjectStore>,
        meta: &ObjectMeta,
        splits: usize,
    ) -> Result<Arc<Located>> {
        let key = (
            meta.location.clone(),
            meta.size,
            meta.e_tag.clone(),
            meta.last_modified.timestamp_micros(),
        );
        let cell = {
            let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = files.entry(key.clone()).or_insert_with(|| Entry {
                located: Arc::default(),
                remaining: splits.max(1),
            });
            entry.remaining -= 1;
            let cell = Arc::clone(&entry.located);
            if entry.remaining == 0 {
                files.remove(&key);
            }
            cell
        };
        // A failed attempt leaves the cell empty: the next split tries again, and reports
        // its own error.
        let located = cell
            .get_or_try_init(|| async {
                let input = Input::locate(store, meta).await?;
                let header = match &input {
                    Input::Remote(object) => {
                        let object = object.clone();
                        let read = tokio::task::spawn_blocking(move || store::read_header(&object));
                        Some(
                            read.await
                                .map_err(|e| DataFusionError::External(Box::new(e)))?
                                .map_err(external)?,
                        )
                    }
                    Input::Local(_) => None,
                };
                Ok::<_, DataFusionError>(Arc::new(Located { input, header }))
            })
            .await?;
        Ok(Arc::clone(located))
    }
}

/// An [`Input`] whose header has been read.
enum Opened<'a> {
    Local(&'a PathBuf),
    Remote(&'a Object, store::HeaderBytes),
}

impl Opened<'_> {
    /// The file's Arrow schema: from `schemas` where a file of its writer schema was read
    /// before (only the header is read), else from a reader built for it.
    fn schema(&self, builder: avrow::ReaderBuilder, schemas: &SchemaCache) -> Result<SchemaRef> {
        let writer = match self {
            Opened::Local(path) => avrow::BlockReader::open(path)
                .map_err(external)?
                .header()
                .schema()
                .json()
                .to_string(),
            Opened::Remote(_, header) => header.header.schema().json().to_string(),
        };
        self.arrow_schema(&writer, builder, schemas)
    }

    /// The Arrow schema of this file, whose writer schema is `writer`: from `schemas`, else
    /// from a reader built for the file.
    fn arrow_schema(
        &self,
        writer: &str,
        builder: avrow::ReaderBuilder,
        schemas: &SchemaCache,
    ) -> Result<SchemaRef> {
        schemas.get_or_make(writer, || {
            let reader = match self {
                Opened::Local(path) => builder.open(path),
                Opened::Remote(object, header) => builder.read_stream_part(
                    object.name(),
                    std::io::Cursor::new(header.bytes.clone()),
                    header.header.len(),
                ),
            };
            Ok(reader.map_err(external)?.schema())
        })
    }

    /// A reader of `range` (the whole file when `None`).
    fn reader(
        self,
        builder: avrow::ReaderBuilder,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<avrow::Reader> {
        match self {
            Opened::Local(path) => {
                let builder = match range {
                    Some(range) => builder.with_range(range),
                    None => builder,
                };
                builder.open(path).map_err(external)
            }
            Opened::Remote(object, header) => {
                let range = range.unwrap_or(0..object.size);
                let name = format!("{} (bytes {}..{})", object.name(), range.start, range.end);
                let (stream, at) =
                    SplitStream::new(object.clone(), header, range).map_err(|e| io(object, e))?;
                builder.read_stream_part(name, stream, at).map_err(external)
            }
        }
    }
}

/// An avrow error as DataFusion's, its message (file, block, offset, field path) intact.
pub(crate) fn external(e: avrow::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn io(object: &Object, source: std::io::Error) -> DataFusionError {
    external(avrow::Error::Io {
        file: object.name(),
        source,
    })
}

struct AvrowOpener {
    /// Columns read only through struct fields: their avrow paths.
    nested: Arc<BTreeMap<String, Vec<String>>>,
    options: AvrowReadOptions,
    batch_size: Option<usize>,
    /// The table's file columns this scan reads, in the table's order.
    projected: SchemaRef,
    limit: Option<usize>,
    store: Arc<dyn ObjectStore>,
    files: Arc<FileCache>,
    schemas: Arc<SchemaCache>,
    facts: Arc<FileFacts>,
    /// How many splits of each file the scan's file groups hold.
    splits: Arc<HashMap<object_store::path::Path, usize>>,
}

/// How many splits (byte ranges, or the whole file) of each file `config` reads.
fn splits_per_file(config: &FileScanConfig) -> HashMap<object_store::path::Path, usize> {
    let mut splits = HashMap::new();
    for file in config.file_groups.iter().flat_map(|group| group.iter()) {
        *splits.entry(file.object_meta.location.clone()).or_default() += 1;
    }
    splits
}

impl FileOpener for AvrowOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let store = Arc::clone(&self.store);
        let options = self.options.clone();
        let batch_size = self.batch_size;
        let projected = Arc::clone(&self.projected);
        let nested = Arc::clone(&self.nested);
        let limit = self.limit;
        let files = Arc::clone(&self.files);
        let schemas = Arc::clone(&self.schemas);
        let known = self.facts.get(&file_key(&self.store, &file.object_meta));
        let splits = self
            .splits
            .get(&file.object_meta.location)
            .copied()
            .unwrap_or(1);
        let range = file
            .range
            .as_ref()
            .map(|r| r.start.max(0) as u64..r.end.max(0) as u64);
        Ok(Box::pin(async move {
            // A file schema inference has read: where it is and its schema are known, and
            // whether it is small and uncompressed, decoded in place (one thread asked for).
            let in_place = known.as_ref().is_some_and(|k| {
                k.codec == avrow::Codec::Null
                    && options.threads.unwrap_or(1) == 1
                    && file.object_meta.size <= INLINE_BYTES
            });
            let (input, known) = match known {
                Some(known) => {
                    let input = Input::Local(known.path);
                    let located = Located {
                        input,
                        header: None,
                    };
                    (Arc::new(located), Some(known.schema))
                }
                None => (files.locate(&store, &file.object_meta, splits).await?, None),
            };
            let builder = options.builder(batch_size);
            if in_place {
                let name = input.input.name();
                let scan = caught(&name, || {
                    let file_schema = file_schema(&input, known, builder, &schemas)?;
                    Scan::open(
                        &input,
                        &options,
                        batch_size,
                        &projected,
                        &nested,
                        file_schema,
                        range,
                    )
                })?;
                return Ok(scan.inline(name, limit).boxed());
            }
            let (tx, rx) = tokio::sync::mpsc::channel::<Vec<Result<RecordBatch>>>(1);
            let opened = tokio::sync::oneshot::channel::<Result<()>>();
            tokio::task::spawn_blocking(move || {
                let scan = file_schema(&input, known, builder, &schemas).and_then(|schema| {
                    Scan::open(
                        &input, &options, batch_size, &projected, &nested, schema, range,
                    )
                });
                let scan = match scan {
                    Ok(scan) => {
                        let _ = opened.0.send(Ok(()));
                        scan
                    }
                    Err(e) => {
                        let _ = opened.0.send(Err(e));
                        return;
                    }
                };
                // A panic must not end the stream early as if the file had ended there.
                let run = std::panic::AssertUnwindSafe(|| scan.run(&tx, limit));
                if std::panic::catch_unwind(run).is_err() {
                    let _ = tx.blocking_send(vec![Err(DataFusionError::Internal(
                        "the avrow scan stopped on a panic".into(),
                    ))]);
                }
            });
            opened
                .1
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))??;
            Ok(futures::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|items| (futures::stream::iter(items), rx))
            })
            .flatten()
            .boxed())
        }))
    }
}

/// `f`, with a panic turned into an error naming the file: work done on a runtime's thread
/// (small files, [`INLINE_BYTES`]) must fail as the same work on a blocking thread fails,
/// not take the query down.
pub(crate) fn caught<T>(name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(DataFusionError::Internal(format!(
            "the avrow scan of {name} stopped on a panic"
        )))
    })
}

/// The Arrow schema of `input`: `known` where schema inference read the file, else from
/// its header (and `schemas`). Blocking.
fn file_schema(
    input: &Located,
    known: Option<SchemaRef>,
    builder: avrow::ReaderBuilder,
    schemas: &SchemaCache,
) -> Result<SchemaRef> {
    match known {
        Some(schema) => Ok(schema),
        None => input.open()?.schema(builder, schemas),
    }
}

/// Batches a scan hands to its stream at once, at most.
const GROUP_BATCHES: usize = 4;

/// A group is sent once its batches hold this many bytes: with the channel's one group and
/// the one the stream is reading, memory in flight stays a few groups.
const GROUP_BYTES: usize = 16 << 20;

/// One open read: on a blocking thread, or polled in place ([`Scan::inline`]).
struct Scan {
    reader: avrow::Reader,
    adapter: datafusion::physical_expr_adapter::BatchAdapter,
    /// Rows only (no column is read: `count(*)` without statistics).
    rows_only: Option<SchemaRef>,
    /// Whether the batches have struct columns ([`nested::with_struct_nulls`]).
    structs: bool,
    /// The read schema with maps of the table's entries types, where this file's differ
    /// ([`nested::maps_as_table`]): the batches' maps are cast to it before the adapter.
    maps: Option<SchemaRef>,
}

impl Scan {
    fn open(
        input: &Located,
        options: &AvrowReadOptions,
        batch_size: Option<usize>,
        projected: &SchemaRef,
        nested: &BTreeMap<String, Vec<String>>,
        file_schema: SchemaRef,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<Self> {
        let opened = input.open()?;
        // The projected columns this file has (the adapter fills the others with nulls).
        let mut names: Vec<&str> = projected
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .filter(|name| file_schema.column_with_name(name).is_some())
            .collect();
        // No column at all (`count(*)` without statistics): batches of row counts only. Else
        // the adapter gives the projected columns, null where this file lacks them.
        let rows_only = projected.fields().is_empty();
        if names.is_empty() && !file_schema.fields().is_empty() {
            // Decode one column to count rows, a fixed-width one where there is one.
            let field = file_schema
                .fields()
                .iter()
                .find(|f| f.data_type().is_primitive() || f.data_type().is_null())
                .unwrap_or(&file_schema.fields()[0]);
            names = vec![field.name().as_str()];
        }
        let whole = names.len() == file_schema.fields().len()
            && names
                .iter()
                .zip(file_schema.fields())
                .all(|(n, f)| *n == f.name());
        // Struct columns read only through some of their fields: those fields' paths, where
        // this file's column is a struct holding them.
        let mut paths: Vec<&str> = Vec::with_capacity(names.len());
        let mut cut: Vec<&str> = Vec::new();
        for name in &names {
            let fields = nested.get(*name).filter(|fields| {
                file_schema.field_with_name(name).is_ok_and(|f| {
                    fields.iter().all(|p| {
                        let path: Vec<String> = p.split('.').skip(1).map(String::from).collect();
                        nested::through_structs(f.data_type(), &path)
                    })
                })
            });
            match fields {
                Some(fields) => {
                    cut.push(name);
                    paths.extend(fields.iter().map(String::as_str));
                }
                None => paths.push(name),
            }
        }
        let pruned = !cut.is_empty();
        let mut builder = options.builder(batch_size);
        if !whole || pruned {
            builder = builder.with_projection(paths.iter().copied());
        }
        let reader = opened.reader(builder, range)?;
        // A pruned struct keeps its pruned shape: only `get_field` of the fields read uses it
        // (filling the others in would fail for non-nullable fields, and cost time); its
        // fields take the table's types, which the plan's `get_field` returns.
        let read = reader.schema();
        let target = if pruned {
            let fields: Vec<_> = projected
                .fields()
                .iter()
                .map(|f| match nested.get(f.name()) {
                    // The table's type cut to the paths the query uses: what the plan's
                    // `get_field` returns, an `int` of this file as the table's `long`, a
                    // record at a path's end whole. (A column read whole here, where the
                    // file lacks a field the query names, takes the table's whole type.)
                    Some(paths) if cut.contains(&f.name().as_str()) => {
                        let paths: Vec<Vec<&str>> = paths
                            .iter()
                            .map(|p| p.split('.').skip(1).collect())
                            .collect();
                        Arc::new(
                            f.as_ref()
                                .clone()
                                .with_data_type(nested::pruned_to(f.data_type(), &paths)),
                        )
                    }
                    _ => Arc::clone(f),
                })
                .collect();
            Arc::new(arrow::datatypes::Schema::new_with_metadata(
                fields,
                projected.metadata().clone(),
            ))
        } else {
            Arc::clone(projected)
        };
        let structs = nested::has_structs(&target);
        let maps = nested::maps_as_table(&read, &target);
        let adapter =
            BatchAdapterFactory::new(target).make_adapter(maps.as_ref().unwrap_or(&read))?;
        Ok(Scan {
            reader,
            adapter,
            rows_only: rows_only.then(|| Arc::clone(projected)),
            structs,
            maps,
        })
    }

    /// The scan's batches, adapted to the table's columns, up to `limit` rows (at least) and
    /// up to the first error.
    fn batches(self, limit: Option<usize>) -> impl Iterator<Item = Result<RecordBatch>> {
        let Scan {
            mut reader,
            adapter,
            rows_only,
            structs,
            maps,
        } = self;
        let mut rows = 0usize;
        let mut done = false;
        // `done` is checked before the reader is asked: nothing is decoded past the limit or
        // an error.
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let item = reader
                .next()?
                .map_err(external)
                .and_then(|b| match &rows_only {
                    Some(empty) => Ok(RecordBatch::try_new_with_options(
                        Arc::clone(empty),
                        vec![],
                        &RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
                    )?),
                    None => match &maps {
                        Some(schema) => nested::cast_maps(&b, schema),
                        None => Ok(b),
                    }
                    .and_then(|b| adapter.adapt_batch(&b))
                    .and_then(|b| match structs {
                        true => nested::with_struct_nulls(b),
                        false => Ok(b),
                    }),
                });
            match &item {
                Ok(b) => {
                    rows += b.num_rows();
                    done = limit.is_some_and(|limit| rows >= limit);
                }
                Err(_) => done = true,
            }
            Some(item)
        })
    }

    /// The batches as a stream that decodes each as it is polled, on the polling thread
    /// ([`INLINE_BYTES`]). A panic ends it with an error naming `name`, as on a scan's own
    /// thread.
    fn inline(
        self,
        name: String,
        limit: Option<usize>,
    ) -> impl futures::Stream<Item = Result<RecordBatch>> + Send {
        let mut batches = self.batches(limit);
        let mut stopped = false;
        futures::stream::iter(std::iter::from_fn(move || {
            if stopped {
                return None;
            }
            let next = caught(&name, || Ok(batches.next()));
            next.unwrap_or_else(|e| {
                stopped = true;
                Some(Err(e))
            })
        }))
    }

    /// Send the batches in groups ([`GROUP_BATCHES`], [`GROUP_BYTES`]): the stream's task
    /// decodes nothing and usually waits, so every send wakes it (a futex and, across cores,
    /// an interrupt: costly in a VM); a group wakes it once for several batches. The first
    /// batch goes alone, for whoever needs only the first rows.
    fn run(self, tx: &tokio::sync::mpsc::Sender<Vec<Result<RecordBatch>>>, limit: Option<usize>) {
        let mut group = Vec::with_capacity(GROUP_BATCHES);
        let mut bytes = 0;
        let mut first = true;
        for item in self.batches(limit) {
            if let Ok(b) = &item {
                bytes += b.get_array_memory_size();
            }
            let failed = item.is_err();
            group.push(item);
            if first || group.len() >= GROUP_BATCHES || bytes >= GROUP_BYTES || failed {
                first = false;
                bytes = 0;
                if tx.blocking_send(std::mem::take(&mut group)).is_err() {
                    return;
                }
            }
        }
        if !group.is_empty() {
            let _ = tx.blocking_send(group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_file_leaves_the_cache_when_its_last_split_opens() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let path = object_store::path::Path::from("data/order.avro");
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../datasets/samples/order.avro"
        );
        store
            .put(&path, std::fs::read(sample).unwrap().into())
            .await
            .unwrap();
        let meta = store.head(&path).await.unwrap();
        let cache = FileCache::default();
        let first = cache.locate(&store, &meta, 2).await.unwrap();
        assert_eq!(cache.files.lock().unwrap().len(), 1);
        let second = cache.locate(&store, &meta, 2).await.unwrap();
        // The second split got the first one's header, and the file is gone from the cache.
        assert!(Arc::ptr_eq(&first, &second));
        assert!(first.header.is_some());
        assert!(cache.files.lock().unwrap().is_empty());
    }
}
