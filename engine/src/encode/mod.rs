//! Encoding Arrow record batches as Avro record data, the inverse of `decode`: an
//! [`EncodePlan`] pairs every Arrow column with the Avro type it is written as (checked once,
//! when the plan is made), and [`EncodePlan::encode`] appends a batch's records to a buffer.
//! [`avro_schema_for`] derives an Avro schema from an Arrow schema where none is given
//! ([`derived_avro_schema`] with a record name of the caller's).
//! Container files, codecs and threads are the `avrow` crate's.

mod bind;
mod chunk;
mod derive;
mod plan;
mod sink;
mod views;
mod write;

pub use derive::{avro_schema_for, derived_avro_schema};

use crate::error::PlanError;
use crate::schema::{NamedDef, Node, Schema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Fields, SchemaRef};
use plan::{Builder, Plan};
use std::fmt;
use std::sync::Arc;

/// What is wrong with a value that an [`EncodePlan`] cannot write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A null where the Avro type has no null branch.
    Null,
    /// A number outside what the Avro type holds (an Int64 beyond an Avro `int`, a UInt64
    /// beyond `long`, a duration part that is negative or beyond 32 bits, a unit conversion
    /// that overflows or is not exact).
    OutOfRange,
    /// A string that is not one of the enum's symbols.
    NotASymbol(String),
    /// A decimal with more digits than the Avro precision (or wider than its fixed size).
    Precision(u8),
    /// A union type id with no Avro branch.
    UnionTypeId(i8),
    /// Binary data written as an Avro `string` that is not UTF-8.
    InvalidUtf8,
    /// A time of day (in the Avro type's unit) outside `0` to one day.
    TimeOfDayOutOfRange {
        /// The value, in the Avro type's unit.
        value: i64,
        /// That unit (`ms` or `µs`).
        unit: &'static str,
    },
    /// A string written as a `uuid` that is not one (8-4-4-4-12 hexadecimal digits).
    InvalidUuid(String),
    /// The batch's schema is not the one the plan was made for.
    SchemaMismatch(String),
    /// A dictionary key of a non-null row that names none of the dictionary's values
    /// (negative, or past them): invalid Arrow data.
    DictionaryKey,
}

impl fmt::Display for EncodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeErrorKind::Null => {
                f.write_str("null value in a field whose Avro type has no null")
            }
            EncodeErrorKind::OutOfRange => f.write_str("value out of range for its Avro type"),
            EncodeErrorKind::NotASymbol(s) => write!(f, "{s:?} is not a symbol of the Avro enum"),
            EncodeErrorKind::Precision(p) => {
                write!(
                    f,
                    "decimal value has more than the Avro precision of {p} digits"
                )
            }
            EncodeErrorKind::UnionTypeId(t) => write!(f, "union type id {t} has no Avro branch"),
            EncodeErrorKind::InvalidUtf8 => {
                f.write_str("binary value written as an Avro string is not UTF-8")
            }
            EncodeErrorKind::TimeOfDayOutOfRange { value, unit } => write!(
                f,
                "time of day {value} {unit} is outside a day (0 to 24 h), which the Avro time \
                 types hold"
            ),
            EncodeErrorKind::InvalidUuid(s) => write!(
                f,
                "{s:?} is not a uuid (8-4-4-4-12 hexadecimal digits), which the Avro uuid type \
                 holds"
            ),
            EncodeErrorKind::SchemaMismatch(m) => {
                write!(f, "batch schema differs from the writer's: {m}")
            }
            EncodeErrorKind::DictionaryKey => {
                f.write_str("dictionary key names none of the dictionary's values")
            }
        }
    }
}

/// A value an [`EncodePlan`] cannot write, with its column path and row in the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    kind: EncodeErrorKind,
    path: String,
    row: usize,
    /// Where the plan's Avro schema came from, when the writer says
    /// ([`EncodePlan::with_note`]).
    note: Option<Arc<str>>,
}

impl EncodeError {
    pub(crate) fn new(kind: EncodeErrorKind, path: &str, row: usize) -> Self {
        EncodeError {
            kind,
            path: path.to_string(),
            row,
            note: None,
        }
    }

    /// The plan's note on its Avro schema ([`EncodePlan::with_note`]).
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// What is wrong.
    pub fn kind(&self) -> &EncodeErrorKind {
        &self.kind
    }

    /// The column path (`lines[].sku`, `attrs{}`; empty for the whole batch).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The row of the batch.
    pub fn row(&self) -> usize {
        self.row
    }

    /// Add `base` to the row (a caller that encodes a batch in slices).
    pub fn with_row_base(mut self, base: usize) -> Self {
        self.row += base;
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "row {}: {}", self.row, self.kind)?;
        } else {
            write!(f, "column {}, row {}: {}", self.path, self.row, self.kind)?;
        }
        match &self.note {
            Some(note) => write!(f, " ({note})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for EncodeError {}

/// An Arrow schema paired with the Avro schema its batches are written as.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Int64Array, RecordBatch, StringArray};
/// use avrow_engine::encode::{avro_schema_for, EncodePlan};
/// use avrow_engine::{DecodeOptions, DecodePlan};
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int64Array::from(vec![1, -1])) as _),
///     ("name", Arc::new(StringArray::from(vec![Some("a"), None])) as _),
/// ])?;
/// let avro = avro_schema_for(batch.schema_ref())?;
/// let plan = EncodePlan::new(batch.schema(), avro.clone())?;
/// let mut data = Vec::new();
/// plan.encode(&batch, &mut data)?;
/// // id 1, name branch 1 "a"; id -1, name branch 0 (null)
/// assert_eq!(data, [0x02, 0x02, 0x02, b'a', 0x01, 0x00]);
/// let mut decoder = DecodePlan::new(&avro, &DecodeOptions::default())?.decoder();
/// decoder.decode_block(&data, 2)?;
/// assert_eq!(decoder.flush()?.unwrap().num_rows(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct EncodePlan {
    arrow: SchemaRef,
    avro: Schema,
    /// The batch as a record (a record schema), or its one column (any other schema).
    pub(crate) root: Plan,
    record: bool,
    note: Option<Arc<str>>,
}

impl EncodePlan {
    /// Pair `arrow` with `avro`: a record schema takes the batch's columns as its fields (by
    /// name), any other schema a batch of one column.
    ///
    /// # Errors
    /// [`PlanError::Unwritable`] naming the column path where an Arrow type cannot be
    /// written as the Avro type (a missing or extra field, a fixed size or decimal scale that
    /// differs, a type no rule writes).
    pub fn new(arrow: SchemaRef, avro: Schema) -> Result<Self, PlanError> {
        let root = Self::root(&arrow, &avro)?;
        let record = matches!(avro.root(), Node::Named(i) if matches!(avro.named(*i).def, NamedDef::Record(_)));
        Ok(EncodePlan {
            arrow,
            avro,
            root,
            record,
            note: None,
        })
    }

    /// Say in every [`EncodeError`] of this plan where its Avro schema came from (a writer
    /// that took it from the batch's `avro.schema` metadata says so: a value that no longer
    /// fits the type it was read as is then explained).
    pub fn with_note(mut self, note: impl Into<Arc<str>>) -> Self {
        self.note = Some(note.into());
        self
    }

    fn noted(&self, mut e: EncodeError) -> EncodeError {
        e.note.clone_from(&self.note);
        e
    }

    fn root(arrow: &SchemaRef, avro: &Schema) -> Result<Plan, PlanError> {
        let mut b = Builder::new(avro);
        let record = matches!(avro.root(), Node::Named(i) if matches!(avro.named(*i).def, NamedDef::Record(_)));
        let root = if record {
            let t = DataType::Struct(arrow.fields().clone());
            let field = arrow_schema::Field::new("", t, false);
            b.field(&field, avro.root(), "")?
        } else {
            let [field] = &arrow.fields()[..] else {
                return Err(PlanError::Unwritable {
                    path: String::new(),
                    reason: format!(
                        "a non-record Avro schema is written from one column; the batch has {}",
                        arrow.fields().len()
                    ),
                });
            };
            b.field(field, avro.root(), field.name())?
        };
        Ok(root)
    }

    /// The Avro schema written.
    pub fn avro_schema(&self) -> &Schema {
        &self.avro
    }

    /// The Arrow schema of the batches.
    pub fn arrow_schema(&self) -> &SchemaRef {
        &self.arrow
    }

    /// Check that batches of `schema` can be written: the plan's column names and types
    /// (metadata and nullability aside: a column may say it is nullable and hold no nulls).
    ///
    /// # Errors
    /// [`EncodeErrorKind::SchemaMismatch`], naming both schemas' fields.
    pub fn check_schema(&self, schema: &SchemaRef) -> Result<(), EncodeError> {
        if schema == &self.arrow || same_fields(schema.fields(), self.arrow.fields()) {
            return Ok(());
        }
        Err(EncodeError::new(
            EncodeErrorKind::SchemaMismatch(format!(
                "{:?} vs {:?}",
                schema.fields(),
                self.arrow.fields()
            )),
            "",
            0,
        ))
    }

    /// Append the records of `batch` to `out`. On error `out` is as it was.
    ///
    /// # Errors
    /// A value the Avro type cannot hold, or a batch of another schema.
    pub fn encode(&self, batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.check_schema(batch.schema_ref())?;
        let start = out.len();
        let result = self.encode_rows(batch, out);
        if result.is_err() {
            out.truncate(start);
        }
        result.map_err(|e| self.noted(e))
    }

    fn encode_rows(&self, batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let rows = batch.num_rows();
        if self.record {
            let s = StructArray::from(batch.clone());
            let bound = bind::bind(&self.root, &s as &dyn Array, Arc::from(""));
            chunk::write_rows(&bound, rows, out)?;
        } else {
            let column = batch.column(0);
            let name: Arc<str> = Arc::from(batch.schema().field(0).name().as_str());
            let bound = bind::bind(&self.root, column.as_ref(), name);
            for r in 0..rows {
                bound.write(r, r, out)?;
            }
        }
        Ok(())
    }
}

/// Equal names and types (metadata and nullability aside: a batch may say a column is
/// nullable and have no nulls).
fn same_fields(a: &Fields, b: &Fields) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.name() == y.name() && x.data_type().equals_datatype(y.data_type()))
}
