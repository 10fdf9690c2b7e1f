//! Parquet encodings chosen per leaf column, from its type and a sample of the first rows.
//!
//! Arrow's Parquet writer starts a dictionary for every column and falls back to PLAIN once the
//! dictionary page outgrows its limit. For columns whose values are nearly all distinct (ids,
//! timestamps, measurements) that hashes every value until the fallback for nothing, and PLAIN
//! numbers leave zstd to find the structure in 8-byte little-endian words (slow when values
//! are small or close together). So, per leaf column, from up to [`SAMPLE_VALUES`] non-null
//! values of the first [`SAMPLE_ROWS`] rows:
//!
//! - **dictionary** only where the column's distinct values are estimated to fit one
//!   dictionary page ([`DICTIONARY_BYTES`]): the Chao1 estimate of the number of distinct values
//!   from the sample (its distinct values plus f1²/2f2, from the values seen once and twice)
//!   times their mean size. A dictionary that outgrows its page still falls back, to the
//!   encoding below (to PLAIN for integers whose dictionary the sample says fits: see
//!   [`choice`]);
//! - **integers** (`INT32`, `INT64`: ints, longs, dates, times, timestamps, small decimals):
//!   `DELTA_BINARY_PACKED`, which bit-packs the differences of neighbouring values, unless
//!   the sample's differences are so wide that it would take well over what compressed PLAIN
//!   values take ([`DELTA_LOSS`]; amounts in no order, ids of mixed sizes);
//! - **floating point**, where the pages are compressed: `BYTE_STREAM_SPLIT` (values too
//!   diverse for a dictionary compress better as byte planes), otherwise PLAIN;
//! - everything else: PLAIN (strings measured no better with `DELTA_LENGTH_BYTE_ARRAY`).
//!
//! A sample decides the dictionary but not the split: how well a few thousand values compress
//! predicts neither way how a megabyte page compresses. The sample is exactly the first rows,
//! however they arrive in batches, so the choice is the same whatever the thread count. Numbers
//! behind these rules: `docs/perf/parquet.md`.

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Fields};
use parquet::basic::{Encoding, Type as Physical};
use parquet::file::properties::WriterPropertiesBuilder;
use parquet::schema::types::SchemaDescriptor;

/// Rows gathered before the encodings are chosen (and the file is started).
pub const SAMPLE_ROWS: usize = 4096;

/// Non-null values of a leaf column looked at, at most.
pub const SAMPLE_VALUES: usize = 4096;

/// A sample smaller than this says too little: the column keeps the writer's defaults
/// (dictionary with its fallback).
const MIN_SAMPLE: usize = 256;

/// The dictionary page size a column's dictionary is estimated against: the `parquet`
/// crate's default limit, past which it falls back.
pub const DICTIONARY_BYTES: f64 = 1024.0 * 1024.0;

/// Integers take `DELTA_BINARY_PACKED` unless it is estimated at more than this many times
/// the size of compressed PLAIN values. Above 1 because PLAIN integers cost zstd much more
/// time (Counters: 2.5×) for the few percent it saves where the two are close.
pub const DELTA_LOSS: f64 = 1.4;

/// `value`'s low `width` bytes as a signed little-endian integer.
fn sign_extend(value: u128, width: usize) -> i128 {
    let shift = 128 - 8 * width.clamp(1, 16) as u32;
    ((value << shift) as i128) >> shift
}

/// What the sample of one leaf column says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Start a dictionary.
    pub dictionary: bool,
    /// The encoding without a dictionary (or after it falls back); `None`: the writer's
    /// default.
    pub encoding: Option<Encoding>,
}

/// What the first rows say: the encoding of every leaf column, and the size of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One per leaf column, in the order of the Parquet schema.
    pub choices: Vec<Choice>,
    /// Bytes of a row as PLAIN-encoded values (booleans an eighth of a byte, a string its
    /// length and 4), estimated from the sample; 0 without rows.
    pub row_bytes: f64,
}

impl Plan {
    /// The plan for the leaf columns of `descriptor` from a sample of `batches` (the first rows
    /// of the file, already mapped for Parquet, whose fields are `fields`). `compressed`: the
    /// pages will be compressed.
    pub fn new(
        descriptor: &SchemaDescriptor,
        fields: &Fields,
        batches: &[RecordBatch],
        compressed: bool,
    ) -> Plan {
        // The leaf arrays of every batch, depth first: the order of the Parquet leaf columns.
        let mut leaves: Vec<Vec<ArrayRef>> = vec![Vec::new(); descriptor.num_columns()];
        let mut aligned = true;
        let mut rows = 0;
        for batch in batches {
            // Exactly the first rows, so that the plan does not depend on batch sizes.
            let batch = batch.slice(0, batch.num_rows().min(SAMPLE_ROWS - rows));
            rows += batch.num_rows();
            let mut arrays = Vec::with_capacity(descriptor.num_columns());
            for (field, column) in fields.iter().zip(batch.columns()) {
                leaf_arrays(field.data_type(), column, &mut arrays);
            }
            if arrays.len() != leaves.len() {
                aligned = false;
                break;
            }
            for (leaf, array) in leaves.iter_mut().zip(arrays) {
                leaf.push(array);
            }
        }
        let mut bytes = 0.0;
        let choices = descriptor
            .columns()
            .iter()
            .enumerate()
            .map(|(c, column)| {
                let physical = column.physical_type();
                if !aligned {
                    return choice(physical, &Sample::Other, compressed);
                }
                let sample = Sample::of(&leaves[c]);
                let valid: usize = leaves[c].iter().map(|a| a.len() - a.null_count()).sum();
                bytes += valid as f64 * sample.mean_bytes(physical);
                choice(physical, &sample, compressed)
            })
            .collect();
        let row_bytes = if rows == 0 { 0.0 } else { bytes / rows as f64 };
        Plan { choices, row_bytes }
    }

    /// Sets the dictionary and encoding of every leaf column of `descriptor` (the one the
    /// plan was made for).
    pub fn apply(
        &self,
        mut builder: WriterPropertiesBuilder,
        descriptor: &SchemaDescriptor,
    ) -> WriterPropertiesBuilder {
        for (column, choice) in descriptor.columns().iter().zip(&self.choices) {
            let path = column.path().clone();
            builder = builder.set_column_dictionary_enabled(path.clone(), choice.dictionary);
            if let Some(encoding) = choice.encoding {
                builder = builder.set_column_encoding(path, encoding);
            }
        }
        builder
    }

    /// Rows per row group: about `target` bytes of rows, at least [`SAMPLE_ROWS`] (row groups
    /// of a few rows cost more in metadata than they save), at most `max_rows`.
    pub fn rows_per_group(&self, target: usize, max_rows: usize) -> usize {
        let rows = if self.row_bytes > 0.0 {
            (target as f64 / self.row_bytes) as usize
        } else {
            max_rows
        };
        rows.max(SAMPLE_ROWS).min(max_rows).max(1)
    }
}

/// The rule of the module doc for one column.
fn choice(physical: Physical, sample: &Sample, compressed: bool) -> Choice {
    let fits = sample.dictionary_fits();
    match physical {
        // Where the sample says the dictionary fits, its fallback (what pages take if it
        // outgrows its page after all) is PLAIN: the `parquet` crate (59) builds the fallback
        // encoder with every column writer, and a `DELTA_BINARY_PACKED` one reserves 1 MiB
        // up front, first touched by the allocator; for each such column of each row group,
        // where it is seldom written.
        Physical::INT32 | Physical::INT64 => Choice {
            dictionary: fits.unwrap_or(true),
            encoding: Some(if fits == Some(true) || sample.delta_loses() {
                Encoding::PLAIN
            } else {
                Encoding::DELTA_BINARY_PACKED
            }),
        },
        Physical::FLOAT | Physical::DOUBLE => Choice {
            dictionary: fits.unwrap_or(false),
            encoding: Some(if compressed {
                Encoding::BYTE_STREAM_SPLIT
            } else {
                Encoding::PLAIN
            }),
        },
        Physical::BYTE_ARRAY | Physical::FIXED_LEN_BYTE_ARRAY => Choice {
            dictionary: fits.unwrap_or(true),
            encoding: None,
        },
        // Booleans have no dictionary in Parquet; INT96 is never written.
        Physical::BOOLEAN | Physical::INT96 => Choice {
            dictionary: true,
            encoding: None,
        },
    }
}

/// Appends the leaf arrays of `array` (of type `data_type`) in Parquet's leaf order.
fn leaf_arrays(data_type: &DataType, array: &ArrayRef, out: &mut Vec<ArrayRef>) {
    match (data_type, array.data_type()) {
        (DataType::Struct(fields), DataType::Struct(_)) => {
            let array = array.as_struct();
            for (field, child) in fields.iter().zip(array.columns()) {
                leaf_arrays(field.data_type(), child, out);
            }
        }
        (DataType::List(item), DataType::List(_)) => {
            let list = array.as_list::<i32>();
            let items = referenced(list.values(), list.value_offsets());
            leaf_arrays(item.data_type(), &items, out);
        }
        (DataType::LargeList(item), DataType::LargeList(_)) => {
            let list = array.as_list::<i64>();
            let items = referenced(list.values(), list.value_offsets());
            leaf_arrays(item.data_type(), &items, out);
        }
        (DataType::FixedSizeList(item, _), DataType::FixedSizeList(..)) => {
            leaf_arrays(item.data_type(), array.as_fixed_size_list().values(), out);
        }
        (DataType::Map(entries, _), DataType::Map(..)) => {
            let map = array.as_map();
            let all: ArrayRef = std::sync::Arc::new(map.entries().clone());
            let entries_array = referenced(&all, map.value_offsets());
            leaf_arrays(entries.data_type(), &entries_array, out);
        }
        _ => out.push(array.clone()),
    }
}

/// The part of a list's child array that the (possibly sliced) list refers to.
fn referenced<O: arrow::array::OffsetSizeTrait>(values: &ArrayRef, offsets: &[O]) -> ArrayRef {
    let start = offsets.first().map_or(0, |o| o.as_usize());
    let end = offsets.last().map_or(0, |o| o.as_usize());
    values.slice(
        start,
        end.saturating_sub(start)
            .min(values.len().saturating_sub(start)),
    )
}

/// Up to [`SAMPLE_VALUES`] non-null values of one leaf column.
enum Sample {
    /// Fixed-width values of at most 16 bytes (numbers, dates, times, decimals, fixed), as
    /// their little-endian bytes zero-extended, with their width.
    Fixed(Vec<u128>, usize),
    /// Variable-length or wider values.
    Bytes(Vec<Vec<u8>>),
    /// A type the rules do not look at (booleans, nulls, dictionaries).
    Other,
}

impl Sample {
    fn of(arrays: &[ArrayRef]) -> Sample {
        let Some(first) = arrays.first() else {
            return Sample::Other;
        };
        let width = match first.data_type() {
            DataType::FixedSizeBinary(n) => usize::try_from(*n).ok(),
            DataType::Boolean | DataType::Null | DataType::Dictionary(..) => None,
            other => other.primitive_width(),
        };
        match width {
            Some(width) if width <= 16 => {
                let mut values = Vec::new();
                for array in arrays {
                    let data = array.to_data();
                    let fixed = array.as_fixed_size_binary_opt();
                    for i in (0..array.len()).filter(|&i| array.is_valid(i)) {
                        if values.len() == SAMPLE_VALUES {
                            break;
                        }
                        let value = match fixed {
                            Some(fixed) => Some(fixed.value(i)),
                            None => {
                                let start = (data.offset() + i) * width;
                                data.buffers()[0].get(start..start + width)
                            }
                        };
                        let Some(value) = value else {
                            break;
                        };
                        let mut word = [0u8; 16];
                        word[..width].copy_from_slice(value);
                        values.push(u128::from_le_bytes(word));
                    }
                }
                Sample::Fixed(values, width)
            }
            Some(_) | None => {
                let mut values = Vec::new();
                for array in arrays {
                    let mut push = |value: &[u8]| {
                        if values.len() < SAMPLE_VALUES {
                            values.push(value.to_vec());
                        }
                    };
                    match array.data_type() {
                        DataType::Utf8 => array
                            .as_string::<i32>()
                            .iter()
                            .flatten()
                            .for_each(|v| push(v.as_bytes())),
                        DataType::LargeUtf8 => array
                            .as_string::<i64>()
                            .iter()
                            .flatten()
                            .for_each(|v| push(v.as_bytes())),
                        DataType::Utf8View => array
                            .as_string_view()
                            .iter()
                            .flatten()
                            .for_each(|v| push(v.as_bytes())),
                        DataType::Binary => array
                            .as_binary::<i32>()
                            .iter()
                            .flatten()
                            .for_each(&mut push),
                        DataType::LargeBinary => array
                            .as_binary::<i64>()
                            .iter()
                            .flatten()
                            .for_each(&mut push),
                        DataType::BinaryView => {
                            array.as_binary_view().iter().flatten().for_each(&mut push)
                        }
                        DataType::FixedSizeBinary(_) => array
                            .as_fixed_size_binary()
                            .iter()
                            .flatten()
                            .for_each(&mut push),
                        _ => return Sample::Other,
                    }
                    if values.len() == SAMPLE_VALUES {
                        break;
                    }
                }
                Sample::Bytes(values)
            }
        }
    }

    /// Whether `DELTA_BINARY_PACKED` would take more than [`DELTA_LOSS`] times the bytes
    /// that compressed PLAIN values are estimated to take. Its size is computed exactly: the
    /// bit width of every miniblock of 32 differences, less the smallest of their block of 128.
    /// PLAIN is estimated by the values' significant bytes (a general compressor squeezes
    /// their high zero bytes to almost nothing) and a quarter of a byte. Values in no order
    /// whose magnitudes vary (amounts, hashes, ids of several sizes) have wide differences;
    /// timestamps, sequences and small counts do not.
    fn delta_loses(&self) -> bool {
        let Sample::Fixed(values, width) = self else {
            return false;
        };
        if values.len() < MIN_SAMPLE {
            return false;
        }
        let signed: Vec<i128> = values.iter().map(|&v| sign_extend(v, *width)).collect();
        let deltas: Vec<i128> = signed.windows(2).map(|w| w[1] - w[0]).collect();
        let mut delta_bits = 0u64;
        for block in deltas.chunks(128) {
            let min = block.iter().copied().min().unwrap_or(0);
            for miniblock in block.chunks(32) {
                let widest = miniblock
                    .iter()
                    .map(|&d| (d - min) as u128)
                    .max()
                    .unwrap_or(0);
                delta_bits += u64::from(128 - widest.leading_zeros()) * 32;
            }
        }
        let plain_bytes: f64 = signed
            .iter()
            .map(|&v| {
                let magnitude = v.unsigned_abs();
                // Bits with the sign, in whole bytes; a zero takes none.
                f64::from((128 - magnitude.leading_zeros() + 1).div_ceil(8)) * f64::from(v != 0)
            })
            .sum::<f64>()
            + 0.25 * values.len() as f64;
        delta_bits as f64 / 8.0 > DELTA_LOSS * plain_bytes
    }

    /// Mean bytes of a value as PLAIN encodes it.
    fn mean_bytes(&self, physical: Physical) -> f64 {
        match (self, physical) {
            (Sample::Fixed(_, width), _) => *width as f64,
            (Sample::Bytes(values), _) if !values.is_empty() => {
                values.iter().map(|v| v.len() + 4).sum::<usize>() as f64 / values.len() as f64
            }
            (_, Physical::BOOLEAN) => 0.125,
            (_, Physical::INT32 | Physical::FLOAT) => 4.0,
            (_, Physical::INT64 | Physical::DOUBLE) => 8.0,
            (_, Physical::INT96) => 12.0,
            // Dictionaries (mapped enums) and others: their indices.
            _ => 4.0,
        }
    }

    /// Whether the column's distinct values, estimated from the sample, fit in a dictionary
    /// page. `None` when there are too few values to tell or the type is not looked at.
    fn dictionary_fits(&self) -> Option<bool> {
        let (counts, bytes) = match self {
            Sample::Fixed(values, width) => (
                Counts::of(values.iter().collect()),
                (values.len() * width) as f64,
            ),
            Sample::Bytes(values) => (
                Counts::of(values.iter().collect()),
                values.iter().map(|v| v.len() + 4).sum::<usize>() as f64,
            ),
            Sample::Other => return None,
        };
        if counts.values < MIN_SAMPLE {
            return None;
        }
        let mean = bytes / counts.values as f64;
        Some(counts.chao1() * mean <= DICTIONARY_BYTES)
    }
}

/// How often the values of a sample occur.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counts {
    values: usize,
    distinct: usize,
    /// Values seen exactly once, and exactly twice.
    once: usize,
    twice: usize,
}

impl Counts {
    fn of<T: Ord>(mut values: Vec<&T>) -> Counts {
        values.sort_unstable();
        let mut counts = Counts {
            values: values.len(),
            distinct: 0,
            once: 0,
            twice: 0,
        };
        let mut i = 0;
        while i < values.len() {
            let mut j = i + 1;
            while j < values.len() && values[j] == values[i] {
                j += 1;
            }
            counts.distinct += 1;
            counts.once += usize::from(j - i == 1);
            counts.twice += usize::from(j - i == 2);
            i = j;
        }
        counts
    }

    /// The bias-corrected Chao1 estimate of the distinct values of the population the sample
    /// was drawn from: those seen, plus f1(f1-1) / 2(f2+1) not seen yet.
    fn chao1(&self) -> f64 {
        let once = self.once as f64;
        self.distinct as f64 + once * (once - 1.0) / (2.0 * (self.twice as f64 + 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int64Array, ListArray, StringArray};
    use arrow::datatypes::{Field, Int64Type, Schema};
    use parquet::arrow::ArrowSchemaConverter;
    use std::sync::Arc;

    fn choices_of(columns: Vec<(&str, ArrayRef)>) -> Vec<Choice> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let batch =
            RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.1).collect())
                .unwrap();
        let descriptor = ArrowSchemaConverter::new().convert(&schema).unwrap();
        Plan::new(&descriptor, schema.fields(), &[batch], true).choices
    }

    /// A deterministic pseudo-random sequence.
    fn noise(n: usize) -> impl Iterator<Item = u64> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
    }

    #[test]
    fn distinct_values_get_no_dictionary_and_repeated_ones_do() {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..5000));
        let codes: ArrayRef = Arc::new(Int64Array::from_iter_values(
            noise(5000).map(|x| (x % 40) as i64),
        ));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values(
            noise(5000).map(|x| format!("user-{x}")),
        ));
        let tags: ArrayRef = Arc::new(StringArray::from_iter_values(
            noise(5000).map(|x| format!("tag-{}", x % 300)),
        ));
        let got = choices_of(vec![
            ("ids", ids),
            ("codes", codes),
            ("names", names),
            ("tags", tags),
        ]);
        let delta = Some(Encoding::DELTA_BINARY_PACKED);
        assert_eq!(
            got[0],
            Choice {
                dictionary: false,
                encoding: delta
            }
        );
        // A dictionary that fits falls back, if ever, to PLAIN (no 1 MiB DELTA encoder
        // reserved by every column writer for it).
        assert_eq!(
            got[1],
            Choice {
                dictionary: true,
                encoding: Some(Encoding::PLAIN)
            }
        );
        assert_eq!(
            got[2],
            Choice {
                dictionary: false,
                encoding: None
            }
        );
        assert_eq!(
            got[3],
            Choice {
                dictionary: true,
                encoding: None
            }
        );
    }

    #[test]
    fn doubles_are_split_when_compressed_unless_a_dictionary_fits() {
        let smooth: ArrayRef = Arc::new(Float64Array::from_iter_values(
            (0..5000).map(|i| 20.0 + (i as f64 / 300.0).sin()),
        ));
        // 10 000 prices with two decimals: mostly distinct in 4096 values, but a dictionary of
        // them is small.
        let prices: ArrayRef = Arc::new(Float64Array::from_iter_values(
            noise(5000).map(|x| (x % 10_000) as f64 / 100.0),
        ));
        let got = choices_of(vec![("smooth", smooth.clone()), ("prices", prices)]);
        let split = Some(Encoding::BYTE_STREAM_SPLIT);
        assert_eq!(
            got[0],
            Choice {
                dictionary: false,
                encoding: split
            }
        );
        assert_eq!(
            got[1],
            Choice {
                dictionary: true,
                encoding: split
            }
        );
        let schema = Arc::new(Schema::new(vec![Field::new(
            "smooth",
            DataType::Float64,
            false,
        )]));
        let batch = RecordBatch::try_new(schema.clone(), vec![smooth]).unwrap();
        let descriptor = ArrowSchemaConverter::new().convert(&schema).unwrap();
        let uncompressed = Plan::new(&descriptor, schema.fields(), &[batch], false);
        assert_eq!(uncompressed.choices[0].encoding, Some(Encoding::PLAIN));
        // 8 bytes a row; 32 MiB row groups of them, within the bounds.
        assert_eq!(uncompressed.row_bytes, 8.0);
        assert_eq!(uncompressed.rows_per_group(32 << 20, 1 << 20), 1 << 20);
        assert_eq!(uncompressed.rows_per_group(8 << 20, 1 << 20), 1 << 20);
        assert_eq!(uncompressed.rows_per_group(4 << 20, 1 << 20), 1 << 19);
        assert_eq!(uncompressed.rows_per_group(1, 1 << 20), SAMPLE_ROWS);
        assert_eq!(uncompressed.rows_per_group(1, 100), 100);
    }

    #[test]
    fn integers_take_delta_unless_their_differences_are_wide() {
        // Timestamps a few ms apart, small counts, and amounts of every magnitude in no order.
        let ts: ArrayRef = Arc::new(Int64Array::from_iter_values(noise(5000).scan(
            1_700_000_000_000i64,
            |t, x| {
                *t += (x % 50) as i64;
                Some(*t)
            },
        )));
        let counts: ArrayRef = Arc::new(Int64Array::from_iter_values(
            noise(5000).map(|x| (x % 3000) as i64),
        ));
        let amounts: ArrayRef = Arc::new(Int64Array::from_iter_values(
            noise(5000).map(|x| ((x >> 8) % 1000) as i64 * 10i64.pow((x % 14) as u32)),
        ));
        let negative: ArrayRef = Arc::new(arrow::array::Int32Array::from_iter_values(
            noise(5000).map(|x| -((x % 100) as i32)),
        ));
        let amounts_lose = Sample::of(std::slice::from_ref(&amounts)).delta_loses();
        let got = choices_of(vec![
            ("ts", ts),
            ("counts", counts),
            ("amounts", amounts),
            ("negative", negative),
        ]);
        assert!(amounts_lose);
        let delta = Some(Encoding::DELTA_BINARY_PACKED);
        let plain = Some(Encoding::PLAIN);
        assert_eq!((got[0].dictionary, got[0].encoding), (false, delta));
        // Small counts and negatives fit a dictionary, whose fallback is then PLAIN.
        assert_eq!((got[1].dictionary, got[1].encoding), (true, plain));
        // Amounts fit a dictionary too; without one they would still be PLAIN: DELTA loses.
        assert_eq!((got[2].dictionary, got[2].encoding), (true, plain));
        assert_eq!((got[3].dictionary, got[3].encoding), (true, plain));
        assert_eq!(sign_extend(0xFFFF_FFFF, 4), -1);
        assert_eq!(sign_extend(0x7FFF_FFFF, 4), i32::MAX as i128);
        assert_eq!(sign_extend(0xFF, 8), 255);
    }

    #[test]
    fn chao1_counts_the_values_not_seen_yet() {
        let values = [1, 1, 2, 3, 3, 3, 4, 5];
        let counts = Counts::of(values.iter().collect());
        assert_eq!(
            counts,
            Counts {
                values: 8,
                distinct: 5,
                once: 3,
                twice: 1
            }
        );
        assert_eq!(counts.chao1(), 5.0 + 3.0 * 2.0 / 4.0);
        let unique: Vec<u32> = (0..1000).collect();
        assert!(Counts::of(unique.iter().collect()).chao1() > 100_000.0);
    }

    #[test]
    fn nested_leaves_are_sampled_in_parquet_order_and_small_samples_keep_defaults() {
        let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
            (0..2000i64).map(|i| Some(vec![Some(3 * i), Some(3 * i + 1), None])),
        ));
        let few: ArrayRef = Arc::new(Float64Array::from_iter_values([1.5, 2.5]));
        let few = arrow::compute::concat(&[few.as_ref(); 1000]).unwrap();
        let short: ArrayRef = Arc::new(Int64Array::from_iter_values(0..2000));
        let got = choices_of(vec![("lists", lists), ("few", few), ("short", short)]);
        // 4000 distinct list items: no dictionary; doubles that repeat: a dictionary.
        assert!(!got[0].dictionary);
        assert!(got[1].dictionary);
        assert!(!got[2].dictionary);
        let tiny: ArrayRef = Arc::new(Int64Array::from_iter_values(0..10));
        assert!(choices_of(vec![("tiny", tiny)])[0].dictionary);
    }
}
