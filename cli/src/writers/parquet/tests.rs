//! The pipelined writer against one thread, and the dictionary columns' statistics and
//! indexes.

use super::*;
use crate::output::CountingWriter;
use arrow::array::{
    Array, ArrayRef, BinaryArray, DictionaryArray, Int64Array, ListArray, StringArray, StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    DataType, Field, Fields, Int16Type, Int32Type, Int64Type, Int8Type, Schema,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::sync::Mutex as StdMutex;

/// A `Write` into a shared buffer, so the bytes can be read after `finish`.
#[derive(Clone, Default)]
struct Shared(Arc<StdMutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn dictionary(key: DataType, value: DataType) -> DataType {
    DataType::Dictionary(Box::new(key), Box::new(value))
}

/// Batches of plain columns and of dictionary columns (written by `dictionary.rs`): one
/// dictionary shared by every batch, one different in every batch (rotated, with values
/// no row uses, all null in one batch), and two in a nullable record beside a plain column.
pub(super) fn batches() -> (SchemaRef, Vec<RecordBatch>) {
    let kind_fields = Fields::from(vec![
        Field::new("kind", dictionary(DataType::Int16, DataType::Utf8), true),
        Field::new("raw", dictionary(DataType::Int32, DataType::Binary), false),
        Field::new("n", DataType::Int64, false),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "values",
            DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            true,
        ),
        Field::new("level", dictionary(DataType::Int32, DataType::Utf8), false),
        Field::new("maybe", dictionary(DataType::Int8, DataType::Utf8), true),
        Field::new("rec", DataType::Struct(kind_fields.clone()), true),
    ]));
    let levels: ArrayRef = Arc::new(StringArray::from(vec!["DEBUG", "INFO", "WARN", "ERROR"]));
    let batches = (0..40i64)
        .map(|b| {
            let rows = 97 + b as usize;
            let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(
                (0..rows as i64).map(|i| b * 1000 + i),
            ));
            let names: ArrayRef = Arc::new(StringArray::from_iter(
                (0..rows).map(|i| (i % 7 != 0).then(|| format!("n{b}-{i}"))),
            ));
            let values: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
                (0..rows as i64).map(|i| (i % 5 != 0).then(|| (0..i % 9).map(Some))),
            ));
            let level: ArrayRef = Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    (0..rows as i32).map(|i| (i * 7 + b as i32) % 4).collect(),
                    levels.clone(),
                )
                .unwrap(),
            );
            let rotated: ArrayRef = Arc::new(StringArray::from_iter_values(
                (0..6).map(|j| format!("v{}", (j + b) % 6)),
            ));
            let maybe: ArrayRef = Arc::new(
                DictionaryArray::<Int8Type>::try_new(
                    (0..rows)
                        .map(|i| (b != 3 && i % 3 != 0).then_some((i % 5) as i8))
                        .collect(),
                    rotated,
                )
                .unwrap(),
            );
            let kinds: ArrayRef = Arc::new(StringArray::from(vec!["b", "a", "c"]));
            let kind: ArrayRef = Arc::new(
                DictionaryArray::<Int16Type>::try_new(
                    (0..rows as i16)
                        .map(|i| (i % 4 != 1).then_some(i % 3))
                        .collect(),
                    kinds,
                )
                .unwrap(),
            );
            let bytes: ArrayRef = Arc::new(BinaryArray::from_iter_values([
                &b"\xff"[..],
                b"\x00\x01",
                b"",
            ]));
            let raw: ArrayRef = Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    (0..rows as i32).map(|i| (i + b as i32) % 3).collect(),
                    bytes,
                )
                .unwrap(),
            );
            let n: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows as i64));
            let present = NullBuffer::from_iter((0..rows).map(|i| i % 11 != 0));
            let rec: ArrayRef = Arc::new(
                StructArray::try_new(kind_fields.clone(), vec![kind, raw, n], Some(present))
                    .unwrap(),
            );
            RecordBatch::try_new(schema.clone(), vec![ids, names, values, level, maybe, rec])
                .unwrap()
        })
        .collect();
    (schema, batches)
}

/// The rows of [`batches`] cut into batches of `cut` rows (the last one shorter), or as
/// they are.
fn cut(cut: Option<usize>) -> Vec<RecordBatch> {
    let (_, batches) = batches();
    let Some(cut) = cut else {
        return batches;
    };
    cut_batches(&batches, cut)
}

/// Every row group `reader` reads, as one batch.
fn read_back(reader: ParquetRecordBatchReaderBuilder<bytes::Bytes>) -> RecordBatch {
    let read: Vec<RecordBatch> = reader.build().unwrap().map(Result::unwrap).collect();
    arrow::compute::concat_batches(&read[0].schema(), &read).unwrap()
}

fn write(
    threads: usize,
    groups: Option<usize>,
    chunk_limit: usize,
    row_group_size: usize,
    batch_size: usize,
    batches: &[RecordBatch],
) -> Vec<u8> {
    let sink = Shared::default();
    let out: Out = CountingWriter::new(Box::new(sink.clone()));
    let options = WriterOptions {
        record_name: None,
        compression: Compression::Zstd,
        level: None,
        row_group_size,
        row_group_bytes: usize::MAX,
        batch_size,
        threads,
        block_size: 1 << 20,
    };
    let mut writer = Box::new(ParquetWriter::new(out, batches[0].schema(), &options).unwrap());
    writer.chunk_limit = chunk_limit;
    writer.group_limit = groups;
    // Small pages: many page boundaries, which depend on where writes end.
    writer.page_limit = Some(2048);
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    let bytes = sink.0.lock().unwrap().clone();
    bytes
}

#[test]
fn pipelined_encoding_writes_what_one_thread_writes() {
    // Tiny chunks: every batch is a chunk, many chunks in flight, row groups that end
    // inside batches; batches cut anywhere (as several reading threads cut them).
    let (_, as_made) = batches();
    for row_group_size in [150, 1000] {
        let reference = write(1, None, 1, row_group_size, 200, &cut(Some(200)));
        // (One row group at a time on several threads: the limit files of many columns get.)
        for (threads, groups, chunk_limit, batches) in [
            (1, None, 1, as_made.clone()),
            (1, None, usize::MAX, cut(Some(7))),
            (2, None, 1, as_made.clone()),
            (2, Some(1), 1, as_made.clone()),
            (4, None, 1, cut(Some(333))),
            (4, Some(1), 50_000, cut(Some(333))),
            (8, None, 1, as_made.clone()),
            (3, None, 50_000, cut(Some(1))),
            (4, None, usize::MAX, cut(None)),
        ] {
            assert!(
                write(threads, groups, chunk_limit, row_group_size, 200, &batches) == reference,
                "threads {threads}, groups {groups:?}, chunk {chunk_limit}, row groups of \
                 {row_group_size}"
            );
        }
    }
    let reference = write(1, None, 1, 1000, 200, &as_made);
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(reference)).unwrap();
    let groups = reader.metadata().num_row_groups();
    let rows: usize = as_made.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(groups, rows.div_ceil(1000));
    assert!(reader.metadata().row_group(0).column(0).data_page_offset() > 0);
    let read = read_back(reader);
    let expected = arrow::compute::concat_batches(&as_made[0].schema(), &as_made).unwrap();
    assert_eq!(read.columns(), expected.columns());
}

/// The smallest and largest value and the null count of leaf column `leaf` (a path of
/// child indices from the top-level column) in `batch`, from the Arrow values.
fn expected_statistics(batch: &RecordBatch, leaf: &[usize]) -> (Vec<u8>, Vec<u8>, u64) {
    expected_statistics_opt(batch, leaf).expect("a column with values")
}

/// [`expected_statistics`], `None` where every value is null.
fn expected_statistics_opt(batch: &RecordBatch, leaf: &[usize]) -> Option<(Vec<u8>, Vec<u8>, u64)> {
    let mut array = batch.column(leaf[0]).clone();
    let mut nulls = array.logical_nulls();
    for &child in &leaf[1..] {
        array = array
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap()
            .column(child)
            .clone();
        nulls = NullBuffer::union(nulls.as_ref(), array.logical_nulls().as_ref());
    }
    let values = arrow::compute::cast(&array, &DataType::Binary).unwrap();
    let values = values.as_any().downcast_ref::<BinaryArray>().unwrap();
    let present: Vec<&[u8]> = (0..values.len())
        .filter(|&i| nulls.as_ref().is_none_or(|n| n.is_valid(i)))
        .map(|i| values.value(i))
        .collect();
    let min = present.iter().min()?.to_vec();
    let max = present.iter().max()?.to_vec();
    Some((min, max, (values.len() - present.len()) as u64))
}

#[test]
fn dictionaries_outside_lists_are_written_from_their_keys() {
    let (schema, _) = batches();
    let descriptor = ArrowSchemaConverter::new().convert(&schema).unwrap();
    let written = |props: WriterProperties| {
        let keys = KeyColumns::new(schema.fields(), &descriptor, &props);
        let columns: Vec<usize> = (0..keys.paths.len())
            .filter(|&c| keys.paths[c].is_some())
            .collect();
        (columns, keys.whole)
    };
    let (columns, whole) = written(WriterProperties::default());
    // id, name, values.item, level, maybe, rec.kind, rec.raw, rec.n: the strings (`name`) too
    // where the properties ask for a dictionary.
    assert_eq!(columns, [1, 3, 4, 5, 6]);
    assert_eq!(whole, [false, true, false, true, true, false]);
    // Without a dictionary too (PLAIN from the start), but not with codecs not written here,
    // nor with an encoding other than PLAIN.
    use parquet::schema::types::ColumnPath;
    let props = WriterProperties::builder()
        .set_column_dictionary_enabled(ColumnPath::from("level"), false)
        .set_column_dictionary_enabled(ColumnPath::from("name"), false)
        .build();
    assert_eq!(written(props).0, [1, 3, 4, 5, 6]);
    let props = WriterProperties::builder()
        .set_column_encoding(
            ColumnPath::from("name"),
            parquet::basic::Encoding::DELTA_LENGTH_BYTE_ARRAY,
        )
        .build();
    assert_eq!(written(props).0, [3, 4, 5, 6]);
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::LZ4_RAW)
        .build();
    assert!(written(props).0.is_empty());
}

#[test]
fn dictionary_columns_have_their_statistics_and_page_indexes() {
    use parquet::arrow::arrow_reader::ArrowReaderOptions;
    use parquet::basic::Encoding;
    use parquet::file::page_index::column_index::ColumnIndexMetaData;
    use parquet::file::statistics::Statistics;
    let (_, batches) = batches();
    let file = bytes::Bytes::from(write(2, None, 1, 1000, 200, &batches));
    let options = ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let reader =
        ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options).unwrap();
    let metadata = reader.metadata().clone();
    // Leaf columns: id, name, values.item, level, maybe, rec.kind, rec.raw, rec.n; `name`,
    // distinct strings, without a dictionary.
    let dictionary_leaves = [
        (1, vec![1]),
        (3, vec![3]),
        (4, vec![4]),
        (5, vec![5, 0]),
        (6, vec![5, 1]),
    ];
    let mut pages = 0;
    for g in 0..metadata.num_row_groups() {
        let read = read_back(
            ParquetRecordBatchReaderBuilder::try_new(file.clone())
                .unwrap()
                .with_row_groups(vec![g]),
        );
        let group = metadata.row_group(g);
        for (c, path) in &dictionary_leaves {
            let chunk = group.column(*c);
            let (min, max, nulls) = expected_statistics(&read, path);
            let Some(Statistics::ByteArray(stats)) = chunk.statistics() else {
                panic!("column {c} of row group {g} has no byte array statistics");
            };
            assert_eq!(stats.min_opt().unwrap().data(), &min[..], "{c} in {g}");
            assert_eq!(stats.max_opt().unwrap().data(), &max[..], "{c} in {g}");
            assert_eq!(stats.null_count_opt(), Some(nulls), "{c} in {g}");
            // Every data page is dictionary-encoded (what readers check to keep it), or for
            // `name` PLAIN, with no dictionary page.
            let data_pages = chunk.page_encoding_stats_mask().unwrap();
            if *c == 1 {
                assert!(data_pages.is_only(Encoding::PLAIN), "{c} in {g}");
                assert_eq!(chunk.dictionary_page_offset(), None);
                assert_eq!(
                    chunk.encodings().collect::<Vec<_>>(),
                    [Encoding::PLAIN, Encoding::RLE]
                );
            } else {
                assert!(data_pages.is_only(Encoding::RLE_DICTIONARY), "{c} in {g}");
            }
            let locations = &metadata.offset_index().unwrap()[g][*c].page_locations;
            pages += locations.len();
            assert_eq!(locations[0].first_row_index, 0);
            let ColumnIndexMetaData::BYTE_ARRAY(index) = &metadata.column_index().unwrap()[g][*c]
            else {
                panic!("column {c} of row group {g} has no byte array column index");
            };
            assert_eq!(index.num_pages() as usize, locations.len());
            let page_nulls: i64 = (0..locations.len())
                .map(|p| index.null_count(p).unwrap())
                .sum();
            assert_eq!(page_nulls as u64, nulls);
            let present = (0..locations.len()).filter(|&p| !index.is_null_page(p));
            let bounds: Vec<(&[u8], &[u8])> = present
                .map(|p| (index.min_value(p).unwrap(), index.max_value(p).unwrap()))
                .collect();
            assert_eq!(bounds.iter().map(|b| b.0).min().unwrap(), &min[..]);
            assert_eq!(bounds.iter().map(|b| b.1).max().unwrap(), &max[..]);
        }
    }
    assert!(pages > 4 * metadata.num_row_groups(), "{pages} pages");
}

#[test]
fn empty_dictionaries_are_only_under_null_rows() {
    // A union's enum branch that no row of a batch takes (an all-null member), and an enum
    // without symbols (an empty dictionary, all null): written, and read back as mapped.
    use arrow::array::{AsArray, Int32Array, NullArray, UnionArray};
    use arrow::datatypes::{UnionFields, UnionMode};
    let symbols: ArrayRef = Arc::new(StringArray::from(vec!["A", "B"]));
    let fields = UnionFields::try_new(
        [0, 1, 2],
        [
            Field::new("null", DataType::Null, true),
            Field::new("string", DataType::Utf8, false),
            Field::new("e", dictionary(DataType::Int32, DataType::Utf8), false),
        ],
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("u", DataType::Union(fields.clone(), UnionMode::Dense), true),
        Field::new("never", dictionary(DataType::Int32, DataType::Utf8), true),
    ]));
    let batch = |kind: &dyn Fn(usize) -> i8| {
        let type_ids: Vec<i8> = (0..200).map(kind).collect();
        let mut counts = [0i32; 3];
        let offsets: Vec<i32> = type_ids
            .iter()
            .map(|&t| {
                counts[t as usize] += 1;
                counts[t as usize] - 1
            })
            .collect();
        let children: Vec<ArrayRef> = vec![
            Arc::new(NullArray::new(counts[0] as usize)),
            Arc::new(StringArray::from_iter_values(
                (0..counts[1]).map(|i| format!("s{i}")),
            )),
            Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    (0..counts[2]).map(|i| i % 2).collect(),
                    symbols.clone(),
                )
                .unwrap(),
            ),
        ];
        let union = UnionArray::try_new(
            fields.clone(),
            type_ids.into(),
            Some(offsets.into()),
            children,
        )
        .unwrap();
        let never = DictionaryArray::<Int32Type>::try_new(
            Int32Array::new_null(200),
            Arc::new(StringArray::from(Vec::<&str>::new())),
        )
        .unwrap();
        RecordBatch::try_new(schema.clone(), vec![Arc::new(union), Arc::new(never)]).unwrap()
    };
    let batches = [
        batch(&|_| 1),
        batch(&|i| [0, 2][i % 2]),
        batch(&|i| (i % 3) as i8),
    ];
    let strings = |array: &ArrayRef| -> Vec<Option<String>> {
        let array = arrow::compute::cast(array, &DataType::Utf8).unwrap();
        array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_string))
            .collect()
    };
    let expected: Vec<Option<String>> = batches
        .iter()
        .flat_map(|b| {
            let mapped = crate::writers::compat::map_array(b.column(0)).unwrap();
            strings(mapped.as_struct().column(1))
        })
        .collect();
    assert_eq!(expected.iter().flatten().count(), 100 + 66);
    for threads in [1, 2] {
        let file = write(threads, None, 1, 1000, 200, &batches);
        let read =
            read_back(ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(file)).unwrap());
        assert_eq!(strings(read.column(0).as_struct().column(1)), expected);
        assert_eq!(read.column(1).null_count(), 600);
    }
}

#[test]
fn files_of_many_columns_encode_one_row_group_at_a_time() {
    // Few columns: one row group per thread, at least two.
    assert_eq!(super::max_groups(1, 3), 2);
    assert_eq!(super::max_groups(8, 3), 8);
    // Many: as many as the column writers' memory allows, at least one.
    assert_eq!(super::max_groups(8, 32), 2);
    assert_eq!(super::max_groups(8, 33), 1);
    assert_eq!(super::max_groups(2, 100), 1);
    assert_eq!(super::max_groups(2, usize::MAX), 1);
    assert_eq!(super::max_groups(16, 20), 3);
}

/// Batches of string columns that the plan gives a dictionary (so `dictionary.rs` interns
/// them row by row): top-level as Utf8, nullable as Utf8View, in a nullable record as
/// LargeUtf8 and Binary; and `drift`, whose first rows repeat few values and whose later
/// ones are distinct, some long and not ASCII: its dictionary outgrows the tests' limit and
/// the rest of each chunk is PLAIN, with bounds longer than the truncation length.
fn string_batches() -> Vec<RecordBatch> {
    use arrow::array::{LargeStringArray, StringViewArray};
    let rec_fields = Fields::from(vec![
        Field::new("table", DataType::LargeUtf8, true),
        Field::new("raw", DataType::Binary, false),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("op", DataType::Utf8, false),
        Field::new("status", DataType::Utf8View, true),
        Field::new("rec", DataType::Struct(rec_fields.clone()), true),
        Field::new("drift", DataType::Utf8, false),
        Field::new("kind", dictionary(DataType::Int32, DataType::Utf8), true),
    ]));
    (0..30usize)
        .map(|b| {
            let rows: Vec<usize> = (b * 300..b * 300 + 300).collect();
            let ids: ArrayRef =
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|&i| i as i64)));
            let op: ArrayRef = Arc::new(StringArray::from_iter_values(
                rows.iter().map(|&i| ["c", "u", "d"][(i / 7) % 3]),
            ));
            let status: ArrayRef = Arc::new(StringViewArray::from_iter(
                rows.iter()
                    .map(|&i| (i % 5 != 0).then(|| format!("status-{}", i % 4))),
            ));
            let table: ArrayRef = Arc::new(LargeStringArray::from_iter(
                rows.iter()
                    .map(|&i| (i % 4 != 1).then(|| format!("t{}", i % 6))),
            ));
            let raw: ArrayRef = Arc::new(BinaryArray::from_iter_values(
                rows.iter().map(|&i| [(i % 3) as u8, 0xff]),
            ));
            let rec: ArrayRef = Arc::new(StructArray::new(
                rec_fields.clone(),
                vec![table, raw],
                Some(NullBuffer::from_iter(rows.iter().map(|&i| i % 9 != 0))),
            ));
            let drift: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|&i| {
                if i < 5000 {
                    format!("d{}", i % 3)
                } else if i % 2 == 0 {
                    format!("é{}-{}", "x".repeat(70 + i % 13), i)
                } else {
                    format!("{i}")
                }
            })));
            // An enum whose batches' dictionaries drift the same way: its fallback writes the
            // keys' values.
            let symbols: ArrayRef =
                Arc::new(StringArray::from_iter_values(rows.iter().map(|&i| {
                    if i < 5000 {
                        format!("k{}", i % 3)
                    } else {
                        format!("kind-{i:0>40}")
                    }
                })));
            let kind: ArrayRef = Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    (0..300).map(|k| (k % 7 != 3).then_some(k)).collect(),
                    symbols,
                )
                .unwrap(),
            );
            RecordBatch::try_new(schema.clone(), vec![ids, op, status, rec, drift, kind]).unwrap()
        })
        .collect()
}

#[test]
fn string_dictionaries_are_interned_here_and_fall_back_to_plain() {
    use parquet::arrow::arrow_reader::ArrowReaderOptions;
    use parquet::basic::Encoding;
    use parquet::file::page_index::column_index::ColumnIndexMetaData;
    use parquet::file::statistics::Statistics;
    let batches = string_batches();
    // The string leaves are this module's with the plan's properties.
    let schema = batches[0].schema();
    let descriptor = ArrowSchemaConverter::new().convert(&schema).unwrap();
    let plan = Plan::new(&descriptor, schema.fields(), &batches, true);
    let options = WriterOptions {
        record_name: None,
        compression: Compression::Zstd,
        level: None,
        row_group_size: 4000,
        row_group_bytes: usize::MAX,
        batch_size: 200,
        threads: 1,
        block_size: 1 << 20,
    };
    let props = properties(&options, &descriptor, &plan, 4000, Some(2048));
    let keys = KeyColumns::new(schema.fields(), &descriptor, &props);
    let written: Vec<usize> = (0..keys.paths.len())
        .filter(|&c| keys.paths[c].is_some())
        .collect();
    // id, op, status, rec.table, rec.raw, drift, kind
    assert_eq!(written, [1, 2, 3, 4, 5, 6]);

    let reference = write(1, None, 1, 4000, 200, &batches);
    for (threads, batches) in [(2, batches.clone()), (3, cut_batches(&batches, 77))] {
        assert!(
            write(threads, None, 1, 4000, 200, &batches) == reference,
            "{threads} threads"
        );
    }
    let file = bytes::Bytes::from(reference);
    let read = read_back(ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap());
    let expected = arrow::compute::concat_batches(&schema, &batches).unwrap();
    assert_eq!(read.columns(), expected.columns());

    let options = ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let metadata = ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options)
        .unwrap()
        .metadata()
        .clone();
    let leaves = [
        (1, vec![1]),
        (2, vec![2]),
        (3, vec![3, 0]),
        (4, vec![3, 1]),
        (5, vec![4]),
        (6, vec![5]),
    ];
    let mut fell_back = 0;
    for g in 0..metadata.num_row_groups() {
        let start: usize = (0..g)
            .map(|i| metadata.row_group(i).num_rows() as usize)
            .sum();
        let rows = expected.slice(start, metadata.row_group(g).num_rows() as usize);
        for (c, path) in &leaves {
            let chunk = metadata.row_group(g).column(*c);
            let (min, max, nulls) = expected_statistics(&rows, path);
            let Some(Statistics::ByteArray(stats)) = chunk.statistics() else {
                panic!("column {c} of row group {g} has no byte array statistics");
            };
            let (low, high) = (
                stats.min_opt().unwrap().data(),
                stats.max_opt().unwrap().data(),
            );
            // Exact bounds where they fit 64 bytes, else shortened ones that still bound.
            assert_eq!(stats.min_is_exact(), min.len() <= 64, "{c} in {g}");
            assert_eq!(stats.max_is_exact(), max.len() <= 64, "{c} in {g}");
            assert!(low <= &min[..] && (low == &min[..]) == stats.min_is_exact());
            assert!(high >= &max[..] && (high == &max[..]) == stats.max_is_exact());
            assert!(low.len() <= 64 && high.len() <= 64, "{c} in {g}");
            assert_eq!(stats.null_count_opt(), Some(nulls), "{c} in {g}");
            let encodings = chunk.page_encoding_stats_mask().unwrap();
            if *c >= 5 && start + rows.num_rows() > 5000 {
                fell_back += 1;
                assert!(encodings.is_set(Encoding::PLAIN), "{c} in {g}");
            } else {
                assert!(encodings.is_only(Encoding::RLE_DICTIONARY), "{c} in {g}");
            }
            let ColumnIndexMetaData::BYTE_ARRAY(index) = &metadata.column_index().unwrap()[g][*c]
            else {
                panic!("column {c} of row group {g} has no byte array column index");
            };
            let locations = &metadata.offset_index().unwrap()[g][*c].page_locations;
            for p in 0..locations.len() {
                let first = locations[p].first_row_index as usize;
                let end = locations
                    .get(p + 1)
                    .map_or(rows.num_rows(), |l| l.first_row_index as usize);
                let page = rows.slice(first, end - first);
                let present = expected_statistics_opt(&page, path);
                assert_eq!(
                    index.is_null_page(p),
                    present.is_none(),
                    "{c} in {g}, page {p}"
                );
                if let Some((min, max, _)) = present {
                    assert!(
                        index.min_value(p).unwrap() <= &min[..],
                        "{c} in {g}, page {p}"
                    );
                    assert!(
                        index.max_value(p).unwrap() >= &max[..],
                        "{c} in {g}, page {p}"
                    );
                }
            }
        }
    }
    assert!(fell_back >= 2, "the drifting columns never fell back");
}

#[test]
fn a_dictionary_falls_back_within_a_step_of_its_limit_whatever_the_batch() {
    // One batch of 8 192 distinct 100-byte values with a 4 KiB dictionary limit: the
    // dictionary page stops within `STEP` values of it, as the crate's does, not at the end
    // of the batch.
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
    let descriptor = ArrowSchemaConverter::new().convert(&schema).unwrap();
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_page_size_limit(4096)
        .build();
    let keys = KeyColumns::new(schema.fields(), &descriptor, &props);
    let path = keys.paths[0]
        .as_ref()
        .expect("a string column written here");
    let mut writer = KeyWriter::new(descriptor.column(0), path, &props).unwrap();
    let values: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..8192).map(|i| format!("{i:0>100}")),
    ));
    let batch = RecordBatch::try_new(schema, vec![values]).unwrap();
    writer.write(&path.leaf(&batch).unwrap()).unwrap();
    let (_, close) = writer.close().unwrap();
    let dictionary_start = close.metadata.dictionary_page_offset().unwrap();
    let dictionary_page = close.metadata.data_page_offset() - dictionary_start;
    assert!(dictionary_page > 4096, "{dictionary_page}");
    assert!(
        dictionary_page < 4096 + 1024 * 104 + 64,
        "{dictionary_page}"
    );
    assert_eq!(close.rows_written, 8192);
}

/// `batches` concatenated and cut every `rows` rows.
fn cut_batches(batches: &[RecordBatch], rows: usize) -> Vec<RecordBatch> {
    let all = arrow::compute::concat_batches(&batches[0].schema(), batches).unwrap();
    (0..all.num_rows())
        .step_by(rows)
        .map(|start| all.slice(start, rows.min(all.num_rows() - start)))
        .collect()
}
