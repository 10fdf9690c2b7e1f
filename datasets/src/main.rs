//! `avrow-datasets`: write one benchmark dataset to an Avro file.
//!
//! ```text
//! cargo run --release -p avrow-datasets -- order --rows 200000 --codec zstandard -o order.avro
//! cargo run --release -p avrow-datasets -- counters --target-mb 100 -o /tmp/counters.avro
//! ```
//!
//! The file is written to a temporary name beside the output and renamed into place only once
//! it is complete, so an interrupted run never leaves a truncated `.avro` behind.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use avrow_datasets::{Codec, GenOptions, Shape, DEFAULT_BLOCK_ROWS, DEFAULT_SEED};
use clap::Parser;

/// Write a deterministic, seeded Avro benchmark dataset (encoded by the apache-avro crate).
#[derive(Debug, Parser)]
#[command(name = "avrow-datasets", version)]
struct Args {
    /// Record shape: order, wide, telemetry or counters.
    shape: Shape,

    /// Output file.
    #[arg(short, long)]
    output: PathBuf,

    /// Number of records [default: 100000 unless --target-mb is given].
    #[arg(long, conflicts_with = "target_mb")]
    rows: Option<usize>,

    /// Instead of --rows: about this many megabytes (10^6 bytes) of uncompressed data.
    #[arg(long)]
    target_mb: Option<f64>,

    /// Block codec: null, deflate, snappy, zstandard (or zstd), bzip2, xz.
    #[arg(short, long, default_value = "null")]
    codec: Codec,

    /// Records per container block (the last block holds the remainder).
    #[arg(long, default_value_t = DEFAULT_BLOCK_ROWS)]
    block_rows: usize,

    /// PRNG seed; the same arguments always give a byte-identical file.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,

    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let rows = match (args.rows, args.target_mb) {
        (Some(rows), _) => rows,
        (None, Some(mb)) => {
            if !(mb.is_finite() && mb > 0.0) {
                bail!("--target-mb must be a positive number, got {mb}");
            }
            avrow_datasets::rows_for_bytes(args.shape, (mb * 1e6) as u64)
        }
        (None, None) => 100_000,
    };
    let opts = GenOptions {
        rows,
        codec: args.codec,
        block_rows: args.block_rows,
        seed: args.seed,
    };

    let started = Instant::now();
    let bytes = write_atomically(&args.output, |file| {
        avrow_datasets::write(args.shape, &opts, BufWriter::with_capacity(1 << 20, file))
            .with_context(|| format!("generating {} rows of {}", opts.rows, args.shape))
    })?;
    let secs = started.elapsed().as_secs_f64();

    if !args.quiet {
        let blocks = opts.rows.div_ceil(opts.block_rows);
        eprintln!(
            "wrote {}: {} {} rows in {} block(s), codec {}, seed {}, {} bytes ({:.1} MB) in {:.2} s ({:.0} rows/s)",
            args.output.display(),
            opts.rows,
            args.shape,
            blocks,
            opts.codec,
            opts.seed,
            bytes,
            bytes as f64 / 1e6,
            secs,
            opts.rows as f64 / secs.max(1e-9),
        );
    }
    Ok(())
}

/// Runs `fill` on a temporary file beside `output`, then renames it to `output`; on any error
/// the temporary file is removed and `output` is left untouched.
fn write_atomically(output: &Path, fill: impl FnOnce(&File) -> Result<u64>) -> Result<u64> {
    let file_name = output
        .file_name()
        .with_context(|| format!("output path {} has no file name", output.display()))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = output.with_file_name(tmp_name);

    let result = (|| {
        let file = File::create(&tmp)
            .with_context(|| format!("creating temporary file {}", tmp.display()))?;
        let bytes = fill(&file)?;
        file.sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
        fs::rename(&tmp, output)
            .with_context(|| format!("renaming {} to {}", tmp.display(), output.display()))?;
        Ok(bytes)
    })();
    if result.is_err() {
        // Best effort: the file may not exist if creating it failed.
        let _ = fs::remove_file(&tmp);
    }
    result
}
