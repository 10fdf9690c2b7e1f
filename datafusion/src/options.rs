//! The table options of the avrow format: what `CREATE EXTERNAL TABLE ... OPTIONS (...)`,
//! `COPY ... OPTIONS (...)`, [`AvrowReadOptions`] and [`AvrowWriteOptions`] set, and how each
//! becomes an `avrow::ReaderBuilder` or an `avrow::WriterBuilder`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::{plan_err, Result};

/// The option keys that set [`AvrowWriteOptions`] (`threads` sets both kinds).
const WRITE_KEYS: [&str; 5] = ["codec", "level", "block_size", "avro_schema", "record_name"];

/// How avrow reads the files of one table.
///
/// As SQL options (with or without the `format.` prefix):
/// `'reader_schema' '<Avro schema JSON>'`, `'batch_size' '8192'`,
/// `'max_recursion_depth' '16'`, `'threads' '1'`, `'utf8_view' 'false'`.
#[derive(Debug, Clone, Default)]
pub struct AvrowReadOptions {
    /// Resolve every file against this reader schema (Avro JSON): the table's schema is the
    /// reader schema's, whatever the files' writer schemas.
    pub reader_schema: Option<Arc<avrow::Schema>>,
    /// Rows per batch; `None` follows the session's `datafusion.execution.batch_size`.
    pub batch_size: Option<usize>,
    /// The deepest nesting of recursive types (default 16, as the reader's).
    pub max_recursion_depth: Option<usize>,
    /// Decoding threads per partition; `None` is 1: DataFusion runs partitions in parallel
    /// (`target_partitions`), each file split into byte ranges.
    pub threads: Option<usize>,
    /// Strings as `Utf8View` instead of `Utf8`.
    pub utf8_view: bool,
}

impl AvrowReadOptions {
    /// Options with the given reader schema.
    pub fn with_reader_schema(mut self, schema: avrow::Schema) -> Self {
        self.reader_schema = Some(Arc::new(schema));
        self
    }

    /// Options with a batch size.
    pub fn with_batch_size(mut self, rows: usize) -> Self {
        self.batch_size = Some(rows);
        self
    }

    /// Options with a recursion depth for recursive types.
    pub fn with_max_recursion_depth(mut self, depth: usize) -> Self {
        self.max_recursion_depth = Some(depth);
        self
    }

    /// Options with decoding threads per partition.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Options reading strings as `Utf8View`.
    pub fn with_utf8_view(mut self, enabled: bool) -> Self {
        self.utf8_view = enabled;
        self
    }

    /// Apply SQL table options (keys with or without `format.`); unknown keys are errors,
    /// and so are the keys of [`AvrowWriteOptions`] (the format's factory hands those to
    /// [`AvrowWriteOptions::apply`]).
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (key, value) in options {
            let key = key.strip_prefix("format.").unwrap_or(key);
            if WRITE_KEYS.contains(&key) {
                return plan_err!(
                    "avro option '{key}' is an option for writing; these options are for reading"
                );
            }
            let number = |what: &str| -> Result<usize> {
                match value.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => plan_err!("avro option '{what}' needs a positive integer, not '{value}'"),
                }
            };
            match key {
                "reader_schema" => match avrow::Schema::parse(value) {
                    Ok(schema) => self.reader_schema = Some(Arc::new(schema)),
                    Err(e) => return plan_err!("avro option 'reader_schema': {e}"),
                },
                "batch_size" => self.batch_size = Some(number(key)?),
                "max_recursion_depth" => self.max_recursion_depth = Some(number(key)?),
                "threads" => self.threads = Some(number(key)?),
                "utf8_view" => {
                    self.utf8_view = match value.trim().to_ascii_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return plan_err!(
                                "avro option 'utf8_view' is true or false, not '{value}'"
                            )
                        }
                    }
                }
                // Options DataFusion sets for every format.
                "compression" if value.eq_ignore_ascii_case("uncompressed") => {}
                _ => {
                    return plan_err!(
                        "unknown avro option '{key}' (known: reader_schema, batch_size, \
                         max_recursion_depth, threads, utf8_view; for writing codec, level, \
                         block_size, avro_schema, record_name)"
                    )
                }
            }
        }
        Ok(self)
    }

    /// A reader builder with these options (`batch_size` falls back to `session_batch`).
    pub(crate) fn builder(&self, session_batch: Option<usize>) -> avrow::ReaderBuilder {
        let mut builder = avrow::ReaderBuilder::new()
            .with_threads(self.threads.unwrap_or(1))
            .with_utf8_view(self.utf8_view);
        if let Some(rows) = self.batch_size.or(session_batch) {
            builder = builder.with_batch_size(rows);
        }
        if let Some(depth) = self.max_recursion_depth {
            builder = builder.with_max_recursion_depth(depth);
        }
        if let Some(schema) = &self.reader_schema {
            builder = builder.with_reader_schema(schema.as_ref().clone());
        }
        builder
    }
}

/// How avrow writes the files of `COPY ... TO 'out.avro'` and of `INSERT INTO` an Avro table.
///
/// As SQL options (with or without the `format.` prefix): `'codec' 'zstandard'` (`null` or
/// `none`, `deflate` (the default, as the CLI's and Python's), `snappy`, `zstandard` or `zstd`,
/// `bzip2`, `xz`), `'level' '3'` (the codec's level), `'block_size' '1048576'` (bytes of
/// record data a block, before compression), `'avro_schema' '<Avro schema JSON>'` (the writer
/// schema; without it, the schema the columns were read with, or derived from the query's Arrow
/// schema as the README's mapping says), `'record_name' 'com.acme.Order'` (the derived
/// schema's record name, default `topLevelRecord`), `'threads' '2'` (blocks encoded and
/// compressed on this many threads).
#[derive(Debug, Clone)]
pub struct AvrowWriteOptions {
    /// The block codec.
    pub codec: avrow::Codec,
    /// The codec's compression level (`None`: the codec's default).
    pub level: Option<i32>,
    /// Bytes of record data a block holds before it is compressed and written.
    pub block_size: usize,
    /// The writer schema (`None`: derived from the Arrow schema of what is written).
    pub avro_schema: Option<Arc<avrow::Schema>>,
    /// Threads encoding and compressing blocks of one file.
    pub threads: usize,
    /// The record's name (`name` or `namespace.name`) where the writer schema is derived.
    pub record_name: Option<String>,
}

impl Default for AvrowWriteOptions {
    fn default() -> Self {
        AvrowWriteOptions {
            codec: avrow::Codec::Deflate,
            level: None,
            block_size: avrow::DEFAULT_BLOCK_SIZE,
            avro_schema: None,
            threads: 1,
            record_name: None,
        }
    }
}

impl AvrowWriteOptions {
    /// Options with a block codec.
    pub fn with_codec(mut self, codec: avrow::Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Options with a compression level.
    pub fn with_level(mut self, level: i32) -> Self {
        self.level = Some(level);
        self
    }

    /// Options with a block size (bytes of record data a block).
    pub fn with_block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }

    /// Options with a writer schema.
    pub fn with_avro_schema(mut self, schema: avrow::Schema) -> Self {
        self.avro_schema = Some(Arc::new(schema));
        self
    }

    /// Options with encoding threads per file.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Apply the writing options among SQL options (keys with or without `format.`); the
    /// reading ones are left to [`AvrowReadOptions::apply`].
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (key, value) in options {
            let key = key.strip_prefix("format.").unwrap_or(key);
            match key {
                "codec" => {
                    let name = value.trim().to_ascii_lowercase();
                    self.codec = match name.as_str() {
                        "none" => avrow::Codec::Null,
                        "zstd" => avrow::Codec::Zstandard,
                        name => match avrow::Codec::from_name(name) {
                            Some(codec) => codec,
                            None => {
                                return plan_err!(
                                    "avro option 'codec' is one of null, deflate, snappy, \
                                     zstandard, bzip2, xz, not '{value}'"
                                )
                            }
                        },
                    }
                }
                "level" => match value.trim().parse::<i32>() {
                    Ok(level) => self.level = Some(level),
                    Err(_) => {
                        return plan_err!("avro option 'level' needs an integer, not '{value}'")
                    }
                },
                "block_size" => match value.trim().parse::<usize>() {
                    Ok(n) if n > 0 => self.block_size = n,
                    _ => {
                        return plan_err!(
                            "avro option 'block_size' needs a positive integer, not '{value}'"
                        )
                    }
                },
                "avro_schema" => match avrow::Schema::parse(value) {
                    Ok(schema) => self.avro_schema = Some(Arc::new(schema)),
                    Err(e) => return plan_err!("avro option 'avro_schema': {e}"),
                },
                "record_name" => self.record_name = Some(value.trim().to_string()),
                "threads" => match value.trim().parse::<usize>() {
                    Ok(n) if n > 0 => self.threads = n,
                    _ => {
                        return plan_err!(
                            "avro option 'threads' needs a positive integer, not '{value}'"
                        )
                    }
                },
                _ => {}
            }
        }
        Ok(self)
    }

    /// A writer builder for batches of `schema` with these options.
    pub(crate) fn builder(&self, schema: SchemaRef) -> avrow::WriterBuilder {
        let mut builder = avrow::WriterBuilder::new(schema)
            .with_codec(self.codec)
            .with_block_size(self.block_size)
            .with_threads(self.threads);
        if let Some(level) = self.level {
            builder = builder.with_level(level);
        }
        if let Some(schema) = &self.avro_schema {
            builder = builder.with_avro_schema(schema.as_ref().clone());
        }
        if let Some(name) = &self.record_name {
            builder = builder.with_record_name(name);
        }
        builder
    }
}

/// `options` split into the reading ones and the writing ones (`threads` in both).
pub(crate) fn split_options(
    options: &HashMap<String, String>,
) -> (HashMap<String, String>, HashMap<String, String>) {
    options.iter().fold(
        (HashMap::new(), HashMap::new()),
        |(mut read, mut write), (key, value)| {
            let bare = key.strip_prefix("format.").unwrap_or(key);
            if WRITE_KEYS.contains(&bare) || bare == "threads" {
                write.insert(key.clone(), value.clone());
            }
            if !WRITE_KEYS.contains(&bare) {
                read.insert(key.clone(), value.clone());
            }
            (read, write)
        },
    )
}
