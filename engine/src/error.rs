//! Errors of the decoding core: what went wrong, where in the block, and in which field.

use crate::varint::VarintError;
use std::fmt;
use std::sync::Arc;

/// What went wrong while decoding record data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A malformed varint.
    Varint(VarintError),
    /// The data ended before a value did.
    UnexpectedEof {
        /// Bytes the value needs.
        needed: u64,
        /// Bytes left in the block.
        available: u64,
    },
    /// A negative string/bytes length or collection byte size.
    NegativeLength(i64),
    /// A boolean byte other than 0 or 1.
    InvalidBoolean(u8),
    /// An enum index outside the symbol list.
    EnumIndex {
        /// The index read.
        index: i64,
        /// Number of symbols.
        symbols: usize,
    },
    /// A union branch index outside the union.
    UnionIndex {
        /// The index read.
        index: i64,
        /// Number of branches.
        branches: usize,
    },
    /// A string that is not UTF-8.
    InvalidUtf8,
    /// A `uuid` string that is not in the 8-4-4-4-12 hexadecimal form.
    InvalidUuid(String),
    /// A decimal value with more bytes than its Arrow type holds.
    DecimalOverflow {
        /// Encoded length in bytes.
        len: usize,
    },
    /// A decimal value with more digits than its schema's precision (a writer that did not
    /// check it): Arrow's decimal arrays must not hold it.
    DecimalPrecision {
        /// The schema's precision.
        precision: u8,
    },
    /// A `time-millis` or `time-micros` value outside a day (negative, or a day or more):
    /// Arrow's time arrays must not hold it.
    TimeOfDayOutOfRange {
        /// The value as encoded (after any change of unit a reader schema asked for).
        value: i64,
        /// Its unit: `s`, `ms`, `µs` or `ns`.
        unit: &'static str,
    },
    /// A duration whose months or days do not fit Arrow's signed 32-bit fields.
    DurationOverflow {
        /// Months as encoded.
        months: u32,
        /// Days as encoded.
        days: u32,
    },
    /// Data nested deeper than the configured recursion depth for a recursive type.
    RecursionLimit {
        /// The recursive type.
        type_name: String,
        /// The configured depth.
        depth: usize,
    },
    /// A count or size that cannot be right for the bytes present, or that overflows Arrow's
    /// 32-bit offsets in one batch.
    TooLarge(Limit),
    /// Bytes left over after the block's last record.
    TrailingBytes(usize),
    /// Schema resolution: the writer's enum symbol has no counterpart in the reader's enum,
    /// which has no default symbol.
    UnresolvedEnumSymbol(String),
    /// A broken invariant inside avrow (a bug: please report it).
    Internal(String),
    /// Schema resolution: the writer's union branch matches no branch of the reader's schema.
    UnresolvedUnionBranch {
        /// The writer's branch index.
        index: i64,
        /// The writer's branch type.
        branch: String,
    },
    /// Schema resolution: a time or timestamp of the writer's unit that does not fit the
    /// reader's finer unit in 64 bits (a timestamp in milliseconds after the year 294,000 read
    /// in microseconds, or after 2262 read in nanoseconds).
    TimeOverflow {
        /// The writer's value.
        value: i64,
        /// The factor to the reader's unit.
        factor: i64,
    },
    /// An array or map block whose items take a different number of bytes than the block's
    /// recorded byte size (found where a block is checked as it streams).
    BlockSizeMismatch {
        /// The byte size the block records.
        declared: u64,
        /// The bytes its items take.
        actual: u64,
    },
}

/// Which limit a count or size of the data goes past ([`DecodeErrorKind::TooLarge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// A block declares more records than its bytes can hold.
    Records {
        /// The records the block declares.
        count: u64,
        /// The block's (decompressed) bytes.
        bytes: usize,
        /// The fewest bytes one record takes.
        min_record_size: usize,
    },
    /// An array or map block declares more items than the bytes left can hold.
    Items {
        /// The items the block declares.
        count: u64,
        /// The fewest bytes one item takes.
        min_item_size: usize,
        /// The bytes left (in the block, or that the block may still hold when it is checked
        /// as it streams).
        left: usize,
    },
    /// An array or map (or one of its blocks) of more items than Arrow's 32-bit offsets address.
    ItemOffsets {
        /// The items the block declares (or the array's or map's over its blocks so far).
        count: u64,
    },
    /// More than 2 GiB of values in one column of one batch (Arrow's 32-bit offsets).
    BatchValues,
    /// One array or map whose items alone would take more than 2 GiB in one Arrow column:
    /// items that take far more room in Arrow than in Avro (a null of a large `fixed` is one
    /// byte of Avro and a whole slot in Arrow). No batch size helps.
    ItemValues {
        /// The array's or map's items, the block that passed the limit included.
        count: u64,
    },
    /// More zero-byte values to fill from the reader schema (defaults, resolved unions) than
    /// are filled at once.
    ZeroSizeFill {
        /// The values to fill.
        count: usize,
        /// The most filled at once.
        max: usize,
    },
}

impl Limit {
    /// The one rule for a block's record count, wherever a count is read (decoding, counting
    /// from headers, walking an object store): `count` records of at least `min_record_size`
    /// bytes each must fit the block's `bytes`, and a block holds at most 2^31 - 1 records of
    /// no bytes. Returns the count as a `usize`.
    ///
    /// # Errors
    /// [`Limit::Records`] when the count cannot be right for the block.
    pub fn check_records(count: u64, bytes: usize, min_record_size: usize) -> Result<usize, Limit> {
        let fits = match min_record_size {
            0 => count <= i32::MAX as u64,
            m => count <= (bytes / m) as u64,
        };
        match usize::try_from(count) {
            Ok(count) if fits => Ok(count),
            _ => Err(Limit::Records {
                count,
                bytes,
                min_record_size,
            }),
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Records {
                count,
                bytes,
                min_record_size,
            } => match min_record_size {
                // Records of no bytes (a record of nulls, of empty records) are counted, not
                // read: a block holds at most 2^31 - 1 of them.
                0 => write!(
                    f,
                    "a block declares {count} records of no bytes, more than the 2^31 - 1 a \
                     block may hold"
                ),
                _ => write!(
                    f,
                    "a block of {bytes} bytes cannot hold {count} records of at least \
                     {min_record_size} bytes"
                ),
            },
            Limit::Items {
                count,
                min_item_size,
                left,
            } => write!(
                f,
                "collection block of {count} items needs at least {} bytes but only {left} are \
                 left",
                count.saturating_mul(*min_item_size as u64)
            ),
            Limit::ItemOffsets { count } => write!(
                f,
                "an array or map of {count} items exceeds Arrow's 32-bit offsets"
            ),
            Limit::BatchValues => f.write_str(
                "more than 2 GiB of values in one column of one batch (Arrow's 32-bit offsets); \
                 a smaller batch size may help",
            ),
            Limit::ItemValues { count } => write!(
                f,
                "an array or map of {count} items would take more than 2 GiB in one Arrow \
                 column whatever the batch size: its items take far more room in Arrow than in \
                 Avro"
            ),
            Limit::ZeroSizeFill { count, max } => write!(
                f,
                "{count} zero-byte values would each be filled from the reader schema (at most \
                 {max} at once)"
            ),
        }
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::Varint(e) => write!(f, "{e}"),
            DecodeErrorKind::UnexpectedEof { needed, available } => write!(
                f,
                "unexpected end of data: a value needs {needed} bytes but only {available} are left"
            ),
            DecodeErrorKind::NegativeLength(n) => write!(f, "negative length {n}"),
            DecodeErrorKind::InvalidBoolean(b) => write!(f, "invalid boolean byte {b:#04x}"),
            DecodeErrorKind::EnumIndex { index, symbols } => {
                write!(f, "enum index {index} out of range ({symbols} symbols)")
            }
            DecodeErrorKind::UnionIndex { index, branches } => {
                write!(f, "union branch {index} out of range ({branches} branches)")
            }
            DecodeErrorKind::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            DecodeErrorKind::InvalidUuid(s) => write!(f, "invalid uuid string {s:?}"),
            DecodeErrorKind::DecimalOverflow { len } => {
                write!(f, "decimal value of {len} bytes does not fit its Arrow decimal type")
            }
            DecodeErrorKind::DecimalPrecision { precision } => write!(
                f,
                "decimal value with more than its precision's {precision} digits"
            ),
            DecodeErrorKind::TimeOfDayOutOfRange { value, unit } => write!(
                f,
                "time of day {value} {unit} is outside a day (it must be at least 0 and less than 24 hours)"
            ),
            DecodeErrorKind::DurationOverflow { months, days } => write!(
                f,
                "duration of {months} months and {days} days does not fit Arrow's Interval(MonthDayNano)"
            ),
            DecodeErrorKind::RecursionLimit { type_name, depth } => write!(
                f,
                "recursive type {type_name} is nested deeper than the maximum recursion depth {depth} \
                 (raise it: ReaderBuilder::with_max_recursion_depth, max_recursion_depth= in \
                 Python, OPTIONS ('max_recursion_depth' 'N') in SQL, --max-recursion-depth in the \
                 CLI; a type that refers to itself more than once is unrolled only as deep as \
                 4,096 columns hold by default, 65,536 when a depth is given)"
            ),
            DecodeErrorKind::TooLarge(limit) => write!(f, "{limit}"),
            DecodeErrorKind::Internal(what) => {
                write!(f, "internal error (please report this bug): {what}")
            }
            DecodeErrorKind::TrailingBytes(n) => {
                write!(f, "{n} bytes left over after the block's last record")
            }
            DecodeErrorKind::UnresolvedEnumSymbol(symbol) => write!(
                f,
                "enum symbol {symbol:?} of the writer's schema is not in the reader's enum, which has no default"
            ),
            DecodeErrorKind::UnresolvedUnionBranch { index, branch } => write!(
                f,
                "union branch {index} ({branch}) of the writer's schema matches nothing in the reader's schema"
            ),
            DecodeErrorKind::TimeOverflow { value, factor } => write!(
                f,
                "time value {value} of the writer's unit does not fit 64 bits in the reader's \
                 unit ({factor} times finer)"
            ),
            DecodeErrorKind::BlockSizeMismatch { declared, actual } => write!(
                f,
                "collection block records a size of {declared} bytes, but its items take {actual}"
            ),
        }
    }
}

/// An error decoding record data, with its byte offset in the (decompressed) block, the record
/// index in the block and the field path. Boxed so that `Result`s on the hot path stay small.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: DecodeErrorKind,
    offset: usize,
    record: Option<u64>,
    /// The field path from the innermost step outwards.
    path_rev: Vec<Step>,
}

/// One step of a field path: a record field, or a position in an array or a map.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(Arc<str>),
    Index(u64),
}

impl DecodeError {
    /// A new error at `offset` bytes into the block data.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError(Box::new(Inner {
            kind,
            offset,
            record: None,
            path_rev: Vec::new(),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.0.kind
    }

    /// Byte offset in the decompressed block data.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// Index of the record within its block, when known.
    pub fn record(&self) -> Option<u64> {
        self.0.record
    }

    /// The field path, outermost first: field names joined with `.`, positions in arrays and
    /// maps in brackets (`lines[3].sku`; empty at the top level).
    pub fn field_path(&self) -> String {
        let mut path = String::new();
        for step in self.0.path_rev.iter().rev() {
            match step {
                Step::Field(name) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                Step::Index(i) => {
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                }
            }
        }
        path
    }

    #[cold]
    pub(crate) fn in_field(mut self, name: &Arc<str>) -> Self {
        self.0.path_rev.push(Step::Field(name.clone()));
        self
    }

    /// The error is in item (or map entry) `index` of an array (or map).
    #[cold]
    pub(crate) fn at_index(mut self, index: u64) -> Self {
        self.0.path_rev.push(Step::Index(index));
        self
    }

    #[cold]
    pub(crate) fn at_record(mut self, record: u64) -> Self {
        self.0.record.get_or_insert(record);
        self
    }

    /// Add `base` to the record index (used when a block is decoded in several calls).
    pub fn with_record_base(mut self, base: u64) -> Self {
        if let Some(r) = &mut self.0.record {
            *r += base;
        }
        self
    }

    /// Shift the offset (used when a caller decodes a sub-slice of the block).
    pub fn with_offset_base(mut self, base: usize) -> Self {
        self.0.offset += base;
        self
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} of the block data",
            self.0.kind, self.0.offset
        )?;
        if let Some(r) = self.0.record {
            write!(f, ", record {r}")?;
        }
        let path = self.field_path();
        if !path.is_empty() {
            write!(f, ", field {path}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

/// An error turning a schema into a decode plan: an unknown projection path, a schema whose
/// Arrow mapping would be unreasonable (too deep, too large, too many union branches), or a
/// reader schema that cannot resolve the writer schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A projection names a field the schema does not have.
    #[error("projection: no field {path:?} in the schema{hint}")]
    UnknownField {
        /// The path as given.
        path: String,
        /// Extra explanation.
        hint: String,
    },
    /// The schema expands to more columns and nodes than a plan holds.
    #[error(
        "unsupported schema: the schema expands to more than {limit} columns and nodes \
         (recursive types are unrolled {max_recursion_depth} levels deep; lower \
         max_recursion_depth or project fewer columns)"
    )]
    TooManyNodes {
        /// The most a plan holds.
        limit: usize,
        /// The recursion depth the plan was compiled with.
        max_recursion_depth: usize,
    },
    /// Types nested deeper than a plan holds.
    #[error("unsupported schema: types nested more than {limit} levels deep")]
    TooDeep {
        /// The deepest nesting a plan holds.
        limit: usize,
    },
    /// A union of more branches than Arrow's unions hold (127).
    #[error(
        "unsupported schema: union at {path} has {branches} branches; Arrow unions hold at \
         most 127"
    )]
    TooManyBranches {
        /// The union's field path.
        path: String,
        /// Its branches.
        branches: usize,
    },
    /// Several writer branches of a union resolve to one reader branch that is not a
    /// primitive (schema resolution).
    #[error(
        "unsupported schema: union at {path}: several writer branches resolve to the reader's \
         {branch} branch"
    )]
    AmbiguousBranch {
        /// The union's field path.
        path: String,
        /// The reader's branch, described.
        branch: String,
    },
    /// A column name that is not a valid Avro name (writing without an Avro schema).
    #[error(
        "unsupported schema: column {path:?}: {name:?} is not a valid Avro field name \
         (letters, digits and _, not starting with a digit); give an Avro schema"
    )]
    InvalidName {
        /// The column's path.
        path: String,
        /// The name.
        name: String,
    },
    /// An Arrow type with no Avro counterpart (writing without an Avro schema).
    #[error("unsupported schema: column {path:?}: Arrow {data_type} {reason}")]
    NoAvroType {
        /// The column's path.
        path: String,
        /// Its Arrow type.
        data_type: arrow_schema::DataType,
        /// Why it has no Avro counterpart.
        reason: &'static str,
    },
    /// The Avro schema derived from an Arrow schema is not valid Avro (two columns of one
    /// name, a union of two Arrow types that are one Avro type, ...): give an Avro schema.
    #[error(
        "unsupported schema: the derived Avro schema is not valid ({reason}); give an Avro \
         schema: {schema}"
    )]
    Underivable {
        /// What the schema parser refused.
        reason: String,
        /// The derived schema, as JSON.
        schema: String,
    },
    /// A broken invariant inside avrow (a bug: please report it).
    #[error("internal error (please report this bug): {0}")]
    Internal(String),
    /// Arrow data cannot be written as the given Avro schema (a column of another type, a
    /// missing column).
    #[error("the Arrow data cannot be written as the Avro schema at {}: {reason}", if path.is_empty() { "the top level" } else { path.as_str() })]
    Unwritable {
        /// The column path (empty for the top level).
        path: String,
        /// What does not match.
        reason: String,
    },
    /// The reader's schema cannot read data written with the writer's schema (Avro schema
    /// resolution rules).
    #[error("reader schema does not match the writer schema at {}: {reason}", if path.is_empty() { "the top level" } else { path.as_str() })]
    Incompatible {
        /// The field path in the reader's schema (empty for the top level).
        path: String,
        /// What does not match.
        reason: String,
    },
}
