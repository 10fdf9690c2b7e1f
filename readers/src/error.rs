//! The error type of the `avrow` crate: every error names the file and, for data errors, the
//! block index, the byte offset and the field path.

use arrow_schema::ArrowError;
use avrow_engine::{DecodeError, PlanError, SchemaError};

/// Everything that can go wrong reading Avro into Arrow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the input failed.
    #[error("{file}: {source}")]
    Io {
        /// The input (path, `<bytes>` or `<stream>`).
        file: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file header is malformed (bad magic, truncated metadata, no schema).
    #[error("{file}: invalid Avro file header at byte {offset}: {message}")]
    Header {
        /// The input.
        file: String,
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// The writer schema (or a reader schema) is invalid.
    #[error("{file}: {source}")]
    Schema {
        /// The input.
        file: String,
        /// The schema problem.
        #[source]
        source: SchemaError,
    },
    /// The schema cannot be read as asked (unknown projection path, unsupported mapping).
    #[error("{file}: {source}")]
    Plan {
        /// The input.
        file: String,
        /// The problem.
        #[source]
        source: PlanError,
    },
    /// A block's framing is wrong: truncated, negative count or size, sync marker mismatch,
    /// or its data does not decompress.
    #[error("{file}: block {block} at byte {offset}: {message}")]
    Block {
        /// The input.
        file: String,
        /// Index of the block in the file (0-based).
        block: u64,
        /// Byte offset of the block's start in the file.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A record in a block does not decode.
    #[error("{file}: block {block} at byte {offset}: {source}")]
    Decode {
        /// The input.
        file: String,
        /// Index of the block in the file (0-based).
        block: u64,
        /// Byte offset of the block's start in the file.
        offset: u64,
        /// The decoding error, with the offset within the (decompressed) block data, the record
        /// index within the block and the field path.
        #[source]
        source: DecodeError,
    },
    /// A feature avrow does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An invalid option or argument.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl From<Error> for ArrowError {
    fn from(e: Error) -> Self {
        match e {
            Error::Io { source, .. } => ArrowError::IoError(source.to_string(), source),
            other => ArrowError::ExternalError(Box::new(other)),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
