//! The test oracle shared by every topic module.
//!
//! * [`Model`]: an independent, spec-driven model of an Avro schema (parsed from the JSON with
//!   our own name resolution), used to derive the Arrow type each column must have.
//! * [`N`]: a normalized value. Both sides are converted to it: apache-avro's `Value`s (the
//!   independent reader) through [`expect_value`], avrow's Arrow arrays through [`arrow_value`].
//! * [`diff`]: equality with NaN == NaN, exact bits otherwise, reporting the first mismatch with
//!   its row and column path and both values.
//! * [`Container`]: a tiny parser of the Avro object container framing (header, blocks, sync
//!   markers), used to know where blocks end and to splice files.
//! * [`Opts`] / [`read_avrow`]: run avrow with a set of options and collect its batches.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use apache_avro::types::Value;
use arrow::array::{
    Array, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array,
    Decimal256Array, DictionaryArray, FixedSizeBinaryArray, Float32Array, Float64Array, Int32Array,
    Int64Array, IntervalMonthDayNanoArray, LargeBinaryArray, LargeStringArray, ListArray, MapArray,
    StringArray, StringViewArray, StructArray, Time32MillisecondArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, UnionArray,
};
use arrow::datatypes::{
    i256, DataType, Field, Int32Type, IntervalUnit, SchemaRef, TimeUnit, UnionMode,
};
use arrow::record_batch::RecordBatch;
use serde_json::Value as Json;

mod container;
mod fastavro;
mod model;
mod types;
mod values;

pub use container::*;
pub use fastavro::*;
pub use model::*;
pub use types::*;
pub use values::*;
