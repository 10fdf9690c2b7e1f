//! The way back from [`Mapping`](super::Mapping): columns read from a Parquet file that avrow
//! wrote from Avro, turned back into the Arrow types the file's recorded Avro schema reads as,
//! so that Avro → Parquet → Avro (or → Arrow) gives back what reading the Avro file gives: a
//! general union stored as a struct of `member0`, `member1`, ... is a dense union again, a
//! `duration` stored as 12 bytes an interval, a record without fields (its `__empty` child) an
//! empty struct, and whatever the Parquet reader gives back in another type that Arrow casts
//! losslessly (a dictionary read as strings) takes the recorded type.

use super::{ParquetMappingError, Result, EMPTY_RECORD_CHILD};
use arrow_array::cast::AsArray;
use arrow_array::types::IntervalMonthDayNanoType;
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, GenericListArray, MapArray, OffsetSizeTrait,
    PrimitiveArray, RecordBatch, RecordBatchOptions, StructArray, UnionArray,
};
use arrow_buffer::{IntervalMonthDayNano, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, IntervalUnit, SchemaRef, UnionMode};
use std::sync::Arc;

/// Restores batches read from Parquet to a target schema, column by column (by name).
#[derive(Debug, Clone)]
pub struct Restore {
    target: SchemaRef,
}

impl Restore {
    /// The restoration of batches of `read` (as the Parquet reader gives them) to `target`
    /// (for a file avrow wrote from Avro: the Arrow schema its recorded Avro schema reads as).
    /// `read` must have exactly `target`'s columns (by name, any order; a record without
    /// fields: the one `__empty` column standing for its rows), each in a type that restores
    /// to the target's.
    ///
    /// # Errors
    /// A column one schema has and the other lacks, or whose type does not restore to the
    /// target's.
    pub fn new(read: &SchemaRef, target: SchemaRef) -> Result<Restore> {
        let empty_record = target.fields().is_empty()
            && read.fields().len() == 1
            && read.field(0).name() == EMPTY_RECORD_CHILD;
        if read.fields().len() != target.fields().len() && !empty_record {
            return Err(ParquetMappingError::Arrow(ArrowError::SchemaError(
                format!(
                    "{} columns to restore to {}",
                    read.fields().len(),
                    target.fields().len()
                ),
            )));
        }
        for field in target.fields() {
            let from = read.field_with_name(field.name()).map_err(|_| {
                ParquetMappingError::Arrow(ArrowError::SchemaError(format!(
                    "no column {:?} to restore",
                    field.name()
                )))
            })?;
            if !field_restores(from, field) {
                return Err(ParquetMappingError::Unsupported(field.data_type().clone()));
            }
        }
        Ok(Restore { target })
    }

    /// The schema of the restored batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.target
    }

    /// `batch` restored.
    ///
    /// # Errors
    /// A column missing from `batch`, or values the target type cannot hold (a union row in
    /// none of its members).
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let columns = self
            .target
            .fields()
            .iter()
            .map(|field| {
                let column = batch.column_by_name(field.name()).ok_or_else(|| {
                    ParquetMappingError::Arrow(ArrowError::SchemaError(format!(
                        "no column {:?} to restore",
                        field.name()
                    )))
                })?;
                restore(column, field.data_type())
            })
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(&self.target),
            columns,
            &options,
        )?)
    }
}

/// Whether field `from` restores to field `to`: its type does, and a field that may hold
/// nulls is not restored to one that may not (its batches would fail to build; a union has no
/// nulls of its own, its struct's are its null branch).
fn field_restores(from: &Field, to: &Field) -> bool {
    let nulls_fit =
        to.is_nullable() || !from.is_nullable() || matches!(to.data_type(), DataType::Union(..));
    nulls_fit && restores(from.data_type(), to.data_type())
}

/// Whether a column of type `from` restores to `to` ([`restore`] gives exactly `to`).
fn restores(from: &DataType, to: &DataType) -> bool {
    let utf8 =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    match (from, to) {
        _ if from == to => true,
        (DataType::Struct(members), DataType::Union(branches, UnionMode::Dense)) => {
            let values: Vec<&FieldRef> = branches
                .iter()
                .map(|(_, f)| f)
                .filter(|f| !f.data_type().is_null())
                .collect();
            values.len() == members.len()
                && members
                    .iter()
                    .zip(values)
                    .all(|(m, b)| restores(m.data_type(), b.data_type()))
        }
        (DataType::Struct(from), DataType::Struct(to)) => {
            (to.is_empty() && from.len() == 1 && from[0].name() == EMPTY_RECORD_CHILD)
                || (from.len() == to.len()
                    && to.iter().all(|t| {
                        from.iter()
                            .find(|f| f.name() == t.name())
                            .is_some_and(|f| field_restores(f, t))
                    }))
        }
        (DataType::List(f), DataType::List(t))
        | (DataType::LargeList(f), DataType::LargeList(t))
        | (DataType::Map(f, _), DataType::Map(t, _)) => field_restores(f, t),
        (DataType::FixedSizeBinary(12), DataType::Interval(IntervalUnit::MonthDayNano)) => true,
        (value, DataType::Dictionary(key, dict_value)) => {
            **key == DataType::Int32 && **dict_value == DataType::Utf8 && utf8(value)
        }
        (DataType::Dictionary(_, value), DataType::Utf8) => **value == DataType::Utf8,
        (DataType::LargeUtf8 | DataType::Utf8View, DataType::Utf8) => true,
        _ => false,
    }
}

/// `array` (of a type [`restores`] accepts) in type `to`.
fn restore(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    let from = array.data_type();
    if from == to {
        return Ok(Arc::clone(array));
    }
    Ok(match (from, to) {
        (DataType::Struct(_), DataType::Union(branches, UnionMode::Dense)) => {
            union_of_members(array.as_struct(), branches)?
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            if fields.is_empty() {
                Arc::new(StructArray::new_empty_fields(s.len(), s.nulls().cloned()))
            } else {
                let columns = fields
                    .iter()
                    .map(|f| restore(s.column_by_name(f.name()).expect("checked"), f.data_type()))
                    .collect::<Result<Vec<_>>>()?;
                Arc::new(StructArray::try_new(
                    fields.clone(),
                    columns,
                    s.nulls().cloned(),
                )?)
            }
        }
        (DataType::List(_), DataType::List(item)) => list(array.as_list::<i32>(), item)?,
        (DataType::LargeList(_), DataType::LargeList(item)) => list(array.as_list::<i64>(), item)?,
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
            let map = array.as_map();
            let entries_array: ArrayRef = Arc::new(map.entries().clone());
            let restored = restore(&entries_array, entries.data_type())?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                map.offsets().clone(),
                restored.as_struct().clone(),
                map.nulls().cloned(),
                *sorted,
            )?)
        }
        (DataType::FixedSizeBinary(12), DataType::Interval(IntervalUnit::MonthDayNano)) => {
            let bytes = array.as_fixed_size_binary();
            let part = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
            let values: ScalarBuffer<IntervalMonthDayNano> = (0..bytes.len())
                .map(|i| {
                    let b = bytes.value(i);
                    // (Avro's months and days are unsigned; Arrow's signed: wrapped as the
                    // reader of the Avro file reads them.)
                    IntervalMonthDayNano::new(
                        part(b, 0) as i32,
                        part(b, 4) as i32,
                        i64::from(part(b, 8)) * 1_000_000,
                    )
                })
                .collect();
            Arc::new(PrimitiveArray::<IntervalMonthDayNanoType>::new(
                values,
                bytes.nulls().cloned(),
            ))
        }
        _ => arrow_cast_like(array, to)?,
    })
}

/// Strings as the dictionary the target type is, or a dictionary's strings.
fn arrow_cast_like(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    match (array.data_type(), to) {
        (DataType::Dictionary(..), DataType::Utf8) => {
            let dict = array.as_any_dictionary();
            let normalized = dict.normalized_keys();
            let keys: Vec<Option<u32>> = normalized
                .iter()
                .enumerate()
                .map(|(i, &k)| dict.keys().is_valid(i).then_some(k as u32))
                .collect();
            let indices = arrow_array::UInt32Array::from(keys);
            Ok(arrow_select::take::take(
                dict.values().as_ref(),
                &indices,
                None,
            )?)
        }
        (_, DataType::Dictionary(key, value)) if **key == DataType::Int32 => {
            let strings = restore(array, value)?;
            let strings = strings
                .as_string_opt::<i32>()
                .ok_or_else(|| ParquetMappingError::Unsupported(to.clone()))?;
            let dict: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
                strings.iter().collect();
            Ok(Arc::new(dict))
        }
        (DataType::LargeUtf8 | DataType::Utf8View, DataType::Utf8) => {
            let strings: arrow_array::StringArray = match array.data_type() {
                DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
                _ => array.as_string_view().iter().collect(),
            };
            Ok(Arc::new(strings))
        }
        _ => Err(ParquetMappingError::Unsupported(to.clone())),
    }
}

/// A list whose items are restored to `item`.
fn list<O: OffsetSizeTrait>(list: &GenericListArray<O>, item: &FieldRef) -> Result<ArrayRef> {
    let values = restore(list.values(), item.data_type())?;
    Ok(Arc::new(GenericListArray::<O>::try_new(
        Arc::clone(item),
        list.offsets().clone(),
        values,
        list.nulls().cloned(),
    )?))
}

/// The dense union `branches` of a struct of members: in each row the member that is set
/// names the branch (the struct null: the union's `null` branch).
fn union_of_members(
    members: &StructArray,
    branches: &arrow_schema::UnionFields,
) -> Result<ArrayRef> {
    let rows = members.len();
    let null_branch = branches
        .iter()
        .find(|(_, f)| f.data_type().is_null())
        .map(|(id, _)| id);
    let values: Vec<(i8, &FieldRef)> = branches
        .iter()
        .filter(|(_, f)| !f.data_type().is_null())
        .collect();
    let mut type_ids = Vec::with_capacity(rows);
    let mut offsets = Vec::with_capacity(rows);
    let mut counts = vec![0i32; 128];
    for row in 0..rows {
        let id = if members.is_null(row) {
            null_branch
        } else {
            members
                .columns()
                .iter()
                .position(|m| m.is_valid(row))
                .map(|k| values[k].0)
        };
        let id = id.ok_or_else(|| {
            ParquetMappingError::Arrow(ArrowError::InvalidArgumentError(format!(
                "row {row} of a union stored as a struct is in none of its members"
            )))
        })?;
        type_ids.push(id);
        offsets.push(counts[id as usize]);
        counts[id as usize] += 1;
    }
    let type_ids: ScalarBuffer<i8> = type_ids.into();
    let children = branches
        .iter()
        .map(|(id, field)| {
            if field.data_type().is_null() {
                return Ok(new_null_array(
                    &DataType::Null,
                    counts[id as usize] as usize,
                ));
            }
            let k = values
                .iter()
                .position(|(v, _)| *v == id)
                .expect("a value branch");
            let mask = BooleanArray::from_iter(type_ids.iter().map(|&t| Some(t == id)));
            let taken = arrow_select::filter::filter(members.column(k).as_ref(), &mask)?;
            restore(&taken, field.data_type())
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(UnionArray::try_new(
        branches.clone(),
        type_ids,
        Some(offsets.into()),
        children,
    )?))
}

#[cfg(test)]
mod tests {
    use super::super::Mapping;
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema, UnionFields};

    /// Mapped for Parquet and restored, a batch of unions (in lists, structs and maps too),
    /// durations and empty records is the batch it was.
    #[test]
    fn mapping_then_restoring_gives_the_batch_back() {
        let branches = UnionFields::try_new(
            [0, 1, 2],
            [
                Field::new("null", DataType::Null, true),
                Field::new("string", DataType::Utf8, false),
                Field::new("long", DataType::Int64, false),
            ],
        )
        .unwrap();
        let type_ids: ScalarBuffer<i8> = vec![1, 0, 2, 2, 1, 0].into();
        let offsets: ScalarBuffer<i32> = vec![0, 0, 0, 1, 1, 1].into();
        let union = UnionArray::try_new(
            branches.clone(),
            type_ids,
            Some(offsets),
            vec![
                new_null_array(&DataType::Null, 2),
                Arc::new(StringArray::from(vec!["a", "b"])),
                Arc::new(Int64Array::from(vec![7, 8])),
            ],
        )
        .unwrap();
        let union: ArrayRef = Arc::new(union);
        let union_type = union.data_type().clone();
        let list: ArrayRef = Arc::new(
            GenericListArray::<i32>::try_new(
                Arc::new(Field::new("item", union_type.clone(), true)),
                arrow_buffer::OffsetBuffer::from_lengths([2, 0, 4]),
                Arc::clone(&union),
                None,
            )
            .unwrap(),
        );
        let empty: ArrayRef = Arc::new(StructArray::new_empty_fields(
            3,
            Some(vec![true, false, true].into()),
        ));
        let durations: ArrayRef = Arc::new(PrimitiveArray::<IntervalMonthDayNanoType>::from(vec![
            Some(IntervalMonthDayNano::new(1, 2, 3_000_000)),
            None,
            Some(IntervalMonthDayNano::new(0, 40, 0)),
        ]));
        let a = RecordBatch::try_from_iter([("u", Arc::clone(&union))]).unwrap();
        let b = RecordBatch::try_from_iter([("l", list), ("e", empty), ("d", durations)]).unwrap();
        for batch in [a, b] {
            let mapping = Mapping::new(batch.schema_ref()).unwrap();
            let mapped = mapping.apply(&batch).unwrap();
            assert_ne!(mapped.schema(), batch.schema());
            let restore = Restore::new(mapped.schema_ref(), batch.schema()).unwrap();
            let back = restore.apply(&mapped).unwrap();
            assert_eq!(back, batch);
        }
    }

    /// A type that does not restore is refused when the restoration is made.
    #[test]
    fn types_that_do_not_restore_are_refused() {
        let read = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let target = Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, false)]));
        assert!(Restore::new(&read, target).is_err());
        let target = Arc::new(Schema::new(vec![Field::new("b", DataType::Int64, false)]));
        assert!(Restore::new(&read, target).is_err());
        // A column the recorded schema lacks (added after): not dropped, the file is not
        // restored.
        let two = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("extra", DataType::Int64, false),
        ]));
        let target = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        assert!(Restore::new(&two, target).is_err());
        // Nulls where the recorded type has none, at any depth.
        let nullable = |n| Field::new("x", DataType::Int64, n);
        let read = Arc::new(Schema::new(vec![Field::new(
            "s",
            DataType::Struct(vec![nullable(true)].into()),
            false,
        )]));
        let target = Arc::new(Schema::new(vec![Field::new(
            "s",
            DataType::Struct(vec![nullable(false)].into()),
            false,
        )]));
        assert!(Restore::new(&read, target).is_err());
    }

    /// Strings read back where the recorded type is a dictionary (an enum), and the other way.
    #[test]
    fn strings_and_dictionaries_restore_to_each_other() {
        let strings: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), None, Some("a")]));
        let dict_type = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let dict = restore(&strings, &dict_type).unwrap();
        assert_eq!(dict.data_type(), &dict_type);
        let back = restore(&dict, &DataType::Utf8).unwrap();
        assert_eq!(&back, &strings);
        assert!(!restores(&DataType::Int64, &dict_type));
    }
}
