//! apache-avro `Value`s → Arrow arrays with the same mapping avrow uses: rows are transposed to
//! columns and each column is built recursively. This is the "decode to a value tree, then
//! build Arrow" path that avrow and arrow-avro replace; it is here to be measured.

use apache_avro::types::Value;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int32Builder, Int64Builder,
    StringBuilder, StringDictionaryBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

/// Build one batch from `rows` (each a `Value::Record`) for `schema`.
///
/// # Panics
/// If a value does not fit the schema (the benchmark files always do).
pub fn to_batch(schema: &SchemaRef, rows: &[Value]) -> RecordBatch {
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let column: Vec<&Value> = rows.iter().map(|r| field(r, i)).collect();
            build(f.data_type(), &column)
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns).expect("values match the schema")
}

fn field(record: &Value, i: usize) -> &Value {
    match unwrap_union(record) {
        Value::Record(fields) => &fields[i].1,
        other => panic!("not a record: {other:?}"),
    }
}

fn unwrap_union(v: &Value) -> &Value {
    match v {
        Value::Union(_, inner) => inner,
        other => other,
    }
}

fn nulls(values: &[&Value]) -> Option<NullBuffer> {
    let valid: Vec<bool> = values
        .iter()
        .map(|v| !matches!(unwrap_union(v), Value::Null))
        .collect();
    NullBuffer::from(valid).into()
}

/// The same buffers under a logical type with the same layout (Timestamp over Int64, Date32
/// over Int32).
fn retype(array: ArrayRef, dt: &DataType) -> ArrayRef {
    let data = array.to_data().into_builder().data_type(dt.clone());
    arrow_array::make_array(data.build().expect("same physical layout"))
}

fn build(dt: &DataType, values: &[&Value]) -> ArrayRef {
    match dt {
        DataType::Int64 | DataType::Timestamp(..) => {
            let mut b = Int64Builder::with_capacity(values.len());
            for v in values {
                match unwrap_union(v) {
                    Value::Long(x)
                    | Value::TimestampMillis(x)
                    | Value::TimestampMicros(x)
                    | Value::TimestampNanos(x) => b.append_value(*x),
                    _ => b.append_null(),
                }
            }
            retype(Arc::new(b.finish()), dt)
        }
        DataType::Int32 | DataType::Date32 => {
            let mut b = Int32Builder::with_capacity(values.len());
            for v in values {
                match unwrap_union(v) {
                    Value::Int(x) | Value::Date(x) => b.append_value(*x),
                    _ => b.append_null(),
                }
            }
            retype(Arc::new(b.finish()), dt)
        }
        DataType::Float32 => {
            let mut b = Float32Builder::with_capacity(values.len());
            for v in values {
                match unwrap_union(v) {
                    Value::Float(x) => b.append_value(*x),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Float64 => {
            let mut b = Float64Builder::with_capacity(values.len());
            for v in values {
                match unwrap_union(v) {
                    Value::Double(x) => b.append_value(*x),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            for v in values {
                match unwrap_union(v) {
                    Value::Boolean(x) => b.append_value(*x),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Utf8 => {
            let mut b = StringBuilder::new();
            for v in values {
                match unwrap_union(v) {
                    Value::String(s) => b.append_value(s),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Binary => {
            let mut b = BinaryBuilder::new();
            for v in values {
                match unwrap_union(v) {
                    Value::Bytes(s) => b.append_value(s),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Dictionary(_, _) => {
            let mut b = StringDictionaryBuilder::<Int32Type>::new();
            for v in values {
                match unwrap_union(v) {
                    Value::Enum(_, s) => {
                        b.append(s).expect("dictionary keys fit");
                    }
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::List(item) => {
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut items: Vec<&Value> = Vec::new();
            for v in values {
                if let Value::Array(a) = unwrap_union(v) {
                    items.extend(a.iter());
                }
                offsets.push(items.len() as i32);
            }
            let child = build(item.data_type(), &items);
            Arc::new(ListArray::new(
                item.clone(),
                OffsetBuffer::new(offsets.into()),
                child,
                nulls(values),
            ))
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                panic!("map entries")
            };
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut keys = StringBuilder::new();
            let mut vals: Vec<&Value> = Vec::new();
            for v in values {
                if let Value::Map(m) = unwrap_union(v) {
                    for (k, x) in m {
                        keys.append_value(k);
                        vals.push(x);
                    }
                }
                offsets.push(vals.len() as i32);
            }
            let value_array = build(kv[1].data_type(), &vals);
            let entries_array =
                StructArray::new(kv.clone(), vec![Arc::new(keys.finish()), value_array], None);
            Arc::new(MapArray::new(
                entries.clone(),
                OffsetBuffer::new(offsets.into()),
                entries_array,
                nulls(values),
                false,
            ))
        }
        DataType::Struct(fields) => {
            let columns = fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let column: Vec<&Value> = values
                        .iter()
                        .map(|v| match unwrap_union(v) {
                            Value::Record(r) => &r[i].1,
                            _ => &Value::Null,
                        })
                        .collect();
                    build(f.data_type(), &column)
                })
                .collect();
            Arc::new(StructArray::new(fields.clone(), columns, nulls(values)))
        }
        other => panic!("the benchmark shapes do not use {other}"),
    }
}
