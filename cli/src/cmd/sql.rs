//! `avrow sql [--table NAME=PATH]... [--option KEY=VALUE]... "SQL"`: a DataFusion session
//! whose `avro` format is avrow's (`avrow-datafusion`: read, and written by `COPY ... TO
//! 'out.avro'`), with Parquet, CSV, JSON and Arrow tables beside it, the tables and the object
//! stores they need registered, the statements run in order on a tokio runtime of
//! `--partitions` threads, and each query's answer printed as a table, CSV or NDJSON.

use super::stdout;
use crate::args::{SqlArgs, SqlFormat};
use crate::error::usage;
use crate::output;
use crate::writers::csv::CsvWriter;
use crate::writers::json;
use crate::writers::BatchWriter;
use anyhow::{anyhow, Context, Result};
use arrow::json::writer::LineDelimited;
use arrow::util::pretty::pretty_format_batches_with_schema;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt, StagedLocalFiles};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::file_format::options::ArrowReadOptions;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{
    CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionConfig, SessionContext,
};
use datafusion::sql::parser::DFParserBuilder;
use datafusion::sql::sqlparser::dialect::dialect_from_str;
use futures::StreamExt;
use std::io::Write;
use std::sync::Arc;

/// One `--table NAME=PATH`.
fn table(arg: &str) -> Result<(&str, &str)> {
    match arg.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name, path)),
        _ => Err(usage(format!(
            "--table takes NAME=PATH_OR_GLOB, not '{arg}'"
        ))),
    }
}

/// One `--option KEY=VALUE`, its key checked.
fn store_option(arg: &str) -> Result<(String, String)> {
    let Some((key, value)) = arg.split_once('=').filter(|(k, _)| !k.is_empty()) else {
        return Err(usage(format!("--option takes KEY=VALUE, not '{arg}'")));
    };
    let option = vec![(key.to_ascii_lowercase(), value.to_string())];
    avrow_datafusion::validate_store_options(&option)
        .map_err(|e| usage(format!("--option {e}")))?;
    Ok(option.into_iter().next().expect("one option"))
}

/// A query that cannot be planned (a syntax error, an unknown table or column, a type error,
/// something DataFusion does not implement) is a usage error, whatever the data; errors while
/// reading the tables stay data errors.
fn query_error(e: DataFusionError) -> anyhow::Error {
    match e.find_root() {
        DataFusionError::SQL(..)
        | DataFusionError::Plan(..)
        | DataFusionError::SchemaError(..)
        | DataFusionError::NotImplemented(..) => usage(format!("the query: {e}")),
        _ => anyhow!(e),
    }
}

/// Transparent huge pages off for this process. A query runs tens of threads (tokio's workers
/// and its blocking pool, where files are opened and decoded), and mimalloc, which asks for
/// huge pages for its arenas, gives each thread's heap pages of its own: with huge pages
/// every thread's first allocations faulted in and zeroed whole 2 MiB pages: over 1,000
/// small files `count(*)` took 0.43–0.83 s and 300–950 MB with them, 0.15 s and 80–100 MB
/// without (docs/perf/sql.md). Queries over large files took the same time either way.
#[cfg(target_os = "linux")]
fn no_huge_pages() {
    // SAFETY: `prctl(PR_SET_THP_DISABLE)` takes no pointers: it sets a flag of this process
    // that page faults check. A refusal leaves huge pages on, which is correct, only slower.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Runs the query and prints the answer.
///
/// # Errors
/// A table cannot be registered, the query fails (the error names the file and location),
/// or writing fails.
pub fn run(args: &SqlArgs) -> Result<()> {
    let tables = args
        .tables
        .iter()
        .map(|t| table(t))
        .collect::<Result<Vec<_>>>()?;
    // (Unquoted, as DataFusion takes a registered name: `T` and `t` are one table.)
    for (i, (name, _)) in tables.iter().enumerate() {
        if tables[..i]
            .iter()
            .any(|(other, _)| other.eq_ignore_ascii_case(name))
        {
            return Err(usage(format!("--table {name} is given twice")));
        }
    }
    let options = args
        .options
        .iter()
        .map(|o| store_option(o))
        .collect::<Result<Vec<_>>>()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let partitions = match args.partitions {
        0 => cores,
        n => n,
    };
    #[cfg(target_os = "linux")]
    no_huge_pages();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // A thread a partition up to a thread a core: more partitions than cores share
        // them (a thread each, with its stack, failed to start by the thousand: an abort).
        // Scans decode on tokio's blocking threads, one a partition scanning (small
        // uncompressed local files on the partition's own thread).
        .worker_threads(partitions.min(cores))
        // Deeply nested columns (a recursive schema unrolled to `max_recursion_depth`) are
        // walked recursively by arrow's and the parquet crate's writers: tokio's 2 MiB
        // default overflowed at depth 180 writing Parquet (an abort, in a debug build).
        .thread_stack_size(64 << 20)
        .enable_all()
        .build()
        .context("cannot start the query runtime")?;
    runtime.block_on(async {
        // `enable_url_table`: a lone file may be queried by its path (`FROM 'data.avro'`).
        // `information_schema`: SHOW TABLES, SHOW COLUMNS and the information_schema views.
        let ctx = SessionContext::new_with_config(
            SessionConfig::new()
                .with_target_partitions(partitions)
                .with_information_schema(true),
        )
        .enable_url_table();
        avrow_datafusion::register(&ctx).map_err(|e| anyhow!(e))?;
        // Local files a statement writes (`COPY`, `INSERT INTO`) appear only if it succeeds:
        // DataFusion's own sinks complete their files even when the query fails.
        let staged = StagedLocalFiles::install(&ctx);
        for (name, path) in &tables {
            // s3://, gs://, az:// locations: a client configured from the environment and
            // the options (a build without one, or a URL without a bucket, is a usage error).
            avrow_datafusion::register_store_with(&ctx, path, &options)
                .map_err(|e| usage(format!("table {name} ({path}): {e}")))?;
            register_table(&ctx, name, path)
                .await
                .map_err(|e| anyhow!("table {name} ({path}): {e}"))?;
        }
        let state = ctx.state();
        let dialect_name = state.config().options().sql_parser.dialect;
        let dialect = dialect_from_str(dialect_name)
            .ok_or_else(|| anyhow!("no SQL dialect {dialect_name}"))?;
        let statements = DFParserBuilder::new(args.sql.as_str())
            .with_dialect(dialect.as_ref())
            .with_recursion_limit(state.config().options().sql_parser.recursion_limit.get())
            .build()
            .and_then(|mut parser| parser.parse_statements())
            .map_err(query_error)?;
        if statements.is_empty() {
            return Err(usage("no SQL statement was given"));
        }
        // Quoted paths registered as tables, registered anew by each statement naming them.
        let mut paths = std::collections::HashSet::new();
        for mut statement in statements {
            // As DataFusion's CLI does: the stores a statement names are registered before it
            // is planned, a CREATE EXTERNAL TABLE's store options taken out of it.
            avrow_datafusion::register_stores_for_statement(&ctx, &mut statement, &options)
                .map_err(|e| usage(format!("the query: {e}")))?;
            register_path_tables(&ctx, &statement, &mut paths).await?;
            let plan = ctx
                .state()
                .statement_to_plan(statement)
                .await
                .map_err(query_error)?;
            let answers = !matches!(plan, LogicalPlan::Ddl(_) | LogicalPlan::Statement(_));
            // DDL runs here (a table that cannot be read fails now, a data error).
            let df = ctx.execute_logical_plan(plan).await.map_err(query_error)?;
            if answers {
                if let Err(e) = print(df, args.format).await {
                    staged.discard();
                    return Err(e);
                }
                staged.commit()?;
            }
        }
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(())
}

/// The local directories a statement names as tables (`FROM 'data/'`) registered as tables
/// under those names, as `--table` registers them: DataFusion's URL tables take a
/// directory's format from whichever file it lists first (a Spark `.crc` file: "table not
/// found"; a stray `.json`: JSON), and lose its `k=v/` partition columns. A quoted path that
/// names no file is an error that says so (DataFusion's says the table was not found).
/// Quoted files, globs and object-store URLs are registered as `--table` registers them
/// too: DataFusion's URL table takes a file's format from its extension (a `.bin` Avro
/// file, an `s3://` glob: "table not found") and hides why a location cannot be read.
///
/// `known`: the names registered so, by this and earlier statements. Each statement
/// registers the paths it names anew: a `COPY` may have rewritten a file since (a view made
/// earlier keeps the table it was made with).
async fn register_path_tables(
    ctx: &SessionContext,
    statement: &datafusion::sql::parser::Statement,
    known: &mut std::collections::HashSet<String>,
) -> Result<()> {
    use datafusion::common::TableReference;
    use datafusion::sql::parser::Statement as DfStatement;
    use datafusion::sql::sqlparser::ast::Statement as SqlStatement;
    // Names a statement creates or drops are not read (a local directory of the same name
    // must not become the table `CREATE EXTERNAL TABLE` is about to define); the paths the
    // query of a `CREATE VIEW` or `CREATE TABLE ... AS` reads are registered.
    let defined = match statement {
        DfStatement::CreateExternalTable(_) => return Ok(()),
        DfStatement::Statement(s) => match s.as_ref() {
            SqlStatement::Drop { .. } => return Ok(()),
            SqlStatement::CreateView(v) => Some(v.name.to_string()),
            SqlStatement::CreateTable(t) => Some(t.name.to_string()),
            _ => None,
        },
        _ => None,
    };
    let references = ctx
        .state()
        .resolve_table_references(statement)
        .map_err(query_error)?;
    for reference in references {
        let TableReference::Bare { table } = &reference else {
            continue;
        };
        let name = table.as_ref();
        let bare = TableReference::bare(name);
        if defined
            .as_deref()
            .is_some_and(|d| d.trim_matches('"') == name)
        {
            continue;
        }
        if known.contains(name) {
            ctx.deregister_table(bare.clone()).map_err(query_error)?;
        } else if ctx.table_exist(bare.clone()).map_err(query_error)? {
            continue;
        }
        let path = std::path::Path::new(name);
        let glob = name.contains(['*', '?', '[']);
        if name.contains("://") || path.is_file() || (glob && name.contains(['/', '.'])) {
            // Registered under the name as written (a `&str` name would be parsed as an
            // identifier: `orders.avro` as table `avro` of schema `orders`).
            let table = read_location(ctx, name)
                .await
                .map_err(|e| anyhow!("{name}: {e}"))?
                .into_view();
            ctx.register_table(bare, table)
                .map_err(|e| anyhow!("{name}: {e}"))?;
            known.insert(name.to_string());
            continue;
        }
        if path.is_dir() && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()) {
            return Err(anyhow!("{name}: the directory is empty"));
        }
        // (A directory of other files, Parquet ones say, stays DataFusion's URL table.)
        if path.is_dir() && holds_avro(path) {
            let mut location = name.to_string();
            if !location.ends_with('/') {
                location.push('/');
            }
            let table = ctx
                .read_avrow(&location, AvrowReadOptions::default())
                .await
                .map_err(|e| anyhow!("{name}: {e}"))?
                .into_view();
            ctx.register_table(bare, table)
                .map_err(|e| anyhow!("{name}: {e}"))?;
            known.insert(name.to_string());
        } else if !path.exists() && (name.contains('/') || path.extension().is_some()) && !glob {
            return Err(usage(format!(
                "{name}: no such file or directory (a quoted table name is read as a path)"
            )));
        }
    }
    Ok(())
}

/// A file, glob or URL read as `--table` reads it (by its extension, Avro otherwise).
async fn read_location(ctx: &SessionContext, path: &str) -> datafusion::error::Result<DataFrame> {
    let extension = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("parquet") => ctx.read_parquet(path, ParquetReadOptions::default()).await,
        Some("csv") => ctx.read_csv(path, CsvReadOptions::new()).await,
        Some(ext @ ("json" | "ndjson")) => {
            let options = JsonReadOptions {
                file_extension: if ext == "json" { ".json" } else { ".ndjson" },
                ..JsonReadOptions::default()
            };
            ctx.read_json(path, options).await
        }
        Some(ext @ ("arrow" | "ipc")) => {
            let options = ArrowReadOptions {
                file_extension: if ext == "arrow" { ".arrow" } else { ".ipc" },
                ..ArrowReadOptions::default()
            };
            ctx.read_arrow(path, options).await
        }
        _ => ctx.read_avrow(path, AvrowReadOptions::default()).await,
    }
}

/// Whether `dir` or a directory below it (partitions, `k=v/`) holds a `.avro` file; a
/// bounded walk (the first 10 000 entries).
fn holds_avro(dir: &std::path::Path) -> bool {
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 10_000 {
                return false;
            }
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("avro"))
            {
                return true;
            }
        }
    }
    false
}

/// Registers `--table NAME=PATH`: Avro unless PATH (a file or a glob) ends in the extension
/// of another format DataFusion reads, for joining Avro with it.
async fn register_table(
    ctx: &SessionContext,
    name: &str,
    path: &str,
) -> datafusion::error::Result<()> {
    let extension = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("parquet") => {
            ctx.register_parquet(name, path, ParquetReadOptions::default())
                .await
        }
        Some("csv") => ctx.register_csv(name, path, CsvReadOptions::new()).await,
        Some(ext @ ("json" | "ndjson")) => {
            let options = JsonReadOptions {
                file_extension: if ext == "json" { ".json" } else { ".ndjson" },
                ..JsonReadOptions::default()
            };
            ctx.register_json(name, path, options).await
        }
        Some(ext @ ("arrow" | "ipc")) => {
            let options = ArrowReadOptions {
                file_extension: if ext == "arrow" { ".arrow" } else { ".ipc" },
                ..ArrowReadOptions::default()
            };
            ctx.register_arrow(name, path, options).await
        }
        _ => {
            ctx.register_avrow(name, path, AvrowReadOptions::default())
                .await
        }
    }
}

/// Prints one query's answer. Its physical plan is made when it starts to run: an error there
/// (`COPY` of a column Avro cannot hold) is a usage error as at logical planning.
async fn print(df: DataFrame, format: SqlFormat) -> Result<()> {
    let schema = Arc::new(df.schema().as_arrow().clone());
    match format {
        // A table's column widths depend on every row: the answer is collected first.
        SqlFormat::Table => {
            // A plan's lines are shown whole, as DataFusion's own shell shows them (cells of
            // data are cut and escaped for a terminal: `table_text`).
            let plan = matches!(
                df.logical_plan(),
                LogicalPlan::Explain(_) | LogicalPlan::Analyze(_)
            );
            let batches = df.collect().await.map_err(query_error)?;
            let mut out = stdout();
            if plan {
                writeln!(
                    out,
                    "{}",
                    pretty_format_batches_with_schema(schema, &batches)?
                )?;
            } else {
                writeln!(out, "{}", super::head::table_text(schema, &batches)?)?;
            }
            out.flush()?;
        }
        // Rows for scripts are written as their batches arrive: memory stays bounded
        // whatever the size of the answer.
        SqlFormat::Json => {
            let mut stream = df.execute_stream().await.map_err(query_error)?;
            let mut out = stdout();
            let mut writer = json::builder().build::<_, LineDelimited>(&mut out);
            while let Some(batch) = stream.next().await {
                writer.write(&batch.map_err(|e| anyhow!(e))?)?;
            }
            writer.finish()?;
            out.flush()?;
        }
        SqlFormat::Csv => {
            let mut stream = df.execute_stream().await.map_err(query_error)?;
            let mut writer: Box<dyn BatchWriter> =
                Box::new(CsvWriter::new(output::stdout(), schema));
            while let Some(batch) = stream.next().await {
                writer.write(&batch.map_err(|e| anyhow!(e))?)?;
            }
            writer.finish()?.flush()?;
        }
    }
    Ok(())
}
