//! The validated configuration of each subcommand, built from the raw [`crate::args`]. Every
//! usage problem (conflicting options, a format that cannot be told, an unsupported feature) is
//! found here, before any input is opened.

use crate::args::{ConvertArgs, HeadArgs};
use crate::error::usage;
use crate::format::{Compression, Format};
use crate::inputs::{self, Input};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// How inputs are read: the `ReaderBuilder` options shared by `convert`, `head` and
/// `validate`.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Projection (empty: every column).
    pub columns: Vec<String>,
    /// Rows per batch.
    pub batch_size: usize,
    /// Decoding threads (0: every core).
    pub threads: usize,
    /// Read the data as this schema (schema resolution).
    pub reader_schema: Option<avrow::Schema>,
    /// Skip bad blocks and report them.
    pub skip_bad_blocks: bool,
    /// The block size limit (`None`: the library's default).
    pub max_block_size: Option<usize>,
    /// How deep recursive types are unrolled (`None`: the library's default).
    pub max_recursion_depth: Option<usize>,
}

impl ReadOptions {
    /// The reader builder for these options.
    pub fn builder(&self) -> avrow::ReaderBuilder {
        let mut builder = avrow::ReaderBuilder::new()
            .with_batch_size(self.batch_size)
            .with_threads(self.threads)
            .with_skip_bad_blocks(self.skip_bad_blocks);
        if let Some(limit) = self.max_block_size {
            builder = builder.with_max_block_size(limit);
        }
        if let Some(depth) = self.max_recursion_depth {
            builder = builder.with_max_recursion_depth(depth);
        }
        if let Some(schema) = &self.reader_schema {
            builder = builder.with_reader_schema(schema.clone());
        }
        if self.columns.is_empty() {
            builder
        } else {
            builder.with_projection(self.columns.iter().cloned())
        }
    }
}

/// `--columns a, b` as `a` and `b` (the shell passes the spaces after commas).
fn trimmed(columns: Vec<String>) -> Vec<String> {
    columns.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Reads and parses the `--reader-schema` file (an unreadable or invalid schema is a usage
/// error: nothing has been opened yet).
pub fn load_reader_schema(path: &Path) -> Result<avrow::Schema> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--reader-schema {}: {e}", path.display())))?;
    avrow::Schema::parse(&text)
        .map_err(|e| usage(format!("--reader-schema {}: {e}", path.display())))
}

/// Where `convert` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One output file for all inputs.
    File(PathBuf),
    /// Standard output.
    Stdout,
    /// One output per input, in this directory.
    Dir(PathBuf),
}

/// A validated `avrow convert`.
#[derive(Debug, Clone)]
pub struct ConvertConfig {
    /// The inputs, expanded.
    pub inputs: Vec<Input>,
    /// Where to write.
    pub target: Target,
    /// The output format.
    pub format: Format,
    /// The output compression.
    pub compression: Compression,
    /// Its level, if not the default (checked).
    pub level: Option<i32>,
    /// How to read.
    pub read: ReadOptions,
    /// Stop after this many rows (per output).
    pub limit: Option<u64>,
    /// Rows per Parquet row group, at most.
    pub row_group_size: usize,
    /// Bytes of data per Parquet row group, about.
    pub row_group_bytes: usize,
    /// Avro output: uncompressed bytes per block, about.
    pub block_size: usize,
    /// Avro output: the record's name where the schema is derived.
    pub record_name: Option<String>,
    /// Replace existing outputs.
    pub force: bool,
    /// Sync each output to disk before renaming it into place.
    pub fsync: bool,
    /// No progress bar, no summary.
    pub quiet: bool,
}

impl ConvertConfig {
    /// Validates `args`.
    ///
    /// # Errors
    /// A usage error (exit status 2), or an input pattern or directory that matches nothing.
    pub fn new(args: ConvertArgs, quiet: bool) -> Result<ConvertConfig> {
        let reader_schema = args
            .reader_schema
            .as_deref()
            .map(load_reader_schema)
            .transpose()?;
        let format = args.format.map(Format::from_arg).transpose()?;
        let (target, format) = match (&args.output, &args.output_dir) {
            (Some(out), _) if out.as_os_str() == "-" => {
                let format = format.ok_or_else(|| {
                    usage("writing to standard output (-o -) needs --format to name the format")
                })?;
                (Target::Stdout, format)
            }
            (Some(out), _) => {
                let format = match format {
                    Some(f) => f,
                    None => Format::from_path(out)?,
                };
                (Target::File(out.clone()), format)
            }
            (None, Some(dir)) => {
                let format = format.ok_or_else(|| usage("--output-dir needs --format"))?;
                (Target::Dir(dir.clone()), format)
            }
            (None, None) => return Err(usage("name an output with -o OUTPUT or --output-dir DIR")),
        };
        let compression = Compression::resolve(format, args.compression)?;
        let level = compression.check_level(format, args.level)?;
        let inputs = inputs::expand(&args.inputs)?;
        if matches!(target, Target::Dir(_)) && inputs.contains(&Input::Stdin) {
            return Err(usage(
                "--output-dir names outputs after their inputs; standard input has no name (use -o)",
            ));
        }
        Ok(ConvertConfig {
            inputs,
            target,
            format,
            compression,
            level,
            read: ReadOptions {
                columns: trimmed(args.columns),
                batch_size: usize::try_from(args.batch_size).unwrap_or(usize::MAX),
                threads: args.threads,
                reader_schema,
                skip_bad_blocks: args.skip_bad_blocks,
                max_block_size: args.max_block_size,
                max_recursion_depth: args.max_recursion_depth,
            },
            limit: args.limit,
            row_group_size: usize::try_from(args.row_group_size).unwrap_or(usize::MAX),
            row_group_bytes: args.row_group_bytes,
            block_size: args.block_size,
            record_name: args.record_name,
            force: args.force,
            fsync: args.fsync,
            quiet,
        })
    }
}

/// A validated `avrow head`.
#[derive(Debug, Clone)]
pub struct HeadConfig {
    /// The input.
    pub input: Input,
    /// How many rows.
    pub rows: usize,
    /// How to read (one thread: only the first blocks are needed).
    pub read: ReadOptions,
    /// NDJSON instead of a table.
    pub json: bool,
}

impl HeadConfig {
    /// Validates `args`.
    pub fn new(args: HeadArgs) -> HeadConfig {
        HeadConfig {
            input: inputs::single(&args.file),
            rows: args.rows,
            read: ReadOptions {
                columns: trimmed(args.columns),
                // (A block is decoded whole into batches, so smaller batches save no
                // decoding: batches of `-n 1` made a block of millions of records millions of
                // one-row batches, gigabytes.)
                batch_size: avrow::avrow_engine::DEFAULT_BATCH_SIZE,
                threads: 1,
                reader_schema: None,
                skip_bad_blocks: false,
                max_block_size: None,
                max_recursion_depth: args.max_recursion_depth,
            },
            json: args.json,
        }
    }
}
