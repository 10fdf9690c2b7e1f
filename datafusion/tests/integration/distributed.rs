//! The avrow scan on datafusion-distributed: a coordinator and two workers on localhost
//! (tonic over TCP), queries split into tasks that run on the workers, answers equal to one
//! node's. Also the codec on its own: a scan survives encoding and decoding unchanged.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use avrow_datafusion::{AvrowCodec, AvrowReadOptions, SessionContextAvrowExt};
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    DistributedExt, RouteTasksEvent, RouteTasksEventResponse, SessionStateBuilderExt, Worker,
    WorkerQueryContext, WorkerResolver,
};

use crate::common::{avrow_ctx, query, text};

// The example's channel resolver, whose errors name the worker.
#[path = "../../examples/distributed/named_workers.rs"]
mod named_workers;
use named_workers::NamedWorkers;

struct Localhost(Vec<u16>);

impl WorkerResolver for Localhost {
    fn get_urls(&self) -> datafusion::error::Result<Vec<url::Url>> {
        Ok(self
            .0
            .iter()
            .map(|p| url::Url::parse(&format!("http://127.0.0.1:{p}")).unwrap())
            .collect())
    }
}

/// A worker that decodes avrow scans and names the workers it reads from in its errors;
/// `tasks` counts the tasks it was sent.
fn worker(named: NamedWorkers, tasks: Arc<AtomicUsize>) -> Worker {
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        tasks.fetch_add(1, Ordering::Relaxed);
        let named = named.clone();
        async move {
            Ok(ctx
                .builder
                .with_distributed_channel_resolver(named)
                .with_distributed_user_codec(AvrowCodec)
                .build())
        }
    })
}

/// `n` workers on localhost ports, each counting the tasks it was sent, and a coordinator
/// that splits scans into tasks of ~`bytes` bytes.
async fn cluster(n: usize, bytes: usize) -> (SessionContext, Arc<AtomicUsize>) {
    let (ctx, tasks, _workers) = cluster_with_workers(n, bytes, None).await;
    (ctx, tasks)
}

/// [`cluster`], with the workers' server tasks (abort one to kill that worker). With
/// `first`, every stage's tasks are routed by [`route_from`] from that worker; otherwise the
/// coordinator routes from a random worker.
async fn cluster_with_workers(
    n: usize,
    bytes: usize,
    first: Option<usize>,
) -> (
    SessionContext,
    Arc<AtomicUsize>,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let tasks = Arc::new(AtomicUsize::new(0));
    let mut ports = Vec::new();
    let mut workers = Vec::new();
    let named = NamedWorkers::default();
    for _ in 0..n {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        ports.push(listener.local_addr().unwrap().port());
        let worker = worker(named.clone(), tasks.clone());
        workers.push(tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(worker.into_worker_server())
                .serve_with_incoming(
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
                )
                .await
                .unwrap();
        }));
    }
    let urls = Localhost(ports.clone()).get_urls().unwrap();
    let mut builder = SessionStateBuilder::new()
        .with_default_features()
        .with_config(SessionConfig::new().with_target_partitions(2))
        .with_distributed_planner()
        .with_distributed_worker_resolver(Localhost(ports))
        .with_distributed_channel_resolver(named)
        .with_distributed_user_codec(AvrowCodec)
        .with_distributed_file_scan_config_bytes_per_partition(bytes)
        .unwrap();
    if let Some(first) = first {
        builder = builder.with_distributed_route_tasks_handler(route_from(urls, first));
    }
    let state = builder.build();
    let ctx = SessionContext::from(state);
    avrow_datafusion::register(&ctx).unwrap();
    (ctx, tasks, workers)
}

/// A routing that gives every stage's tasks to `urls` round-robin from `urls[first]`, so
/// that worker surely gets a task of every stage (the coordinator's own routing starts at a
/// random worker, and a stage of one task may miss any given one).
fn route_from(
    urls: Vec<url::Url>,
    first: usize,
) -> impl for<'a> Fn(RouteTasksEvent<'a>) -> Option<datafusion::error::Result<RouteTasksEventResponse>>
       + Send
       + Sync
       + 'static {
    move |ev| {
        let routed = urls.iter().cycle().skip(first).take(ev.task_count);
        Some(Ok(RouteTasksEventResponse::new(routed.cloned().collect())))
    }
}

/// A Telemetry file of 30 000 records in blocks of 500 (~2.5 MB).
fn telemetry(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("telemetry.avro");
    let opts = avrow_datasets::GenOptions {
        rows: 30_000,
        block_rows: 500,
        ..avrow_datasets::GenOptions::default()
    };
    let file = std::fs::File::create(&path).unwrap();
    avrow_datasets::write(
        avrow_datasets::Shape::Telemetry,
        &opts,
        std::io::BufWriter::new(file),
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queries_on_two_workers_equal_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let path = telemetry(dir.path());
    let order = crate::common::sample("order.avro");
    // The same orders in other blocks: the other side of a join.
    let order2 = crate::common::small_blocks(dir.path(), 8192);
    let (ctx, tasks) = cluster(2, 256 << 10).await;
    let single = avrow_ctx(2);
    for c in [&ctx, &single] {
        c.register_avrow("t", path.to_str().unwrap(), AvrowReadOptions::default())
            .await
            .unwrap();
        c.register_avrow("o", order.to_str().unwrap(), AvrowReadOptions::default())
            .await
            .unwrap();
        c.register_avrow("o2", order2.to_str().unwrap(), AvrowReadOptions::default())
            .await
            .unwrap();
    }
    let queries = [
        "SELECT count(*) FROM t",
        "SELECT count(*), sum(seq), min(ts), max(ts) FROM t WHERE temperature > 20",
        "SELECT status, count(*) AS n, sum(battery_mv) FROM t GROUP BY status ORDER BY status",
        "SELECT device_id, max(humidity) FROM t GROUP BY device_id ORDER BY device_id LIMIT 5",
        "SELECT sum(array_length(samples)) FROM t",
        "SELECT id, total FROM o WHERE paid ORDER BY id LIMIT 7",
        "SELECT count(*) FROM o WHERE note IS NULL",
        "SELECT a.paid, count(*), sum(b.item_count), round(sum(b.total), 2) FROM o a JOIN o2 b ON a.id = b.id \
         GROUP BY a.paid ORDER BY a.paid",
        "SELECT id, lines[1]['sku'], attributes FROM o2 ORDER BY id LIMIT 5",
    ];
    for sql in queries {
        let want = text(&query(&single, sql).await);
        let got = text(&query(&ctx, sql).await);
        assert_eq!(got, want, "{sql}");
    }
    // The scans ran on the workers: the plan has a distributed stage, and workers got tasks.
    let plan = ctx
        .sql("SELECT status, count(*) FROM t GROUP BY status")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    assert!(shown.contains("Distributed"), "{shown}");
    assert!(
        tasks.load(Ordering::Relaxed) >= 2,
        "{} worker tasks",
        tasks.load(Ordering::Relaxed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_file_damaged_in_one_split_is_an_error_naming_the_file() {
    // Block 45 of 60 has its record data overwritten: the task whose split holds it fails
    // on its worker, and the query ends with that error (the worker, the file, the block,
    // the byte offset), never with the other tasks' rows alone.
    let dir = tempfile::tempdir().unwrap();
    let path = telemetry(dir.path());
    let block = avrow::BlockReader::open(&path)
        .unwrap()
        .map(|b| b.unwrap())
        .nth(45)
        .unwrap();
    let (offset, len) = (block.offset(), block.data().len() as u64);
    let mut bytes = std::fs::read(&path).unwrap();
    let damaged = path.with_file_name("damaged.avro");
    // Well inside the block's data (its framing is a few bytes): 256 bytes of 0xff, more
    // than a record, so some varint field is overlong (doubles alone would be NaNs).
    let at = (offset + len / 2) as usize;
    bytes[at..at + 256].fill(0xff);
    std::fs::write(&damaged, &bytes).unwrap();
    let local = avrow::ReaderBuilder::new()
        .open(&damaged)
        .unwrap()
        .find_map(Result::err)
        .expect("the damaged block fails a local read");
    assert_eq!(local.block(), Some(45), "{local}");
    let (ctx, tasks) = cluster(2, 256 << 10).await;
    ctx.register_avrow("t", damaged.to_str().unwrap(), AvrowReadOptions::default())
        .await
        .unwrap();
    let sql = "SELECT status, count(*) AS n, sum(battery_mv) FROM t GROUP BY status";
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    assert!(shown.contains("Distributed"), "{shown}");
    let err = ctx
        .sql(sql)
        .await
        .unwrap()
        .collect()
        .await
        .expect_err("a damaged block must not give an answer")
        .to_string();
    assert!(
        err.contains("worker http://127.0.0.1:")
            && err.contains("damaged.avro")
            && err.contains("block 45")
            && err.contains("at byte"),
        "{err}"
    );
    assert!(tasks.load(Ordering::Relaxed) >= 2);
}

#[tokio::test]
async fn the_codec_round_trips_a_scan() {
    use datafusion_proto::bytes::{
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };
    let ctx = avrow_ctx(3);
    let order = crate::common::sample("order.avro");
    let options = AvrowReadOptions::default()
        .with_batch_size(100)
        .with_reader_schema(
            avrow::Schema::parse(
                r#"{"type":"record","name":"Order","namespace":"bench","fields":[
                {"name":"id","type":"long"},{"name":"total","type":"double"},
                {"name":"channel","type":"string","default":"web"}]}"#,
            )
            .unwrap(),
        );
    ctx.register_avrow("o", order.to_str().unwrap(), options)
        .await
        .unwrap();
    let sql = "SELECT id, channel FROM o WHERE total > 100 LIMIT 20";
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &AvrowCodec).unwrap();
    let back = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &AvrowCodec)
        .unwrap();
    assert_eq!(
        displayable(back.as_ref()).indent(true).to_string(),
        displayable(plan.as_ref()).indent(true).to_string()
    );
    let run = |p| datafusion::physical_plan::collect(p, ctx.task_ctx());
    assert_eq!(
        text(&run(back).await.unwrap()),
        text(&run(plan).await.unwrap())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_worker_is_an_error_not_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = telemetry(dir.path());
    let (ctx, _, workers) = cluster_with_workers(2, 256 << 10, Some(1)).await;
    ctx.register_avrow("t", path.to_str().unwrap(), AvrowReadOptions::default())
        .await
        .unwrap();
    let sql = "SELECT status, count(*) FROM t GROUP BY status ORDER BY status";
    // The second worker is killed before it has served anything (no open connection to it
    // lives on); the resolver still names it, and every stage routes its first task to it.
    workers[1].abort();
    let _ = workers.into_iter().nth(1).unwrap().await;
    let result = match ctx.sql(sql).await {
        Ok(df) => df.collect().await.map(|b| text(&b)),
        Err(e) => Err(e),
    };
    let err = result
        .expect_err("a query with a dead worker must fail")
        .to_string();
    assert!(
        err.contains("worker http://127.0.0.1:"),
        "the error should name the worker: {err}"
    );
}

/// A worker on a runtime of its own, as a process of its own would be, that dies (the
/// runtime shut down with every connection it serves) once its first task has arrived; that
/// task never finishes, so the worker surely dies with it in flight. The flag says whether
/// a task arrived.
fn doomed_worker(
    listener: std::net::TcpListener,
) -> (
    std::thread::JoinHandle<()>,
    Arc<std::sync::atomic::AtomicBool>,
) {
    let (kill, killed) = std::sync::mpsc::channel::<()>();
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asked_in_worker = Arc::clone(&asked);
    let handle = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let kill = std::sync::Mutex::new(Some(kill));
        let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
            asked_in_worker.store(true, Ordering::Relaxed);
            if let Some(kill) = kill.lock().unwrap().take() {
                let _ = kill.send(());
            }
            async move {
                std::future::pending::<()>().await;
                Ok(ctx
                    .builder
                    .with_distributed_channel_resolver(NamedWorkers::default())
                    .with_distributed_user_codec(AvrowCodec)
                    .build())
            }
        });
        runtime.spawn(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = tonic::transport::Server::builder()
                .add_service(worker.into_worker_server())
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
                .await;
        });
        // Dead with its task in flight (or after a minute, when no task came).
        if killed
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_ok()
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        runtime.shutdown_background();
    });
    (handle, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_dying_mid_query_is_an_error_or_a_retry_never_a_partial_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = telemetry(dir.path());
    let sql =
        "SELECT status, count(*) AS n, sum(battery_mv) FROM t GROUP BY status ORDER BY status";
    let single = avrow_ctx(2);
    single
        .register_avrow("t", path.to_str().unwrap(), AvrowReadOptions::default())
        .await
        .unwrap();
    let want = text(&query(&single, sql).await);

    let live = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let live_port = live.local_addr().unwrap().port();
    let named = NamedWorkers::default();
    let worker = worker(named.clone(), Arc::default());
    let live_server = tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(worker.into_worker_server())
            .serve_with_incoming(
                tonic::transport::server::TcpIncoming::from(live).with_nodelay(Some(true)),
            )
            .await;
    });
    let doomed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let doomed_port = doomed.local_addr().unwrap().port();
    let (doomed, asked) = doomed_worker(doomed);
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(SessionConfig::new().with_target_partitions(2))
        .with_distributed_planner()
        .with_distributed_worker_resolver(Localhost(vec![live_port, doomed_port]))
        .with_distributed_channel_resolver(named)
        .with_distributed_user_codec(AvrowCodec)
        .with_distributed_file_scan_config_bytes_per_partition(256 << 10)
        .unwrap()
        .with_distributed_route_tasks_handler(route_from(
            Localhost(vec![live_port, doomed_port]).get_urls().unwrap(),
            1,
        ))
        .build();
    let ctx = SessionContext::from(state);
    avrow_datafusion::register(&ctx).unwrap();
    ctx.register_avrow("t", path.to_str().unwrap(), AvrowReadOptions::default())
        .await
        .unwrap();
    let run = async {
        match ctx.sql(sql).await {
            Ok(df) => df.collect().await.map(|b| text(&b)),
            Err(e) => Err(e),
        }
    };
    let result = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("the query hung after its worker died");
    tokio::task::spawn_blocking(move || doomed.join().unwrap())
        .await
        .unwrap();
    live_server.abort();
    assert!(
        asked.load(Ordering::Relaxed),
        "the planner gave the doomed worker no task: nothing was tested"
    );
    match result {
        // The engine retried the lost tasks elsewhere: the whole answer.
        Ok(got) => {
            eprintln!("dying worker: the engine retried");
            assert_eq!(got, want, "a partial answer after a worker died")
        }
        Err(e) => {
            let err = e.to_string();
            eprintln!("dying worker: {err}");
            // The connection to the dead worker broke, and the error says which worker.
            assert!(
                err.contains(&format!("worker http://127.0.0.1:{doomed_port}/")),
                "the error should name the dead worker (port {doomed_port}): {err}"
            );
        }
    }
}
