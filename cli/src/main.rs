//! The `avrow` command line.

use anyhow::{bail, Context, Result};
use arrow::ipc::writer::FileWriter;
use clap::{Parser, Subcommand};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn long_version() -> &'static str {
    let kernel = match avrow::avrow_engine::varint::selected() {
        Ok(k) => k.to_string(),
        Err(e) => format!("unavailable ({e})"),
    };
    Box::leak(format!("{}\nvarint: {kernel}", env!("CARGO_PKG_VERSION")).into_boxed_str())
}

/// Fast Avro to Arrow conversion.
#[derive(Parser, Debug)]
#[command(name = "avrow", version, long_version = long_version())]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Convert an Avro container file to an Arrow IPC file.
    #[command(after_help = "Example:\n  avrow convert data.avro -o data.arrow")]
    Convert {
        /// The Avro file to read.
        input: PathBuf,
        /// The Arrow IPC file to write (`.arrow`).
        #[arg(short, long)]
        output: PathBuf,
        /// Replace OUTPUT if it exists.
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("avrow: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Convert {
            input,
            output,
            force,
        } => convert(&input, &output, force),
    }
}

fn convert(input: &Path, output: &Path, force: bool) -> Result<()> {
    if output.exists() && !force {
        bail!("{} exists (use --force to replace it)", output.display());
    }
    let reader = avrow::ReaderBuilder::new().open(input)?;
    let schema = reader.schema();
    let tmp = temp_path(output);
    let result = (|| -> Result<u64> {
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let mut writer = FileWriter::try_new(BufWriter::new(file), &schema)?;
        let mut rows = 0u64;
        for batch in reader {
            let batch = batch?;
            rows += batch.num_rows() as u64;
            writer.write(&batch)?;
        }
        writer.finish()?;
        let mut inner = writer.into_inner()?;
        inner.flush()?;
        inner.get_ref().sync_all()?;
        Ok(rows)
    })();
    match result {
        Ok(rows) => {
            std::fs::rename(&tmp, output).with_context(|| {
                format!("cannot rename {} to {}", tmp.display(), output.display())
            })?;
            eprintln!("{rows} rows: {} -> {}", input.display(), output.display());
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A temporary name beside `output`, so the final rename stays on one file system.
fn temp_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}.avrow-{}.tmp", std::process::id()))
}
