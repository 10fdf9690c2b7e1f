//! The raw command line as clap parses it. Nothing here is validated beyond what clap checks
//! (types, ranges, conflicts); [`crate::config`] turns these into the validated configuration
//! the subcommands run with.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `avrow --version`: the crate version, the varint kernel and the bulk path this process
/// decodes with.
fn long_version() -> &'static str {
    let kernel = match avrow::avrow_engine::varint::selected() {
        Ok(k) => k.to_string(),
        Err(e) => format!("unavailable ({e})"),
    };
    let bulk = match avrow::avrow_engine::varint::selected_bulk() {
        Ok(k) => k.to_string(),
        Err(e) => format!("unavailable ({e})"),
    };
    let version = env!("CARGO_PKG_VERSION");
    Box::leak(format!("{version}\nvarint: {kernel}\nbulk: {bulk}").into_boxed_str())
}

const AFTER_HELP: &str = "\
Inputs may be files, `-` (standard input), directories (their *.avro files) or glob patterns.

Exit status: 0 on success, 1 for data and I/O errors (and invalid files for `validate`),
2 for usage errors (bad arguments, options avrow does not support yet), 3 when
--skip-bad-blocks skipped a block.

Examples:
  avrow convert data.avro -o data.parquet
  avrow schema data.avro --fingerprint rabin
  avrow head data.avro -n 5";

/// Fast Apache Avro to Apache Arrow: convert Avro container files to Arrow IPC, Parquet, CSV or
/// NDJSON, and inspect them.
#[derive(Parser, Debug)]
#[command(
    name = "avrow",
    version,
    long_version = long_version(),
    after_help = AFTER_HELP,
    max_term_width = 100
)]
pub struct Cli {
    /// Print nothing on stderr but errors: no progress bar, no summary.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Convert Avro files to Arrow IPC, Parquet, CSV or NDJSON.
    #[command(after_help = CONVERT_HELP)]
    Convert(ConvertArgs),
    /// Print the writer schema of an Avro file (Avro JSON, Arrow, canonical form, fingerprint).
    #[command(
        after_help = "Examples:\n  avrow schema data.avro\n  avrow schema data.avro --arrow\n  avrow schema data.avro --arrow --reader-schema reader.avsc\n  avrow schema data.avro --fingerprint sha256 --json\n  avrow schema 'topic/*.avro'   # the schema files of an evolved schema are read as together"
    )]
    Schema(SchemaArgs),
    /// Describe an Avro file without decoding records: codec, sync marker, blocks, records,
    /// sizes, metadata, schema fingerprint.
    #[command(after_help = "Examples:\n  avrow info data.avro\n  avrow info data.avro --json")]
    Info(InfoArgs),
    /// Count the records of Avro files from their block headers, without decoding.
    #[command(after_help = "Examples:\n  avrow count data.avro\n  avrow count logs/*.avro --json")]
    Count(CountArgs),
    /// Print the first rows of an Avro file as a table (or NDJSON).
    #[command(
        after_help = "Examples:\n  avrow head data.avro\n  avrow head data.avro -n 3 --columns id,lines.sku --json"
    )]
    Head(HeadArgs),
    /// Decode Avro files completely and report the first error of each, with its location.
    #[command(
        after_help = "Exit status: 0 if every file is valid, 1 if a file is invalid or unreadable, 3 if --skip-bad-blocks found bad blocks (and nothing else went wrong).\n\nExamples:\n  avrow validate data.avro\n  avrow validate incoming/ --json\n  avrow validate damaged.avro --skip-bad-blocks   # every bad block, not only the first"
    )]
    Validate(ValidateArgs),
    /// Run SQL over Avro files (DataFusion with avrow's reader).
    #[command(after_help = SQL_HELP)]
    Sql(SqlArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  avrow completions bash > ~/.local/share/bash-completion/completions/avrow\n  avrow completions zsh > ~/.zfunc/_avrow"
    )]
    Completions(CompletionsArgs),
}

const CONVERT_HELP: &str = "\
The output format comes from the output's extension (.arrow .feather .arrows .parquet .csv
.ndjson .jsonl) or from --format. Nested values (records, arrays, maps, unions) are written as
JSON text in CSV. Avro output (.avro) takes --compression, --level and --block-size; Arrow IPC
and Parquet inputs (recognised by their magic bytes) can be converted to Avro.

Several inputs (or a directory, or a glob) go to one output when their schemas match, or to one
output each with --output-dir. `-` reads standard input; `-o -` writes standard output (needs
--format).

The output is written to a hidden temporary file beside it (.NAME.avrow-XXXXXX.tmp) and renamed
into place on success: a failed conversion leaves no partial file and never touches an existing
output. An existing output is only replaced with --force: a symbolic link's file is
replaced and the link kept (not a link another user owns in a shared directory such as /tmp),
and the replaced file's permissions are kept. A named pipe, a device such as /dev/null, or
/dev/stdout is written into directly, without --force, and keeps what a failed conversion
had written. A conversion killed by a signal
(Ctrl-C) may leave the hidden temporary file behind, but never a partial output. The data
is left to the operating system to write to disk, as cp, DuckDB and pyarrow do; --fsync waits
until it is on disk before the rename (durable across a power loss, slower).

Examples:
  avrow convert data.avro -o data.parquet
  avrow convert data.avro -o - --format csv --columns id,customer.name --limit 100
  avrow convert logs/ --output-dir out/ --format arrow --force";

/// `avrow convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Avro files, directories, glob patterns, or `-` for standard input.
    #[arg(required = true, value_name = "INPUT", value_hint = clap::ValueHint::AnyPath)]
    pub inputs: Vec<PathBuf>,

    /// The output file, or `-` for standard output.
    #[arg(
        short,
        long,
        value_name = "OUTPUT",
        required_unless_present = "output_dir",
        conflicts_with = "output_dir",
        value_hint = clap::ValueHint::FilePath
    )]
    pub output: Option<PathBuf>,

    /// Write one output per input into this directory (created if missing), named after the
    /// input with the format's extension.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub output_dir: Option<PathBuf>,

    /// The output format (default: from the output's extension).
    #[arg(short, long, value_enum)]
    pub format: Option<FormatArg>,

    /// Only these columns: top-level names or dotted paths into nested records, array items and
    /// map values (`id,customer.name,lines.sku`).
    #[arg(short, long, value_name = "COLUMNS", value_delimiter = ',')]
    pub columns: Vec<String>,

    /// Stop after this many rows.
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<u64>,

    /// Rows per Arrow record batch.
    #[arg(long, value_name = "N", default_value_t = 8192,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_size: u64,

    /// Decoding (and Parquet encoding) threads; 0 uses every core.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Read the data as this Avro schema (schema resolution: the output has its fields, in its
    /// order; missing fields take their defaults, numbers are promoted). Without it, inputs
    /// with different writer schemas are read as their merged schema (fields some lack read
    /// as null, numbers widened); this decides for schemas that do not merge.
    #[arg(long, value_name = "FILE.avsc", value_hint = clap::ValueHint::FilePath)]
    pub reader_schema: Option<PathBuf>,

    /// Compression: Parquet accepts zstd, snappy, gzip, lz4, brotli (default zstd); Avro
    /// deflate, snappy, zstd, bzip2, xz (default deflate); Arrow IPC zstd and lz4 (default
    /// none); CSV and NDJSON are not compressed.
    #[arg(long, value_enum)]
    pub compression: Option<CompressionArg>,

    /// Compression level. Parquet: zstd -7 to 22 (default 1; lower is faster, higher
    /// smaller), gzip 0 to 9 (default 6), brotli 0 to 11 (default 1). Avro: deflate 0 to 12
    /// (default 6), zstd -7 to 22 (default 3), bzip2 1 to 9 (default 9), xz 0 to 9 (default 6).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub level: Option<i32>,

    /// Rows per Parquet row group, at most.
    #[arg(long, value_name = "ROWS", default_value_t = 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_size: u64,

    /// Parquet row groups of about this much data (as PLAIN-encoded values, estimated from
    /// the first rows), unless --row-group-size is reached first: bytes, or with a K, M or G
    /// suffix. Several row groups are encoded at the same time.
    #[arg(long, value_name = "SIZE", default_value = "32M", value_parser = parse_size)]
    pub row_group_bytes: usize,

    /// Avro output: blocks of about this much uncompressed record data: bytes, or with a K,
    /// M or G suffix.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub block_size: usize,

    /// Avro output: the record's name (NAME or NAMESPACE.NAME) where its schema is derived
    /// from the input's columns (inputs read from Avro keep their record's name).
    #[arg(long, value_name = "NAME")]
    pub record_name: Option<String>,

    /// Replace outputs that already exist.
    #[arg(long)]
    pub force: bool,

    /// Wait until each output is on disk (fsync) before renaming it into place, so that a
    /// power loss leaves the old output or the whole new one.
    #[arg(long)]
    pub fsync: bool,

    /// Skip blocks that cannot be read (framing, sync marker, decompression, decoding) whole,
    /// resynchronise on the next sync marker and go on. Each skipped block is reported on
    /// standard error; the exit status is then 3.
    #[arg(long)]
    pub skip_bad_blocks: bool,

    /// Refuse blocks larger than this after decompression (a guard against decompression
    /// bombs): bytes, or with a K, M or G suffix (powers of 1024). Default 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_block_size: Option<usize>,

    /// How deep a recursive type (a linked list, a tree) is unrolled into nested columns
    /// (default 16); data nested deeper is an error. A type that refers to itself more than
    /// once doubles its columns at each level: it is unrolled as deep as 4,096 columns hold,
    /// or with this option as far as 65,536 columns and nodes hold.
    #[arg(long, value_name = "N")]
    pub max_recursion_depth: Option<usize>,
}

/// `--format` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    /// Arrow IPC file.
    Arrow,
    /// Arrow IPC file (Feather v2).
    Feather,
    /// Arrow IPC stream.
    Arrows,
    /// Apache Parquet.
    Parquet,
    /// CSV with a header line; nested values as JSON text.
    Csv,
    /// Newline-delimited JSON, one object per row.
    Ndjson,
    /// Same as ndjson.
    Jsonl,
    /// Avro object container file.
    Avro,
}

/// `--compression` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionArg {
    /// Zstandard (Parquet, Arrow IPC and Avro).
    Zstd,
    /// Snappy (Parquet and Avro).
    Snappy,
    /// Gzip (Parquet only).
    Gzip,
    /// LZ4 (LZ4_RAW in Parquet; LZ4 frames in Arrow IPC).
    Lz4,
    /// Brotli (Parquet only).
    Brotli,
    /// Deflate (Avro only).
    Deflate,
    /// bzip2 (Avro only).
    Bzip2,
    /// xz (Avro only).
    Xz,
    /// No compression.
    None,
}

/// `avrow schema`.
#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// The Avro file, or `-` for standard input. Several files (or a directory, a glob): the
    /// schema they are read as together, merged where their writer schemas differ.
    #[arg(value_name = "FILE", required = true, num_args = 1..,
          value_hint = clap::ValueHint::FilePath)]
    pub files: Vec<PathBuf>,

    /// Print the Arrow schema the file is read as.
    #[arg(long, group = "what")]
    pub arrow: bool,

    /// With `--arrow`: the Arrow schema the file is read as under this reader schema (schema
    /// resolution, as `convert --reader-schema` reads it). Fails, naming the field, if the
    /// file's writer schema cannot be read as it.
    #[arg(long, value_name = "FILE.avsc", requires = "arrow",
          value_hint = clap::ValueHint::FilePath)]
    pub reader_schema: Option<PathBuf>,

    /// Print the schema's Parsing Canonical Form.
    #[arg(long, group = "what")]
    pub canonical: bool,

    /// Print the fingerprint of the Parsing Canonical Form, in hex (rabin: the 8 bytes of
    /// CRC-64-AVRO in little-endian order, as in single-object encoding).
    #[arg(long, value_enum, group = "what", value_name = "ALGORITHM")]
    pub fingerprint: Option<FingerprintArg>,

    /// Machine-readable JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `--fingerprint` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FingerprintArg {
    /// CRC-64-AVRO.
    Rabin,
    /// MD5.
    Md5,
    /// SHA-256.
    Sha256,
}

/// `avrow info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The Avro file, or `-` for standard input.
    #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub file: PathBuf,

    /// Machine-readable JSON output.
    #[arg(long)]
    pub json: bool,

    /// Refuse blocks larger than this after decompression (a guard against decompression
    /// bombs; a block that expands past 16 MiB and 16 times its stored size is counted as it
    /// streams, not held): bytes, or with a K, M or G suffix (powers of 1024). Default 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_block_size: Option<usize>,
}

/// `avrow count`.
#[derive(Args, Debug)]
pub struct CountArgs {
    /// Avro files, directories, glob patterns, or `-` for standard input.
    #[arg(required = true, value_name = "FILE", value_hint = clap::ValueHint::AnyPath)]
    pub files: Vec<PathBuf>,

    /// Machine-readable JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `avrow head`.
#[derive(Args, Debug)]
pub struct HeadArgs {
    /// The Avro file, or `-` for standard input.
    #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub file: PathBuf,

    /// How many rows.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 10)]
    pub rows: usize,

    /// Only these columns (top-level names or dotted nested paths).
    #[arg(short, long, value_name = "COLUMNS", value_delimiter = ',')]
    pub columns: Vec<String>,

    /// Print the rows as NDJSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// How deep a recursive type (a linked list, a tree) is unrolled into nested columns
    /// (default 16); data nested deeper is an error. A type that refers to itself more than
    /// once doubles its columns at each level: it is unrolled as deep as 4,096 columns hold,
    /// or with this option as far as 65,536 columns and nodes hold.
    #[arg(long, value_name = "N")]
    pub max_recursion_depth: Option<usize>,
}

const SQL_HELP: &str = "\
Each --table NAME=PATH registers the Avro files at PATH (a file, a directory or a glob) as table
NAME; files of one table may have different schemas (missing columns read as nulls). Files are
split into byte ranges at their sync markers, so one large file is read by every partition.
`SELECT count(*)` is answered from the block headers without decoding. A PATH (or glob) ending
in .parquet, .csv, .json or .ndjson, .arrow or .ipc is a table of that format (DataFusion's
readers), to join with Avro tables.

Query results are written to files with COPY (SELECT ...) TO 'out.avro' (avrow's writer;
OPTIONS ('codec' 'zstandard', 'level' '3', 'block_size' '1048576', 'avro_schema' '...')), or TO
'out.parquet', 'out.csv', 'out.json', 'out.arrow'; INSERT INTO an Avro table appends a file.

SQL may hold several statements separated by `;`, run in order; the answer of each query is
printed (statements such as CREATE EXTERNAL TABLE print nothing), so tables may also be made
with CREATE EXTERNAL TABLE NAME STORED AS AVRO LOCATION 'PATH' [OPTIONS (...)], and a lone
file may be queried by its path: SELECT count(*) FROM 'data/orders.avro'.

PATH may be an object store URL (the default build's `cloud` feature): s3://BUCKET/...,
gs://BUCKET/..., az://CONTAINER/..., configured as DataFusion's CLI configures them: from the
environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT, AWS_ALLOW_HTTP;
GOOGLE_SERVICE_ACCOUNT; AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY, ...), then from
--option KEY=VALUE, then from a CREATE EXTERNAL TABLE's OPTIONS ('aws.region' 'eu-west-1', ...).
Keys: aws.access_key_id, aws.secret_access_key, aws.session_token, aws.region, aws.endpoint,
aws.allow_http, aws.skip_signature; gcp.service_account_path, gcp.service_account_key,
gcp.application_credentials_path; azure.account_name, azure.access_key, azure.endpoint, ...
(after the prefix, any key object_store's builders take). Each split is read with ranged GETs.

Examples:
  avrow sql --table orders=data/orders.avro \"SELECT count(*) FROM orders\"
  avrow sql --table t='logs/*.avro' --format csv \"SELECT level, count(*) FROM t GROUP BY level\"
  avrow sql --table t=data/ --partitions 1 --format json \"SELECT * FROM t LIMIT 5\"
  avrow sql --table t='s3://bucket/logs/*.avro' \"SELECT count(*) FROM t\"
  avrow sql --table o=orders.avro --table c=customers.parquet \"SELECT c.name, count(*) FROM o JOIN c USING (customer_id) GROUP BY c.name\"
  avrow sql \"COPY (SELECT * FROM 'orders.avro' WHERE paid) TO 'paid.avro' OPTIONS ('codec' 'zstd')\"
  avrow sql --option aws.region=eu-west-1 \"SELECT count(*) FROM 's3://bucket/x.avro'\"
  avrow sql \"CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION 's3://bucket/logs/'
             OPTIONS ('aws.endpoint' 'http://127.0.0.1:9000', 'aws.allow_http' 'true');
             SELECT level, count(*) FROM t GROUP BY level\"";

/// How `avrow sql` prints its answer.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlFormat {
    /// A table, as `head` prints one.
    Table,
    /// CSV with a header line (nested values as JSON text).
    Csv,
    /// NDJSON, one object per row.
    Json,
}

/// `avrow sql`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// The query.
    #[arg(value_name = "SQL")]
    pub sql: String,

    /// A table: NAME=PATH_OR_GLOB (repeatable).
    #[arg(short, long = "table", value_name = "NAME=PATH")]
    pub tables: Vec<String>,

    /// An object store option, aws.*, gcp.* or azure.* (repeatable): KEY=VALUE.
    #[arg(short, long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,

    /// Partitions (parallel scans and operators), at most 1024; 0 uses every core. The
    /// query's operators run on one thread a core at most (each partition's scan decodes on
    /// a thread of its own).
    #[arg(short, long, value_name = "N", default_value_t = 0,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub partitions: usize,

    /// How to print the answer.
    #[arg(long, value_enum, default_value_t = SqlFormat::Table)]
    pub format: SqlFormat,
}

/// `avrow validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Avro files, directories, glob patterns, or `-` for standard input.
    #[arg(required = true, value_name = "FILE", value_hint = clap::ValueHint::AnyPath)]
    pub files: Vec<PathBuf>,

    /// Decoding threads; 0 uses every core.
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Machine-readable JSON output.
    #[arg(long)]
    pub json: bool,

    /// Skip blocks that cannot be read (framing, sync marker, decompression, decoding) whole,
    /// resynchronise on the next sync marker and go on. Each skipped block is reported on
    /// standard error; the exit status is then 3.
    #[arg(long)]
    pub skip_bad_blocks: bool,

    /// Refuse blocks larger than this after decompression (a guard against decompression
    /// bombs): bytes, or with a K, M or G suffix (powers of 1024). Default 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_block_size: Option<usize>,

    /// How deep a recursive type (a linked list, a tree) is unrolled into nested columns
    /// (default 16); data nested deeper is an error. A type that refers to itself more than
    /// once doubles its columns at each level: it is unrolled as deep as 4,096 columns hold,
    /// or with this option as far as 65,536 columns and nodes hold.
    #[arg(long, value_name = "N")]
    pub max_recursion_depth: Option<usize>,
}

/// A size in bytes: digits, optionally followed by K, M or G (powers of 1024).
fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 10),
        Some((i, 'm' | 'M')) => (&text[..i], 20),
        Some((i, 'g' | 'G')) => (&text[..i], 30),
        _ => (text, 0),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1 << shift)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text:?} is not a usable size"))
}

/// `avrow completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
