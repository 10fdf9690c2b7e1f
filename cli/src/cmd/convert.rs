//! `avrow convert INPUT... -o OUTPUT | --output-dir DIR`: read Avro (or an Arrow IPC or Parquet
//! file), write Arrow IPC, Parquet, CSV, NDJSON or Avro. Outputs go through a temporary file renamed into place on success.

use crate::cmd::Status;
use crate::config::{ConvertConfig, Target};
use crate::inputs::{ByteCounter, CountingReader, Input};
use crate::output::{self, check_target, PendingFile};
use crate::progress::{summary, Progress};
use crate::skips::{SkipTally, EXIT_SKIPPED};
use crate::sources::{ArrowInput, InputFormat};
use crate::writers::{self, WriterOptions};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where one conversion writes.
enum Destination<'a> {
    File(&'a Path),
    Stdout,
}

impl Destination<'_> {
    fn name(&self) -> String {
        match self {
            Destination::File(path) => path.display().to_string(),
            Destination::Stdout => "<stdout>".into(),
        }
    }
}

/// Runs the conversion(s) `config` describes. The status is 3 when `--skip-bad-blocks`
/// skipped blocks (each reported on standard error, then a summary).
///
/// # Errors
/// An input cannot be read or decoded, an output exists (without `--force`) or cannot be
/// written, or the inputs' schemas differ (one output).
pub fn run(config: &ConvertConfig) -> Result<Status> {
    let mut tally = SkipTally::default();
    match &config.target {
        Target::File(path) => {
            convert(config, &config.inputs, &Destination::File(path), &mut tally)?
        }
        Target::Stdout => convert(config, &config.inputs, &Destination::Stdout, &mut tally)?,
        Target::Dir(dir) => {
            let outputs = plan_outputs(config, dir)?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the directory {}", dir.display()))?;
            for (input, output) in config.inputs.iter().zip(&outputs) {
                convert(
                    config,
                    std::slice::from_ref(input),
                    &Destination::File(output),
                    &mut tally,
                )?;
            }
        }
    }
    if let Some(line) = tally.summary() {
        let _ = writeln!(std::io::stderr(), "{line}");
        return Ok(ExitCode::from(EXIT_SKIPPED));
    }
    Ok(ExitCode::SUCCESS)
}

/// One output path per input in `dir`, all checked before anything is converted.
fn plan_outputs(config: &ConvertConfig, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut seen: HashMap<PathBuf, &Input> = HashMap::new();
    let mut outputs = Vec::with_capacity(config.inputs.len());
    for input in &config.inputs {
        let Input::File(path) = input else {
            bail!("--output-dir needs named inputs");
        };
        let stem = path
            .file_stem()
            .ok_or_else(|| anyhow!("{}: not a file name", path.display()))?
            .to_string_lossy();
        let output = dir.join(format!("{stem}.{}", config.format.extension()));
        if let Some(other) = seen.insert(output.clone(), input) {
            bail!(
                "{other} and {input} would both be written to {}",
                output.display()
            );
        }
        check_target(&output, config.force)?;
        outputs.push(output);
    }
    Ok(outputs)
}

/// Batches from Avro inputs (avrow's reader) or from one Arrow IPC or Parquet file.
enum Source {
    Avro(avrow::Reader),
    Arrow(ArrowInput),
}

impl Source {
    fn schema(&self) -> arrow::datatypes::SchemaRef {
        match self {
            Source::Avro(r) => r.schema(),
            Source::Arrow(a) => a.schema(),
        }
    }

    /// The most rows a batch holds (the reader may hold fewer than `--batch-size` asks: rows
    /// of a large `fixed`), for writers that gather batches back to that size.
    fn batch_size(&self, asked: usize) -> usize {
        match self {
            Source::Avro(r) => r.batch_size(),
            Source::Arrow(_) => asked,
        }
    }

    fn next(&mut self) -> Option<Result<arrow::array::RecordBatch>> {
        match self {
            Source::Avro(r) => r.next().map(|b| b.map_err(Into::into)),
            Source::Arrow(a) => a.next(),
        }
    }

    fn take_skipped(&mut self) -> Vec<avrow::SkippedBlock> {
        match self {
            Source::Avro(r) => r.take_skipped(),
            Source::Arrow(_) => Vec::new(),
        }
    }
}

/// The source for `inputs`: Arrow IPC and Parquet files are recognised by their first bytes
/// and read one at a time, without the options that only apply to Avro.
fn open_source(config: &ConvertConfig, inputs: &[Input], counter: &ByteCounter) -> Result<Source> {
    if let [Input::Stdin] = inputs {
        return open_stdin(config, counter);
    }
    let formats = inputs
        .iter()
        .map(InputFormat::of)
        .collect::<Result<Vec<_>>>()?;
    let Some(i) = formats.iter().position(|f| *f != InputFormat::Avro) else {
        return Ok(Source::Avro(open(config, inputs, counter)?));
    };
    let Input::File(path) = &inputs[i] else {
        unreachable!("standard input alone is opened by open_stdin");
    };
    if inputs.len() > 1 {
        return Err(crate::error::usage(format!(
            "{}: Arrow IPC and Parquet inputs are converted one at a time",
            path.display()
        )));
    }
    avro_only_options(config, &path.display().to_string())?;
    let read = &config.read;
    Ok(Source::Arrow(ArrowInput::open(
        path,
        formats[i],
        read.batch_size,
        &read.columns,
    )?))
}

/// Refuses the options that apply only to Avro input, for the non-Avro input `name`.
fn avro_only_options(config: &ConvertConfig, name: &str) -> Result<()> {
    let read = &config.read;
    if read.reader_schema.is_some()
        || read.skip_bad_blocks
        || read.max_block_size.is_some()
        || read.max_recursion_depth.is_some()
    {
        return Err(crate::error::usage(format!(
            "{name}: --reader-schema, --skip-bad-blocks, --max-block-size and --max-recursion-depth \
             apply to Avro input"
        )));
    }
    Ok(())
}

/// Standard input, told by its first bytes: Avro is read as it streams; an Arrow IPC file or
/// stream or a Parquet file (which are read from their end, or from a map) is first copied
/// to an unnamed temporary file (in `TMPDIR`), then read from there.
fn open_stdin(config: &ConvertConfig, counter: &ByteCounter) -> Result<Source> {
    use std::io::Read;
    let mut stdin = CountingReader::new(std::io::stdin(), counter);
    let mut head = Vec::with_capacity(8);
    (&mut stdin)
        .take(8)
        .read_to_end(&mut head)
        .context("cannot read standard input")?;
    let format = InputFormat::of_head(&head);
    if format == InputFormat::Avro {
        let rest = std::io::Cursor::new(head).chain(stdin);
        return Ok(Source::Avro(config.read.builder().read_stream(rest)?));
    }
    avro_only_options(config, "<stdin>")?;
    let mut spool =
        tempfile::tempfile().context("cannot create a temporary file for standard input")?;
    let copy = (|| -> std::io::Result<()> {
        use std::io::{Seek, Write};
        spool.write_all(&head)?;
        std::io::copy(&mut stdin, &mut spool)?;
        spool.flush()?;
        spool.rewind()
    })();
    copy.context("cannot copy standard input to a temporary file")?;
    let read = &config.read;
    Ok(Source::Arrow(ArrowInput::open_file(
        spool,
        "<stdin>",
        format,
        read.batch_size,
        &read.columns,
    )?))
}

fn open(config: &ConvertConfig, inputs: &[Input], counter: &ByteCounter) -> Result<avrow::Reader> {
    let builder = config.read.builder();
    match inputs {
        [one] => Ok(one.open(builder, counter)?),
        many => {
            let paths = many.iter().filter_map(|i| match i {
                Input::File(path) => Some(path.as_path()),
                Input::Stdin => None,
            });
            builder.open_many(paths).map_err(|e| match e {
                avrow::Error::SchemaMismatch { file, first } => anyhow!(
                    "{file} has a different writer schema than {first} (convert them \
                     separately, one output each with --output-dir, or read them all as one \
                     schema with --reader-schema)"
                ),
                avrow::Error::SchemaMerge {
                    file,
                    first,
                    source,
                } => anyhow!(
                    "{file}'s writer schema cannot be merged with the schema of {first} (and of \
                     the inputs before it): {source} (convert them separately, one output each \
                     with --output-dir, or read them all as one schema with --reader-schema)"
                ),
                other => other.into(),
            })
        }
    }
}

fn convert(
    config: &ConvertConfig,
    inputs: &[Input],
    destination: &Destination,
    tally: &mut SkipTally,
) -> Result<()> {
    let name = destination.name();
    if let Destination::File(path) = destination {
        // Fail before reading anything if the output is in the way.
        check_target(path, config.force)?;
    }
    let counter = ByteCounter::default();
    let mut reader = open_source(config, inputs, &counter)?;
    let schema = reader.schema();
    let (out, pending): (output::Out, Option<PendingFile>) = match destination {
        Destination::File(path) => {
            let (out, pending) = output::create_file(path, config.force)?;
            (out, Some(pending))
        }
        Destination::Stdout => (output::stdout(), None),
    };
    let options = WriterOptions {
        compression: config.compression,
        level: config.level,
        row_group_size: config.row_group_size,
        row_group_bytes: config.row_group_bytes,
        block_size: config.block_size,
        record_name: config.record_name.clone(),
        batch_size: reader.batch_size(config.read.batch_size),
        threads: config.read.threads,
    };
    let mut writer = writers::create(config.format, schema, out, &options)
        .with_context(|| format!("cannot write {name} as {}", config.format))?;
    let mut progress = Progress::start(inputs, &counter, config.quiet);
    let mut left = config.limit;
    while let Some(batch) = reader.next() {
        for line in tally.add(reader.take_skipped()) {
            progress.println(&line);
        }
        if left == Some(0) {
            break;
        }
        let batch = batch?;
        let batch = match left {
            Some(n) if (batch.num_rows() as u64) > n => batch.slice(0, n as usize),
            _ => batch,
        };
        if let Some(n) = &mut left {
            *n -= batch.num_rows() as u64;
        }
        writer
            .write(&batch)
            .with_context(|| format!("cannot write {name}"))?;
        progress.advance(batch.num_rows() as u64);
    }
    for line in tally.add(reader.take_skipped()) {
        progress.println(&line);
    }
    let out = writer
        .finish()
        .with_context(|| format!("cannot write {name}"))?;
    let written = out.written();
    drop(out);
    if let Some(pending) = pending {
        pending.commit(config.fsync)?;
    }
    let (rows, elapsed) = progress.finish();
    if !config.quiet {
        let input_name = match inputs {
            [one] => one.to_string(),
            many => format!("{} files", many.len()),
        };
        let input_bytes = inputs
            .iter()
            .map(|i| i.size().unwrap_or_else(|| counter.get()))
            .sum();
        let line = summary(rows, &input_name, input_bytes, &name, written, elapsed);
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    Ok(())
}
