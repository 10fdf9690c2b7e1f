//! `avrow`: convert Apache Avro container files to Arrow IPC, Parquet, CSV, NDJSON and Avro,
//! inspect them, and query them with SQL.
//!
//! Layout (in the style of ripgrep): [`args`] is the raw clap command line, [`config`] the
//! validated configuration, [`cmd`] one module per subcommand, [`writers`] one module per
//! output format, [`output`] the temporary-file-then-rename output, [`progress`] the progress
//! bar and summary, [`error`] how errors become exit statuses.

mod args;
mod cmd;
mod config;
mod error;
mod format;
mod inputs;
mod mapped_ipc;
mod output;
mod progress;
mod skips;
mod sources;
mod writers;

use anyhow::Result;
use args::{Cli, Command};

/// mimalloc keeps decoding scaling past 8 cores, where glibc malloc stops (batches are
/// allocated on the decoding threads and freed on the writing thread; see
/// docs/perf/scaling.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// glibc's allocator serves what C libraries allocate (mimalloc serves Rust's), above all
/// zstd's compression contexts: the `parquet` crate's column writers hold one each (~0.4 MiB at
/// level 1) and free them when their row group is written. With glibc's sliding thresholds
/// the freed heap is handed back to the kernel, so every row group faulted its contexts in
/// afresh (half the page faults of a 100-column file). Blocks up to 4 MiB come from the heap
/// and up to 64 MiB of free heap is kept, unless `GLIBC_TUNABLES` sets malloc's own values.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_c_heap() {
    let tuned = std::env::var_os("GLIBC_TUNABLES")
        .is_some_and(|t| t.to_string_lossy().contains("glibc.malloc."));
    if !tuned {
        // SAFETY: `mallopt` only sets allocator parameters; called first in `main`, before
        // any thread starts. A refusal (return 0) leaves glibc's defaults, which are correct.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        }
    }
}

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    keep_c_heap();
    // A bug must still end with one line, not a backtrace (RUST_BACKTRACE may be set).
    std::panic::set_hook(Box::new(|info| {
        if error::panic_is_caught() {
            return;
        }
        let _ = writeln!(
            std::io::stderr(),
            "avrow: error: internal error (please report it): {info}"
        );
    }));
    let cli = Cli::parse();
    match run(cli) {
        Ok(status) => status,
        Err(e) if error::is_broken_pipe(&e) || output::pipe_closed() => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "avrow: error: {}", error::one_line(&e));
            ExitCode::from(error::exit_code(&e))
        }
    }
}

fn run(cli: Cli) -> Result<cmd::Status> {
    match cli.command {
        Command::Convert(args) => {
            let config = config::ConvertConfig::new(args, cli.quiet)?;
            return cmd::convert::run(&config);
        }
        Command::Schema(args) => cmd::schema::run(&args)?,
        Command::Info(args) => cmd::info::run(&args)?,
        Command::Count(args) => return cmd::count::run(&args),
        Command::Head(args) => cmd::head::run(&config::HeadConfig::new(args))?,
        Command::Validate(args) => return cmd::validate::run(&args),
        Command::Sql(args) => cmd::sql::run(&args)?,
        Command::Completions(args) => cmd::completions::run(&args)?,
    }
    Ok(ExitCode::SUCCESS)
}
