//! Arrow columns as Parquet can store them: the mapping that `avrow convert` applies before
//! its Parquet writer, and that `avrow-datafusion` applies before DataFusion's (`COPY ... TO
//! 'x.parquet'`). Avro's types all decode to Arrow, but Parquet writers (the `parquet` crate,
//! pyarrow) have no representation for some of those Arrow types; these are rewritten, column
//! by column, and every other type goes through unchanged:
//!
//! - a general union (Arrow dense `Union`) becomes a struct with one nullable child per
//!   non-null branch, named `member0`, `member1`, ... in branch order (Spark's `spark-avro`
//!   naming): in each row exactly the child of the row's branch is set, and the struct itself
//!   is null when the value is the union's `null` branch;
//! - an Avro `duration` (Arrow `Interval(MonthDayNano)`, nanoseconds a whole number of
//!   milliseconds) becomes 12 bytes (`FixedSizeBinary(12)`): months, days and milliseconds
//!   as little-endian unsigned 32-bit integers, exactly Avro's own encoding and Parquet's
//!   `INTERVAL` (lossless; [`Mapping::marked`] lets a writer that takes a Parquet schema
//!   annotate them as `INTERVAL`, as `avrow convert` does);
//! - a record without fields (an empty Arrow struct) becomes a struct with one all-null child
//!   named `__empty` (Arrow `Null`), so that the record's presence (its validity) survives;
//!   a top-level record without fields becomes one all-null column `__empty`, so that its row
//!   count survives (Parquet files count rows through their columns: writers record none
//!   for a file without columns, and DuckDB refuses to read one).
//!
//! The same rewriting applies inside lists, maps and structs. Rewritten fields carry
//! [`MAPPING_KEY`] metadata naming the rewrite. [`Restore`] (`restore.rs`) is the way back.

mod restore;

pub use restore::Restore;

use arrow_array::cast::AsArray;
use arrow_array::types::{ArrowPrimitiveType, ByteArrayType, IntervalMonthDayNanoType};
use arrow_array::{
    downcast_primitive_array, new_null_array, Array, ArrayRef, FixedSizeBinaryArray,
    GenericByteArray, GenericListArray, MapArray, NullArray, OffsetSizeTrait, PrimitiveArray,
    RecordBatch, RecordBatchOptions, StructArray, UInt32Array, UnionArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{
    ArrowError, DataType, Field, FieldRef, Fields, IntervalUnit, Schema, SchemaRef, UnionFields,
};
use std::sync::Arc;

/// Why a column cannot be mapped for Parquet.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParquetMappingError {
    /// A type no mapping covers (a dictionary of unions, say).
    #[error("Parquet cannot store {0}")]
    Unsupported(DataType),
    /// A union whose only branch is `null` has no member to store.
    #[error("a union with only a null branch cannot be stored in Parquet")]
    NullOnlyUnion,
    /// An interval Parquet's `INTERVAL` (unsigned 32-bit months, days and milliseconds) cannot
    /// hold: a negative part (SQL's `INTERVAL '-1 day'`; an Avro duration of 2^31 months or
    /// days or more, which Arrow's signed fields hold as negative), a fraction of a
    /// millisecond, or more milliseconds than 32 bits count.
    #[error(
        "an interval of {months} months, {days} days and {nanoseconds} ns has no Parquet \
         INTERVAL (unsigned months, days and whole milliseconds)"
    )]
    IntervalOutOfRange {
        /// The interval's months.
        months: i32,
        /// Its days.
        days: i32,
        /// Its nanoseconds.
        nanoseconds: i64,
    },
    /// Building a mapped array failed.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

type Result<T, E = ParquetMappingError> = std::result::Result<T, E>;

/// The child that stands for a record without fields.
pub const EMPTY_RECORD_CHILD: &str = "__empty";

/// Field metadata naming the mapping a rewritten field went through (`union`, `duration`,
/// `empty-record`; `empty-top-level-record` on the `__empty` column that stands for the rows
/// of a top-level record without fields), so that readers of the Parquet file (through its embedded Arrow schema)
/// can tell a rewritten union from a record.
pub const MAPPING_KEY: &str = "avrow.parquet.mapping";

/// Member field metadata: the union branch's own name (its Avro type) and index.
pub const BRANCH_KEY: &str = "avrow.union.branch";

/// Field metadata key marking the fields that hold durations in [`Mapping::marked`]
/// (`PARQUET:field_id` is carried into the Parquet schema by the `parquet` crate's converter).
const FIELD_ID: &str = "PARQUET:field_id";

/// The first field id of [`Mapping::marked`]'s duration fields: a Parquet field whose id is at
/// least this holds a duration.
pub const DURATION_ID_BASE: i32 = 1 << 30;

/// Whether `data_type` (or anything inside it) needs rewriting for Parquet.
pub fn needs_mapping(data_type: &DataType) -> bool {
    match data_type {
        DataType::Union(..) | DataType::Interval(IntervalUnit::MonthDayNano) => true,
        DataType::Struct(fields) => {
            fields.is_empty() || fields.iter().any(|f| needs_mapping(f.data_type()))
        }
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            needs_mapping(f.data_type())
        }
        DataType::FixedSizeList(f, _) | DataType::ListView(f) | DataType::LargeListView(f) => {
            needs_mapping(f.data_type())
        }
        DataType::Dictionary(_, value) => needs_mapping(value),
        _ => false,
    }
}

/// The Parquet-compatible Arrow type of `data_type`.
pub fn map_type(data_type: &DataType) -> Result<DataType> {
    Ok(match data_type {
        DataType::Union(fields, _) => DataType::Struct(union_members(fields)?),
        DataType::Interval(IntervalUnit::MonthDayNano) => DataType::FixedSizeBinary(12),
        DataType::Struct(fields) if fields.is_empty() => {
            DataType::Struct(Fields::from(vec![Field::new(
                EMPTY_RECORD_CHILD,
                DataType::Null,
                true,
            )]))
        }
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(map_field)
                .collect::<Result<Vec<_>>>()?
                .into(),
        ),
        DataType::List(f) => DataType::List(map_field(f)?),
        DataType::LargeList(f) => DataType::LargeList(map_field(f)?),
        DataType::Map(f, sorted) => DataType::Map(map_field(f)?, *sorted),
        other if needs_mapping(other) => {
            return Err(ParquetMappingError::Unsupported(other.clone()))
        }
        other => other.clone(),
    })
}

fn map_field(field: &FieldRef) -> Result<FieldRef> {
    if !needs_mapping(field.data_type()) {
        return Ok(field.clone());
    }
    let nullable = field.is_nullable() || matches!(field.data_type(), DataType::Union(..));
    let mut metadata = field.metadata().clone();
    let kind = match field.data_type() {
        DataType::Union(..) => Some("union"),
        DataType::Interval(IntervalUnit::MonthDayNano) => Some("duration"),
        DataType::Struct(fields) if fields.is_empty() => Some("empty-record"),
        _ => None,
    };
    if let Some(kind) = kind {
        metadata.insert(MAPPING_KEY.to_string(), kind.to_string());
    }
    Ok(Arc::new(
        Field::new(field.name(), map_type(field.data_type())?, nullable).with_metadata(metadata),
    ))
}

/// `member0..` for the non-null branches of a union.
fn union_members(fields: &UnionFields) -> Result<Fields> {
    let mut members = Vec::new();
    for (type_id, f) in fields.iter() {
        if f.data_type() == &DataType::Null {
            continue;
        }
        let mut metadata = f.metadata().clone();
        metadata.insert(BRANCH_KEY.to_string(), format!("{type_id}:{}", f.name()));
        let member = Field::new(
            format!("member{}", members.len()),
            f.data_type().clone(),
            true,
        )
        .with_metadata(metadata);
        members.push(map_field(&Arc::new(member))?);
    }
    if members.is_empty() {
        // (A struct without fields would pass here and fail on the first batch.)
        return Err(ParquetMappingError::NullOnlyUnion);
    }
    Ok(members.into())
}

/// Branch `type_id` of `union` spread over its rows: row `i` holds the union's value where
/// the row is of that branch, null elsewhere.
fn member(union: &UnionArray, type_id: i8) -> Result<ArrayRef> {
    let child = union.child(type_id);
    let rows = union.len();
    let type_ids = union.type_ids();
    let present = BooleanBuffer::collect_bool(rows, |i| type_ids[i] == type_id);
    if present.count_set_bits() == 0 {
        let nulls = new_null_array(child.data_type(), rows);
        // A dictionary keeps its values (an empty one could not be written; the same values
        // as the other batches' let the Parquet writer keep its ids).
        return Ok(match child.as_any_dictionary_opt() {
            Some(dict) => nulls.as_any_dictionary().with_values(dict.values().clone()),
            None => nulls,
        });
    }
    let offset = |i: usize| union.offsets().map_or(i, |o| o[i] as usize);
    if child.null_count() == 0 {
        // Strings and bytes: the branch's values are usually one run of the child (the
        // decoder appends them in row order), so only the offsets are new.
        let spread = match child.data_type() {
            DataType::Utf8 => spread_bytes(child.as_string::<i32>(), &present, offset),
            DataType::LargeUtf8 => spread_bytes(child.as_string::<i64>(), &present, offset),
            DataType::Binary => spread_bytes(child.as_binary::<i32>(), &present, offset),
            DataType::LargeBinary => spread_bytes(child.as_binary::<i64>(), &present, offset),
            _ => None,
        };
        if let Some(spread) = spread {
            return Ok(spread);
        }
        let spread = downcast_primitive_array!(
            child => spread_primitive(child, &present, offset),
            _ => None
        );
        if let Some(spread) = spread {
            return Ok(spread);
        }
    }
    let indices: Vec<u32> = (0..rows)
        .map(|i| {
            if type_ids[i] == type_id {
                offset(i) as u32
            } else {
                0
            }
        })
        .collect();
    let indices = UInt32Array::new(indices.into(), Some(NullBuffer::new(present)));
    Ok(arrow_select::take::take(child.as_ref(), &indices, None)?)
}

/// `child`'s values spread over the rows set in `present` (row `i` holds value `offset(i)`);
/// `None` if an offset is outside `child`.
fn spread_primitive<T: ArrowPrimitiveType>(
    child: &PrimitiveArray<T>,
    present: &BooleanBuffer,
    offset: impl Fn(usize) -> usize,
) -> Option<ArrayRef> {
    let source = child.values();
    let mut values = vec![T::Native::default(); present.len()];
    for i in present.set_indices() {
        values[i] = *source.get(offset(i))?;
    }
    let array = PrimitiveArray::<T>::new(values.into(), Some(NullBuffer::new(present.clone())))
        .with_data_type(child.data_type().clone());
    Some(Arc::new(array))
}

/// `child`'s values spread over the rows set in `present`, sharing `child`'s value bytes,
/// if the rows hold `child`'s values `offset(first row)`, the next one, and so on; `None`
/// otherwise.
fn spread_bytes<T: ByteArrayType>(
    child: &GenericByteArray<T>,
    present: &BooleanBuffer,
    offset: impl Fn(usize) -> usize,
) -> Option<ArrayRef> {
    let source = child.value_offsets();
    let mut next = offset(present.set_indices().next()?);
    let mut offsets = Vec::with_capacity(present.len() + 1);
    offsets.push(*source.get(next)?);
    for (i, set) in present.iter().enumerate() {
        if set {
            if offset(i) != next {
                return None;
            }
            next += 1;
        }
        offsets.push(*source.get(next)?);
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let nulls = NullBuffer::new(present.clone());
    let array =
        GenericByteArray::<T>::try_new(offsets, child.values().clone(), Some(nulls)).ok()?;
    Some(Arc::new(array))
}

/// A list (of item field `item`) with its items mapped.
fn map_list<O: OffsetSizeTrait>(item: &FieldRef, list: &GenericListArray<O>) -> Result<ArrayRef> {
    Ok(Arc::new(GenericListArray::<O>::try_new(
        map_field(item)?,
        list.offsets().clone(),
        map_array(list.values())?,
        list.nulls().cloned(),
    )?))
}

/// The Parquet-compatible form of `array` (of type `data_type`).
pub fn map_array(array: &ArrayRef) -> Result<ArrayRef> {
    if !needs_mapping(array.data_type()) {
        return Ok(array.clone());
    }
    Ok(match array.data_type() {
        DataType::Union(fields, _) => {
            let union = array.as_union();
            let type_ids = union.type_ids();
            let members = union_members(fields)?;
            let mut children: Vec<ArrayRef> = Vec::with_capacity(members.len());
            let mut null_branches = Vec::new();
            for (type_id, f) in fields.iter() {
                if f.data_type() == &DataType::Null {
                    null_branches.push(type_id);
                    continue;
                }
                children.push(map_array(&member(union, type_id)?)?);
            }
            let validity = NullBuffer::new(BooleanBuffer::collect_bool(union.len(), |i| {
                !null_branches.contains(&type_ids[i])
            }));
            let nulls = (validity.null_count() > 0).then_some(validity);
            Arc::new(StructArray::try_new(members, children, nulls)?)
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let intervals = array.as_primitive::<IntervalMonthDayNanoType>();
            let mut bytes = Vec::with_capacity(intervals.len() * 12);
            for (i, v) in intervals.values().iter().enumerate() {
                // Avro durations are whole milliseconds and unsigned parts; an interval from
                // elsewhere (SQL) that is not one is refused, not wrapped or truncated. A null
                // slot's value is whatever its producer left: zeros are written.
                let fits = v.months >= 0 && v.days >= 0 && v.nanoseconds % 1_000_000 == 0;
                let millis = u32::try_from(v.nanoseconds / 1_000_000)
                    .ok()
                    .filter(|_| fits);
                let (months, days, millis) = match millis {
                    Some(millis) => (v.months as u32, v.days as u32, millis),
                    None if intervals.is_null(i) => (0, 0, 0),
                    None => {
                        return Err(ParquetMappingError::IntervalOutOfRange {
                            months: v.months,
                            days: v.days,
                            nanoseconds: v.nanoseconds,
                        })
                    }
                };
                bytes.extend_from_slice(&months.to_le_bytes());
                bytes.extend_from_slice(&days.to_le_bytes());
                bytes.extend_from_slice(&millis.to_le_bytes());
            }
            Arc::new(FixedSizeBinaryArray::try_new(
                12,
                bytes.into(),
                intervals.nulls().cloned(),
            )?)
        }
        DataType::Struct(fields) if fields.is_empty() => {
            let s = array.as_struct();
            let DataType::Struct(mapped) = map_type(array.data_type())? else {
                unreachable!("a struct maps to a struct")
            };
            Arc::new(StructArray::try_new(
                mapped,
                vec![Arc::new(NullArray::new(s.len()))],
                s.nulls().cloned(),
            )?)
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            let DataType::Struct(mapped) = map_type(array.data_type())? else {
                unreachable!("a struct maps to a struct")
            };
            let columns = s
                .columns()
                .iter()
                .map(map_array)
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StructArray::try_new(mapped, columns, s.nulls().cloned())?)
        }
        DataType::List(f) => map_list(f, array.as_list::<i32>())?,
        DataType::LargeList(f) => map_list(f, array.as_list::<i64>())?,
        DataType::Map(f, sorted) => {
            let map = array.as_map();
            let entries: ArrayRef = Arc::new(map.entries().clone());
            let entries = map_array(&entries)?;
            Arc::new(MapArray::try_new(
                map_field(f)?,
                map.offsets().clone(),
                entries.as_struct().clone(),
                map.nulls().cloned(),
                *sorted,
            )?)
        }
        other => return Err(ParquetMappingError::Unsupported(other.clone())),
    })
}

/// How one schema is written to Parquet: the mapped Arrow schema, and the same schema with
/// the duration fields marked by field ids (for annotating them as `INTERVAL`).
pub struct Mapping {
    /// The schema the batches are written with.
    pub schema: SchemaRef,
    /// Whether any column is rewritten.
    pub active: bool,
    /// `schema` with `PARQUET:field_id` on the duration fields (ids from
    /// [`DURATION_ID_BASE`]).
    pub marked: Option<Schema>,
}

impl Mapping {
    /// The mapping of `schema`.
    ///
    /// # Errors
    /// A type no mapping covers (a dictionary of unions, say).
    pub fn new(schema: &SchemaRef) -> Result<Mapping> {
        if schema.fields().is_empty() {
            let rows = Field::new(EMPTY_RECORD_CHILD, DataType::Null, true).with_metadata(
                [(
                    MAPPING_KEY.to_string(),
                    "empty-top-level-record".to_string(),
                )]
                .into(),
            );
            return Ok(Mapping {
                schema: Arc::new(Schema::new_with_metadata(
                    vec![rows],
                    schema.metadata().clone(),
                )),
                active: true,
                marked: None,
            });
        }
        if !schema.fields().iter().any(|f| needs_mapping(f.data_type())) {
            return Ok(Mapping {
                schema: schema.clone(),
                active: false,
                marked: None,
            });
        }
        let fields = schema
            .fields()
            .iter()
            .map(map_field)
            .collect::<Result<Vec<_>>>()?;
        let mapped = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
        let mut next_id = DURATION_ID_BASE;
        let marked_fields: Vec<FieldRef> = schema
            .fields()
            .iter()
            .zip(mapped.fields())
            .map(|(original, mapped)| mark(original.data_type(), mapped, &mut next_id))
            .collect();
        let marked = (next_id > DURATION_ID_BASE)
            .then(|| Schema::new_with_metadata(marked_fields, schema.metadata().clone()));
        Ok(Mapping {
            schema: mapped,
            active: true,
            marked,
        })
    }

    /// `batch` in the mapped schema.
    ///
    /// # Errors
    /// A value the mapping cannot hold.
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        if !self.active {
            return Ok(batch.clone());
        }
        let columns = if batch.num_columns() == 0 {
            // The top-level record without fields: its rows as the `__empty` column.
            vec![Arc::new(NullArray::new(batch.num_rows())) as ArrayRef]
        } else {
            batch
                .columns()
                .iter()
                .map(map_array)
                .collect::<Result<Vec<_>>>()?
        };
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &options,
        )?)
    }
}

/// `mapped` (the mapping of a field of type `original`) with a field id on every field that
/// holds a duration.
fn mark(original: &DataType, mapped: &FieldRef, next_id: &mut i32) -> FieldRef {
    let retype = |data_type: DataType| Arc::new(mapped.as_ref().clone().with_data_type(data_type));
    match (original, mapped.data_type()) {
        (DataType::Interval(IntervalUnit::MonthDayNano), _) => {
            let mut metadata = mapped.metadata().clone();
            metadata.insert(FIELD_ID.to_string(), next_id.to_string());
            *next_id += 1;
            Arc::new(mapped.as_ref().clone().with_metadata(metadata))
        }
        (DataType::Struct(of), DataType::Struct(mf)) if !of.is_empty() => {
            let children: Vec<FieldRef> = of
                .iter()
                .zip(mf)
                .map(|(o, m)| mark(o.data_type(), m, next_id))
                .collect();
            retype(DataType::Struct(children.into()))
        }
        (DataType::Union(of, _), DataType::Struct(mf)) => {
            let branches = of.iter().filter(|(_, f)| f.data_type() != &DataType::Null);
            let children: Vec<FieldRef> = branches
                .zip(mf)
                .map(|((_, o), m)| mark(o.data_type(), m, next_id))
                .collect();
            retype(DataType::Struct(children.into()))
        }
        (DataType::List(o), DataType::List(m)) => {
            retype(DataType::List(mark(o.data_type(), m, next_id)))
        }
        (DataType::Map(o, _), DataType::Map(m, sorted)) => {
            retype(DataType::Map(mark(o.data_type(), m, next_id), *sorted))
        }
        _ => mapped.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array, LargeListArray, StringArray};
    use proptest::prelude::*;

    /// The member as taking every row's value one by one gives it.
    fn reference(union: &UnionArray, type_id: i8) -> ArrayRef {
        let indices: UInt32Array = (0..union.len())
            .map(|i| (union.type_id(i) == type_id).then(|| union.value_offset(i) as u32))
            .collect();
        arrow_select::take::take(union.child(type_id).as_ref(), &indices, None).unwrap()
    }

    /// Intervals with unsigned parts and whole milliseconds become their 12 bytes; others are
    /// refused (not wrapped or truncated), except in null slots, written as zeros.
    #[test]
    fn intervals_map_to_their_bytes_or_are_refused() {
        use arrow_array::types::IntervalMonthDayNano;
        use arrow_array::IntervalMonthDayNanoArray;
        let map = |values: Vec<Option<IntervalMonthDayNano>>| {
            let array: ArrayRef = Arc::new(IntervalMonthDayNanoArray::from(values));
            map_array(&array)
        };
        let mapped = map(vec![
            Some(IntervalMonthDayNano::new(1, 2, 3_000_000)),
            None,
            Some(IntervalMonthDayNano::new(0, 0, 4_294_967_295 * 1_000_000)),
        ])
        .unwrap();
        let bytes = mapped.as_fixed_size_binary();
        assert_eq!(bytes.value(0), [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        assert!(bytes.is_null(1));
        assert_eq!(bytes.value(2), [0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255]);
        for bad in [
            IntervalMonthDayNano::new(-1, 0, 0),
            IntervalMonthDayNano::new(0, -1, 0),
            IntervalMonthDayNano::new(0, 0, -1_000_000),
            IntervalMonthDayNano::new(0, 0, 1_000),
            IntervalMonthDayNano::new(0, 0, 4_294_967_296 * 1_000_000),
        ] {
            let e = map(vec![Some(bad)]).unwrap_err();
            assert!(
                matches!(e, ParquetMappingError::IntervalOutOfRange { .. }),
                "{e}"
            );
        }
        // A null slot's value is not looked at.
        let mut nulls = IntervalMonthDayNanoArray::from(vec![IntervalMonthDayNano::new(-5, -5, 7)]);
        nulls =
            IntervalMonthDayNanoArray::new(nulls.values().clone(), Some(NullBuffer::new_null(1)));
        let array: ArrayRef = Arc::new(nulls);
        let mapped = map_array(&array).unwrap();
        assert_eq!(mapped.as_fixed_size_binary().value(0), [0; 12]);
    }

    /// A union of `null` alone has no member: refused with the schema, not at the first batch.
    #[test]
    fn a_null_only_union_is_refused_with_the_schema() {
        let fields = UnionFields::try_new([0], [Field::new("null", DataType::Null, true)]).unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "n",
            DataType::Union(fields, arrow_schema::UnionMode::Dense),
            true,
        )]));
        assert!(matches!(
            Mapping::new(&schema),
            Err(ParquetMappingError::NullOnlyUnion)
        ));
    }

    proptest! {
        #[test]
        fn members_equal_the_values_taken_row_by_row(
            rows in proptest::collection::vec((0i8..4, any::<bool>()), 0..200),
            sparse in any::<bool>(),
        ) {
            // Branches: null, string, long, double. `skip`: the row's value is not the
            // next one of its branch (a dense union whose offsets jump, as another
            // producer may write).
            let fields = UnionFields::try_new(
                [0, 1, 2, 3],
                [
                    Field::new("null", DataType::Null, true),
                    Field::new("string", DataType::Utf8, false),
                    Field::new("long", DataType::Int64, false),
                    Field::new("double", DataType::Float64, false),
                ],
            )
            .unwrap();
            let type_ids: Vec<i8> = rows.iter().map(|r| r.0).collect();
            let n = rows.len();
            let union = if sparse {
                let children: Vec<ArrayRef> = vec![
                    Arc::new(NullArray::new(n)),
                    Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("s{i}")))),
                    Arc::new(Int64Array::from_iter_values(0..n as i64)),
                    Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64))),
                ];
                UnionArray::try_new(fields, type_ids.into(), None, children).unwrap()
            } else {
                let mut counts = [0i32; 4];
                let offsets: Vec<i32> = rows
                    .iter()
                    .map(|&(t, skip)| {
                        let t = t as usize;
                        counts[t] += 1 + i32::from(skip && t != 0);
                        counts[t] - 1
                    })
                    .collect();
                let len = |t: usize| counts[t] as usize;
                let children: Vec<ArrayRef> = vec![
                    Arc::new(NullArray::new(len(0))),
                    Arc::new(StringArray::from_iter_values((0..len(1)).map(|i| format!("v{i}")))),
                    Arc::new(Int64Array::from_iter_values(0..len(2) as i64)),
                    Arc::new(Float64Array::from_iter_values((0..len(3)).map(|i| i as f64 / 3.0))),
                ];
                UnionArray::try_new(fields, type_ids.into(), Some(offsets.into()), children)
                    .unwrap()
            };
            // In a large list, the same members (the mapping reaches inside).
            let union: ArrayRef = Arc::new(union);
            let offsets = OffsetBuffer::<i64>::from_lengths([union.len()]);
            let item = Arc::new(Field::new("item", union.data_type().clone(), true));
            let list: ArrayRef =
                Arc::new(LargeListArray::try_new(item, offsets, union.clone(), None).unwrap());
            let mapped = map_array(&list).unwrap();
            prop_assert_eq!(mapped.data_type(), &map_type(list.data_type()).unwrap());
            let mapped_items = mapped.as_list::<i64>().values().clone();
            let mapped_union = map_array(&union).unwrap();
            prop_assert_eq!(mapped_items.as_ref(), mapped_union.as_ref());
            let union = union.as_union();
            for type_id in 1..4 {
                let fast = member(union, type_id).unwrap();
                let expected = reference(union, type_id);
                prop_assert_eq!(fast.as_ref(), expected.as_ref());
            }
        }
    }
}
