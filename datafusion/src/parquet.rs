//! [`ParquetCompatFormatFactory`]: DataFusion's Parquet format, writing the Arrow types that
//! Avro decodes to and Parquet cannot store as [`avrow::parquet_compat`] maps them (feature
//! `parquet`).
//!
//! Avro's general unions decode to Arrow's dense `Union`, its `duration` to
//! `Interval(MonthDayNano)`, a record without fields to an empty struct: the `parquet` crate
//! panics on the first two and refuses the third, so `COPY (SELECT * FROM 'x.avro') TO
//! 'x.parquet'` failed where `avrow convert x.avro -o x.parquet` works. Registered in place of
//! DataFusion's own Parquet format ([`crate::register`]), this one reads and writes exactly as
//! DataFusion's does, except that a write whose columns hold such types goes through the
//! mapping: a union becomes a struct of its members (`member0`, ...), a duration its 12 bytes
//! (`FixedSizeBinary(12)`: DataFusion's writer takes no Parquet schema, so unlike `avrow
//! convert` the column is not annotated `INTERVAL`), an empty record a struct with one null
//! child `__empty`. Writes without them are DataFusion's plan, unchanged.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use avrow::parquet_compat::{needs_mapping, Mapping};
use datafusion::catalog::Session;
use datafusion::common::{internal_datafusion_err, DataFusionError, GetExt, Result, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory, FileMeta};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{LexOrdering, LexRequirement};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan};
use futures::StreamExt;
use object_store::{ObjectMeta, ObjectStore};

/// DataFusion's [`ParquetFormatFactory`] whose formats map Avro's Arrow types for Parquet
/// when they write (see the module documentation). Its extension is `parquet`.
#[derive(Debug)]
pub struct ParquetCompatFormatFactory {
    inner: ParquetFormatFactory,
}

impl ParquetCompatFormatFactory {
    /// Around DataFusion's factory with the session's Parquet options.
    pub fn new() -> Self {
        ParquetCompatFormatFactory {
            inner: ParquetFormatFactory::new(),
        }
    }

    /// Around `inner` (a factory with options of its own).
    pub fn with_inner(inner: ParquetFormatFactory) -> Self {
        ParquetCompatFormatFactory { inner }
    }
}

impl Default for ParquetCompatFormatFactory {
    fn default() -> Self {
        Self::new()
    }
}

impl FileFormatFactory for ParquetCompatFormatFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(Arc::new(ParquetCompatFormat {
            inner: self.inner.create(state, format_options)?,
        }))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(ParquetCompatFormat {
            inner: self.inner.default(),
        })
    }
}

impl GetExt for ParquetCompatFormatFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

/// DataFusion's Parquet format, with the mapping on writes (see
/// [`ParquetCompatFormatFactory`]).
#[derive(Debug)]
pub struct ParquetCompatFormat {
    inner: Arc<dyn FileFormat>,
}

#[async_trait]
impl FileFormat for ParquetCompatFormat {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        self.inner.get_ext_with_compression(compression)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        self.inner.infer_schema(state, store, objects).await
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        self.inner
            .infer_stats(state, store, table_schema, object)
            .await
    }

    async fn infer_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Option<LexOrdering>> {
        self.inner
            .infer_ordering(state, store, table_schema, object)
            .await
    }

    async fn infer_stats_and_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<FileMeta> {
        self.inner
            .infer_stats_and_ordering(state, store, table_schema, object)
            .await
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.create_physical_plan(state, conf).await
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        mut conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input_schema = input.schema();
        let output_schema = conf.output_schema().clone();
        let maps = |schema: &SchemaRef| {
            schema.fields().is_empty()
                || schema.fields().iter().any(|f| needs_mapping(f.data_type()))
        };
        if !maps(&input_schema) && !maps(&output_schema) {
            return self
                .inner
                .create_writer_physical_plan(input, state, conf, order_requirements)
                .await;
        }
        // The stream the sink receives has the input's columns (partition columns among them);
        // the file's schema is the table's. Both are mapped field by field, the same way.
        let stream = Mapping::new(&input_schema).map_err(plan_error)?;
        conf.output_schema = Mapping::new(&output_schema).map_err(plan_error)?.schema;
        let plan = self
            .inner
            .create_writer_physical_plan(input.clone(), state, conf, order_requirements.clone())
            .await?;
        // DataFusion's Parquet sink, configured with the mapped schema, behind one that maps
        // each batch on its way in.
        if !plan.is::<DataSinkExec>() {
            return Err(internal_datafusion_err!(
                "DataFusion's Parquet format planned {} for a write, not a DataSinkExec",
                plan.name()
            ));
        }
        let sink = MappingSink {
            plan,
            schema: output_schema,
            stream: Arc::new(stream),
        };
        Ok(Arc::new(DataSinkExec::new(
            input,
            Arc::new(sink),
            order_requirements,
        )))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

/// The mapping of a schema no mapping covers, as a planning error (`avrow sql`: exit 2).
fn plan_error(e: avrow::parquet_compat::ParquetMappingError) -> DataFusionError {
    DataFusionError::Plan(format!("cannot write this query to Parquet: {e}"))
}

/// Maps each batch ([`Mapping::apply`]) and hands the stream to the sink of `plan` (a
/// [`DataSinkExec`] planned by DataFusion's Parquet format with the mapped schema).
struct MappingSink {
    plan: Arc<dyn ExecutionPlan>,
    /// The unmapped schema: what the input is checked against (its non-null columns).
    schema: SchemaRef,
    stream: Arc<Mapping>,
}

impl MappingSink {
    fn inner(&self) -> &dyn DataSink {
        self.plan
            .downcast_ref::<DataSinkExec>()
            .expect("checked when planned")
            .sink()
    }
}

impl fmt::Debug for MappingSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappingSink")
            .field("inner", &self.inner())
            .finish()
    }
}

impl DisplayAs for MappingSink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AvroTypesForParquet: ")?;
        self.inner().fmt_as(t, f)
    }
}

#[async_trait]
impl DataSink for MappingSink {
    fn metrics(&self) -> Option<MetricsSet> {
        self.inner().metrics()
    }

    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let mapping = Arc::clone(&self.stream);
        let schema = Arc::clone(&mapping.schema);
        let mapped = data.map(move |batch| {
            batch.and_then(|b| {
                mapping
                    .apply(&b)
                    .map_err(|e| DataFusionError::External(Box::new(e)))
            })
        });
        let stream = Box::pin(RecordBatchStreamAdapter::new(schema, mapped));
        self.inner().write_all(stream, context).await
    }
}
