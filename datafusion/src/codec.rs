//! Sending an avrow scan to another process: a DataFusion `PhysicalExtensionCodec` for the
//! `DataSourceExec` of an [`AvrowSource`], so that distributed engines built on
//! `datafusion-proto` (datafusion-distributed, Ballista) ship it to their workers.
//!
//! The scan is DataFusion's own `FileScanConfig` message (files with their byte ranges, table
//! schema, projection, limit, batch size, statistics) plus avrow's read options; on the worker
//! it becomes the same `DataSourceExec` over a new [`AvrowSource`]. Register the codec on the
//! coordinator (which encodes) and on every worker (which decodes):
//!
//! ```rust,ignore
//! // datafusion-distributed (not a dependency of this crate; see `examples/distributed/main.rs`):
//! let coordinator = SessionStateBuilder::new()
//!     .with_default_features()
//!     .with_distributed_planner()
//!     .with_distributed_worker_resolver(urls)
//!     .with_distributed_user_codec(avrow_datafusion::AvrowCodec)
//!     .build();
//! let worker = Worker::from_session_builder(|ctx: WorkerQueryContext| async move {
//!     Ok(ctx.builder.with_distributed_user_codec(avrow_datafusion::AvrowCodec).build())
//! });
//! ```

use crate::{AvrowReadOptions, AvrowSource};
use datafusion::datasource::physical_plan::FileSource;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::from_proto::{
    parse_protobuf_file_scan_config, parse_table_schema_from_proto,
};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::FileScanExecConf;
use prost::Message;
use std::sync::Arc;

/// The `PhysicalExtensionCodec` of avrow scans (see the module docs). It encodes only the
/// `DataSourceExec` of an [`AvrowSource`] and refuses every other node, so it composes with
/// other codecs.
#[derive(Debug, Default, Clone, Copy)]
pub struct AvrowCodec;

/// The wire form of an avrow scan.
#[derive(Clone, PartialEq, Message)]
struct AvrowScan {
    /// The scan's files, ranges, schema, projection, limit and statistics.
    #[prost(message, optional, tag = "1")]
    base: Option<FileScanExecConf>,
    /// [`AvrowReadOptions::reader_schema`], as its JSON text.
    #[prost(string, optional, tag = "2")]
    reader_schema: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    batch_size: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    max_recursion_depth: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    threads: Option<u64>,
    #[prost(bool, tag = "6")]
    utf8_view: bool,
}

fn proto_err(what: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("avrow scan {what}: {e}"))
}

impl PhysicalExtensionCodec for AvrowCodec {
    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some((config, source)) = node
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.downcast_to_file_source::<AvrowSource>())
        else {
            return Err(DataFusionError::NotImplemented(format!(
                "AvrowCodec encodes avrow scans only, not {}",
                node.name()
            )));
        };
        let options = source.options();
        let as_u64 = |v: Option<usize>| v.map(|v| v as u64);
        AvrowScan {
            base: Some(serialize_file_scan_config(config, self, proto_converter)?),
            reader_schema: options.reader_schema.as_ref().map(|s| s.json().to_string()),
            batch_size: as_u64(options.batch_size),
            max_recursion_depth: as_u64(options.max_recursion_depth),
            threads: as_u64(options.threads),
            utf8_view: options.utf8_view,
        }
        .encode(buf)
        .map_err(|e| proto_err("encoding", e))
    }

    fn try_decode(
        &self,
        buf: &[u8],
        _inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let scan = AvrowScan::decode(buf).map_err(|e| proto_err("decoding", e))?;
        let base = scan
            .base
            .as_ref()
            .ok_or_else(|| proto_err("decoding", "no file scan configuration"))?;
        let as_usize = |v: Option<u64>| v.map(|v| v as usize);
        let mut options = AvrowReadOptions {
            batch_size: as_usize(scan.batch_size),
            max_recursion_depth: as_usize(scan.max_recursion_depth),
            threads: as_usize(scan.threads),
            utf8_view: scan.utf8_view,
            ..AvrowReadOptions::default()
        };
        if let Some(json) = &scan.reader_schema {
            let schema = avrow::Schema::parse(json).map_err(|e| proto_err("reader schema", e))?;
            options = options.with_reader_schema(schema);
        }
        // An unprojected source: the decoder pushes the message's projection into it.
        let source: Arc<dyn FileSource> = Arc::new(AvrowSource::new(
            parse_table_schema_from_proto(base)?,
            options,
        ));
        let config = parse_protobuf_file_scan_config(
            base,
            &PhysicalPlanDecodeContext::new(ctx, self),
            proto_converter,
            source,
        )?;
        Ok(DataSourceExec::from_data_source(config))
    }
}
