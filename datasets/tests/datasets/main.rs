//! Integration tests of `avrow-datasets`: files read back with apache-avro, container structure
//! checked with an independent parser, determinism, value distributions, samples, and the CLI.

mod cli;
mod container;
mod distributions;
mod files;
mod samples;

use apache_avro::types::Value;
use apache_avro::Reader;
use avrow_datasets::{generate, Codec, GenOptions, Shape};

/// Options with the given rows, codec and block size, seed 42.
fn opts(rows: usize, codec: Codec, block_rows: usize) -> GenOptions {
    GenOptions {
        rows,
        codec,
        block_rows,
        seed: 42,
    }
}

/// Decodes a whole file with apache-avro's reader.
fn read_all(bytes: &[u8]) -> Vec<Value> {
    Reader::new(bytes)
        .expect("apache-avro reads the header")
        .map(|v| v.expect("apache-avro decodes every record"))
        .collect()
}

/// Generates `rows` rows of `shape` (null codec) and decodes them back.
fn rows_of(shape: Shape, rows: usize) -> Vec<Value> {
    let bytes = generate(shape, &opts(rows, Codec::Null, 1000)).expect("generation succeeds");
    read_all(&bytes)
}

/// The fields of a record value.
fn fields(v: &Value) -> &[(String, Value)] {
    match v {
        Value::Record(fields) => fields,
        other => panic!("expected a record, got {other:?}"),
    }
}

/// The value of field `name` of a record.
fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
    fields(v)
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no field {name}"))
}

/// A long-like value (long, int, timestamps, date) as i64.
fn long(v: &Value) -> i64 {
    match v {
        Value::Long(x) | Value::TimestampMillis(x) | Value::TimestampMicros(x) => *x,
        Value::Int(x) | Value::Date(x) => i64::from(*x),
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// A string value.
fn string(v: &Value) -> &str {
    match v {
        Value::String(s) => s,
        other => panic!("expected a string, got {other:?}"),
    }
}

/// The items of an array value.
fn array(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) => items,
        other => panic!("expected an array, got {other:?}"),
    }
}

/// `None` for the null branch of a `["null", T]` union, else the value.
fn nullable(v: &Value) -> Option<&Value> {
    match v {
        Value::Union(0, inner) => {
            assert_eq!(**inner, Value::Null);
            None
        }
        Value::Union(1, inner) => Some(inner),
        other => panic!("expected a [null, T] union, got {other:?}"),
    }
}

/// Bytes of the zigzag varint encoding of `v`.
fn varint_len(v: i64) -> u32 {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    (64 - z.leading_zeros()).div_ceil(7).max(1)
}
