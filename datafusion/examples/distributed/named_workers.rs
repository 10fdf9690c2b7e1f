//! A channel resolver whose errors name the worker they come from: datafusion-distributed's
//! own (one cached channel per worker URL) wrapped so that every call to a worker, and every
//! item of the streams it returns, adds "worker URL" to its error. Without it a worker that
//! dies mid-query ends the query with tonic's bare "transport error", which says nothing of
//! which machine went away.
//!
//! Install one per process (it caches the channels), on the coordinator and on every worker
//! (workers read from each other in shuffles):
//! `builder.with_distributed_channel_resolver(resolver.clone())`.

use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_distributed::grpc::DefaultChannelResolver;
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, ExecuteTaskRequest, GetWorkerInfoRequest,
    GetWorkerInfoResponse, SetPlanRequest, WorkerChannel, WorkerToCoordinatorMsg,
};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use tonic::codegen::http::HeaderMap;

/// datafusion-distributed's default channel resolver, its errors naming the worker.
#[derive(Clone, Default)]
pub struct NamedWorkers(DefaultChannelResolver);

fn named(url: &str, e: DataFusionError) -> DataFusionError {
    e.context(format!("worker {url}"))
}

#[async_trait]
impl ChannelResolver for NamedWorkers {
    async fn get_worker_client_for_url(&self, url: &url::Url) -> Result<Box<dyn WorkerChannel>> {
        let inner = self
            .0
            .get_worker_client_for_url(url)
            .await
            .map_err(|e| named(url.as_str(), e))?;
        Ok(Box::new(Named {
            url: url.to_string(),
            inner,
        }))
    }
}

/// A worker's client whose errors name the worker.
struct Named {
    url: String,
    inner: Box<dyn WorkerChannel>,
}

#[async_trait]
impl WorkerChannel for Named {
    async fn coordinator_channel(
        &mut self,
        headers: HeaderMap,
        request: SetPlanRequest,
        c2w: BoxStream<'static, CoordinatorToWorkerMsg>,
        metrics: ExecutionPlanMetricsSet,
        ctx: &Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<WorkerToCoordinatorMsg>>> {
        let url = self.url.clone();
        let stream = self
            .inner
            .coordinator_channel(headers, request, c2w, metrics, ctx)
            .await
            .map_err(|e| named(&url, e))?;
        Ok(stream.map_err(move |e| named(&url, e)).boxed())
    }

    async fn execute_task(
        &mut self,
        headers: HeaderMap,
        request: ExecuteTaskRequest,
        metrics: ExecutionPlanMetricsSet,
        ctx: &Arc<TaskContext>,
    ) -> Result<Vec<BoxStream<'static, Result<RecordBatch>>>> {
        let url = self.url.clone();
        let streams = self
            .inner
            .execute_task(headers, request, metrics, ctx)
            .await
            .map_err(|e| named(&url, e))?;
        Ok(streams
            .into_iter()
            .map(|stream| {
                let url = url.clone();
                stream.map_err(move |e| named(&url, e)).boxed()
            })
            .collect())
    }

    async fn get_worker_info(
        &mut self,
        request: GetWorkerInfoRequest,
    ) -> Result<GetWorkerInfoResponse> {
        let url = self.url.clone();
        self.inner
            .get_worker_info(request)
            .await
            .map_err(|e| named(&url, e))
    }
}
