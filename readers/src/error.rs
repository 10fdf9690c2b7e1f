//! The error type of the `avrow` crate: every error names the file and, for data errors, the
//! block index, the byte offset and the field path. Each kind of failure is a variant a
//! program can match ([`Error`], [`HeaderErrorKind`], [`BlockErrorKind`],
//! [`DecompressError`]); the messages read as plain sentences.

use crate::codec::{Codec, DecompressError};
use arrow_schema::ArrowError;
use avrow_engine::varint::VarintError;
use avrow_engine::{DecodeError, PlanError, SchemaError};
use std::fmt;

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
    #[error("{file}: invalid Avro file header at byte {offset}: {kind}")]
    Header {
        /// The input.
        file: String,
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong.
        kind: HeaderErrorKind,
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
    /// A block's framing is wrong (truncated, negative count or size, sync marker mismatch,
    /// over the size limit), or its data does not decompress.
    #[error("{file}: block {block} at byte {offset}: {kind}")]
    Block {
        /// The input.
        file: String,
        /// Index of the block in the file (0-based, counted from the file's first block, also
        /// when reading a byte range).
        block: u64,
        /// Byte offset of the block's start in the file.
        offset: u64,
        /// What is wrong.
        kind: BlockErrorKind,
    },
    /// A record in a block does not decode.
    #[error("{file}: block {block} at byte {offset}: {source}")]
    Decode {
        /// The input.
        file: String,
        /// Index of the block in the file (0-based, counted from the file's first block).
        block: u64,
        /// Byte offset of the block's start in the file.
        offset: u64,
        /// The decoding error, with the offset within the (decompressed) block data, the record
        /// index within the block and the field path.
        #[source]
        source: DecodeError,
    },
    /// A value of an Arrow batch that the Avro schema being written cannot hold (a null in
    /// a non-nullable field, a string that is no enum symbol, ...), with its column and row.
    #[error("writing Avro: {source}")]
    Encode {
        /// The value and where it is.
        #[source]
        source: avrow_engine::encode::EncodeError,
    },
    /// The file's `avro.codec` is not one avrow reads.
    #[error(
        "{file}: unknown codec {codec:?} (avrow reads null, deflate, snappy, zstandard, bzip2 \
         and xz)"
    )]
    UnknownCodec {
        /// The input.
        file: String,
        /// The codec the file names.
        codec: String,
    },
    /// Files read together whose writer schemas differ, with schema merging turned off
    /// ([`ReaderBuilder::with_schema_merging`](crate::ReaderBuilder::with_schema_merging)).
    #[error(
        "invalid argument: {file} has a different writer schema than {first}; files read \
         together must share one schema, or be read with a reader schema"
    )]
    SchemaMismatch {
        /// The file whose schema differs.
        file: String,
        /// The first file read, whose schema the others must share.
        first: String,
    },
    /// Files read together whose writer schemas have types no one reader schema reads both
    /// of (a string in one, a number in the other; see
    /// [`Schema::merge`](avrow_engine::Schema::merge)).
    #[error(
        "invalid argument: {file}'s writer schema cannot be merged with the schema of {first} \
         (and of the files before it): {source}; read the files with a reader schema that reads \
         each of them (none does for decimals of another precision or scale: read those files \
         one at a time)"
    )]
    SchemaMerge {
        /// The file whose schema does not merge.
        file: String,
        /// The first file read.
        first: String,
        /// Where and how the schemas disagree.
        #[source]
        source: avrow_engine::schema::MergeError,
    },
    /// A byte range asked of an input that cannot seek (a stream).
    #[error(
        "invalid argument: {file}: byte ranges need a seekable input (a path or bytes), not a \
         stream"
    )]
    NotSeekable {
        /// The input.
        file: String,
    },
    /// A compression level the codec does not take.
    #[error("invalid argument: {}", level_message(*codec, *level, levels))]
    Level {
        /// The codec.
        codec: Codec,
        /// The level asked for.
        level: i32,
        /// The levels the codec takes (`None`: it has none).
        levels: Option<std::ops::RangeInclusive<i32>>,
    },
    /// A [`Writer`](crate::Writer) that failed earlier (an error it returned) was used again.
    #[error("invalid argument: the writer failed earlier and writes nothing more")]
    WriterFailed,
    /// The decoding or encoding threads could not be started.
    #[error("cannot start {threads} threads: {reason}")]
    ThreadPool {
        /// The threads asked for.
        threads: usize,
        /// Why the system refused.
        reason: String,
    },
    /// An invalid option or argument that carries nothing more to match on (an empty file
    /// list, a range asked of several files, a reserved metadata key).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The varint kernel or bulk path asked for (by `AVROW_VARINT`, `AVROW_BULK` or
    /// [`ReaderBuilder::with_varint_kernel`](crate::ReaderBuilder::with_varint_kernel)) is
    /// unknown or cannot run on this CPU.
    #[error("invalid argument: {0}")]
    Kernel(#[from] avrow_engine::varint::SelectionError),
    /// A broken invariant inside avrow (a bug: please report it), such as a decoding worker
    /// that panicked.
    #[error("internal error (please report this bug): {0}")]
    Internal(String),
}

impl Error {
    /// The input the error is about, where it names one.
    pub fn file(&self) -> Option<&str> {
        match self {
            Error::Io { file, .. }
            | Error::Header { file, .. }
            | Error::Schema { file, .. }
            | Error::Plan { file, .. }
            | Error::Block { file, .. }
            | Error::Decode { file, .. }
            | Error::UnknownCodec { file, .. }
            | Error::SchemaMismatch { file, .. }
            | Error::SchemaMerge { file, .. }
            | Error::NotSeekable { file } => Some(file),
            Error::Level { .. }
            | Error::WriterFailed
            | Error::ThreadPool { .. }
            | Error::InvalidArgument(_)
            | Error::Kernel(_)
            | Error::Internal(_)
            | Error::Encode { .. } => None,
        }
    }

    /// The index of the block the error is about, for block and record errors.
    pub fn block(&self) -> Option<u64> {
        match self {
            Error::Block { block, .. } | Error::Decode { block, .. } => Some(*block),
            _ => None,
        }
    }
}

/// [`Error::Level`]'s message.
fn level_message(
    codec: Codec,
    level: i32,
    levels: &Option<std::ops::RangeInclusive<i32>>,
) -> String {
    match levels {
        Some(range) => format!(
            "{codec} takes levels {} to {}, not {level}",
            range.start(),
            range.end()
        ),
        None => format!("{codec} has no compression levels"),
    }
}

/// What is wrong with a file header.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderErrorKind {
    /// The input is empty.
    Empty,
    /// The input does not start with the magic `Obj\x01`.
    BadMagic {
        /// The first bytes (up to four).
        found: Vec<u8>,
    },
    /// The input ends inside the header.
    Truncated {
        /// The part being read.
        part: HeaderPart,
    },
    /// A malformed varint.
    MalformedVarint {
        /// The part being read.
        part: HeaderPart,
    },
    /// A negative metadata key or value length.
    NegativeLength {
        /// The length read.
        length: i64,
        /// The key whose value it is (none for a key's own length).
        key: Option<String>,
    },
    /// A metadata key that is not UTF-8.
    KeyNotUtf8,
    /// A metadata map block with no entries that is not the end of the map.
    NoProgress,
    /// No `avro.schema` entry.
    MissingSchema,
    /// `avro.schema` is not UTF-8.
    SchemaNotUtf8,
}

/// The parts of a header, for [`HeaderErrorKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderPart {
    /// The four magic bytes.
    Magic,
    /// The metadata map.
    Metadata,
    /// The 16-byte sync marker.
    SyncMarker,
}

impl fmt::Display for HeaderPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeaderPart::Magic => "magic",
            HeaderPart::Metadata => "metadata map",
            HeaderPart::SyncMarker => "sync marker",
        })
    }
}

impl fmt::Display for HeaderErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderErrorKind::Empty => f.write_str("not an Avro container file (the file is empty)"),
            HeaderErrorKind::BadMagic { found } if found.len() < 4 => f.write_str(
                "not an Avro container file (shorter than the 4-byte magic)",
            ),
            HeaderErrorKind::BadMagic { found } => write!(
                f,
                "not an Avro container file (magic is {found:02x?}, expected 4f 62 6a 01 \"Obj\\x01\")"
            ),
            HeaderErrorKind::Truncated { part } => write!(f, "the file ends inside the {part}"),
            HeaderErrorKind::MalformedVarint { part } => write!(f, "malformed varint in the {part}"),
            HeaderErrorKind::NegativeLength { length, key: None } => {
                write!(f, "negative metadata key length {length}")
            }
            HeaderErrorKind::NegativeLength {
                length,
                key: Some(key),
            } => write!(f, "negative length {length} of metadata value {key:?}"),
            HeaderErrorKind::KeyNotUtf8 => f.write_str("a metadata key is not UTF-8"),
            HeaderErrorKind::NoProgress => f.write_str("metadata map makes no progress"),
            HeaderErrorKind::MissingSchema => f.write_str("the header has no avro.schema entry"),
            HeaderErrorKind::SchemaNotUtf8 => f.write_str("avro.schema is not UTF-8"),
        }
    }
}

/// The parts of a block, for [`BlockErrorKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockPart {
    /// The record count (a varint).
    RecordCount,
    /// The byte size of the data (a varint).
    ByteSize,
    /// The (possibly compressed) data.
    Data,
    /// The 16-byte sync marker after the data.
    SyncMarker,
}

impl fmt::Display for BlockPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockPart::RecordCount => "record count",
            BlockPart::ByteSize => "byte size",
            BlockPart::Data => "data",
            BlockPart::SyncMarker => "sync marker",
        })
    }
}

/// What is wrong with a block's framing or compressed data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockErrorKind {
    /// The input ends inside the block.
    Truncated {
        /// The part being read.
        part: BlockPart,
        /// Bytes the block's data and sync marker need, when known.
        needed: Option<u64>,
        /// Bytes left in the input, when known.
        available: Option<u64>,
    },
    /// A malformed varint in the block's count or size.
    MalformedVarint {
        /// The part being read.
        part: BlockPart,
        /// What is wrong with it.
        error: VarintError,
    },
    /// A negative record count.
    NegativeCount(i64),
    /// A negative byte size.
    NegativeSize(i64),
    /// The 16 bytes after the data are not the file's sync marker.
    SyncMismatch {
        /// Byte offset in the file where the marker was expected, when known.
        at: Option<u64>,
    },
    /// The block's stored data is larger than the limit (`with_max_block_size`).
    TooLarge {
        /// The block's size in bytes.
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// The data does not decompress.
    Decompression {
        /// The file's codec.
        codec: Codec,
        /// What went wrong.
        error: DecompressError,
    },
}

impl fmt::Display for BlockErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockErrorKind::Truncated {
                needed: Some(needed),
                available: Some(available),
                ..
            } => write!(
                f,
                "the file ends inside the block: it needs {needed} bytes of data and sync marker \
                 but only {available} are left (truncated file?)"
            ),
            BlockErrorKind::Truncated { part, .. } => write!(
                f,
                "the input ends inside the block's {part} (truncated file?)"
            ),
            BlockErrorKind::MalformedVarint { part, error } => {
                write!(f, "malformed {part}: {error}")
            }
            BlockErrorKind::NegativeCount(n) => write!(f, "negative record count {n}"),
            BlockErrorKind::NegativeSize(n) => write!(f, "negative byte size {n}"),
            BlockErrorKind::SyncMismatch { at: Some(at) } => write!(
                f,
                "sync marker mismatch after the block's data at byte {at} (corrupt file or wrong byte size)"
            ),
            BlockErrorKind::SyncMismatch { at: None } => f.write_str(
                "sync marker mismatch after the block's data (corrupt file or wrong byte size)",
            ),
            BlockErrorKind::TooLarge { size, limit } => write!(
                f,
                "the block holds {size} bytes, more than the limit of {limit} bytes (raise it: ReaderBuilder::with_max_block_size, max_block_size= in Python, --max-block-size in the CLI)"
            ),
            BlockErrorKind::Decompression { codec, error } => {
                write!(f, "{codec} decompression failed: {error}")
            }
        }
    }
}

impl From<Error> for ArrowError {
    fn from(e: Error) -> Self {
        match e {
            // The message keeps the file name; the source keeps the I/O error's kind.
            Error::Io { file, source } => ArrowError::IoError(format!("{file}: {source}"), source),
            other => ArrowError::ExternalError(Box::new(other)),
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
