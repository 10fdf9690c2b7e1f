//! The Avro writer: random schemas and data (the differential generator's), written by
//! apache-avro, read by avrow, written again by avrow under every codec, block size and thread
//! count, and read back by apache-avro — which must see the rows it wrote in the first place —
//! and by arrow-avro, which must read them as it reads the originals; avrow reads its own
//! files back to the same batches. Values the Avro schema cannot hold are
//! errors naming the column and row.

use crate::differential::seeds;
use crate::gen::{random_case, write_file, Rng};
use crate::oracle::{apache_rows, diff_rows};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use avrow::{Codec, ReaderBuilder, WriterBuilder};
use std::sync::Arc;

fn read_all(file: &[u8]) -> Vec<RecordBatch> {
    ReaderBuilder::new()
        .with_threads(1)
        .read_bytes(file.to_vec())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn arrow_avro_read(file: &[u8]) -> Result<Vec<RecordBatch>, String> {
    let reader = arrow_avro::reader::ReaderBuilder::new()
        .build(std::io::Cursor::new(file.to_vec()))
        .map_err(|e| e.to_string())?;
    reader.map(|b| b.map_err(|e| e.to_string())).collect()
}

/// The same values, batch boundaries and schema metadata aside.
fn same_columns(a: &[RecordBatch], b: &[RecordBatch]) -> bool {
    let concat = |x: &[RecordBatch]| {
        x.first().map(|f| {
            arrow::compute::concat_batches(&f.schema(), x)
                .unwrap()
                .columns()
                .to_vec()
        })
    };
    concat(a) == concat(b)
}

fn write_all(batches: &[RecordBatch], codec: Codec, block_size: usize, threads: usize) -> Vec<u8> {
    let mut w = WriterBuilder::new(batches[0].schema())
        .with_codec(codec)
        .with_block_size(block_size)
        .with_threads(threads)
        .build(Vec::new())
        .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn written_files_read_back_unchanged_by_apache_avro() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut arrow_avro_checked = 0;
    let codecs = [
        Codec::Null,
        Codec::Deflate,
        Codec::Snappy,
        Codec::Zstandard,
        Codec::Bzip2,
        Codec::Xz,
    ];
    for seed in seeds(5000).into_iter().take(120) {
        let case = random_case(seed);
        let mut rng = Rng::new(seed);
        let original = write_file(
            &mut rng,
            &case.schema,
            &case.values,
            apache_avro::Codec::Null,
        );
        let expected = apache_rows(&case.model, &original).unwrap();
        let batches = read_all(&original);
        if batches.is_empty() {
            continue;
        }
        checked += 1;
        let codec = codecs[seed as usize % codecs.len()];
        let (block, threads) =
            [(1usize << 20, 1usize), (64, 2), (1, 1), (300, 3)][seed as usize % 4];
        let written = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            write_all(&batches, codec, block, threads)
        })) {
            Ok(w) => w,
            Err(_) => {
                failures.push(format!("seed {seed}: writing panicked ({})", case.json));
                continue;
            }
        };
        match apache_rows(&case.model, &written) {
            Ok(rows) => {
                if let Some(d) = diff_rows(&expected, &rows) {
                    failures.push(format!("seed {seed} {codec}: apache-avro reads {d}"));
                }
            }
            Err(e) => failures.push(format!(
                "seed {seed} {codec}: apache-avro cannot read it: {e}"
            )),
        }
        // arrow-avro reads the file as it reads the original (where it reads the original).
        if let Ok(a) = arrow_avro_read(&original) {
            match arrow_avro_read(&written) {
                Ok(b) if same_columns(&a, &b) => {}
                Ok(_) => failures.push(format!(
                    "seed {seed} {codec}: arrow-avro reads other values"
                )),
                Err(e) => failures.push(format!(
                    "seed {seed} {codec}: arrow-avro cannot read it: {e}"
                )),
            }
            arrow_avro_checked += 1;
        }
        // avrow reads its own file to the same batches, with the same writer schema.
        let again = read_all(&written);
        let (a, b) = (
            arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap(),
            arrow::compute::concat_batches(&again[0].schema(), &again).unwrap(),
        );
        if a != b {
            failures.push(format!(
                "seed {seed} {codec}: avrow reads different batches back"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 100 || std::env::var("AVROW_SEED").is_ok(),
        "only {checked} cases"
    );
    assert!(
        arrow_avro_checked >= 50 || std::env::var("AVROW_SEED").is_ok(),
        "arrow-avro read only {arrow_avro_checked} of the originals"
    );
}

#[test]
fn bad_values_are_errors_naming_column_and_row() {
    let schema = avrow::Schema::parse(
        r#"{"type":"record","name":"r","fields":[
            {"name":"small","type":"int"},
            {"name":"kind","type":{"type":"enum","name":"K","symbols":["A","B"]}}]}"#,
    )
    .unwrap();
    let batch = |small: Vec<i64>, kind: Vec<Option<&str>>| {
        RecordBatch::try_from_iter([
            ("small", Arc::new(Int64Array::from(small)) as ArrayRef),
            ("kind", Arc::new(StringArray::from(kind)) as ArrayRef),
        ])
        .unwrap()
    };
    let good = batch(vec![1, 2], vec![Some("A"), Some("B")]);
    for (bad, column, row, what) in [
        (
            batch(vec![1, 1 << 40], vec![Some("A"), Some("B")]),
            "small",
            3,
            "out of range",
        ),
        (
            batch(vec![1, 2], vec![Some("A"), Some("C")]),
            "kind",
            3,
            "\"C\" is not a symbol",
        ),
        (
            batch(vec![1, 2], vec![None, Some("A")]),
            "kind",
            2,
            "null value",
        ),
    ] {
        let mut w = WriterBuilder::new(good.schema())
            .with_avro_schema(schema.clone())
            .build(Vec::new())
            .unwrap();
        w.write(&good).unwrap();
        // The bad value is found when its block is encoded: at a later write or at finish.
        let e = match w.write(&bad).and_then(|()| w.write(&good)) {
            Err(e) => e,
            Ok(()) => w.finish().unwrap_err(),
        };
        let m = e.to_string();
        assert!(
            m.contains(&format!("column {column}, row {row}")) && m.contains(what),
            "{m}"
        );
    }
    // A schema the Arrow schema cannot be written as: refused when the writer is built.
    let ints =
        RecordBatch::try_from_iter([("small", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    let e = WriterBuilder::new(ints.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("kind"), "{e}");
    // After an error, nothing more is written.
    let mut w = WriterBuilder::new(good.schema()).build(Vec::new()).unwrap();
    let bad = RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
        .unwrap();
    assert!(w.write(&bad).is_err());
    assert!(w.write(&good).is_err());
    assert!(good.column(0).len() == 2);
}

#[test]
fn levels_and_metadata_are_checked() {
    let b = RecordBatch::try_from_iter([("a", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
        .unwrap();
    let e = WriterBuilder::new(b.schema())
        .with_codec(Codec::Zstandard)
        .with_level(40)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("levels -7 to 22"), "{e}");
    let e = WriterBuilder::new(b.schema())
        .with_codec(Codec::Snappy)
        .with_level(1)
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("no compression levels"), "{e}");
    let e = WriterBuilder::new(b.schema())
        .with_metadata("avro.codec", "x")
        .build(Vec::new())
        .unwrap_err();
    assert!(e.to_string().contains("reserved"), "{e}");
    let mut w = WriterBuilder::new(b.schema())
        .with_metadata("origin", "test")
        .with_sync_marker(*b"0123456789abcdef")
        .build(Vec::new())
        .unwrap();
    w.write(&b).unwrap();
    let file = w.finish().unwrap();
    assert!(file.ends_with(b"0123456789abcdef"));
    let header = avrow::BlockReader::from_bytes(file).unwrap();
    assert_eq!(
        header.header().metadata().get("origin").map(|v| &v[..]),
        Some(&b"test"[..])
    );
}

#[test]
fn many_blocks_on_several_threads_keep_row_order() {
    // 1.5 MB of records with nested arrays, maps, unions, decimals: blocks of 16 KiB on 1, 2
    // and 4 threads, every codec; apache-avro reads the rows in order.
    let (model, original, expected) =
        crate::parallel::big_file(21, 3 << 19, apache_avro::Codec::Null);
    let batches: Vec<RecordBatch> = ReaderBuilder::new()
        .with_batch_size(1000)
        .read_bytes(original)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (codec, threads) in [
        (Codec::Null, 1),
        (Codec::Zstandard, 2),
        (Codec::Deflate, 4),
        (Codec::Snappy, 2),
    ] {
        let written = write_all(&batches, codec, 16 << 10, threads);
        let blocks = avrow::BlockReader::from_bytes(written.clone())
            .unwrap()
            .count();
        assert!(blocks > 20, "{codec}: {blocks} blocks");
        let rows = apache_rows(&model, &written).unwrap();
        assert!(
            diff_rows(&expected, &rows).is_none(),
            "{codec} on {threads} threads"
        );
    }
}

#[test]
fn arrow_types_the_reader_never_produces_get_their_natural_avro_type() {
    use arrow_array::builder::{
        LargeListBuilder, StringDictionaryBuilder, StructBuilder, UInt64Builder,
    };
    use arrow_array::types::Int8Type;
    use arrow_array::*;
    use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit};
    let n = 3;
    let mut list = LargeListBuilder::new(Int32Array::builder(0));
    for i in 0..n {
        list.values().append_value(i);
        list.append(i != 1);
    }
    let mut dict = StringDictionaryBuilder::<Int8Type>::new();
    for s in ["x", "y", "x"] {
        dict.append_value(s);
    }
    let fields = Fields::from(vec![
        Field::new("a", DataType::UInt64, true),
        Field::new("b", DataType::Utf8View, true),
    ]);
    let mut st = StructBuilder::new(
        fields.clone(),
        vec![
            Box::new(UInt64Builder::new()),
            Box::new(arrow_array::builder::StringViewBuilder::new()),
        ],
    );
    for i in 0..n {
        st.field_builder::<UInt64Builder>(0)
            .unwrap()
            .append_option((i != 2).then_some(i as u64));
        st.field_builder::<arrow_array::builder::StringViewBuilder>(1)
            .unwrap()
            .append_value("v");
        st.append(true);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "large_utf8",
            Arc::new(LargeStringArray::from(vec!["a", "bb", "ccc"])),
        ),
        (
            "utf8_view",
            Arc::new(StringViewArray::from(vec![
                Some("long enough to be out of line"),
                None,
                Some("s"),
            ])),
        ),
        ("large_list", Arc::new(list.finish())),
        ("dict", Arc::new(dict.finish())),
        (
            "date64",
            Arc::new(Date64Array::from(vec![0, 86_400_000, -86_400_000])),
        ),
        (
            "dec32",
            Arc::new(
                Decimal32Array::from(vec![123, -45, 0])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
        (
            "dec64",
            Arc::new(
                Decimal64Array::from(vec![1, -1, 99_999])
                    .with_precision_and_scale(12, 3)
                    .unwrap(),
            ),
        ),
        (
            "ts_tz",
            Arc::new(TimestampMicrosecondArray::from(vec![1, 2, 3]).with_timezone("Europe/Paris")),
        ),
        ("ts_s", Arc::new(TimestampSecondArray::from(vec![1, -2, 3]))),
        (
            "time_s",
            Arc::new(Time32SecondArray::from(vec![1, 2, 86_399])),
        ),
        (
            "time_ns",
            Arc::new(Time64NanosecondArray::from(vec![1, 2, 3])),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from(vec![0, u64::MAX >> 1, 7])),
        ),
        ("i8", Arc::new(Int8Array::from(vec![-128, 0, 127]))),
        (
            "f16",
            Arc::new(Float16Array::from(vec![
                half_f16(1.5),
                half_f16(-2.0),
                half_f16(0.0),
            ])),
        ),
        ("ym", Arc::new(IntervalYearMonthArray::from(vec![1, 2, 3]))),
        ("st", Arc::new(st.finish())),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    let avsc = w.avro_schema().json().to_string();
    w.write(&batch).unwrap();
    let file = w.finish().unwrap();
    for expected in [
        r#""large_utf8","type":"string""#,
        r#""logicalType":"date""#,
        r#""logicalType":"decimal","precision":5,"scale":2"#,
        r#""logicalType":"timestamp-micros""#,
        r#""logicalType":"local-timestamp-millis""#,
        r#""logicalType":"time-millis""#,
        r#""name":"time_ns","type":"long""#,
        r#""logicalType":"duration""#,
        r#""type":"record","name":"st""#,
        r#"["null","long"]"#,
    ] {
        assert!(avsc.contains(expected), "{expected} not in {avsc}");
    }
    // Read back: the values, in the reader's mapping.
    let back = read_all(&file);
    let b = &back[0];
    let col = |name: &str| b.column_by_name(name).unwrap().clone();
    assert_eq!(
        col("date64")
            .as_any()
            .downcast_ref::<Date32Array>()
            .unwrap()
            .values(),
        &[0, 1, -1]
    );
    assert_eq!(
        col("ts_s")
            .as_any()
            .downcast_ref::<TimestampMillisecondArray>()
            .unwrap()
            .values(),
        &[1000, -2000, 3000]
    );
    assert_eq!(
        col("time_s")
            .as_any()
            .downcast_ref::<Time32MillisecondArray>()
            .unwrap()
            .values(),
        &[1000, 2000, 86_399_000]
    );
    let dec = col("dec32");
    let dec = dec.as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!((dec.value(0), dec.value(1), dec.scale()), (123, -45, 2));
    assert_eq!(col("utf8_view").null_count(), 1);
    assert_eq!(col("large_list").null_count(), 1);
    let dict = col("dict");
    assert_eq!(dict.data_type(), &DataType::Utf8);
    let ym = col("ym");
    let ym = ym
        .as_any()
        .downcast_ref::<IntervalMonthDayNanoArray>()
        .unwrap();
    assert_eq!(ym.value(2).months, 3);
    assert_eq!(
        ym.data_type(),
        &DataType::Interval(IntervalUnit::MonthDayNano)
    );
    assert_eq!(
        col("ts_tz").data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()))
    );
    let _ = fields;
}

fn half_f16(
    v: f32,
) -> <arrow_array::types::Float16Type as arrow_array::ArrowPrimitiveType>::Native {
    <arrow_array::types::Float16Type as arrow_array::ArrowPrimitiveType>::Native::from_f32(v)
}

#[test]
fn wide_records_are_encoded_column_by_column_in_chunks() {
    // 40 columns (records of 32 fields or more take the chunked path), 1000 rows (chunks of
    // 256 and a short one), nulls, strings shorter and longer than 16 bytes, lists: written,
    // then read back by avrow and by apache-avro's model of the same values.
    use arrow_array::builder::{Int32Builder, ListBuilder};
    let rows = 1000;
    let mut columns: Vec<(String, ArrayRef)> = Vec::new();
    for c in 0..40 {
        let name = format!("c{c}");
        let array: ArrayRef = match c % 5 {
            // Column 0 has one null, at row 600 (in the third chunk).
            0 => Arc::new(Int64Array::from_iter((0..rows).map(|r| {
                let null = if c == 0 { r == 600 } else { r % 7 == c % 7 };
                (!null).then_some(((r as i64 - 500) * (c as i64 + 1)) << (r % 40))
            }))),
            1 => Arc::new(StringArray::from_iter(
                (0..rows).map(|r| (r % 11 != 3).then(|| "x".repeat((r * 7 + c) % 41))),
            )),
            2 => Arc::new(arrow_array::Float64Array::from_iter_values(
                (0..rows).map(|r| r as f64 / (c as f64 + 0.5)),
            )),
            3 => Arc::new(arrow_array::BooleanArray::from_iter(
                (0..rows).map(|r| Some(r % 3 == 0)),
            )),
            _ => {
                let mut b = ListBuilder::new(Int32Builder::new());
                for r in 0..rows {
                    for k in 0..(r % 4) {
                        b.values().append_value((r * k) as i32);
                    }
                    b.append(true);
                }
                Arc::new(b.finish())
            }
        };
        columns.push((name, array));
    }
    let batch =
        RecordBatch::try_from_iter(columns.iter().map(|(n, a)| (n.as_str(), a.clone()))).unwrap();
    let file = write_all(std::slice::from_ref(&batch), Codec::Snappy, 8 << 10, 1);
    let back = read_all(&file);
    let back = arrow::compute::concat_batches(&back[0].schema(), &back).unwrap();
    assert_eq!(
        arrow::util::pretty::pretty_format_batches(&[back])
            .unwrap()
            .to_string(),
        arrow::util::pretty::pretty_format_batches(std::slice::from_ref(&batch))
            .unwrap()
            .to_string()
    );
    // The same rows through apache-avro: every value, read by an independent decoder.
    let values = apache_avro::Reader::new(&file[..]).unwrap().count();
    assert_eq!(values, rows);
    // A null where the given schema has none: the error names the column and the row, in
    // the middle of a chunk.
    let json = crate::writer::record_json(&batch, "c0");
    let schema = avrow::Schema::parse(&json).unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap();
    let e = w
        .write(&batch)
        .and_then(|()| w.finish().map(drop))
        .unwrap_err();
    assert!(e.to_string().contains("column c0, row 600"), "{e}");
}

/// The derived schema of `batch` as JSON, with column `strict` made non-nullable.
pub(crate) fn record_json(batch: &RecordBatch, strict: &str) -> String {
    let derived = avrow::avrow_engine::encode::avro_schema_for(&arrow_schema::Schema::new(
        batch.schema().fields().clone(),
    ))
    .unwrap();
    let mut json: serde_json::Value = serde_json::from_str(derived.json()).unwrap();
    for f in json["fields"].as_array_mut().unwrap() {
        if f["name"] == strict {
            f["type"] = f["type"][1].clone();
        }
    }
    json.to_string()
}

/// Columns read with a projection are written as the file's record cut to them: its name,
/// its named types (defined where now first used) and the fields' docs kept. Columns whose
/// types no longer fit the recorded fields get the derived schema.
#[test]
fn a_projection_is_written_as_its_record_cut_to_the_columns() {
    use arrow_array::FixedSizeBinaryArray;
    let schema = avrow::Schema::parse(
        r#"{"type": "record", "name": "Pair", "namespace": "shop", "doc": "two codes",
            "fields": [
              {"name": "a", "type": {"type": "fixed", "name": "Code", "size": 2}},
              {"name": "b", "type": "Code", "doc": "the second"},
              {"name": "c", "type": "int"}]}"#,
    )
    .unwrap();
    let codes = |v: &[&[u8]]| -> ArrayRef {
        Arc::new(FixedSizeBinaryArray::try_from_iter(v.iter()).unwrap())
    };
    let batch = RecordBatch::try_from_iter([
        ("a", codes(&[b"aa", b"ab"])),
        ("b", codes(&[b"ba", b"bb"])),
        ("c", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
    ])
    .unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap();
    w.write(&batch).unwrap();
    let file = w.finish().unwrap();

    // (A projection reads the columns in the file's order.)
    let projected: Vec<RecordBatch> = ReaderBuilder::new()
        .with_projection(["c", "b"])
        .read_bytes(file)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let w = WriterBuilder::new(projected[0].schema())
        .build(Vec::new())
        .unwrap();
    assert_eq!(
        w.avro_schema().canonical_form(),
        r#"{"name":"shop.Pair","type":"record","fields":[{"name":"b","type":{"name":"shop.Code","type":"fixed","size":2}},{"name":"c","type":"int"}]}"#
    );
    assert!(
        w.avro_schema().json().contains("the second"),
        "{}",
        w.avro_schema().json()
    );
    let mut w = w;
    for b in &projected {
        w.write(b).unwrap();
    }
    let again = read_all(&w.finish().unwrap());
    assert!(same_columns(&again, &projected));

    // A column of the recorded name but another type: the derived schema.
    let changed = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new_with_metadata(
            vec![arrow_schema::Field::new(
                "c",
                arrow_schema::DataType::Utf8,
                false,
            )],
            projected[0].schema().metadata().clone(),
        )),
        vec![Arc::new(StringArray::from(vec!["x", "y"]))],
    )
    .unwrap();
    let w = WriterBuilder::new(changed.schema())
        .build(Vec::new())
        .unwrap();
    assert_eq!(
        w.avro_schema().canonical_form(),
        r#"{"name":"topLevelRecord","type":"record","fields":[{"name":"c","type":"string"}]}"#
    );
}

/// `with_record_name` names a derived schema's record (its named types take the namespace);
/// a recorded schema keeps its own name; a bad name is an error even where unused.
#[test]
fn derived_records_take_the_given_name() {
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        (
            "code",
            Arc::new(
                arrow_array::FixedSizeBinaryArray::try_from_iter([b"ab", b"cd"].iter()).unwrap(),
            ) as ArrayRef,
        ),
    ])
    .unwrap();
    let named = |name: &str| {
        WriterBuilder::new(batch.schema())
            .with_record_name(name)
            .build(Vec::new())
            .map(|w| w.avro_schema().canonical_form())
    };
    assert_eq!(
        named("com.acme.Order").unwrap(),
        r#"{"name":"com.acme.Order","type":"record","fields":[{"name":"id","type":"long"},{"name":"code","type":{"name":"com.acme.code","type":"fixed","size":2}}]}"#
    );
    assert!(named("Order").unwrap().starts_with(r#"{"name":"Order","#));
    for bad in ["", "1x", "a..b", "a.b-c", ".x", "int", "null"] {
        let err = named(bad).unwrap_err().to_string();
        assert!(err.contains("not a valid Avro"), "{bad}: {err}");
    }
    // Columns named as primitive types: the records and fixed types derived from them take
    // other names (they were named `int`, `string`, which no schema may).
    let inner = arrow_array::StructArray::from(vec![(
        Arc::new(arrow_schema::Field::new(
            "x",
            arrow_schema::DataType::Int64,
            false,
        )),
        Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
    )]);
    let primitives = RecordBatch::try_from_iter([
        ("int", Arc::new(inner) as ArrayRef),
        ("string", batch.column(1).clone()),
    ])
    .unwrap();
    let mut w = WriterBuilder::new(primitives.schema())
        .build(Vec::new())
        .unwrap();
    let schema = w.avro_schema().canonical_form();
    assert!(
        schema.contains(r#"{"name":"int2","type":"record""#)
            && schema.contains(r#"{"name":"string2","type":"fixed""#),
        "{schema}"
    );
    w.write(&primitives).unwrap();
    let read = read_all(&w.finish().unwrap());
    assert!(same_columns(&read, std::slice::from_ref(&primitives)));
    // Batches read from Avro keep the record they were read as.
    let mut w = WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    w.write(&batch).unwrap();
    let read = read_all(&w.finish().unwrap());
    let w = WriterBuilder::new(read[0].schema())
        .with_record_name("com.acme.Order")
        .build(Vec::new())
        .unwrap();
    assert!(
        w.avro_schema()
            .canonical_form()
            .starts_with(r#"{"name":"topLevelRecord","#),
        "{}",
        w.avro_schema().canonical_form()
    );
}

/// A Null column of array items (or map values) fits an Avro item type without null only
/// while it holds no item: empty lists are written, an item is an error naming the column.
#[test]
fn null_items_fit_any_item_type_only_while_there_are_none() {
    use arrow_array::{ListArray, NullArray};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{DataType, Field};
    let schema = avrow::Schema::parse(
        r#"{"type":"record","name":"r","fields":[
            {"name":"l","type":{"type":"array","items":{"type":"record","name":"T","fields":[
                {"name":"v","type":"int"}]}}}]}"#,
    )
    .unwrap();
    let item = Arc::new(Field::new("item", DataType::Null, true));
    let lists = |offsets: Vec<i32>| {
        let n = *offsets.last().unwrap() as usize;
        let list = ListArray::new(
            item.clone(),
            OffsetBuffer::new(offsets.into()),
            Arc::new(NullArray::new(n)),
            None,
        );
        RecordBatch::try_from_iter([("l", Arc::new(list) as ArrayRef)]).unwrap()
    };
    let empty = lists(vec![0, 0, 0]);
    let mut w = WriterBuilder::new(empty.schema())
        .with_avro_schema(schema.clone())
        .build(Vec::new())
        .unwrap();
    w.write(&empty).unwrap();
    let file = w.finish().unwrap();
    let back: Vec<_> = apache_avro::Reader::new(&file[..])
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(back.len(), 2);
    let full = lists(vec![0, 0, 1]);
    let mut w = WriterBuilder::new(full.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap();
    let e = w
        .write(&full)
        .and_then(|()| w.finish().map(drop))
        .unwrap_err()
        .to_string();
    assert!(e.contains("l[]") && e.contains("row 1"), "{e}");
}

/// Times of day outside a day and strings that are not uuids are errors naming the column,
/// row and value when written as Avro time and uuid types (readers refuse both: avrow wrote
/// files it could not read back); the values at a day's bounds and canonical uuids in either
/// case are written.
#[test]
fn times_outside_a_day_and_strings_not_uuids_are_write_errors() {
    use arrow_array::{Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray};
    let write = |column: ArrayRef, avro: Option<&str>| -> Result<Vec<u8>, String> {
        let batch = RecordBatch::try_from_iter([("t", column)]).unwrap();
        let mut b = WriterBuilder::new(batch.schema());
        if let Some(avro) = avro {
            b = b.with_avro_schema(avrow::Schema::parse(avro).unwrap());
        }
        let mut w = b.build(Vec::new()).map_err(|e| e.to_string())?;
        w.write(&batch).map_err(|e| e.to_string())?;
        w.finish().map_err(|e| e.to_string())
    };
    let fine: [ArrayRef; 3] = [
        Arc::new(Time32MillisecondArray::from(vec![0, 86_399_999])),
        Arc::new(Time32SecondArray::from(vec![0, 86_399])),
        Arc::new(Time64MicrosecondArray::from(vec![0, 86_399_999_999])),
    ];
    for column in fine {
        let file = write(column.clone(), None).unwrap();
        let back = read_all(&file);
        assert_eq!(back[0].num_rows(), 2);
    }
    let bad: [(ArrayRef, &str); 4] = [
        (
            Arc::new(Time32MillisecondArray::from(vec![1, 90_000_000])),
            "time of day 90000000 ms",
        ),
        (
            Arc::new(Time32SecondArray::from(vec![1, 100_000])),
            "time of day 100000000 ms",
        ),
        (
            Arc::new(Time64MicrosecondArray::from(vec![1, 86_400_000_000])),
            "time of day 86400000000 µs",
        ),
        (
            Arc::new(Time64MicrosecondArray::from(vec![1, -5])),
            "time of day -5 µs",
        ),
    ];
    for (column, what) in bad {
        let e = write(column, None).unwrap_err();
        assert!(
            e.contains("column t, row 1") && e.contains(what) && e.contains("outside a day"),
            "{e}"
        );
    }
    let uuid = r#"{"type":"record","name":"r","fields":[
        {"name":"t","type":{"type":"string","logicalType":"uuid"}}]}"#;
    let ok: ArrayRef = Arc::new(StringArray::from(vec![
        "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
        "6F1C2A3B-4D5E-4F60-8A7B-9C0D1E2F3A4B",
    ]));
    let back = read_all(&write(ok, Some(uuid)).unwrap());
    assert_eq!(back[0].num_rows(), 2);
    for text in ["not-a-uuid", "6f1c2a3b4d5e4f608a7b9c0d1e2f3a4b", ""] {
        let column: ArrayRef = Arc::new(StringArray::from(vec![
            "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b",
            text,
        ]));
        let e = write(column, Some(uuid)).unwrap_err();
        assert!(
            e.contains("column t, row 1") && e.contains(&format!("{text:?} is not a uuid")),
            "{e}"
        );
    }
}

/// A batch read from Avro keeps its file's schema in `avro.schema`. A column whose type
/// changed since (an `int` widened to Int64, a column renamed to another's name) is written
/// with a type derived from it; a value the recorded type cannot hold although the column's
/// type is unchanged (an enum given a new symbol) is an error that says where its Avro type
/// came from, and how to write it otherwise.
#[test]
fn values_the_recorded_schema_cannot_hold_say_where_the_schema_came_from() {
    let schema = avrow::Schema::parse(
        r#"{"type":"record","name":"Weather","fields":[{"name":"temp","type":"int"},
            {"name":"sky","type":{"type":"enum","name":"Sky","symbols":["SUN","RAIN"]}}]}"#,
    )
    .unwrap();
    let sky = arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::new(
        Int32Array::from(vec![0, 1]),
        Arc::new(StringArray::from(vec!["SUN", "RAIN"])),
    );
    let small = RecordBatch::try_from_iter([
        ("temp", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
        ("sky", Arc::new(sky) as ArrayRef),
    ])
    .unwrap();
    let mut w = WriterBuilder::new(small.schema())
        .with_avro_schema(schema)
        .build(Vec::new())
        .unwrap();
    w.write(&small).unwrap();
    let read = read_all(&w.finish().unwrap());
    let metadata = read[0].schema().metadata().clone();
    let sky_field = read[0].schema().field(1).clone();
    // Widened: written as a long.
    let widened = arrow::compute::cast(read[0].column(0), &arrow_schema::DataType::Int64).unwrap();
    let big =
        arrow::compute::kernels::numeric::add(&widened, &Int64Array::new_scalar(1 << 40)).unwrap();
    let batch = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new_with_metadata(
            vec![
                arrow_schema::Field::new("temp", arrow_schema::DataType::Int64, false),
                sky_field.clone(),
            ],
            metadata.clone(),
        )),
        vec![big.clone(), read[0].column(1).clone()],
    )
    .unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    assert!(
        w.avro_schema()
            .json()
            .contains(r#""name":"temp","type":"long""#),
        "{}",
        w.avro_schema().json()
    );
    w.write(&batch).unwrap();
    let again = read_all(&w.finish().unwrap());
    assert_eq!(
        again[0]
            .column(0)
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(0),
        (1 << 40) + 1
    );
    // Swapped names: each column written as what it holds.
    let swapped = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new_with_metadata(
            vec![
                arrow_schema::Field::new("sky", arrow_schema::DataType::Int32, false),
                arrow_schema::Field::new("temp", sky_field.data_type().clone(), false),
            ],
            metadata.clone(),
        )),
        vec![read[0].column(0).clone(), read[0].column(1).clone()],
    )
    .unwrap();
    let mut w = WriterBuilder::new(swapped.schema())
        .build(Vec::new())
        .unwrap();
    w.write(&swapped).unwrap();
    assert_eq!(read_all(&w.finish().unwrap())[0].num_rows(), 2);
    // A symbol the recorded enum lacks, the column's type unchanged: an error naming where
    // the Avro type came from.
    let storm = arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::new(
        Int32Array::from(vec![0, 1]),
        Arc::new(StringArray::from(vec!["SUN", "STORM"])),
    );
    let batch = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new_with_metadata(
            read[0].schema().fields().clone(),
            metadata,
        )),
        vec![read[0].column(0).clone(), Arc::new(storm)],
    )
    .unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    let e = w
        .write(&batch)
        .and_then(|()| w.finish().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column sky, row 1") && e.contains("the batch's avro.schema metadata"),
        "{e}"
    );
    // Without the metadata, the type is derived from the column: written.
    let bare = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(batch.schema().fields().clone())),
        batch.columns().to_vec(),
    )
    .unwrap();
    let mut w = WriterBuilder::new(bare.schema()).build(Vec::new()).unwrap();
    w.write(&bare).unwrap();
    assert_eq!(read_all(&w.finish().unwrap())[0].num_rows(), 2);
}

/// A dictionary column of nulls only (an empty dictionary: what pyarrow's `dictionary_encode`
/// makes of an all-null column) is written as nulls; a key that names no value of its
/// dictionary in a row that is not null (invalid Arrow data) is an error naming the column and
/// row, not the last value.
#[test]
fn dictionaries_without_values_write_nulls_and_bad_keys_are_errors() {
    use arrow_array::types::{Int8Type, UInt64Type};
    use arrow_array::{DictionaryArray, Int8Array, UInt64Array};
    let empty = || Arc::new(StringArray::from(Vec::<&str>::new())) as ArrayRef;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "i8",
            Arc::new(DictionaryArray::<Int8Type>::new(
                Int8Array::from(vec![None, None, None]),
                empty(),
            )),
        ),
        (
            "u64",
            Arc::new(DictionaryArray::<UInt64Type>::new(
                UInt64Array::from(vec![None, None, None]),
                empty(),
            )),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    for threads in [1, 2] {
        let file = write_all(std::slice::from_ref(&batch), Codec::Null, 1 << 16, threads);
        let back = read_all(&file);
        assert_eq!(back[0].num_rows(), 3);
        for c in back[0].columns() {
            assert_eq!(c.logical_null_count(), 3, "{c:?}");
        }
    }

    // Invalid Arrow data, as a producer may still hand over: the key 5 names no value.
    // SAFETY: `new_unchecked` skips the check that keys name values; nothing here indexes the
    // values by key but the writer, which checks each key itself (the values have no nulls,
    // so the array's logical nulls are the keys' own and do not look values up).
    let bad = unsafe {
        DictionaryArray::<Int8Type>::new_unchecked(
            Int8Array::from(vec![Some(0), Some(5)]),
            Arc::new(StringArray::from(vec!["a", "b"])),
        )
    };
    let batch = RecordBatch::try_from_iter([("d", Arc::new(bad) as ArrayRef)]).unwrap();
    let mut w = WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    let err = w
        .write(&batch)
        .and_then(|()| w.finish().map(drop))
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("dictionary key") && msg.contains("column d, row 1"),
        "{msg}"
    );
}

/// A union's children go to the branches of their own types whatever their type ids: Int64
/// to `long` and Int16 to `int` with type ids 2 and 4 (a looser fit, Int64 in the `int` at
/// branch index 2, wrote small values in the wrong branch and refused large ones).
#[test]
fn union_children_take_their_own_branches_whatever_their_type_ids() {
    use arrow_array::{Int16Array, UnionArray};
    use arrow_buffer::ScalarBuffer;
    use arrow_schema::{DataType, Field, UnionFields};
    for (ids, dense) in [
        ([2i8, 4], true),
        ([2, 4], false),
        ([1, 0], true),
        ([0, 1], true),
    ] {
        let fields = UnionFields::try_new(
            ids,
            [
                Field::new("a", DataType::Int64, false),
                Field::new("b", DataType::Int16, false),
            ],
        )
        .unwrap();
        let (a, b): (ArrayRef, ArrayRef) = if dense {
            (
                Arc::new(Int64Array::from(vec![1i64 << 40])),
                Arc::new(Int16Array::from(vec![7i16])),
            )
        } else {
            (
                Arc::new(Int64Array::from(vec![1i64 << 40, 0])),
                Arc::new(Int16Array::from(vec![0i16, 7])),
            )
        };
        let offsets = dense.then(|| ScalarBuffer::from(vec![0i32, 0]));
        let union = UnionArray::try_new(
            fields,
            ScalarBuffer::from(vec![ids[0], ids[1]]),
            offsets,
            vec![a, b],
        )
        .unwrap();
        let batch = RecordBatch::try_from_iter([("u", Arc::new(union) as ArrayRef)]).unwrap();
        let w = WriterBuilder::new(batch.schema())
            .build(Vec::new())
            .unwrap();
        assert_eq!(
            w.avro_schema().canonical_form(),
            r#"{"name":"topLevelRecord","type":"record","fields":[{"name":"u","type":["long","int"]}]}"#
        );
        let file = write_all(std::slice::from_ref(&batch), Codec::Null, 1 << 16, 1);
        let back = read_all(&file);
        let u = back[0].column(0).as_union();
        // Read back, type id = branch index: the long first, then the int.
        assert_eq!((u.type_id(0), u.type_id(1)), (0, 1), "ids {ids:?}");
        let longs = u.child(0).as_primitive::<arrow_array::types::Int64Type>();
        let ints = u.child(1).as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!(longs.value(u.value_offset(0)), 1 << 40, "ids {ids:?}");
        assert_eq!(ints.value(u.value_offset(1)), 7, "ids {ids:?}");
    }
}

/// Records of the same fields in a union go to the branches they are named for, whatever
/// order the Avro schema lists them in (matched by shape, the first branch took both).
#[test]
fn union_records_take_the_branches_they_are_named_for() {
    use apache_avro::types::Value as V;
    let written = |order: &str| {
        format!(
            r#"{{"type": "record", "name": "r", "fields": [{{"name": "u", "type": [{order}]}}]}}"#
        )
    };
    let record = |name: &str, namespace: &str| {
        let namespace = match namespace {
            "" => String::new(),
            ns => format!(r#""namespace": "{ns}", "#),
        };
        format!(
            r#"{{"type": "record", "name": "{name}", {namespace}"fields": [{{"name": "x", "type": "long"}}]}}"#
        )
    };
    // B after A in one namespace; and `x.A` after `A` (a simple name matching both).
    for (a, b) in [
        (record("A", "n"), record("B", "n")),
        (record("A", ""), record("A", "x")),
    ] {
        let schema = apache_avro::Schema::parse_str(&written(&format!("{a}, {b}"))).unwrap();
        let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
        for (branch, x) in [(0u32, 1i64), (1, 2), (0, 3)] {
            let record = V::Record(vec![("x".into(), V::Long(x))]);
            w.append_value(V::Record(vec![(
                "u".into(),
                V::Union(branch, Box::new(record)),
            )]))
            .unwrap();
        }
        let batches = read_all(&w.into_inner().unwrap());
        // Written under a schema that lists them the other way, then read back: each row in
        // its own record.
        for threads in [1, 2] {
            let text = written(&format!("{b}, {a}"));
            let avro = avrow::Schema::parse(&text).unwrap();
            let mut writer = WriterBuilder::new(batches[0].schema())
                .with_avro_schema(avro)
                .with_threads(threads)
                .build(Vec::new())
                .unwrap();
            for batch in &batches {
                writer.write(batch).unwrap();
            }
            let file = writer.finish().unwrap();
            let reader = apache_avro::Reader::new(&file[..]).unwrap();
            let rows: Vec<(u32, i64)> = reader
                .map(|v| match v.unwrap() {
                    V::Record(fields) => match &fields[0].1 {
                        V::Union(i, inner) => match &**inner {
                            V::Record(f) => match f[0].1 {
                                V::Long(x) => (*i, x),
                                ref other => panic!("{other:?}"),
                            },
                            other => panic!("{other:?}"),
                        },
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                })
                .collect();
            // Branch 0 is now the second record, branch 1 the first.
            assert_eq!(rows, [(1, 1), (0, 2), (1, 3)], "{a}, {b}");
        }
    }
}

/// A nested projection (`b.y`, `lines.sku`) is written as the recorded record with its
/// nested records cut to the fields read, names kept; a named record the projection cuts in
/// two ways gets a derived schema.
#[test]
fn a_nested_projection_keeps_its_records_cut_to_the_fields_read() {
    let schema = avrow::Schema::parse(
        r#"{"type": "record", "name": "r", "namespace": "com.acme", "fields": [
              {"name": "a", "type": "long"},
              {"name": "b", "type": {"type": "record", "name": "B", "fields": [
                  {"name": "x", "type": "int"}, {"name": "y", "type": "string"}]}},
              {"name": "lines", "type": {"type": "array", "items": {"type": "record",
                  "name": "Line", "fields": [{"name": "sku", "type": "string"},
                                             {"name": "qty", "type": "int"}]}}},
              {"name": "c", "type": ["null", "B"], "default": null}]}"#,
    )
    .unwrap();
    let value = apache_avro::types::Value::Record(vec![
        ("a".into(), apache_avro::types::Value::Long(1)),
        (
            "b".into(),
            apache_avro::types::Value::Record(vec![
                ("x".into(), apache_avro::types::Value::Int(2)),
                ("y".into(), apache_avro::types::Value::String("z".into())),
            ]),
        ),
        (
            "lines".into(),
            apache_avro::types::Value::Array(vec![apache_avro::types::Value::Record(vec![
                ("sku".into(), apache_avro::types::Value::String("s".into())),
                ("qty".into(), apache_avro::types::Value::Int(3)),
            ])]),
        ),
        (
            "c".into(),
            apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Null)),
        ),
    ]);
    let apache = apache_avro::Schema::parse_str(schema.json()).unwrap();
    let mut w = apache_avro::Writer::new(&apache, Vec::new()).unwrap();
    w.append_value_ref(&value).unwrap();
    let file = w.into_inner().unwrap();
    let written = |columns: &[&str]| {
        let batches: Vec<RecordBatch> = ReaderBuilder::new()
            .with_projection(columns.iter().copied())
            .read_bytes(file.clone())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut w = WriterBuilder::new(batches[0].schema())
            .build(Vec::new())
            .unwrap();
        let canonical = w.avro_schema().canonical_form();
        for b in &batches {
            w.write(b).unwrap();
        }
        let again = read_all(&w.finish().unwrap());
        assert!(same_columns(&again, &batches), "{columns:?}");
        canonical
    };
    assert_eq!(
        written(&["b.y", "lines.sku"]),
        r#"{"name":"com.acme.r","type":"record","fields":[{"name":"b","type":{"name":"com.acme.B","type":"record","fields":[{"name":"y","type":"string"}]}},{"name":"lines","type":{"type":"array","items":{"name":"com.acme.Line","type":"record","fields":[{"name":"sku","type":"string"}]}}}]}"#
    );
    // `B` cut to `y` here and to `x` there: no one cut of the named record, derived.
    assert!(
        written(&["b.y", "c.x"]).starts_with(r#"{"name":"topLevelRecord""#),
        "{}",
        written(&["b.y", "c.x"])
    );
    // `B` cut to `y` here and whole there: derived too.
    assert!(written(&["b.y", "c"]).starts_with(r#"{"name":"topLevelRecord""#));
    // Cut the same way in both places: the named record once, referred to again.
    assert_eq!(
        written(&["a", "b.x", "c.x"]),
        r#"{"name":"com.acme.r","type":"record","fields":[{"name":"a","type":"long"},{"name":"b","type":{"name":"com.acme.B","type":"record","fields":[{"name":"x","type":"int"}]}},{"name":"c","type":["null","com.acme.B"]}]}"#
    );
}

/// A projection of whole columns keeps a recursive record recursive (cutting nested records
/// to the paths read must not unroll it).
#[test]
fn a_projection_of_a_recursive_column_keeps_it_recursive() {
    use apache_avro::types::Value;
    let schema = r#"{"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "int"}, {"name": "other", "type": "string"},
        {"name": "tree", "type": {"type": "record", "name": "Tree", "fields": [
            {"name": "v", "type": "int"},
            {"name": "kids", "type": {"type": "array", "items": "Tree"}}]}}]}"#;
    let leaf = |v| {
        Value::Record(vec![
            ("v".into(), Value::Int(v)),
            ("kids".into(), Value::Array(vec![])),
        ])
    };
    let row = Value::Record(vec![
        ("id".into(), Value::Int(1)),
        ("other".into(), Value::String("o".into())),
        (
            "tree".into(),
            Value::Record(vec![
                ("v".into(), Value::Int(2)),
                ("kids".into(), Value::Array(vec![leaf(3)])),
            ]),
        ),
    ]);
    let apache = apache_avro::Schema::parse_str(schema).unwrap();
    let mut w = apache_avro::Writer::new(&apache, Vec::new()).unwrap();
    w.append_value_ref(&row).unwrap();
    let file = w.into_inner().unwrap();
    let batches: Vec<RecordBatch> = ReaderBuilder::new()
        .with_max_recursion_depth(3)
        .with_projection(["id", "tree"])
        .read_bytes(file)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let w = WriterBuilder::new(batches[0].schema())
        .build(Vec::new())
        .unwrap();
    assert_eq!(
        w.avro_schema().canonical_form(),
        r#"{"name":"R","type":"record","fields":[{"name":"id","type":"int"},{"name":"tree","type":{"name":"Tree","type":"record","fields":[{"name":"v","type":"int"},{"name":"kids","type":{"type":"array","items":"Tree"}}]}}]}"#
    );
}

#[test]
fn zstandard_blocks_carry_a_checksum_so_damage_is_never_other_rows() {
    let n = 3000;
    let ids = Int64Array::from_iter_values((0..n).map(|i| i * 7919 % 100_003));
    let names = StringArray::from_iter_values((0..n).map(|i| format!("name-{}", i % 97)));
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("name", Arc::new(names) as ArrayRef),
    ])
    .unwrap();
    let file = write_all(std::slice::from_ref(&batch), Codec::Zstandard, 1 << 20, 1);
    // One block: the header ends with the sync marker the file ends with.
    let sync = &file[file.len() - 16..];
    let header = file.windows(16).position(|w| w == sync).unwrap() + 16;
    let frame = header
        + file[header..]
            .windows(4)
            .position(|w| w == [0x28, 0xb5, 0x2f, 0xfd])
            .unwrap();
    // The frame header descriptor's Content_Checksum_flag (RFC 8878, 3.1.1.1.1).
    assert_ne!(file[frame + 4] & 0b100, 0, "no checksum flag");
    let original = read_all(&file);
    let mut wrong = Vec::new();
    for at in frame..file.len() - 16 {
        let mut damaged = file.clone();
        damaged[at] ^= 1 << (at % 8);
        let read = ReaderBuilder::new()
            .with_threads(1)
            .read_bytes(damaged)
            .and_then(|r| r.collect::<Result<Vec<_>, _>>());
        if let Ok(batches) = read {
            if !same_columns(&batches, &original) {
                wrong.push(at - frame);
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "bit flips read as other rows at frame bytes {wrong:?}"
    );
}
