//! SQL over Avro on a datafusion-distributed cluster, with avrow's scan running on the
//! workers (shipped to them by [`AvrowCodec`]).
//!
//! On one machine, a coordinator and N workers on localhost ports:
//!
//! ```sh
//! cargo run -p avrow-datafusion --example distributed -- --workers 2 \
//!     --table orders=datasets/samples/order.avro "SELECT paid, count(*) FROM orders GROUP BY paid"
//! ```
//!
//! On a cluster (`docs/distributed.md`): `--serve ADDR` on every worker machine, then the
//! coordinator with `--connect http://host1:PORT,http://host2:PORT` instead of `--workers`.
//!
//! Flags: `--workers N` | `--connect URL,...` | `--serve ADDR`; `--table NAME=PATH_OR_GLOB`
//! (repeatable); `--format table|csv`; `--partitions N` (per task, default 2);
//! `--split-mb N` (bytes of files per task before a scan is split, default 16);
//! `--explain` (print the distributed plan, not the result); `--rounds N` (run the query N
//! times, each in a fresh session that registers the tables again, and print each round's
//! seconds on stderr). `--workers 0` runs the query in this process alone, without the
//! distributed planner: the single-node reference the cluster's overhead is measured
//! against (`docs/perf/sql.md`).

use std::net::SocketAddr;

use arrow::util::pretty::pretty_format_batches;
use avrow_datafusion::{AvrowCodec, AvrowReadOptions, SessionContextAvrowExt};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    DistributedExt, SessionStateBuilderExt, Worker, WorkerQueryContext, WorkerResolver,
};
use tonic::transport::server::TcpIncoming;
use tonic::transport::Server;

mod named_workers;
use named_workers::NamedWorkers;

/// The workers' URLs, fixed for the coordinator's life.
struct Urls(Vec<url::Url>);

impl WorkerResolver for Urls {
    fn get_urls(&self) -> Result<Vec<url::Url>> {
        Ok(self.0.clone())
    }
}

/// A worker: decodes the tasks it is sent with avrow's codec; its reads from other workers
/// name them in their errors.
fn worker(workers: NamedWorkers) -> Worker {
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let workers = workers.clone();
        async move {
            Ok(ctx
                .builder
                .with_distributed_channel_resolver(workers)
                .with_distributed_user_codec(AvrowCodec)
                .build())
        }
    })
}

/// Serve a worker on `listener` until the process ends. Its connections set `TCP_NODELAY`
/// (tonic's client does; its server leaves the system's default): otherwise Nagle's
/// algorithm holds a small gRPC frame until the peer's delayed ACK, ~40 ms, several times
/// a query (measured: a 20 MB scan on two workers 104 ms with it, 26 ms without).
async fn serve(listener: tokio::net::TcpListener, workers: NamedWorkers) -> Result<()> {
    Server::builder()
        .add_service(worker(workers).into_worker_server())
        .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

struct Args {
    workers: Option<usize>,
    connect: Vec<url::Url>,
    serve: Option<SocketAddr>,
    tables: Vec<(String, String)>,
    csv: bool,
    partitions: usize,
    split_bytes: usize,
    explain: bool,
    rounds: usize,
    sql: Option<String>,
}

fn usage(why: &str) -> DataFusionError {
    DataFusionError::Configuration(format!(
        "{why}\nusage: distributed (--workers N | --connect URL,... | --serve ADDR) \
         [--table NAME=PATH_OR_GLOB]... [--format table|csv] [--partitions N] [--split-mb N] \
         [--explain] [--rounds N] \"SQL\""
    ))
}

fn parse() -> Result<Args> {
    let mut a = Args {
        workers: None,
        connect: Vec::new(),
        serve: None,
        tables: Vec::new(),
        csv: false,
        partitions: 2,
        split_bytes: 16 << 20,
        explain: false,
        rounds: 1,
        sql: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| usage(&format!("{name} needs a value")))
        };
        let number = |v: String, name: &str| {
            v.parse::<usize>()
                .map_err(|_| usage(&format!("{name}: not a number: {v}")))
        };
        match arg.as_str() {
            "--workers" => a.workers = Some(number(value("--workers")?, "--workers")?),
            "--connect" => {
                for u in value("--connect")?.split(',') {
                    a.connect.push(
                        url::Url::parse(u).map_err(|e| usage(&format!("--connect {u}: {e}")))?,
                    );
                }
            }
            "--serve" => {
                let v = value("--serve")?;
                a.serve = Some(v.parse().map_err(|e| usage(&format!("--serve {v}: {e}")))?);
            }
            "--table" => {
                let v = value("--table")?;
                let (name, path) = v
                    .split_once('=')
                    .ok_or_else(|| usage(&format!("--table {v}: expected NAME=PATH")))?;
                a.tables.push((name.to_string(), path.to_string()));
            }
            "--format" => match value("--format")?.as_str() {
                "table" => a.csv = false,
                "csv" => a.csv = true,
                other => return Err(usage(&format!("--format {other}: table or csv"))),
            },
            "--partitions" => a.partitions = number(value("--partitions")?, "--partitions")?.max(1),
            "--split-mb" => {
                let mb = number(value("--split-mb")?, "--split-mb")?;
                a.split_bytes = mb
                    .checked_mul(1 << 20)
                    .ok_or_else(|| usage(&format!("--split-mb {mb}: too large")))?
                    .max(1)
            }
            "--explain" => a.explain = true,
            "--rounds" => a.rounds = number(value("--rounds")?, "--rounds")?.max(1),
            sql if !sql.starts_with("--") && a.sql.is_none() => a.sql = Some(sql.to_string()),
            other => return Err(usage(&format!("unexpected argument {other}"))),
        }
    }
    Ok(a)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = parse()?;
    // One resolver for the process: it caches a channel per worker.
    let workers = NamedWorkers::default();
    if let Some(addr) = args.serve {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!("avrow worker listening on {}", listener.local_addr()?);
        return serve(listener, workers).await;
    }
    let sql = args.sql.clone().ok_or_else(|| usage("no SQL given"))?;
    let urls = match (args.workers, args.connect.is_empty()) {
        (Some(0), true) => None,
        (Some(n), true) => {
            let mut urls = Vec::new();
            for _ in 0..n {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                let port = listener.local_addr()?.port();
                urls.push(url::Url::parse(&format!("http://127.0.0.1:{port}")).expect("a URL"));
                let workers = workers.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(listener, workers).await {
                        eprintln!("worker on port {port}: {e}");
                    }
                });
            }
            Some(urls)
        }
        (None, false) => Some(args.connect.clone()),
        _ => return Err(usage("give --workers N or --connect URLs")),
    };
    let mut batches = Vec::new();
    for round in 1..=args.rounds {
        let start = std::time::Instant::now();
        let config = SessionConfig::new().with_target_partitions(args.partitions);
        let state = match &urls {
            Some(urls) => SessionStateBuilder::new()
                .with_default_features()
                .with_config(config)
                .with_distributed_planner()
                .with_distributed_worker_resolver(Urls(urls.clone()))
                .with_distributed_channel_resolver(workers.clone())
                .with_distributed_user_codec(AvrowCodec)
                .with_distributed_file_scan_config_bytes_per_partition(args.split_bytes)?
                .build(),
            None => SessionStateBuilder::new()
                .with_default_features()
                .with_config(config)
                .build(),
        };
        let ctx = SessionContext::from(state);
        avrow_datafusion::register(&ctx)?;
        for (name, path) in &args.tables {
            ctx.register_avrow(name, path, AvrowReadOptions::default())
                .await?;
        }
        let df = ctx.sql(&sql).await?;
        if args.explain {
            let plan = df.create_physical_plan().await?;
            println!(
                "{}",
                datafusion_distributed::display_plan_ascii(plan.as_ref(), false)
            );
            return Ok(());
        }
        batches = df.collect().await?;
        if args.rounds > 1 {
            eprintln!("round {round}: {:.3} s", start.elapsed().as_secs_f64());
        }
    }
    if args.csv {
        let mut w = arrow::csv::WriterBuilder::new()
            .with_header(true)
            .build(std::io::stdout());
        for b in &batches {
            w.write(b)?;
        }
    } else {
        println!("{}", pretty_format_batches(&batches)?);
    }
    Ok(())
}
