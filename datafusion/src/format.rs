//! [`AvrowFormat`] (DataFusion's `FileFormat`) and its factory: schema inference over many
//! files, statistics from block headers, the scan plan, and the write plan (`sink.rs`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{not_impl_err, plan_err, GetExt, Result, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::write::get_writer_schema;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore};

use crate::options::{split_options, AvrowReadOptions, AvrowWriteOptions};
use crate::schemas::{file_key, FileFacts, SchemaCache};
use crate::sink::AvrowSink;
use crate::source::{caught, AvrowSource, Input};
use crate::store::RowCount;

/// Makes [`AvrowFormat`]s for `STORED AS AVRO` tables and `COPY ... TO '*.avro'`, with the
/// statement's `OPTIONS`.
#[derive(Debug, Default, Clone)]
pub struct AvrowFormatFactory {
    options: AvrowReadOptions,
    write: AvrowWriteOptions,
}

impl AvrowFormatFactory {
    /// A factory whose formats start from `options` (a statement's options override them).
    pub fn new(options: AvrowReadOptions) -> Self {
        AvrowFormatFactory {
            options,
            write: AvrowWriteOptions::default(),
        }
    }

    /// The factory with these writing options (a statement's options override them).
    pub fn with_write_options(mut self, write: AvrowWriteOptions) -> Self {
        self.write = write;
        self
    }
}

impl FileFormatFactory for AvrowFormatFactory {
    fn create(
        &self,
        _state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        let (read, write) = split_options(format_options);
        let options = self.options.clone().apply(&read)?;
        let write = self.write.clone().apply(&write)?;
        Ok(Arc::new(
            AvrowFormat::new(options).with_write_options(write),
        ))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(AvrowFormat::new(self.options.clone()).with_write_options(self.write.clone()))
    }
}

impl GetExt for AvrowFormatFactory {
    fn get_ext(&self) -> String {
        "avro".to_string()
    }
}

/// Avro container files read and written by avrow, as a DataFusion file format.
#[derive(Default, Clone)]
pub struct AvrowFormat {
    options: AvrowReadOptions,
    write: AvrowWriteOptions,
    /// The files' Arrow schemas by writer schema, made with `options`: shared by schema
    /// inference and the scans this format plans; and what schema inference learned of small
    /// local files, for their statistics and scans.
    schemas: Arc<SchemaCache>,
    facts: Arc<FileFacts>,
}

impl fmt::Debug for AvrowFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AvrowFormat")
            .field("reader_schema", &self.options.reader_schema.is_some())
            .field("batch_size", &self.options.batch_size)
            .field("codec", &self.write.codec)
            .finish()
    }
}

impl AvrowFormat {
    /// A format reading with `options` (and writing with the default writing options).
    pub fn new(options: AvrowReadOptions) -> Self {
        AvrowFormat {
            options,
            write: AvrowWriteOptions::default(),
            schemas: Arc::default(),
            facts: Arc::default(),
        }
    }

    /// The format writing with `write`.
    pub fn with_write_options(mut self, write: AvrowWriteOptions) -> Self {
        self.write = write;
        self
    }

    /// The read options.
    pub fn options(&self) -> &AvrowReadOptions {
        &self.options
    }

    /// The writing options.
    pub fn write_options(&self) -> &AvrowWriteOptions {
        &self.write
    }
}

#[async_trait]
impl FileFormat for AvrowFormat {
    fn get_ext(&self) -> String {
        "avro".to_string()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        if compression.is_compressed() {
            // Avro compresses blocks inside the file (every codec is read); a compressed
            // file around it cannot be split or read.
            return not_impl_err!(
                "Avro files are not read through an outer compression ({compression:?}): \
                 their blocks carry their own codec"
            );
        }
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    /// Each file's schema as avrow reads it; one schema when all agree, else their merge
    /// (columns missing from a file read as nulls). With a reader schema, the reader
    /// schema's, every file resolved against it.
    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        // The files' headers are read concurrently (as DataFusion's Parquet format reads
        // footers), in the files' order, so that the merged schema's columns come in it.
        let concurrency = state
            .config_options()
            .execution
            .meta_fetch_concurrency
            .get();
        let each: Vec<(String, SchemaRef)> = futures::stream::iter(objects)
            .map(|object| async move {
                let input = Input::locate(store, object).await?;
                let name = input.name();
                let builder = self.options.builder(None);
                let cache = Arc::clone(&self.schemas);
                let schema = if input.inline(object.size) {
                    // One read gives the schema and the rows, kept for the statistics and
                    // the scan.
                    let facts = caught(&name, || input.local_facts(builder.clone(), &cache))?;
                    match facts {
                        Some(known) => {
                            let schema = Arc::clone(&known.schema);
                            self.facts.insert(file_key(store, object), known);
                            schema
                        }
                        None => input.schema(builder, &cache)?,
                    }
                } else {
                    tokio::task::spawn_blocking(move || input.schema(builder, &cache))
                        .await
                        .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))??
                };
                Ok::<_, datafusion::error::DataFusionError>((name, schema))
            })
            // Boxed: without it the stream's future is not `Send` for every lifetime
            // (rust-lang/rust#64552), as DataFusion's own formats note.
            .boxed()
            .buffered(concurrency)
            .try_collect()
            .await?;
        let mut schemas: Vec<SchemaRef> = Vec::with_capacity(objects.len());
        // The first file of each distinct schema, for errors.
        let mut first_files: Vec<String> = Vec::new();
        for (name, schema) in each {
            if !schemas.iter().any(|s| s == &schema) {
                schemas.push(schema);
                first_files.push(name);
            }
        }
        match schemas.len() {
            0 => Ok(Arc::new(Schema::empty())),
            1 => Ok(schemas.pop().expect("one schema")),
            // Files with different writer schemas: the `avro.schema` metadata of each would
            // conflict; the table has none. A column (or struct field) some file lacks reads
            // as nulls there, so it is nullable in the table whatever the files that have it say.
            _ => {
                // Columns whose types differ as Avro's promotions allow (int and long, a
                // field added to a record, ...) first take the type every file reads as;
                // the scan casts each file's batches to it.
                let mut types: HashMap<&str, DataType> = HashMap::new();
                let mut conflicts: Vec<&str> = Vec::new();
                for field in schemas.iter().flat_map(|s| s.fields().iter()) {
                    let name = field.name().as_str();
                    match types.get(name) {
                        None => {
                            types.insert(name, field.data_type().clone());
                        }
                        Some(seen) => match promoted(seen, field.data_type()) {
                            Some(t) => {
                                types.insert(name, t);
                            }
                            None => conflicts.push(name),
                        },
                    }
                }
                let adjusted = schemas.iter().map(|s| {
                    Schema::new(
                        s.fields()
                            .iter()
                            .map(|f| match types.get(f.name().as_str()) {
                                Some(t) if !conflicts.contains(&f.name().as_str()) => {
                                    Arc::new(f.as_ref().clone().with_data_type(t.clone()))
                                }
                                _ => Arc::clone(f),
                            })
                            .collect::<Vec<_>>(),
                    )
                });
                let adjusted: Vec<Schema> = adjusted.collect();
                let merged = match Schema::try_merge(adjusted.iter().cloned()) {
                    Ok(merged) => merged,
                    Err(e) => {
                        // Name two files that do not merge (the first pair found).
                        for j in 1..adjusted.len() {
                            for i in 0..j {
                                let pair = [adjusted[i].clone(), adjusted[j].clone()];
                                if let Err(e) = Schema::try_merge(pair) {
                                    return plan_err!(
                                        "the schemas of {} and {} do not merge: {e}",
                                        first_files[i],
                                        first_files[j]
                                    );
                                }
                            }
                        }
                        return Err(e.into());
                    }
                };
                let fields: Vec<Field> = merged
                    .fields()
                    .iter()
                    .map(|f| {
                        let each: Vec<Option<&Field>> = schemas
                            .iter()
                            .map(|s| s.field_with_name(f.name()).ok())
                            .collect();
                        nullable_where_missing(f, &each)
                    })
                    .collect();
                Ok(Arc::new(Schema::new(fields)))
            }
        }
    }

    /// The row count from the file's block headers (no record is decoded), so that
    /// `count(*)` is answered from statistics. An object of a store whose block headers take
    /// more than a few requests to walk gets an estimate (`Inexact`: planning uses it,
    /// `count(*)` scans).
    async fn infer_stats(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let known = self.facts.get(&file_key(store, object));
        let rows = if let Some(rows) = known.and_then(|k| k.rows) {
            Ok(RowCount::Exact(rows))
        } else {
            let input = Input::locate(store, object).await?;
            if input.inline(object.size) {
                caught(&input.name(), || input.count_rows())
            } else {
                tokio::task::spawn_blocking(move || input.count_rows())
                    .await
                    .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?
            }
        };
        let stats = Statistics::new_unknown(&table_schema)
            .with_total_byte_size(Precision::Inexact(object.size as usize));
        // A file whose framing is broken has no count; the scan reports its error.
        Ok(match rows {
            Ok(RowCount::Exact(rows)) => stats.with_num_rows(Precision::Exact(rows as usize)),
            Ok(RowCount::Estimate(rows)) => stats.with_num_rows(Precision::Inexact(rows as usize)),
            Err(_) => stats,
        })
    }

    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(
            AvrowSource::new(table_schema, self.options.clone())
                .with_format_caches(Arc::clone(&self.schemas), Arc::clone(&self.facts)),
        )
    }

    /// `COPY ... TO` and `INSERT INTO` (appending new files): each output file written by
    /// avrow's `Writer`. The rows' Arrow schema is checked against Avro here, so that a type
    /// Avro cannot hold (or a writer schema that does not fit) is a planning error.
    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if conf.insert_op != InsertOp::Append {
            return not_impl_err!(
                "{:?} of Avro tables (new files are appended; existing ones are never rewritten)",
                conf.insert_op
            );
        }
        if let Err(e) = self
            .write
            .builder(get_writer_schema(&conf))
            .with_threads(1)
            .build(std::io::sink())
        {
            // The writer names its output `<output>`: here it is the statement's target.
            let url = &conf.original_url;
            return match &e {
                // A column SQL named after its expression (`count(*)`) has no Avro name.
                avrow::Error::Plan {
                    source: source @ avrow::avrow_engine::PlanError::InvalidName { .. },
                    ..
                } => plan_err!("cannot write Avro to {url}: {source} (or name the column with AS)"),
                avrow::Error::Plan { source, .. } => {
                    plan_err!("cannot write Avro to {url}: {source}")
                }
                e => plan_err!("cannot write Avro to {url}: {e}"),
            };
        }
        let sink = Arc::new(AvrowSink::new(conf, self.write.clone()));
        Ok(Arc::new(DataSinkExec::new(input, sink, order_requirements)))
    }
}

/// The type values of types `a` and `b` (of one column in two files) both read as: Avro's
/// promotions (`int` and `long` as `long`, `float` and `double` as `double`, an integer and a
/// floating-point number as `double`) and lossless widenings Avro's resolution does not
/// make (decimals as one of the larger precision and scale; timestamps of one zone, and
/// times, in the finer unit); records field by field (by name, the fields of either), array
/// items and map values likewise. `None` for types neither reads as (the merge then reports
/// the conflict).
fn promoted(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::{
        Decimal128, Decimal256, Float32, Float64, Int32, Int64, LargeList, List, Map, Struct,
        Time32, Time64, Timestamp,
    };
    let finer = |u: TimeUnit, v: TimeUnit| {
        let rank = |t: TimeUnit| match t {
            TimeUnit::Second => 0,
            TimeUnit::Millisecond => 1,
            TimeUnit::Microsecond => 2,
            TimeUnit::Nanosecond => 3,
        };
        if rank(u) >= rank(v) {
            u
        } else {
            v
        }
    };
    if a == b {
        return Some(a.clone());
    }
    let item = |x: &Field, y: &Field| {
        Some(Arc::new(
            x.clone()
                .with_data_type(promoted(x.data_type(), y.data_type())?)
                .with_nullable(x.is_nullable() || y.is_nullable()),
        ))
    };
    Some(match (a, b) {
        (Int32, Int64) | (Int64, Int32) => Int64,
        (Float32, Float64) | (Float64, Float32) => Float64,
        (Int32 | Int64, Float32 | Float64) | (Float32 | Float64, Int32 | Int64) => Float64,
        // Timestamps (of one zone, or both local) and times in a finer unit: `timestamp-millis`
        // written by some producers and `timestamp-micros` by others (Kafka Connect, Iceberg).
        (Timestamp(u, z), Timestamp(v, w)) if z == w => Timestamp(finer(*u, *v), z.clone()),
        (Time32(u) | Time64(u), Time32(v) | Time64(v)) => match finer(*u, *v) {
            unit @ (TimeUnit::Second | TimeUnit::Millisecond) => Time32(unit),
            unit => Time64(unit),
        },
        // Decimals whose precision or scale grew (not a promotion of Avro's, which reads a
        // decimal of another precision as its bytes, but lossless): the digits of both.
        (Decimal128(p, s) | Decimal256(p, s), Decimal128(q, t) | Decimal256(q, t)) => {
            let scale = (*s).max(*t);
            let integer = (i16::from(*p) - i16::from(*s)).max(i16::from(*q) - i16::from(*t));
            let precision = u8::try_from(integer + scale as i16).ok()?;
            match precision {
                0..=38 if matches!((a, b), (Decimal128(..), Decimal128(..))) => {
                    Decimal128(precision, scale)
                }
                0..=76 => Decimal256(precision, scale),
                _ => return None,
            }
        }
        (Struct(x), Struct(y)) => {
            let mut fields: Vec<Arc<Field>> = x.iter().cloned().collect();
            for theirs in y {
                match fields.iter_mut().find(|f| f.name() == theirs.name()) {
                    Some(ours) => *ours = item(ours, theirs)?,
                    None => fields.push(Arc::clone(theirs)),
                }
            }
            Struct(fields.into())
        }
        (List(x), List(y)) => List(item(x, y)?),
        (LargeList(x), LargeList(y)) => LargeList(item(x, y)?),
        (Map(x, sorted), Map(y, theirs)) if sorted == theirs => Map(item(x, y)?, *sorted),
        _ => return None,
    })
}

/// `merged` (a field of the merged table schema) made nullable if any file lacks it (`None`
/// in `each`), and so on down through struct fields, list items and map entries (a field
/// added to the records of a list or a map is null in the files without it).
fn nullable_where_missing(merged: &Field, each: &[Option<&Field>]) -> Field {
    let missing = each.iter().any(Option::is_none);
    let present: Vec<&DataType> = each.iter().flatten().map(|f| f.data_type()).collect();
    merged
        .clone()
        .with_data_type(nullable_within(merged.data_type(), &present))
        .with_nullable(merged.is_nullable() || missing)
}

/// [`nullable_where_missing`] inside `merged`, a type of the table, given the files' types
/// of the same column (`each`).
fn nullable_within(merged: &DataType, each: &[&DataType]) -> DataType {
    // The child of each file's type that `child` picks (`None` where it has none).
    fn children<'a>(
        each: &[&'a DataType],
        child: impl Fn(&'a DataType) -> Option<&'a Field>,
    ) -> Vec<Option<&'a Field>> {
        each.iter().map(|d| child(d)).collect()
    }
    match merged {
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|field| {
                    let each = children(each, |d| match d {
                        DataType::Struct(theirs) => theirs
                            .iter()
                            .find(|c| c.name() == field.name())
                            .map(|c| c.as_ref()),
                        _ => None,
                    });
                    Arc::new(nullable_where_missing(field, &each))
                })
                .collect(),
        ),
        DataType::List(item) => DataType::List(Arc::new(nullable_where_missing(
            item,
            &children(each, |d| match d {
                DataType::List(i) => Some(i.as_ref()),
                _ => None,
            }),
        ))),
        DataType::LargeList(item) => DataType::LargeList(Arc::new(nullable_where_missing(
            item,
            &children(each, |d| match d {
                DataType::LargeList(i) => Some(i.as_ref()),
                _ => None,
            }),
        ))),
        DataType::Map(entries, sorted) => DataType::Map(
            Arc::new(nullable_where_missing(
                entries,
                &children(each, |d| match d {
                    DataType::Map(e, _) => Some(e.as_ref()),
                    _ => None,
                }),
            )),
            *sorted,
        ),
        other => other.clone(),
    }
}
