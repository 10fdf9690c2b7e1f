//! Hostile record data: counts and lengths beyond the data, overlong varints, out-of-range
//! ints, enum indexes and union branches, and the bulk and strided paths' checks.

use super::*;

#[test]
fn array_of_nulls_with_count_2_62_is_bounded() {
    let schema = rec(r#"{"name":"a","type":{"type":"array","items":"null"}}"#);
    let mut d = varint(1 << 62);
    d.push(0);
    let f = file(&schema, &[block(1, &d)]);
    expect_err("array of 2^62 nulls", &f, &["field a"]);
    // the same in negative-count form with a byte size
    let mut d = varint(-(1 << 62));
    long(&mut d, 0);
    d.push(0);
    let f = file(&schema, &[block(1, &d)]);
    expect_err("array of -2^62 nulls with byte size 0", &f, &["field a"]);
}

#[test]
fn array_of_empty_records_with_huge_count_is_bounded() {
    let schema = rec(
        r#"{"name":"a","type":{"type":"array","items":{"type":"record","name":"E","fields":[]}}}"#,
    );
    let mut d = varint(1 << 61);
    d.push(0);
    let f = file(&schema, &[block(1, &d)]);
    expect_err("array of 2^61 empty records", &f, &["field a"]);
}

#[test]
fn top_level_nulls_with_huge_block_count_are_bounded() {
    // Every record of schema "null" is zero bytes: a block of 2^62 of them is hostile.
    let f = file("\"null\"", &[block(1 << 62, &[])]);
    expect_err("block of 2^62 null records", &f, &[]);
}

#[test]
fn collection_counts_beyond_the_data() {
    let arr = rec(r#"{"name":"a","type":{"type":"array","items":"long"}}"#);
    let mut d = varint(1 << 40);
    d.extend_from_slice(&[2, 4, 6, 0]);
    expect_err(
        "array of 2^40 longs in 4 bytes",
        &file(&arr, &[block(1, &d)]),
        &["field a"],
    );
    // 2^62 doubles: the bytes they need overflow 64 bits.
    let doubles = rec(r#"{"name":"d","type":{"type":"array","items":"double"}}"#);
    let mut d = varint(1 << 62);
    d.extend_from_slice(&[0; 16]);
    d.push(0);
    expect_err(
        "array of 2^62 doubles in 16 bytes",
        &file(&doubles, &[block(1, &d)]),
        &["field d"],
    );
    let map = rec(r#"{"name":"m","type":{"type":"map","values":"string"}}"#);
    let mut d = varint(1 << 62);
    string(&mut d, b"k");
    string(&mut d, b"v");
    d.push(0);
    expect_err(
        "map of 2^62 entries",
        &file(&map, &[block(1, &d)]),
        &["field m"],
    );
    // negative count with a huge byte size
    let mut d = varint(-(1 << 30));
    long(&mut d, 1 << 60);
    d.extend_from_slice(&[2, 4, 0]);
    expect_err(
        "array block size 2^60",
        &file(&arr, &[block(1, &d)]),
        &["field a"],
    );
    // negative count with a negative byte size
    let mut d = varint(-2);
    long(&mut d, -5);
    d.extend_from_slice(&[2, 4, 0]);
    expect_err(
        "array block size -5",
        &file(&arr, &[block(1, &d)]),
        &["field a"],
    );
}

#[test]
fn string_and_bytes_lengths_beyond_the_data() {
    let schema = rec(r#"{"name":"id","type":"int"},{"name":"s","type":"string"}"#);
    for len in [1i64 << 60, 1 << 31, 100, -1, i64::MIN] {
        let mut d = varint(7);
        long(&mut d, len);
        d.extend_from_slice(b"abc");
        let m = expect_err(
            &format!("string length {len}"),
            &file(&schema, &[block(1, &d)]),
            &["field s"],
        );
        assert_offset(&format!("string length {len}"), &m);
    }
    let schema = rec(r#"{"name":"b","type":"bytes"}"#);
    let mut d = varint(-3);
    d.extend_from_slice(b"abc");
    expect_err(
        "bytes length -3",
        &file(&schema, &[block(1, &d)]),
        &["field b"],
    );
}

#[test]
fn overlong_varints() {
    let schema = long_rec();
    // 11 bytes
    let mut d = vec![0xff; 10];
    d.push(0x01);
    expect_err(
        "11-byte varint",
        &file(&schema, &[block(1, &d)]),
        &["field x"],
    );
    // 10 bytes whose last carries bits beyond 64
    let mut d = vec![0xff; 9];
    d.push(0x7f);
    expect_err(
        "10-byte varint over 64 bits",
        &file(&schema, &[block(1, &d)]),
        &["field x"],
    );
    // a varint that never ends
    let d = vec![0x80; 40];
    expect_err(
        "unterminated varint",
        &file(&schema, &[block(1, &d)]),
        &["field x"],
    );
    // in the block count itself
    let mut f = header(&schema);
    f.extend_from_slice(&[0xff; 11]);
    f.push(0x01);
    f.extend_from_slice(&varint(5));
    f.extend_from_slice(&SYNC);
    expect_err("11-byte block count", &f, &[]);
}

#[test]
fn int_outside_i32() {
    let schema = rec(r#"{"name":"a","type":"long"},{"name":"i","type":"int"}"#);
    for v in [1i64 << 31, -(1i64 << 31) - 1, i64::MAX] {
        let mut d = varint(1);
        long(&mut d, v);
        expect_err(
            &format!("int {v}"),
            &file(&schema, &[block(1, &d)]),
            &["field i"],
        );
    }
    // Also as a date, and as a string length is covered above.
    let schema = rec(r#"{"name":"d","type":{"type":"int","logicalType":"date"}}"#);
    expect_err(
        "date 2^31",
        &file(&schema, &[block(1, &varint(1 << 31))]),
        &["field d"],
    );
}

#[test]
fn enum_index_out_of_range() {
    let schema = rec(r#"{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}"#);
    for idx in [2i64, -1, 1 << 40] {
        expect_err(
            &format!("enum index {idx}"),
            &file(&schema, &[block(1, &varint(idx))]),
            &["field e"],
        );
    }
}

#[test]
fn union_branch_out_of_range() {
    for (ty, field) in [
        (r#"["int","string"]"#, "u"),
        (r#"["null","int"]"#, "u"),
        (r#"["int","null"]"#, "u"),
    ] {
        let schema = rec(&format!(r#"{{"name":"u","type":{ty}}}"#));
        for idx in [2i64, -1, 1 << 33] {
            let mut d = varint(idx);
            d.push(2);
            expect_err(
                &format!("union {ty} branch {idx}"),
                &file(&schema, &[block(1, &d)]),
                &[format!("field {field}").as_str()],
            );
        }
    }
}

/// A block may declare `i32::MAX` records of zero bytes in a few bytes (fuzz finding 3: a
/// 451-byte file read one row per batch committed 23 GB). Every such row is the same, so the
/// reader hands out one batch again and again instead of holding them all: consecutive full
/// batches share their arrays, and every row is delivered, on one thread and on two.
#[test]
fn blocks_of_zero_byte_records_share_one_batch() {
    let schema = rec(
        r#"{"name":"n","type":"null"},{"name":"e","type":{"type":"record","name":"E","fields":[]}},
           {"name":"f","type":{"type":"fixed","name":"F0","size":0}}"#,
    );
    let count = i64::from(i32::MAX);
    // Also after a block that leaves a partial batch (fuzz finding 4: then every batch of the
    // large block was decoded and queued on its own).
    for (before, bytes) in [
        (0, file(&schema, &[block(count, &[]), block(5, &[])])),
        (
            3,
            file(&schema, &[block(3, &[]), block(count, &[]), block(5, &[])]),
        ),
    ] {
        for threads in [1, 2] {
            let opts = Opts {
                threads: Some(threads),
                ..Opts::batch(8192)
            };
            let reader = crate::harness::open(&bytes, &opts).expect("a valid file");
            let mut rows = 0u64;
            let mut previous: Option<arrow_array::RecordBatch> = None;
            let mut shared = 0u64;
            let start = Instant::now();
            for batch in reader {
                let batch = batch.expect("zero-byte records decode");
                if let Some(p) = &previous {
                    if p.num_rows() == batch.num_rows()
                        && std::sync::Arc::ptr_eq(p.column(0), batch.column(0))
                    {
                        shared += 1;
                    }
                }
                rows += batch.num_rows() as u64;
                previous = Some(batch);
            }
            assert_eq!(rows, before + count as u64 + 5, "threads {threads}");
            // All but the first full batch and the partial ones at the end are the first again.
            assert!(
                shared >= count as u64 / 8192 - 3,
                "threads {threads}: {shared} shared"
            );
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "threads {threads}"
            );
        }
    }
}

/// Records of varints only (int, long, enum, boolean) are decoded in bulk, 1024 at a time,
/// and dealt out to the columns: the values equal what was written, with batches and blocks
/// that end anywhere, and a bad value in any chunk is found and named at its record.
#[test]
fn records_of_varints_decode_in_bulk_and_name_bad_values() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    let schema = rec(r#"{"name":"i","type":"int"},{"name":"l","type":"long"},
           {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
           {"name":"b","type":"boolean"}"#);
    let row = |d: &mut Vec<u8>, r: i64| {
        long(d, (r * 7919) % 70_000 - 35_000);
        long(d, r * r * 1_000_003 - (1 << 40));
        long(d, r % 3);
        d.push(u8::from(r % 5 == 0));
    };
    let rows = 5000i64;
    let mut data = Vec::new();
    (0..rows).for_each(|r| row(&mut data, r));
    for batch in [1000, 4096, 8192] {
        let decoded = read_avrow(&file(&schema, &[block(rows, &data)]), &Opts::batch(batch))
            .expect("a valid file");
        let mut r = 0i64;
        for b in &decoded.batches {
            let i = b.column(0).as_primitive::<Int32Type>();
            let l = b.column(1).as_primitive::<Int64Type>();
            let e = b.column(2).as_dictionary::<Int32Type>();
            let flag = b.column(3).as_boolean();
            for k in 0..b.num_rows() {
                assert_eq!(
                    i64::from(i.value(k)),
                    (r * 7919) % 70_000 - 35_000,
                    "row {r}"
                );
                assert_eq!(l.value(k), r * r * 1_000_003 - (1 << 40), "row {r}");
                assert_eq!(i64::from(e.keys().value(k)), r % 3, "row {r}");
                assert_eq!(flag.value(k), r % 5 == 0, "row {r}");
                r += 1;
            }
        }
        assert_eq!(r, rows);
    }
    // A bad value in the second chunk of 1024 records: an int out of range, an enum index
    // out of range, a boolean byte of 2, a long cut short by the end of the block.
    let bad_row = 1500i64;
    for (what, field, bad) in [
        ("int", "field i", {
            let mut d = Vec::new();
            long(&mut d, 1 << 40);
            long(&mut d, 1);
            long(&mut d, 0);
            d.push(0);
            d
        }),
        ("enum", "field e", {
            let mut d = Vec::new();
            long(&mut d, 1);
            long(&mut d, 1);
            long(&mut d, 3);
            d.push(0);
            d
        }),
        ("boolean", "field b", {
            let mut d = Vec::new();
            long(&mut d, 1);
            long(&mut d, 1);
            long(&mut d, 0);
            d.push(2);
            d
        }),
    ] {
        let mut d = Vec::new();
        (0..bad_row).for_each(|r| row(&mut d, r));
        d.extend_from_slice(&bad);
        (bad_row + 1..rows).for_each(|r| row(&mut d, r));
        expect_err(
            what,
            &file(&schema, &[block(rows, &d)]),
            &[field, &format!("record {bad_row}")],
        );
    }
    let mut d = Vec::new();
    (0..bad_row).for_each(|r| row(&mut d, r));
    long(&mut d, 1);
    d.push(0x80);
    expect_err(
        "truncated long",
        &file(&schema, &[block(bad_row + 1, &d)]),
        &["field l", &format!("record {bad_row}")],
    );
}

/// Records of fixed-size fields only (float, double, fixed) are copied out with strides: the
/// values equal what was written, and a block cut short is found and named at its record.
#[test]
fn records_of_fixed_size_fields_decode_by_strides() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type};
    let schema = rec(r#"{"name":"d","type":"double"},{"name":"f","type":"float"},
           {"name":"x","type":{"type":"fixed","name":"X","size":3}}"#);
    let row = |d: &mut Vec<u8>, r: u32| {
        d.extend_from_slice(&(f64::from(r) * 0.5 - 7.0).to_le_bytes());
        d.extend_from_slice(&(r as f32 * 1.25).to_le_bytes());
        d.extend_from_slice(&r.to_le_bytes()[..3]);
    };
    let rows = 3000u32;
    let mut data = Vec::new();
    (0..rows).for_each(|r| row(&mut data, r));
    let decoded = read_avrow(
        &file(&schema, &[block(i64::from(rows), &data)]),
        &Opts::batch(1000),
    )
    .expect("a valid file");
    let mut r = 0u32;
    for b in &decoded.batches {
        let d = b.column(0).as_primitive::<Float64Type>();
        let f = b.column(1).as_primitive::<Float32Type>();
        let x = b.column(2).as_fixed_size_binary();
        for k in 0..b.num_rows() {
            assert_eq!(d.value(k), f64::from(r) * 0.5 - 7.0);
            assert_eq!(f.value(k), r as f32 * 1.25);
            assert_eq!(x.value(k), &r.to_le_bytes()[..3]);
            r += 1;
        }
    }
    assert_eq!(r, rows);
    // The last record lacks its last byte: records of a fixed size, the block's own check
    // finds it before any is decoded.
    data.pop();
    expect_err(
        "fixed-size records cut short",
        &file(&schema, &[block(i64::from(rows), &data)]),
        &["cannot hold 3000 records of at least 15 bytes"],
    );
}

#[test]
fn bad_uuid_fixed_and_decimal_values_name_their_field() {
    // The fast path reads uuid strings, fixed and decimals inline; a bad value in the third
    // record is found again value by value and named.
    let schema = rec(r#"{"name":"id","type":"long"},
           {"name":"u","type":{"type":"string","logicalType":"uuid"}},
           {"name":"f","type":{"type":"fixed","name":"F3","size":3}},
           {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}"#);
    let good = |d: &mut Vec<u8>, uuid: &[u8]| {
        long(d, 1);
        string(d, uuid);
        d.extend_from_slice(b"abc");
        string(d, &[0x01, 0x00]);
    };
    let uuid = b"01234567-89ab-CDEF-0123-456789abcdef";
    let mut d = Vec::new();
    good(&mut d, uuid);
    good(&mut d, uuid);
    good(&mut d, b"01234567-89ab-cdef-0123-456789abcdeg");
    expect_err(
        "uuid",
        &file(&schema, &[block(3, &d)]),
        &["field u", "record 2"],
    );
    // A decimal of 17 bytes does not fit Decimal128.
    let mut d = Vec::new();
    good(&mut d, uuid);
    long(&mut d, 1);
    string(&mut d, uuid);
    d.extend_from_slice(b"abc");
    string(&mut d, &[0x7f; 17]);
    expect_err(
        "decimal",
        &file(&schema, &[block(2, &d)]),
        &["field d", "record 1"],
    );
    // A fixed cut short by the end of the block.
    let mut d = Vec::new();
    good(&mut d, uuid);
    long(&mut d, 1);
    string(&mut d, uuid);
    d.extend_from_slice(b"ab");
    expect_err("fixed", &file(&schema, &[block(2, &d)]), &["field f"]);
}

#[test]
fn nested_field_paths_in_errors() {
    // The bad value sits in rec.inner.items[1].e: the message names the path's leaf and parent.
    let schema = rec(
        r#"{"name":"inner","type":{"type":"record","name":"In","fields":[
            {"name":"items","type":{"type":"array","items":{"type":"record","name":"It","fields":[
                {"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}}]}}}]}}"#,
    );
    let mut d = varint(2);
    d.push(0); // e = A
    long(&mut d, 5); // e = 5: out of range
    d.push(0);
    let m = expect_err(
        "nested enum index",
        &file(&schema, &[block(1, &d)]),
        &["field inner.items[1].e"],
    );
    assert_block("nested enum index", &m, 0);
}

#[test]
fn positions_in_arrays_and_maps_are_in_field_paths() {
    // lines: array<record{sku: string, qty: int}>; the third line (index 2) of the second
    // array block holds a bad string, the array's items being split into blocks of 2 and 3.
    let schema = rec(
        r#"{"name":"lines","type":{"type":"array","items":{"type":"record","name":"L","fields":[
            {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
           {"name":"tags","type":{"type":"map","values":{"type":"array","items":"long"}}}"#,
    );
    let line = |d: &mut Vec<u8>, sku: &[u8]| {
        string(d, sku);
        long(d, 1);
    };
    let mut d = Vec::new();
    long(&mut d, 2);
    line(&mut d, b"a");
    line(&mut d, b"b");
    long(&mut d, 3);
    line(&mut d, b"c");
    line(&mut d, b"\xff\xfe"); // lines[3]: not UTF-8
    line(&mut d, b"e");
    long(&mut d, 0);
    long(&mut d, 0); // tags: empty
    let m = expect_err(
        "bad string in an array of records",
        &file(&schema, &[block(1, &d)]),
        &["field lines[3].sku"],
    );
    assert_block("bad string in an array of records", &m, 0);

    // A map entry whose array value ends early: the entry's position in the map.
    let mut d = Vec::new();
    long(&mut d, 0); // lines: empty
    long(&mut d, 2);
    string(&mut d, b"x");
    long(&mut d, 1);
    long(&mut d, 7);
    long(&mut d, 0);
    string(&mut d, b"y");
    long(&mut d, 1); // one item announced, then the data ends
    let m = expect_err(
        "truncated map value",
        &file(&schema, &[block(1, &d)]),
        &["field tags[1]"],
    );
    assert_block("truncated map value", &m, 0);
}

#[test]
fn invalid_boolean_byte() {
    let schema = rec(r#"{"name":"b","type":"boolean"}"#);
    expect_err(
        "boolean byte 2",
        &file(&schema, &[block(2, &[1, 2])]),
        &["field b"],
    );
}

#[test]
fn invalid_utf8_string() {
    let schema = rec(r#"{"name":"s","type":"string"}"#);
    let mut d = Vec::new();
    string(&mut d, b"ok");
    string(&mut d, b"\xff\xfe bad");
    expect_err(
        "invalid UTF-8",
        &file(&schema, &[block(2, &d)]),
        &["field s"],
    );
    // also as a map key
    let schema = rec(r#"{"name":"m","type":{"type":"map","values":"int"}}"#);
    let mut d = varint(1);
    string(&mut d, b"\xc3\x28");
    d.push(2);
    d.push(0);
    expect_err(
        "invalid UTF-8 map key",
        &file(&schema, &[block(1, &d)]),
        &[],
    );
}

#[test]
fn invalid_uuid_string() {
    let schema = rec(r#"{"name":"u","type":{"type":"string","logicalType":"uuid"}}"#);
    for bad in [
        &b"not-a-uuid"[..],
        b"123e4567-e89b-12d3-a456-42661417400",
        b"",
    ] {
        let mut d = Vec::new();
        string(&mut d, b"123e4567-e89b-12d3-a456-426614174000");
        string(&mut d, bad);
        expect_err(
            &format!("uuid {:?}", String::from_utf8_lossy(bad)),
            &file(&schema, &[block(2, &d)]),
            &["field u"],
        );
    }
}

#[test]
fn duration_months_or_days_beyond_i32() {
    let schema = rec(
        r#"{"name":"d","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}}"#,
    );
    for (m, days) in [(1u32 << 31, 0u32), (0, 1 << 31), (u32::MAX, u32::MAX)] {
        let mut d = Vec::new();
        d.extend_from_slice(&m.to_le_bytes());
        d.extend_from_slice(&days.to_le_bytes());
        d.extend_from_slice(&5u32.to_le_bytes());
        expect_err(
            &format!("duration {m} months {days} days"),
            &file(&schema, &[block(1, &d)]),
            &["field d"],
        );
    }
}

#[test]
fn recursion_deeper_than_the_limit_is_an_error() {
    let schema = r#"{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}"#;
    // 50 nested nodes, hand-encoded: (v, branch 1) * 49, then (v, branch 0)
    let mut d = Vec::new();
    for i in 0..49 {
        long(&mut d, i);
        long(&mut d, 1);
    }
    long(&mut d, 49);
    long(&mut d, 0);
    let f = file(schema, &[block(1, &d)]);
    let opts = Opts {
        max_depth: Some(4),
        ..Opts::default()
    };
    expect_err_with("50 nodes with depth 4", &f, &["field next"], &opts);
    expect_err_with(
        "50 nodes with the default depth",
        &f,
        &["field next"],
        &Opts::default(),
    );
}

/// A million nulls of a 1 MiB `fixed` in one array: 1 MB of input for a terabyte of Arrow
/// slots. Refused before it allocates, naming the field.
#[test]
fn array_of_nulls_of_a_large_fixed_is_refused_before_it_allocates() {
    let schema = rec(r#"{"name":"a","type":{"type":"array","items":["null",
        {"type":"fixed","name":"big","size":1048576}]}}"#);
    let mut d = varint(1_000_000);
    d.extend(std::iter::repeat_n(0u8, 1_000_000));
    d.push(0);
    let f = file(&schema, &[block(1, &d)]);
    expect_err(
        "a million nulls of a 1 MiB fixed",
        &f,
        &["field a", "2 GiB", "whatever the batch size"],
    );
}

/// Rows of a nullable 1 MiB `fixed`: the reader's batches hold at most 2047 of them, whatever
/// batch size was asked for, and it says so (`Reader::batch_size`); every row is read.
#[test]
fn rows_of_a_large_fixed_are_batched_under_two_gib() {
    let schema = rec(r#"{"name":"a","type":["null",
        {"type":"fixed","name":"big","size":1048576}]}"#);
    let f = file(&schema, &[block(3, &[0, 0, 0])]);
    for threads in [1, 2] {
        let reader = avrow::ReaderBuilder::new()
            .with_batch_size(100_000)
            .with_threads(threads)
            .read_bytes(f.clone())
            .unwrap();
        assert_eq!(reader.batch_size(), 2047);
        let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 3);
    }
}
