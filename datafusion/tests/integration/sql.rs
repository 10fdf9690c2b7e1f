//! SQL surface: `STORED AS AVRO` options, the registration helpers, projection and limit,
//! errors that name the file and the location.

use crate::common::*;
use avrow_datafusion::{AvrowReadOptions, SessionContextAvrowExt};

#[tokio::test]
async fn reader_schema_option_resolves_files() {
    let ctx = avrow_ctx(2);
    let reader = r#"{"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"},
        {"name": "paid", "type": "boolean"},
        {"name": "region_code", "type": "string", "default": "none"}]}"#;
    let sql = format!(
        "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{}' OPTIONS ('format.reader_schema' '{}', 'format.batch_size' '100')",
        sample("order.avro").display(),
        reader.replace('\'', "''")
    );
    query(&ctx, &sql).await;
    let schema = ctx.table("t").await.unwrap().schema().as_arrow().clone();
    let names: Vec<_> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "paid", "region_code"]);
    let got = text(
        &query(
            &ctx,
            "SELECT region_code, count(*) AS n FROM t GROUP BY region_code",
        )
        .await,
    );
    assert!(got.contains("| none        | 1500 |"), "{got}");
}

#[tokio::test]
async fn unknown_and_bad_options_are_errors() {
    let ctx = avrow_ctx(1);
    let path = sample("order.avro");
    for (options, wanted) in [
        ("'format.no_such' '1'", "unknown avro option 'no_such'"),
        ("'format.batch_size' 'many'", "positive integer"),
        (
            "'format.reader_schema' '{\"type\": \"nope\"}'",
            "reader_schema",
        ),
    ] {
        let sql = format!(
            "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{}' OPTIONS ({options})",
            path.display()
        );
        let err = query_err(&ctx, &sql).await;
        assert!(err.contains(wanted), "{options}: {err}");
    }
}

#[tokio::test]
async fn register_and_read_helpers() {
    let ctx = avrow_ctx(2);
    let glob = format!("{}/*.avro", sample("").display());
    ctx.register_avrow(
        "all",
        &glob,
        AvrowReadOptions::default().with_batch_size(512),
    )
    .await
    .unwrap();
    let df = ctx
        .read_avrow(
            sample("wide.avro").to_str().unwrap(),
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
    assert!(df.count().await.unwrap() > 0);
    // Four samples of different schemas: merged columns, the missing ones null.
    let n = ctx.table("all").await.unwrap().count().await.unwrap();
    let each: usize = ["order.avro", "wide.avro", "telemetry.avro", "counters.avro"]
        .iter()
        .map(|f| {
            avrow::ReaderBuilder::new()
                .open(sample(f))
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum::<usize>()
        })
        .sum();
    assert_eq!(n, each);
    // A column only one file has: nullable in the table, null in the other files' rows.
    let schema = ctx.table("all").await.unwrap().schema().clone();
    assert!(schema
        .field_with_unqualified_name("id")
        .unwrap()
        .is_nullable());
    let got = query(
        &ctx,
        "SELECT count(id) AS ids, count(*) - count(id) AS nulls, count(host) AS hosts FROM all",
    )
    .await;
    let row: Vec<i64> = (0..3)
        .map(|i| {
            let c = got[0].column(i).as_any();
            c.downcast_ref::<arrow::array::Int64Array>()
                .unwrap()
                .value(0)
        })
        .collect();
    assert_eq!(row, [1500, each as i64 - 1500, 1200]);
    let got = query(&ctx, "SELECT id FROM all WHERE id IS NOT NULL").await;
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 1500);
}

#[tokio::test]
async fn projection_and_limit_reach_the_reader() {
    let ctx = avrow_ctx(2);
    create(&ctx, "t", &sample("order.avro")).await;
    let plan = text(&query(&ctx, "EXPLAIN SELECT id, paid FROM t LIMIT 3").await);
    assert!(plan.contains("projection=[id, paid]"), "{plan}");
    assert!(plan.contains("limit=3"), "{plan}");
    let got = query(&ctx, "SELECT id, paid FROM t LIMIT 3").await;
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    // Nested fields through the struct.
    let got = text(
        &query(
            &ctx,
            "SELECT attributes['region'] AS r FROM t ORDER BY r LIMIT 1",
        )
        .await,
    );
    assert!(got.contains("| r "), "{got}");
}

#[tokio::test]
async fn a_damaged_file_names_the_file_and_location() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(sample("order.avro")).unwrap();
    let cut = bytes.len() / 2;
    bytes.truncate(cut);
    let path = dir.path().join("cut.avro");
    std::fs::write(&path, &bytes).unwrap();
    let ctx = avrow_ctx(1);
    create(&ctx, "t", &path).await;
    let err = query_err(&ctx, "SELECT sum(total) FROM t").await;
    assert!(
        err.contains("cut.avro") && err.contains("block") && err.contains("byte"),
        "{err}"
    );
}

/// A struct column read only through some fields decodes only those: a file whose other
/// field holds bytes that are not UTF-8 is read when that field is not asked for.
#[tokio::test]
async fn struct_fields_not_asked_for_are_not_decoded() {
    use arrow::array::{ArrayRef, Int64Array, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    use std::sync::Arc;

    let fields = Fields::from(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, false),
    ]);
    let s = StructArray::new(
        fields.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(StringArray::from(vec!["QQQQQQ", "QQQQQQ", "QQQQQQ"])) as ArrayRef,
        ],
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Struct(fields), false),
    ]));
    let batch = arrow::array::RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![10, 20, 30])), Arc::new(s)],
    )
    .unwrap();
    let mut writer = avrow::WriterBuilder::new(schema).build(Vec::new()).unwrap();
    writer.write(&batch).unwrap();
    let mut bytes = writer.finish().unwrap();
    // Make every `b` invalid UTF-8 (same length, so the framing stays right).
    let needle = b"QQQQQQ";
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(6).position(|w| w == needle) {
        bytes[at + i] = 0xff;
        at += i + 6;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.avro");
    std::fs::write(&path, &bytes).unwrap();
    let ctx = avrow_ctx(1);
    create(&ctx, "t", &path).await;
    let got = text(&query(&ctx, "SELECT id, s['a'] AS a FROM t ORDER BY id").await);
    assert!(got.contains("| 30 | 3 |"), "{got}");
    let err = query_err(&ctx, "SELECT s['b'] FROM t").await;
    assert!(
        err.contains("UTF-8") || err.contains("utf-8") || err.contains("utf8"),
        "{err}"
    );
}

/// A file of `columns`, written by avrow (Avro types derived from the Arrow ones).
fn file_of(path: &std::path::Path, columns: Vec<(&str, arrow::array::ArrayRef)>) {
    let batch = arrow::array::RecordBatch::try_from_iter(columns).unwrap();
    let mut writer = avrow::WriterBuilder::new(batch.schema())
        .build(std::fs::File::create(path).unwrap())
        .unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
}

#[tokio::test]
async fn files_whose_schemas_evolved_by_promotion_read_as_one_table() {
    use arrow::array::{
        ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array, ListArray, StringArray,
        StructArray,
    };
    use arrow::datatypes::{DataType, Field, Int32Type, Int64Type};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    // The old schema: ints, a float, a record of one int field, an array of ints.
    file_of(
        &dir.path().join("1-old.avro"),
        vec![
            ("a", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
            (
                "f",
                Arc::new(Float32Array::from(vec![0.5, 1.5])) as ArrayRef,
            ),
            (
                "s",
                Arc::new(StructArray::from(vec![(
                    Arc::new(Field::new("x", DataType::Int32, false)),
                    Arc::new(Int32Array::from(vec![10, 20])) as ArrayRef,
                )])) as ArrayRef,
            ),
            (
                "l",
                Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
                    Some(vec![Some(1)]),
                    Some(vec![]),
                ])) as ArrayRef,
            ),
        ],
    );
    // The new one: longs, a double, the record with a long and a new string field, an array
    // of longs, and a new top-level column.
    file_of(
        &dir.path().join("2-new.avro"),
        vec![
            (
                "a",
                Arc::new(Int64Array::from(vec![3_000_000_000])) as ArrayRef,
            ),
            ("b", Arc::new(StringArray::from(vec!["new"])) as ArrayRef),
            ("f", Arc::new(Float64Array::from(vec![2.25])) as ArrayRef),
            (
                "s",
                Arc::new(StructArray::from(vec![
                    (
                        Arc::new(Field::new("x", DataType::Int64, false)),
                        Arc::new(Int64Array::from(vec![1i64 << 40])) as ArrayRef,
                    ),
                    (
                        Arc::new(Field::new("y", DataType::Utf8, false)),
                        Arc::new(StringArray::from(vec!["why"])) as ArrayRef,
                    ),
                ])) as ArrayRef,
            ),
            (
                "l",
                Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
                    Some(vec![Some(5_000_000_000), Some(-1)]),
                ])) as ArrayRef,
            ),
        ],
    );
    let location = format!("{}/", dir.path().display());
    for partitions in [1, 2] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", std::path::Path::new(&location)).await;
        let schema = ctx.table("t").await.unwrap().schema().as_arrow().clone();
        let types: Vec<String> = ["a", "f", "s", "l", "b"]
            .iter()
            .map(|c| schema.field_with_name(c).unwrap().data_type().to_string())
            .collect();
        assert_eq!(
            types,
            [
                "Int64",
                "Float64",
                // The new field is nullable: the old file lacks it.
                "Struct(\"x\": non-null Int64, \"y\": Utf8)",
                "List(Int64)",
                "Utf8"
            ]
        );
        assert!(schema.field_with_name("b").unwrap().is_nullable());
        let got = text(
            &query(
                &ctx,
                "SELECT a, b, f, s['x'] AS x, s['y'] AS y, l FROM t ORDER BY a",
            )
            .await,
        );
        let want = [
            "+------------+-----+------+---------------+-----+------------------+",
            "| a          | b   | f    | x             | y   | l                |",
            "+------------+-----+------+---------------+-----+------------------+",
            "| 1          |     | 0.5  | 10            |     | [1]              |",
            "| 2          |     | 1.5  | 20            |     | []               |",
            "| 3000000000 | new | 2.25 | 1099511627776 | why | [5000000000, -1] |",
            "+------------+-----+------+---------------+-----+------------------+",
        ];
        assert_eq!(got, want.join("\n"), "{partitions} partitions");
        // A field every file has, read alone (the struct pruned to it in each file): the
        // table's type, whatever the file's (`get_field` said Int64 and got the old file's
        // Int32: an internal error).
        let got = text(
            &query(
                &ctx,
                "SELECT sum(s['x']) AS x, count(*) FILTER (WHERE s.x > 15) AS n FROM t",
            )
            .await,
        );
        assert!(got.contains("| 1099511627806 | 2 |"), "{got}");
    }
    // Types Avro does not promote between are still a conflict, named.
    file_of(
        &dir.path().join("3-bad.avro"),
        vec![("a", Arc::new(StringArray::from(vec!["x"])) as ArrayRef)],
    );
    let ctx = avrow_ctx(1);
    let sql = format!("CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{location}'");
    let err = query_err(&ctx, &sql).await;
    assert!(err.contains("'a'"), "{err}");
}

#[tokio::test]
async fn decimals_whose_precision_or_scale_grew_read_as_one_column() {
    use arrow::array::{ArrayRef, Decimal128Array};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let decimals = |values: Vec<i128>, p: u8, s: i8| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(p, s)
                .unwrap(),
        )
    };
    file_of(
        &dir.path().join("1.avro"),
        vec![("d", decimals(vec![125, -9_999_999_999], 10, 2))],
    );
    file_of(
        &dir.path().join("2.avro"),
        vec![("d", decimals(vec![123_456_789_125], 12, 3))],
    );
    let ctx = avrow_ctx(2);
    create(&ctx, "t", &dir.path().join("")).await;
    let schema = ctx.table("t").await.unwrap().schema().as_arrow().clone();
    // Eight integer digits and two decimals, or nine and three: nine and three.
    assert_eq!(
        schema.field_with_name("d").unwrap().data_type().to_string(),
        "Decimal128(12, 3)"
    );
    let got = text(&query(&ctx, "SELECT d FROM t ORDER BY d").await);
    let want = [
        "+---------------+",
        "| d             |",
        "+---------------+",
        "| -99999999.990 |",
        "| 1.250         |",
        "| 123456789.125 |",
        "+---------------+",
    ];
    assert_eq!(got, want.join("\n"));
}

#[tokio::test]
async fn timestamps_and_times_in_millis_and_micros_read_in_micros() {
    use arrow::array::{ArrayRef, Time32MillisecondArray, Time64MicrosecondArray};
    use arrow::array::{TimestampMicrosecondArray, TimestampMillisecondArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    file_of(
        &dir.path().join("millis.avro"),
        vec![
            (
                "ts",
                Arc::new(
                    TimestampMillisecondArray::from(vec![1_700_000_000_123])
                        .with_timezone("+00:00"),
                ) as ArrayRef,
            ),
            (
                "t",
                Arc::new(Time32MillisecondArray::from(vec![1_000])) as ArrayRef,
            ),
        ],
    );
    file_of(
        &dir.path().join("micros.avro"),
        vec![
            (
                "ts",
                Arc::new(
                    TimestampMicrosecondArray::from(vec![1_700_000_000_123_456])
                        .with_timezone("+00:00"),
                ) as ArrayRef,
            ),
            (
                "t",
                Arc::new(Time64MicrosecondArray::from(vec![2_000_001])) as ArrayRef,
            ),
        ],
    );
    let ctx = avrow_ctx(1);
    create(&ctx, "t", &dir.path().join("")).await;
    let got = text(&query(&ctx, "SELECT ts, t FROM t ORDER BY ts").await);
    let want = [
        "+-----------------------------+-----------------+",
        "| ts                          | t               |",
        "+-----------------------------+-----------------+",
        "| 2023-11-14T22:13:20.123Z    | 00:00:01        |",
        "| 2023-11-14T22:13:20.123456Z | 00:00:02.000001 |",
        "+-----------------------------+-----------------+",
    ];
    assert_eq!(got, want.join("\n"));
}

/// A field of a null record is null, as SQL says (DataFusion 55's `get_field` alone returned
/// the decoder's placeholder there: `s.a IS NULL` false, `s.a` 0), read whole or pruned to
/// the fields asked for, through records nested in records.
#[tokio::test]
async fn fields_of_a_null_record_are_null() {
    use arrow::array::{ArrayRef, Int64Array, StringArray, StructArray};
    use arrow::buffer::NullBuffer;
    use arrow::datatypes::{DataType, Field, Fields};
    use std::sync::Arc;

    let inner_fields = Fields::from(vec![Field::new("x", DataType::Int64, true)]);
    // Rows: inner {x: 5}, (s null), inner null, inner {x: null}.
    let inner = StructArray::new(
        inner_fields.clone(),
        vec![Arc::new(Int64Array::from(vec![Some(5), Some(7), Some(8), None])) as ArrayRef],
        Some(NullBuffer::from(vec![true, true, false, true])),
    );
    let fields = Fields::from(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, false),
        Field::new("inner", DataType::Struct(inner_fields), true),
    ]);
    let s = StructArray::new(
        fields,
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3, 4])) as ArrayRef,
            Arc::new(StringArray::from(vec!["x", "y", "z", "x"])) as ArrayRef,
            Arc::new(inner) as ArrayRef,
        ],
        Some(NullBuffer::from(vec![true, false, true, true])),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nulls.avro");
    file_of(
        &path,
        vec![
            (
                "id",
                Arc::new(Int64Array::from(vec![0, 1, 2, 3])) as ArrayRef,
            ),
            ("s", Arc::new(s) as ArrayRef),
        ],
    );
    for partitions in [1, 3] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", &path).await;
        let ask = |sql: &'static str| {
            let ctx = ctx.clone();
            async move { rows(&query(&ctx, sql).await).unwrap() }
        };
        let cell = |v: &str| vec![v.to_string()];
        assert_eq!(
            ask("SELECT count(*) FROM t WHERE s.a IS NULL").await,
            vec![cell("1")]
        );
        assert_eq!(
            ask("SELECT count(*) FROM t WHERE s.inner.x IS NULL").await,
            vec![cell("3")]
        );
        assert_eq!(
            ask("SELECT sum(s.a), count(s.b), count(s.inner.x) FROM t").await,
            vec![vec!["8".to_string(), "3".to_string(), "1".to_string()]]
        );
        let whole = ask("SELECT id, s IS NULL, s.a, s.b, s.inner.x FROM t ORDER BY id").await;
        let pruned = ask("SELECT id, s.a, s.b, s.inner.x FROM t ORDER BY id").await;
        let expected: Vec<Vec<&str>> = vec![
            vec!["0", "1", "x", "5"],
            vec!["1", "NULL", "NULL", "NULL"],
            vec!["2", "3", "z", "NULL"],
            vec!["3", "4", "x", "NULL"],
        ];
        assert_eq!(pruned, expected, "{pruned:?}");
        let whole: Vec<Vec<String>> = whole
            .into_iter()
            .map(|mut r| {
                r.remove(1);
                r
            })
            .collect();
        assert_eq!(whole, expected, "{whole:?}");
        assert_eq!(
            ask("SELECT s.b, count(*) FROM t GROUP BY s.b ORDER BY s.b NULLS FIRST").await,
            vec![
                vec!["NULL".to_string(), "1".to_string()],
                vec!["x".to_string(), "2".to_string()],
                vec!["z".to_string(), "1".to_string()],
            ]
        );
    }
}

/// A field of a null record inside a list or a map is null too: the scan adds the nulls of
/// records wherever they sit, not only in top-level columns.
#[tokio::test]
async fn fields_of_null_records_in_lists_and_maps_are_null() {
    use arrow::array::{
        Array, ArrayRef, Int64Array, ListArray, MapArray, StringArray, StructArray,
    };
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    use arrow::datatypes::{DataType, Field, Fields};
    use std::sync::Arc;

    let rec = Fields::from(vec![Field::new("x", DataType::Int64, false)]);
    // Items: {x: 1}, null (placeholder 9), {x: 3} | null (placeholder 9).
    let items = StructArray::new(
        rec.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 9, 3, 9])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true, false])),
    );
    let item = Arc::new(Field::new("item", DataType::Struct(rec.clone()), true));
    let list = ListArray::new(
        item,
        OffsetBuffer::new(vec![0, 3, 4].into()),
        Arc::new(items.clone()),
        None,
    );
    let entries = StructArray::new(
        Fields::from(vec![
            Field::new("keys", DataType::Utf8, false),
            Field::new("values", DataType::Struct(rec.clone()), true),
        ]),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c", "a"])) as ArrayRef,
            Arc::new(items) as ArrayRef,
        ],
        None,
    );
    let map = MapArray::new(
        Arc::new(Field::new("entries", entries.data_type().clone(), false)),
        OffsetBuffer::new(vec![0, 3, 4].into()),
        entries,
        None,
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested_nulls.avro");
    file_of(
        &path,
        vec![
            ("id", Arc::new(Int64Array::from(vec![0, 1])) as ArrayRef),
            ("l", Arc::new(list) as ArrayRef),
            ("m", Arc::new(map) as ArrayRef),
        ],
    );
    for partitions in [1, 2] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", &path).await;
        let got = rows(
            &query(
                &ctx,
                "SELECT id, l[1]['x'], l[2]['x'], m['b']['x'], m['a']['x'] FROM t ORDER BY id",
            )
            .await,
        )
        .unwrap();
        let want: Vec<Vec<&str>> = vec![
            vec!["0", "1", "NULL", "NULL", "1"],
            vec!["1", "NULL", "NULL", "NULL", "NULL"],
        ];
        assert_eq!(got, want, "{got:?}");
        let got = rows(
            &query(
                &ctx,
                "SELECT count(*) FROM (SELECT unnest(l) AS r FROM t) WHERE r.x IS NULL",
            )
            .await,
        )
        .unwrap();
        assert_eq!(got, vec![vec!["2".to_string()]]);
    }
}

/// Aggregates over a `UNION ALL` (and a join) of two tables whose writer schemas differ
/// only in what Arrow does not see (the record's name): DataFusion's planner refused the
/// `avro.schema` metadata the two scans carry as an internal error.
#[tokio::test]
async fn aggregates_over_tables_of_different_writer_schemas() {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    for (name, record, ids) in [("a", "A", vec![1, 2, 3]), ("b", "ns.B", vec![3, 4])] {
        let n = ids.len();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
            ("s", Arc::new(StringArray::from(vec![name; n])) as ArrayRef),
        ])
        .unwrap();
        let path = dir.path().join(format!("{name}.avro"));
        let mut writer = avrow::WriterBuilder::new(batch.schema())
            .with_record_name(record)
            .build(std::fs::File::create(path).unwrap())
            .unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
    }
    let ctx = avrow_ctx(2);
    create(&ctx, "a", &dir.path().join("a.avro")).await;
    create(&ctx, "b", &dir.path().join("b.avro")).await;
    let ask = |sql: &'static str| {
        let ctx = ctx.clone();
        async move { rows(&query(&ctx, sql).await).unwrap() }
    };
    let cells = |r: &[&[&str]]| -> Vec<Vec<String>> {
        r.iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    };
    assert_eq!(
        ask("SELECT count(*) FROM (SELECT * FROM a UNION ALL SELECT * FROM b)").await,
        cells(&[&["5"]])
    );
    assert_eq!(
        ask(
            "SELECT s, count(*), sum(id) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) \
             GROUP BY s ORDER BY s"
        )
        .await,
        cells(&[&["a", "3", "6"], &["b", "2", "7"]])
    );
    assert_eq!(
        ask("SELECT count(*) FROM a JOIN b ON a.id = b.id").await,
        cells(&[&["1"]])
    );
    // The same through the read helper, on a context where `register` was not called.
    let plain = datafusion::prelude::SessionContext::new();
    plain
        .register_avrow(
            "a",
            dir.path().join("a.avro").to_str().unwrap(),
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
    plain
        .register_avrow(
            "b",
            dir.path().join("b.avro").to_str().unwrap(),
            AvrowReadOptions::default(),
        )
        .await
        .unwrap();
    let got = rows(
        &query(
            &plain,
            "SELECT count(*) FROM (SELECT id FROM a UNION ALL SELECT id FROM b)",
        )
        .await,
    )
    .unwrap();
    assert_eq!(got, cells(&[&["5"]]));
}

/// Files whose schemas cannot be one table: the error names two of them (it named only the
/// table's location).
#[tokio::test]
async fn files_that_do_not_merge_are_named() {
    use arrow::array::{ArrayRef, Int32Array, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    file_of(
        &dir.path().join("a1.avro"),
        vec![("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef)],
    );
    file_of(
        &dir.path().join("a2.avro"),
        vec![("id", Arc::new(Int32Array::from(vec![2])) as ArrayRef)],
    );
    file_of(
        &dir.path().join("a3.avro"),
        vec![("id", Arc::new(StringArray::from(vec!["x"])) as ArrayRef)],
    );
    let ctx = avrow_ctx(1);
    let err = query_err(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS AVRO LOCATION '{}/'",
            dir.path().display()
        ),
    )
    .await;
    assert!(
        (err.contains("a1.avro") || err.contains("a2.avro"))
            && err.contains("a3.avro")
            && err.contains("do not merge"),
        "{err}"
    );
    // Local files by their whole path (an object store's paths have no leading `/`).
    let a3 = dir.path().join("a3.avro");
    assert!(err.contains(&a3.display().to_string()), "{err}");
    assert!(err.contains("id"), "{err}");
}

/// Map values that are records of another shape in each file (a field added, an int now a
/// long) read as one table: DataFusion's adapter casts records by name through lists but not
/// through maps ("Cannot cast column 'm'"), so the scan casts those maps' entries first.
#[tokio::test]
async fn maps_of_records_that_evolved_read_as_one_table() {
    use arrow::array::{ArrayRef, Int32Array, Int64Array, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let old = StructArray::from(vec![(
        Arc::new(Field::new("p", DataType::Int32, false)),
        Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
    )]);
    file_of(
        &dir.path().join("1.avro"),
        vec![
            ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
            ("m", map_of(Arc::new(old), vec!["a", "b"], vec![0, 2])),
        ],
    );
    let new = StructArray::from(vec![
        (
            Arc::new(Field::new("p", DataType::Int64, false)),
            Arc::new(Int64Array::from(vec![1i64 << 40])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("q", DataType::Utf8, false)),
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
        ),
    ]);
    file_of(
        &dir.path().join("2.avro"),
        vec![
            ("id", Arc::new(Int64Array::from(vec![2])) as ArrayRef),
            ("m", map_of(Arc::new(new), vec!["a"], vec![0, 1])),
        ],
    );
    let location = format!("{}/", dir.path().display());
    for partitions in [1, 2] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", std::path::Path::new(&location)).await;
        let got = rows(
            &query(
                &ctx,
                "SELECT id, m['a']['p'], m['a']['q'], m['b']['p'], cardinality(m) FROM t ORDER BY id",
            )
            .await,
        )
        .unwrap();
        let want: Vec<Vec<&str>> = vec![
            vec!["1", "1", "NULL", "2", "2"],
            vec!["2", "1099511627776", "x", "NULL", "1"],
        ];
        assert_eq!(got, want, "{partitions} partitions");
        let whole = query(&ctx, "SELECT m FROM t ORDER BY id").await;
        assert_eq!(whole.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    }
}

/// Records inside records and maps inside map values that differ between files, used
/// through `get_field`: a record at the end of a path takes the table's whole type (fields
/// another file lacks null), a column read whole in one file (which lacks a field the query
/// names) and cut in another still answers, and a map of maps of records casts at every
/// level.
#[tokio::test]
async fn nested_records_and_maps_of_maps_that_evolved_answer_through_get_field() {
    use arrow::array::{Array, ArrayRef, Int64Array, StringArray, StructArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    let record = |fields: Vec<(&str, ArrayRef)>| -> ArrayRef {
        Arc::new(StructArray::from(
            fields
                .into_iter()
                .map(|(n, a)| (Arc::new(Field::new(n, a.data_type().clone(), false)), a))
                .collect::<Vec<_>>(),
        ))
    };
    let long = |v: i64| Arc::new(Int64Array::from(vec![v])) as ArrayRef;
    let map_of = |values: ArrayRef, key: &str| map_of(values, vec![key], vec![0, 1]);
    let dir = tempfile::tempdir().unwrap();
    file_of(
        &dir.path().join("1.avro"),
        vec![
            ("id", long(1)),
            ("s", record(vec![("a", record(vec![("x", long(10))]))])),
            ("u", record(vec![("q", long(11))])),
            (
                "mm",
                map_of(map_of(record(vec![("p", long(12))]), "in"), "out"),
            ),
        ],
    );
    file_of(
        &dir.path().join("2.avro"),
        vec![
            ("id", long(2)),
            (
                "s",
                record(vec![
                    (
                        "a",
                        record(vec![
                            ("x", long(20)),
                            ("y", Arc::new(StringArray::from(vec!["why"])) as ArrayRef),
                        ]),
                    ),
                    ("p", long(21)),
                ]),
            ),
            ("u", record(vec![("q", long(22))])),
            (
                "mm",
                map_of(
                    map_of(
                        record(vec![
                            ("p", long(23)),
                            ("r", Arc::new(StringArray::from(vec!["r"])) as ArrayRef),
                        ]),
                        "in",
                    ),
                    "out",
                ),
            ),
        ],
    );
    let location = format!("{}/", dir.path().display());
    for partitions in [1, 2] {
        let ctx = avrow_ctx(partitions);
        create(&ctx, "t", std::path::Path::new(&location)).await;
        for (q, want) in [
            (
                "SELECT id, s['a']['y'] FROM t ORDER BY id",
                vec![vec!["1", "NULL"], vec!["2", "why"]],
            ),
            (
                "SELECT id, s['p'], u['q'] FROM t ORDER BY id",
                vec![vec!["1", "NULL", "11"], vec!["2", "21", "22"]],
            ),
            (
                "SELECT id, mm['out']['in']['p'], mm['out']['in']['r'] FROM t ORDER BY id",
                vec![vec!["1", "12", "NULL"], vec!["2", "23", "r"]],
            ),
        ] {
            let got = rows(&query(&ctx, q).await).unwrap();
            let want: Vec<Vec<String>> = want
                .into_iter()
                .map(|r| r.into_iter().map(String::from).collect())
                .collect();
            assert_eq!(got, want, "{q}, {partitions} partitions");
        }
        let got = text(&query(&ctx, "SELECT s['a'] AS a FROM t ORDER BY id").await);
        assert!(
            got.contains("{x: 10, y: }") && got.contains("{x: 20, y: why}"),
            "{got}"
        );
    }
}

/// A directory of many small files of two writer schemas (a field promoted from int to long,
/// a field added), as a stream sink leaves them: schema inference reads the files' headers
/// concurrently and turns each writer schema into Arrow once; the answers are every file's,
/// at any partitioning.
#[tokio::test]
async fn many_small_files_of_two_schemas_answer_as_one_table() {
    use arrow::array::{ArrayRef, Float64Array, Int32Array, Int64Array, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let (mut rows_all, mut sum_a, mut with_c) = (0i64, 0i64, 0i64);
    for i in 0..150i64 {
        let n = 1 + (i % 7) as usize;
        let a: Vec<i64> = (0..n as i64).map(|k| i * 10 + k).collect();
        let b: Vec<String> = a.iter().map(|v| format!("s{}", v % 3)).collect();
        rows_all += n as i64;
        sum_a += a.iter().sum::<i64>();
        let mut columns: Vec<(&str, ArrayRef)> = Vec::new();
        if i % 3 == 0 {
            let narrow: Vec<i32> = a.iter().map(|&v| v as i32).collect();
            columns.push(("a", Arc::new(Int32Array::from(narrow))));
            columns.push(("b", Arc::new(StringArray::from(b))));
        } else {
            with_c += n as i64;
            columns.push(("a", Arc::new(Int64Array::from(a))));
            columns.push(("b", Arc::new(StringArray::from(b))));
            columns.push(("c", Arc::new(Float64Array::from(vec![0.5; n]))));
        }
        file_of(&dir.path().join(format!("part-{i:04}.avro")), columns);
    }
    for partitions in [1, 2, 5] {
        let ctx = avrow_ctx(partitions);
        // A trailing separator: the location is a directory.
        create(&ctx, "t", &dir.path().join("")).await;
        let got = rows(
            &query(
                &ctx,
                "SELECT count(*), sum(a), count(c), sum(c), count(DISTINCT b) FROM t",
            )
            .await,
        )
        .unwrap();
        let want = vec![vec![
            rows_all.to_string(),
            sum_a.to_string(),
            with_c.to_string(),
            (with_c as f64 * 0.5).to_string(),
            "3".to_string(),
        ]];
        assert_eq!(got, want, "{partitions} partitions");
        // A limit stops the files decoded in place.
        let limited = rows(&query(&ctx, "SELECT a FROM t LIMIT 5").await).unwrap();
        assert_eq!(limited.len(), 5, "{partitions} partitions");
    }
    // One file cut short among them: the scan's error names it, with its block and offset.
    let damaged = dir.path().join("part-0007.avro");
    let bytes = std::fs::read(&damaged).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() - 9]).unwrap();
    let ctx = avrow_ctx(2);
    create(&ctx, "t", &dir.path().join("")).await;
    let err = query_err(&ctx, "SELECT sum(a) FROM t").await;
    assert!(
        err.contains("part-0007.avro") && err.contains("block") && err.contains("byte"),
        "{err}"
    );
}
