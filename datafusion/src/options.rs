//! The table options of the avrow format: what `CREATE EXTERNAL TABLE ... OPTIONS (...)` and
//! [`AvrowReadOptions`] set, and how each becomes an `avrow::ReaderBuilder`.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::{plan_err, Result};

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

    /// Apply SQL table options (keys with or without `format.`); unknown keys are errors.
    pub fn apply(mut self, options: &HashMap<String, String>) -> Result<Self> {
        for (key, value) in options {
            let key = key.strip_prefix("format.").unwrap_or(key);
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
                         max_recursion_depth, threads, utf8_view)"
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
