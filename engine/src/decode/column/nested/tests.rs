//! Tests of the nested columns: unions assembled from their type ids, and array and map
//! blocks on the fast path and again value by value.

use crate::decode::probe;
use crate::decode::test_encode::{blocks, branch as write_branch, string, within, zigzag, Rng};
use crate::decode::{DecodeOptions, DecodePlan};
use crate::error::DecodeErrorKind;
use crate::schema::Schema;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, StringArray, UnionArray};
use arrow_buffer::ScalarBuffer;

/// The union a decoder assembles (offsets derived from the type ids, `new_unchecked`)
/// equals the one `try_new` validates from the same values, in batches that end anywhere:
/// unions of three branches and of six (every kind the general read has inline), and a batch
/// of 70 000 values (more than 16 bits count).
#[test]
fn assembled_unions_equal_validated_ones() {
    for (union, rows, batch_sizes) in [
        (r#"["null","long","string"]"#, 1000, &[1, 7, 64, 1000][..]),
        (
            r#"["null","long","string","double","boolean","int"]"#,
            1000,
            &[1, 7, 1000][..],
        ),
        (r#"["null","long","string"]"#, 70_000, &[70_000][..]),
    ] {
        check_assembled_union(union, rows, batch_sizes);
    }
}

/// [`assembled_unions_equal_validated_ones`] for one union of `null`, `long`, `string` and
/// then `double`, `boolean`, `int`.
fn check_assembled_union(union: &str, rows: usize, batch_sizes: &[usize]) {
    let schema = Schema::parse(&format!(
        r#"{{"type":"record","name":"r","fields":[{{"name":"u","type":{union}}}]}}"#
    ))
    .unwrap();
    let n_branches = union.matches(',').count() + 1;
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    let mut block = Vec::new();
    let mut branches = Vec::new();
    for i in 0..rows as i64 {
        let b = rng.below(n_branches as u64) as i64;
        zigzag(b, &mut block);
        match b {
            1 | 5 => zigzag(i * 7 - 300, &mut block),
            2 => {
                let s = format!("s{i}");
                zigzag(s.len() as i64, &mut block);
                block.extend_from_slice(s.as_bytes());
            }
            3 => block.extend_from_slice(&(i as f64 / 3.0).to_le_bytes()),
            4 => block.push((i % 2) as u8),
            _ => {}
        }
        branches.push(b);
    }
    for &batch_size in batch_sizes {
        let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let mut batches = decoder.decode_block(&block, rows as u64).unwrap();
        batches.extend(decoder.flush().unwrap());
        let mut row = 0usize;
        for batch in &batches {
            let got = batch
                .column(0)
                .as_any()
                .downcast_ref::<UnionArray>()
                .unwrap();
            let mine = &branches[row..row + batch.num_rows()];
            let mut counts = vec![0i32; n_branches];
            let offsets: Vec<i32> = mine
                .iter()
                .map(|&b| {
                    counts[b as usize] += 1;
                    counts[b as usize] - 1
                })
                .collect();
            let children: Vec<ArrayRef> = (0..n_branches)
                .map(|b| got.child(b as i8).clone())
                .collect();
            let fields = match got.data_type() {
                arrow_schema::DataType::Union(fields, _) => fields.clone(),
                other => panic!("not a union: {other}"),
            };
            let expected = UnionArray::try_new(
                fields,
                ScalarBuffer::from(mine.iter().map(|&b| b as i8).collect::<Vec<_>>()),
                Some(ScalarBuffer::from(offsets)),
                children,
            )
            .unwrap();
            assert_eq!(
                got.to_data(),
                expected.to_data(),
                "{union}, batch size {batch_size}, rows from {row}"
            );
            for (b, &count) in counts.iter().enumerate() {
                assert_eq!(
                    got.child(b as i8).len() as i32,
                    count,
                    "{union}, branch {b}"
                );
            }
            let longs = got.child(1).as_any().downcast_ref::<Int64Array>().unwrap();
            let strings = got.child(2).as_any().downcast_ref::<StringArray>().unwrap();
            assert_eq!(longs.len() as i32, counts[1]);
            assert_eq!(strings.len() as i32, counts[2]);
            row += batch.num_rows();
        }
        assert_eq!(row, rows, "{union}");
    }
}

/// One value of [`ITEMS`]' `u` items: `["null", "string", "long"]`.
#[derive(Debug, Clone, PartialEq)]
enum U {
    Null,
    S(String),
    L(i64),
}

const ITEMS: &str = r#"{"type":"record","name":"r","fields":[
    {"name":"a","type":{"type":"array","items":"string"}},
    {"name":"m","type":{"type":"map","values":["null","long"]}},
    {"name":"u","type":{"type":"array","items":["null","string","long"]}},
    {"name":"n","type":{"type":"array","items":["null","long"]}},
    {"name":"r","type":{"type":"array","items":["string",{"type":"record","name":"R",
        "fields":[{"name":"x","type":["null","long"]}]}]}}]}"#;

/// Arrays and maps decode their blocks' items on the fast path, and a block the fast path
/// cannot take (a branch index written as a padded varint, legal) is decoded again item by
/// item from its start: the same values either way, in blocks of any count, with and
/// without byte sizes, across batch boundaries.
#[test]
fn array_and_map_blocks_fast_and_again_value_by_value() {
    let schema = Schema::parse(ITEMS).unwrap();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move |m: u64| rng.below(m);
    let mut data = Vec::new();
    let mut expected = Vec::new();
    let rows = 400;
    for row in 0..rows {
        let strings: Vec<String> = (0..next(6)).map(|i| format!("s{row}-{i}")).collect();
        let entries: Vec<(String, Option<i64>)> = (0..next(5))
            .map(|i| {
                (
                    format!("k{i}"),
                    (next(3) > 0).then(|| row as i64 * 100 - i as i64),
                )
            })
            .collect();
        let unions: Vec<U> = (0..next(6))
            .map(|i| match next(3) {
                0 => U::Null,
                1 => U::S(format!("u{i}")),
                _ => U::L(i as i64 - 2),
            })
            .collect();
        // Every seventh row writes every other branch index as a two-byte varint (so that
        // blocks fail the fast path after items it decoded).
        let padded = row % 7 == 3;
        let written = std::cell::Cell::new(0);
        let branch = |b: i64, out: &mut Vec<u8>| {
            written.set(written.get() + 1);
            write_branch(b, padded && written.get() % 2 == 0, out);
        };
        // A `["null", "long"]` value (map values, `n`'s items, the record in `r`).
        let nullable_long = |v: Option<i64>, out: &mut Vec<u8>| match v {
            Some(v) => {
                branch(1, out);
                zigzag(v, out);
            }
            None => branch(0, out),
        };
        let items: Vec<Vec<u8>> = strings
            .iter()
            .map(|s| {
                let mut v = Vec::new();
                zigzag(s.len() as i64, &mut v);
                v.extend(s.as_bytes());
                v
            })
            .collect();
        blocks(&mut data, &items, 4, &mut next);
        let items: Vec<Vec<u8>> = entries
            .iter()
            .map(|(k, v)| {
                let mut e = Vec::new();
                zigzag(k.len() as i64, &mut e);
                e.extend(k.as_bytes());
                nullable_long(*v, &mut e);
                e
            })
            .collect();
        blocks(&mut data, &items, 4, &mut next);
        let items: Vec<Vec<u8>> = unions
            .iter()
            .map(|u| {
                let mut e = Vec::new();
                match u {
                    U::Null => branch(0, &mut e),
                    U::S(s) => {
                        branch(1, &mut e);
                        zigzag(s.len() as i64, &mut e);
                        e.extend(s.as_bytes());
                    }
                    U::L(l) => {
                        branch(2, &mut e);
                        zigzag(*l, &mut e);
                    }
                }
                e
            })
            .collect();
        blocks(&mut data, &items, 4, &mut next);
        // n: the map's values again, as an array of nullable longs.
        let items: Vec<Vec<u8>> = entries
            .iter()
            .map(|(_, v)| {
                let mut e = Vec::new();
                nullable_long(*v, &mut e);
                e
            })
            .collect();
        blocks(&mut data, &items, 4, &mut next);
        let longs: Vec<Option<i64>> = entries.iter().map(|(_, v)| *v).collect();
        // r: a union whose second branch is a record holding a nullable long: the record
        // is decoded on the array block's cursor, and a padded index inside it makes the
        // block fall back after the union's earlier items.
        let records: Vec<Result<String, Option<i64>>> = (0..next(5))
            .map(|i| match next(3) {
                0 => Ok(format!("r{i}")),
                1 => Err(None),
                _ => Err(Some(row as i64 - i as i64)),
            })
            .collect();
        let items: Vec<Vec<u8>> = records
            .iter()
            .map(|r| {
                let mut e = Vec::new();
                match r {
                    Ok(s) => {
                        zigzag(0, &mut e);
                        zigzag(s.len() as i64, &mut e);
                        e.extend(s.as_bytes());
                    }
                    Err(x) => {
                        zigzag(1, &mut e);
                        nullable_long(*x, &mut e);
                    }
                }
                e
            })
            .collect();
        blocks(&mut data, &items, 4, &mut next);
        expected.push((strings, entries, unions, longs, records));
    }
    for batch_size in [7, 64, 1000] {
        let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let mut batches = decoder.decode_block(&data, rows).unwrap();
        batches.extend(decoder.flush().unwrap());
        let mut got = Vec::new();
        for batch in &batches {
            let a = batch.column(0).as_list::<i32>();
            let m = batch.column(1).as_map();
            let u = batch.column(2).as_list::<i32>();
            let n = batch.column(3).as_list::<i32>();
            let r = batch.column(4).as_list::<i32>();
            for i in 0..batch.num_rows() {
                let strings: Vec<String> = a
                    .value(i)
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.unwrap().to_string())
                    .collect();
                let entries = m.value(i);
                let keys = entries.column(0).as_string::<i32>();
                let values = entries.column(1).as_primitive::<Int64Type>();
                let entries: Vec<(String, Option<i64>)> = (0..entries.len())
                    .map(|j| {
                        let v = values.is_valid(j).then(|| values.value(j));
                        (keys.value(j).to_string(), v)
                    })
                    .collect();
                let items = u.value(i);
                let items = items.as_any().downcast_ref::<UnionArray>().unwrap();
                let unions: Vec<U> = (0..items.len())
                    .map(|j| {
                        let child = items.child(items.type_id(j));
                        let at = items.value_offset(j);
                        match items.type_id(j) {
                            0 => U::Null,
                            1 => U::S(child.as_string::<i32>().value(at).to_string()),
                            _ => U::L(child.as_primitive::<Int64Type>().value(at)),
                        }
                    })
                    .collect();
                let longs = n.value(i);
                let longs = longs.as_primitive::<Int64Type>();
                let longs: Vec<Option<i64>> = longs.iter().collect();
                let items = r.value(i);
                let items = items.as_any().downcast_ref::<UnionArray>().unwrap();
                let records: Vec<Result<String, Option<i64>>> = (0..items.len())
                    .map(|j| {
                        let child = items.child(items.type_id(j));
                        let at = items.value_offset(j);
                        if items.type_id(j) == 0 {
                            return Ok(child.as_string::<i32>().value(at).to_string());
                        }
                        let x = child.as_struct().column(0).as_primitive::<Int64Type>();
                        Err(x.is_valid(at).then(|| x.value(at)))
                    })
                    .collect();
                got.push((strings, entries, unions, longs, records));
            }
        }
        assert_eq!(got, expected, "batch size {batch_size}");
    }
}

/// A bad item found in a block that started on the fast path is named by its position in
/// the collection, counted across the collection's blocks.
#[test]
fn a_bad_item_after_a_fast_block_names_its_position() {
    let schema = Schema::parse(ITEMS).unwrap();
    // a: two blocks of two strings; m: one good entry, then a block whose second entry has
    // branch index 2 (out of range for ["null","long"]).
    let mut data = Vec::new();
    for _ in 0..2 {
        zigzag(2, &mut data);
        string("x", &mut data);
        string("yz", &mut data);
    }
    data.push(0);
    zigzag(1, &mut data);
    string("k0", &mut data);
    data.extend([2, 10]);
    zigzag(2, &mut data);
    string("k1", &mut data);
    data.push(0);
    string("k2", &mut data);
    data.push(4);
    data.extend([0, 0]);
    let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder();
    let e = decoder.decode_block(&data, 1).unwrap_err();
    assert!(
        matches!(e.kind(), DecodeErrorKind::UnionIndex { index: 2, .. }),
        "{e}"
    );
    assert_eq!(e.field_path(), "m[2]", "{e}");

    // u: an item whose string runs past the end of the block, in its second block.
    let mut data = Vec::new();
    data.push(0);
    data.push(0);
    zigzag(1, &mut data);
    data.push(0);
    zigzag(2, &mut data);
    data.push(0);
    data.push(2);
    zigzag(50, &mut data);
    data.extend(b"short");
    data.push(0);
    let e = decoder.decode_block(&data, 1).unwrap_err();
    assert_eq!(e.field_path(), "u[2]", "{e}");
}

/// A union branch reserves at most what it held in the last batch: an array block of a
/// million one-byte `int`s after a batch with one 1 MiB `fixed` value must not reserve a
/// million `fixed` values (a terabyte).
#[test]
fn union_branches_reserve_no_more_than_the_last_batch_held() {
    for items in [
        r#"["int",{"type":"fixed","name":"big","size":1048576}]"#,
        r#"["null","bytes"]"#,
    ] {
        large_branch_then_many_small_values(items);
    }
}

/// Row 1: one item of `items`' second branch of 1 MiB; row 2: a million items of its first
/// branch, of one byte each (an `int` 0 or a `null`).
fn large_branch_then_many_small_values(items: &str) {
    let schema = Schema::parse(&format!(
        r#"{{"type":"record","name":"r","fields":[{{"name":"a","type":{{"type":"array",
            "items":{items}}}}}]}}"#
    ))
    .unwrap();
    let null = items.contains("null");
    let mut block = Vec::new();
    // Row 1: one item, the fixed branch.
    zigzag(1, &mut block);
    zigzag(1, &mut block);
    if items.contains("bytes") {
        zigzag(1 << 20, &mut block);
    }
    block.extend(std::iter::repeat_n(7u8, 1 << 20));
    zigzag(0, &mut block);
    // Row 2: a million values of one byte each (branch 0, value 0 unless null).
    let count = 1_000_000;
    zigzag(count, &mut block);
    let per_item = if null { 1 } else { 2 };
    block.extend(std::iter::repeat_n(0u8, per_item * count as usize));
    zigzag(0, &mut block);
    let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .with_batch_size(1);
    let mut batches = decoder.decode_block(&block, 2).unwrap();
    batches.extend(decoder.flush().unwrap());
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 2);
    let last = batches.last().unwrap().column(0);
    assert_eq!(
        last.as_list::<i32>().value(0).len(),
        count as usize,
        "{items}"
    );
}

/// One byte of Avro, a null, is a whole slot of a `fixed` in Arrow: a block of a million nulls
/// of a 1 MiB `fixed` (1 MB of input) would be a terabyte. Lists and maps refuse the block
/// before decoding it (Arrow holds at most 2 GiB in one column of a batch); items of small
/// slots are not limited by it.
#[test]
fn blocks_of_null_large_fixed_values_are_refused_before_they_allocate() {
    let big = r#"["null",{"type":"fixed","name":"big","size":1048576}]"#;
    for (container, items, count, refused) in [
        ("array", big, 1_000_000, true),
        ("map", big, 1_000_000, true),
        // 2048 slots of 1 MiB: past 2 GiB by the slots alone.
        ("array", big, 2048, true),
        // The null under a union's branch other than the smallest: the writer picks it.
        (
            "array",
            r#"["long",{"type":"record","name":"w","fields":[{"name":"a","type":["null",
                {"type":"fixed","name":"big","size":1048576}]}]}]"#,
            1_000_000,
            true,
        ),
        // 2047 would fit; a million nulls of a long do too.
        ("array", r#"["null","long"]"#, 1_000_000, false),
    ] {
        let key = if container == "map" {
            "values"
        } else {
            "items"
        };
        let schema = Schema::parse(&format!(
            r#"{{"type":"record","name":"r","fields":[{{"name":"a","type":{{"type":"{container}",
                "{key}":{items}}}}}]}}"#
        ))
        .unwrap();
        let mut block = Vec::new();
        zigzag(count, &mut block);
        for i in 0..count {
            if container == "map" {
                // A distinct key of a few bytes, then the null branch.
                let k = i.to_string();
                zigzag(k.len() as i64, &mut block);
                block.extend(k.as_bytes());
            }
            if items.starts_with(r#"["long""#) {
                // The record branch.
                block.push(2);
            }
            block.push(0);
        }
        zigzag(0, &mut block);
        let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder();
        let result = decoder.decode_block(&block, 1);
        if refused {
            let e = result.unwrap_err();
            // The array's own items pass the limit: no batch size would help, and the error
            // says so.
            assert!(
                matches!(
                    e.kind(),
                    DecodeErrorKind::TooLarge(crate::error::Limit::ItemValues { .. })
                ),
                "{container} of {count}: {e}"
            );
            assert!(e.to_string().contains("whatever the batch size"), "{e}");
            assert_eq!(e.field_path(), "a", "{e}");
        } else {
            let mut batches = result.unwrap();
            batches.extend(decoder.flush().unwrap());
            assert_eq!(
                batches[0].column(0).as_list::<i32>().value(0).len(),
                count as usize
            );
        }
    }
}

/// Arrays that each fit under the 2 GiB for one column but together pass it in one batch are
/// refused as the batch's (`BatchValues`: a smaller batch size may help), not the array's.
/// Refused before the block is decoded: the first row's one null is the only slot allocated.
#[test]
fn arrays_that_pass_the_limit_together_name_the_batch() {
    use crate::error::Limit;
    let schema = Schema::parse(
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array",
            "items":["null",{"type":"fixed","name":"big","size":1048576}]}}]}"#,
    )
    .unwrap();
    // Rows `[null]` and `[null x 2047]`: 2047 slots of 1 MiB fit alone, 2048 do not.
    let mut block = Vec::new();
    for n in [1, 2047] {
        zigzag(n, &mut block);
        block.extend(std::iter::repeat_n(0u8, n as usize));
        zigzag(0, &mut block);
    }
    let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder();
    let e = decoder.decode_block(&block, 2).unwrap_err();
    assert!(
        matches!(e.kind(), DecodeErrorKind::TooLarge(Limit::BatchValues)),
        "{e}"
    );
    assert!(e.to_string().contains("smaller batch size may help"), "{e}");
    assert_eq!(e.field_path(), "a", "{e}");
    // The helper that picks the error: an array's own items past the excess bound, or past
    // 32-bit offsets (null items: no excess, a few bytes of input per block).
    let e = super::items_overflow(2048, 1 << 20, 7);
    assert!(
        matches!(
            e.kind(),
            DecodeErrorKind::TooLarge(Limit::ItemValues { count: 2048 })
        ),
        "{e}"
    );
    let own = i32::MAX as usize + 1;
    let e = super::items_overflow(own, 0, 7);
    assert!(
        matches!(e.kind(), DecodeErrorKind::TooLarge(Limit::ItemOffsets { count }) if *count == own as u64),
        "{e}"
    );
}

/// Rows of a large `fixed` take their whole size even when null: a batch holds at most as
/// many as 2 GiB does, whatever batch size was asked for, and every row is still read.
#[test]
fn batches_of_large_fixed_rows_hold_at_most_two_gib() {
    let schema = Schema::parse(
        r#"{"type":"record","name":"r","fields":[{"name":"a","type":["null",
            {"type":"fixed","name":"big","size":1048576}]},{"name":"b","type":"long"}]}"#,
    )
    .unwrap();
    let plan = DecodePlan::new(&schema, &DecodeOptions::default()).unwrap();
    // (A null of 1 MiB and a long of 8 bytes from a varint of 1 a row: 1 MiB + 7 beyond
    // the input.)
    let most = i32::MAX as usize / ((1 << 20) + 7);
    assert_eq!(most, 2047);
    assert_eq!(plan.decoder().batch_size(), most);
    assert_eq!(plan.decoder().with_batch_size(100_000).batch_size(), most);
    assert_eq!(plan.decoder().with_batch_size(3).batch_size(), 3);
    // Rows cut into batches of the capped size (a small cap keeps the test small).
    let mut decoder = plan.decoder().with_batch_size(2);
    let mut block = Vec::new();
    for v in 0..5 {
        block.push(0);
        zigzag(v, &mut block);
    }
    let mut batches = decoder.decode_block(&block, 5).unwrap();
    batches.extend(decoder.flush().unwrap());
    let rows: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
    assert_eq!(rows, [2, 2, 1]);
    assert_eq!(batches[2].column(0).null_count(), 1);
}

/// Nullable `fixed` values and `fixed` decimals are read with no branch on null (the bytes
/// after the index copied or windowed either way, kept only for a value): the same batches
/// as the reference path, which a padded branch index sends every record to, in either
/// order of the union, for sizes the no-branch path takes (3, 16; decimals of 8 and 16 bytes)
/// and those it leaves to the branching path (70 bytes; a 20-byte `Decimal256`; `bytes`
/// decimals of 0 to 17 bytes), with the values at the very start and end of the block.
#[test]
fn nullable_fixed_and_decimals_without_a_branch_match_the_reference() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":["null",{"type":"fixed","name":"F3","size":3}]},
        {"name":"b","type":[{"type":"fixed","name":"F16","size":16},"null"]},
        {"name":"c","type":["null",{"type":"fixed","name":"F70","size":70}]},
        {"name":"d","type":["null",{"type":"fixed","name":"D8","size":8,
            "logicalType":"decimal","precision":18,"scale":2}]},
        {"name":"e","type":[{"type":"fixed","name":"D16","size":16,
            "logicalType":"decimal","precision":38,"scale":4},"null"]},
        {"name":"g","type":["null",{"type":"fixed","name":"D20","size":20,
            "logicalType":"decimal","precision":45,"scale":0}]},
        {"name":"h","type":["null",{"type":"bytes","logicalType":"decimal","precision":18}]},
        {"name":"i","type":[{"type":"bytes","logicalType":"decimal","precision":38,"scale":3},
            "null"]}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    // (0: a `bytes` decimal, of 0 to 17 bytes.)
    let sizes = [3usize, 16, 70, 8, 16, 20, 0, 0];
    // Significant bytes of each decimal within its precision (2^55 < 10^18, 2^119 < 10^38,
    // 2^143 < 10^45); 0: not a decimal.
    let keep = [0usize, 0, 0, 7, 15, 18, 7, 15];
    let nulls = [0i64, 1, 0, 0, 1, 0, 0, 1];
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next();
    let rows = 1500;
    // Each row encoded plainly and with every index padded.
    let mut encoded: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for _ in 0..rows {
        let (mut plain, mut padded) = (Vec::new(), Vec::new());
        let r = next();
        for (k, (&size, &null)) in sizes.iter().zip(&nulls).enumerate() {
            let present = (r >> (7 * k)) & 3 != 0;
            // Bytes of every value, sign bits of decimals both ways; a `bytes` decimal's
            // length first (17 bytes: a sign byte before 16).
            let value: Vec<u8> = if size == 0 {
                let n = (next() % 18) as usize;
                let mut digits: Vec<u8> = (0..n.min(16)).map(|_| next() as u8).collect();
                within(&mut digits, keep[k]);
                if n == 17 {
                    let sign = if digits[0] & 0x80 != 0 { 0xFF } else { 0 };
                    digits.insert(0, sign);
                }
                let mut v = Vec::new();
                zigzag(digits.len() as i64, &mut v);
                v.extend(digits);
                v
            } else {
                let mut v: Vec<u8> = (0..size).map(|_| next() as u8).collect();
                within(&mut v, keep[k]);
                v
            };
            let index = if present { 1 - null } else { null };
            for (out, pad) in [(&mut plain, false), (&mut padded, true)] {
                write_branch(index, pad, out);
                if present {
                    out.extend(&value);
                }
            }
        }
        encoded.push((plain, padded));
    }
    // The whole block, and blocks of the first and of the last one to three rows: values
    // whose windows start before the block (a decimal ending before its 16th byte), values
    // within a fixed move of its end, nulls whose phantom value would pass it.
    let mut blocks: Vec<&[(Vec<u8>, Vec<u8>)]> = vec![&encoded];
    for k in 1..=3 {
        blocks.push(&encoded[..k]);
        blocks.push(&encoded[rows - k..]);
    }
    for (block, batch_size) in blocks
        .iter()
        .flat_map(|b| [1, 7, 1000].map(|size| (b, size)))
    {
        let decode = |padded: bool| {
            let data: Vec<u8> = block
                .iter()
                .flat_map(|(p, q)| if padded { q } else { p })
                .copied()
                .collect();
            let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
                .unwrap()
                .decoder()
                .with_batch_size(batch_size);
            let mut batches = d.decode_block(&data, block.len() as u64).unwrap();
            batches.extend(d.flush().unwrap());
            batches
        };
        let (fast, reference) = (decode(false), decode(true));
        assert_eq!(
            fast,
            reference,
            "{} rows, batch size {batch_size}",
            block.len()
        );
        // Null slots hold zeros on both paths (not just equal as values).
        for (f, r) in fast.iter().zip(&reference) {
            for c in 0..f.num_columns() {
                assert_eq!(
                    f.column(c).to_data().buffers(),
                    r.column(c).to_data().buffers(),
                    "column {c}, {} rows, batch size {batch_size}",
                    block.len()
                );
            }
        }
    }
    // A present value cut short by the block's end is an error of its field, as on the
    // reference path (the no-branch path leaves both: their values pass the data's end).
    for (cut, field) in [
        (vec![0u8, 2, 0, 0, 0, 1, 2, 3, 4, 5], "e"),
        (vec![0u8, 2, 0, 0, 2, 2, 1, 2, 3, 4, 5], "g"),
    ] {
        let e = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .decode_block(&cut, 1)
            .unwrap_err();
        assert_eq!(e.field_path(), field, "{e}");
    }
}

/// Nullable `uuid` strings read with no branch on null decode to the same batches and buffers
/// (zeros in null slots) as the reference path, which a padded branch index and length send
/// every record to, in either order of the union, at the very start and end of the block; a
/// present value that is not a UUID is an error of its field either way, and a null is never
/// read past (the bytes after its index may be anything).
#[test]
fn nullable_uuids_without_a_branch_match_the_reference() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":["null",{"type":"string","logicalType":"uuid"}]},
        {"name":"b","type":[{"type":"string","logicalType":"uuid"},"null"]}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let nulls = [0i64, 1];
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next();
    let hex = b"0123456789abcdefABCDEF";
    let rows = 1500;
    let mut encoded: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for _ in 0..rows {
        let (mut plain, mut padded) = (Vec::new(), Vec::new());
        let r = next();
        for (k, &null) in nulls.iter().enumerate() {
            let present = (r >> (7 * k)) & 3 != 0;
            let text: Vec<u8> = (0..36)
                .map(|i| {
                    if [8, 13, 18, 23].contains(&i) {
                        b'-'
                    } else {
                        hex[(next() % hex.len() as u64) as usize]
                    }
                })
                .collect();
            let index = if present { 1 - null } else { null };
            for (out, pad) in [(&mut plain, false), (&mut padded, true)] {
                write_branch(index, pad, out);
                if present {
                    // The length, 36 (padded: 72 as two bytes).
                    out.extend(if pad { &[0xC8, 0x00][..] } else { &[72][..] });
                    out.extend(&text);
                }
            }
        }
        encoded.push((plain, padded));
    }
    let mut blocks: Vec<&[(Vec<u8>, Vec<u8>)]> = vec![&encoded];
    for k in 1..=3 {
        blocks.push(&encoded[..k]);
        blocks.push(&encoded[rows - k..]);
    }
    for (block, batch_size) in blocks
        .iter()
        .flat_map(|b| [1, 7, 1000].map(|size| (b, size)))
    {
        let decode = |padded: bool| {
            let data: Vec<u8> = block
                .iter()
                .flat_map(|(p, q)| if padded { q } else { p })
                .copied()
                .collect();
            let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
                .unwrap()
                .decoder()
                .with_batch_size(batch_size);
            let mut batches = d.decode_block(&data, block.len() as u64).unwrap();
            batches.extend(d.flush().unwrap());
            batches
        };
        let (fast, reference) = (decode(false), decode(true));
        assert_eq!(fast, reference, "{} rows, batch {batch_size}", block.len());
        for (f, r) in fast.iter().zip(&reference) {
            for c in 0..f.num_columns() {
                assert_eq!(
                    f.column(c).to_data().buffers(),
                    r.column(c).to_data().buffers(),
                    "column {c}, {} rows, batch size {batch_size}",
                    block.len()
                );
            }
        }
    }
    // A present value that is not a UUID, cut short, or of another length: an error of its
    // field. Nulls followed by anything: read as nulls.
    let good = b"01234567-89ab-cdef-0123-456789abcdef";
    let mut bad = *good;
    bad[35] = b'g';
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    let mut row = vec![2u8, 72];
    row.extend(bad);
    row.push(2);
    cases.push((row, "a"));
    let mut row = vec![2u8, 72];
    row.extend(good);
    row.extend([0, 72]);
    row.extend(bad);
    cases.push((row, "b"));
    cases.push((vec![2u8, 72, b'0', b'1'], "a"));
    let mut row = vec![2u8, 70];
    row.extend(&good[..35]);
    row.push(2);
    cases.push((row, "a"));
    for (data, field) in cases {
        let e = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .decode_block(&data, 1)
            .unwrap_err();
        assert_eq!(e.field_path(), field, "{e}");
    }
    // `a` null, then `b` holding a value: `a`'s phantom value is `b`'s index, length and text.
    let mut data = vec![0u8, 0, 72];
    data.extend(good);
    let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder();
    let mut batches = d.decode_block(&data, 1).unwrap();
    batches.extend(d.flush().unwrap());
    let (a, b) = (batches[0].column(0), batches[0].column(1));
    assert_eq!((a.len(), a.null_count(), b.null_count()), (1, 1, 0));
    assert_eq!(a.to_data().buffers()[0].as_slice(), &[0u8; 16]);
}

/// Arrays of numbers in record fields, read inline on the record's fast path: random blocks
/// (short ones read value by value, long ones in bulk; some with byte sizes, empty arrays,
/// values of every varint length and float bit pattern)
/// decode to the values written, in batches that end anywhere; a bad block fails over to the
/// reference path, which names the field, the item and the error.
#[test]
fn arrays_of_numbers_on_the_record_fast_path() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"l","type":{"type":"array","items":"long"}},
        {"name":"i","type":{"type":"array","items":"int"}},
        {"name":"d","type":{"type":"array","items":"double"}},
        {"name":"f","type":{"type":"array","items":"float"}},
        {"name":"s","type":"string"}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next();
    let rows = 700;
    let mut data = Vec::new();
    let mut expected: [Vec<Vec<u64>>; 4] = Default::default();
    let mut tags = Vec::new();
    for row in 0..rows {
        for (k, column) in expected.iter_mut().enumerate() {
            let n = (next() % 45) as usize;
            let values: Vec<u64> = (0..n)
                .map(|_| {
                    let v = next() >> (next() % 64);
                    match k {
                        0 => v,
                        1 => v as i32 as i64 as u64,
                        2 => v,
                        _ => v & 0xFFFF_FFFF,
                    }
                })
                .collect();
            let encoded: Vec<Vec<u8>> = values
                .iter()
                .map(|&v| {
                    let mut e = Vec::new();
                    match k {
                        0 | 1 => zigzag(v as i64, &mut e),
                        2 => e.extend(v.to_le_bytes()),
                        _ => e.extend((v as u32).to_le_bytes()),
                    }
                    e
                })
                .collect();
            let mut rest = &encoded[..];
            while !rest.is_empty() {
                // Blocks under 16 items (read one by one) and over (the bulk decoder).
                let take = if next() % 3 == 0 {
                    16 + (next() % 20) as usize
                } else {
                    1 + (next() % 15) as usize
                }
                .min(rest.len());
                let (block, after) = rest.split_at(take);
                let bytes = block.concat();
                if next() % 3 == 0 {
                    zigzag(-(take as i64), &mut data);
                    zigzag(bytes.len() as i64, &mut data);
                } else {
                    zigzag(take as i64, &mut data);
                }
                data.extend(bytes);
                rest = after;
            }
            data.push(0);
            column.push(values);
        }
        let tag = format!("row{row}");
        zigzag(tag.len() as i64, &mut data);
        data.extend(tag.as_bytes());
        tags.push(tag);
    }
    for batch_size in [1, 7, 1000] {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let mut batches = d.decode_block(&data, rows as u64).unwrap();
        batches.extend(d.flush().unwrap());
        let mut got: [Vec<Vec<u64>>; 4] = Default::default();
        let mut got_tags = Vec::new();
        for b in &batches {
            for (k, column) in got.iter_mut().enumerate() {
                let list = b.column(k).as_list::<i32>();
                for r in 0..list.len() {
                    let items = list.value(r);
                    column.push(match k {
                        0 => items
                            .as_primitive::<Int64Type>()
                            .values()
                            .iter()
                            .map(|&v| v as u64)
                            .collect(),
                        1 => items
                            .as_primitive::<arrow_array::types::Int32Type>()
                            .values()
                            .iter()
                            .map(|&v| v as i64 as u64)
                            .collect(),
                        2 => items
                            .as_primitive::<arrow_array::types::Float64Type>()
                            .values()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect(),
                        _ => items
                            .as_primitive::<arrow_array::types::Float32Type>()
                            .values()
                            .iter()
                            .map(|v| u64::from(v.to_bits()))
                            .collect(),
                    });
                }
            }
            let s = b.column(4).as_string::<i32>();
            got_tags.extend(s.iter().map(|v| v.unwrap().to_string()));
        }
        assert_eq!(got, expected, "batch size {batch_size}");
        assert_eq!(got_tags, tags, "batch size {batch_size}");
    }
    // Bad blocks in the second row, after a good first row: each an error of its field.
    let good = vec![0u8, 0, 0, 0, 2, b'x'];
    let row = |l: &[u8], i: &[u8], d: &[u8], f: &[u8]| {
        let mut v = good.clone();
        for part in [l, i, d, f] {
            v.extend(part);
        }
        v.extend([2, b'y']);
        v
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // An int out of range, as the second item of the first block (bulk reads name the
        // block's first item).
        (
            row(&[0], &[4, 2, 0x80, 0x80, 0x80, 0x80, 0x10, 0], &[0], &[0]),
            "i[0]",
        ),
        // More doubles than bytes left.
        (row(&[0], &[0], &[40, 0, 0], &[0]), "d"),
        // A block size past the data.
        (row(&[0], &[0], &[0], &[3, 100, 0, 0, 0, 0]), "f"),
        // A varint that never ends.
        (
            row(
                &[
                    4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                ],
                &[0],
                &[0],
                &[0],
            ),
            "l",
        ),
    ];
    for (data, field) in cases {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder();
        let e = d.decode_block(&data, 2).unwrap_err();
        assert!(e.field_path().starts_with(field), "{field}: {e}");
    }
}

/// Arrays of strings in a record field, nullable arrays of doubles and arrays of strings as
/// map values, all read on an enclosing fast path's cursor (`ListCol::flat_sticky`): random
/// blocks (some with byte sizes) decode to the values written, in batches that end anywhere;
/// a string past the data inside a map's array is an error of that field. No row is decoded
/// again value by value (the fast paths read every one, maps of arrays by
/// `ListCol::map_values_sticky`).
#[test]
fn arrays_of_strings_and_nullable_arrays_on_the_fast_path() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"t","type":{"type":"array","items":"string"}},
        {"name":"n","type":["null",{"type":"array","items":"double"}]},
        {"name":"m","type":{"type":"map","values":{"type":"array","items":"string"}}}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    let mut next = move |m: u64| rng.below(m);
    let rows = 500;
    let mut data = Vec::new();
    let mut tags: Vec<Vec<String>> = Vec::new();
    let mut doubles: Vec<Option<Vec<u64>>> = Vec::new();
    let mut maps: Vec<Vec<(String, Vec<String>)>> = Vec::new();
    for row in 0..rows {
        let t: Vec<String> = (0..next(9))
            .map(|i| "x".repeat(next(90) as usize) + &format!("{row}.{i}"))
            .collect();
        let items: Vec<Vec<u8>> = t
            .iter()
            .map(|s| {
                let mut e = Vec::new();
                string(s, &mut e);
                e
            })
            .collect();
        blocks(&mut data, &items, 5, &mut next);
        tags.push(t);
        let n = (next(4) > 0).then(|| (0..next(20)).map(|_| next(u64::MAX)).collect::<Vec<u64>>());
        match &n {
            None => data.push(0),
            Some(values) => {
                data.push(2);
                let items: Vec<Vec<u8>> = values.iter().map(|v| v.to_le_bytes().to_vec()).collect();
                blocks(&mut data, &items, 5, &mut next);
            }
        }
        doubles.push(n);
        let m: Vec<(String, Vec<String>)> = (0..next(4))
            .map(|k| {
                let values = (0..next(5)).map(|i| format!("v{row}-{k}-{i}")).collect();
                (format!("k{k}"), values)
            })
            .collect();
        let entries: Vec<Vec<u8>> = m
            .iter()
            .map(|(k, values)| {
                let mut e = Vec::new();
                string(k, &mut e);
                let items: Vec<Vec<u8>> = values
                    .iter()
                    .map(|s| {
                        let mut v = Vec::new();
                        string(s, &mut v);
                        v
                    })
                    .collect();
                blocks(&mut e, &items, 5, &mut next);
                e
            })
            .collect();
        blocks(&mut data, &entries, 5, &mut next);
        maps.push(m);
    }
    for batch_size in [1, 7, 1000] {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let before = probe::get(&probe::SLOW_RECORDS);
        let map_blocks = probe::get(&probe::MAP_ARRAY_BLOCKS);
        let mut batches = d.decode_block(&data, rows as u64).unwrap();
        batches.extend(d.flush().unwrap());
        assert_eq!(probe::get(&probe::SLOW_RECORDS) - before, 0);
        assert!(probe::get(&probe::MAP_ARRAY_BLOCKS) > map_blocks);
        let (mut got_t, mut got_n, mut got_m) = (Vec::new(), Vec::new(), Vec::new());
        for b in &batches {
            let t = b.column(0).as_list::<i32>();
            let n = b.column(1).as_list::<i32>();
            let m = b.column(2).as_map();
            for r in 0..b.num_rows() {
                let strings = |a: ArrayRef| -> Vec<String> {
                    a.as_string::<i32>()
                        .iter()
                        .map(|s| s.unwrap().to_string())
                        .collect()
                };
                got_t.push(strings(t.value(r)));
                got_n.push(n.is_valid(r).then(|| {
                    n.value(r)
                        .as_primitive::<arrow_array::types::Float64Type>()
                        .values()
                        .iter()
                        .map(|v| v.to_bits())
                        .collect::<Vec<u64>>()
                }));
                let entries = m.value(r);
                let keys = strings(entries.column(0).clone());
                let values = entries.column(1).as_list::<i32>();
                got_m.push(
                    keys.into_iter()
                        .enumerate()
                        .map(|(i, k)| (k, strings(values.value(i))))
                        .collect::<Vec<_>>(),
                );
            }
        }
        assert_eq!(got_t, tags, "batch size {batch_size}");
        assert_eq!(got_n, doubles, "batch size {batch_size}");
        assert_eq!(got_m, maps, "batch size {batch_size}");
    }
    // Row 1 good; row 2's map holds an array whose second string runs past the data.
    // (Row 1: every collection empty, `n` null; row 2: `t` empty, `n` null, one map entry.)
    let mut bad = vec![0u8, 0, 0, 0, 0, 2];
    string("k", &mut bad);
    bad.push(4);
    string("ok", &mut bad);
    zigzag(40, &mut bad);
    bad.extend(b"short");
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&bad, 2)
        .unwrap_err();
    assert!(e.field_path().starts_with('m'), "{e}");
}

/// Maps in a record field (string, long, nullable-double, map and record values), in a
/// nullable field and as array items, read on the enclosing fast path's cursor
/// (`MapCol::decode_sticky`), against the value-by-value reference: the same rows written with
/// the last field's branch index padded (legal; the record's fast path fails after every map
/// was appended, and the record is decoded again value by value), and with the index of some
/// nullable map values padded (the fast path fails inside a map, and inside a record in a
/// map). Random blocks, some with byte sizes; batches that end anywhere. A string past the
/// data inside a map of maps is an error of that field.
#[test]
fn maps_on_the_fast_path_match_the_reference() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"s","type":{"type":"map","values":"string"}},
        {"name":"l","type":{"type":"map","values":"long"}},
        {"name":"n","type":["null",{"type":"map","values":["null","double"]}]},
        {"name":"m","type":{"type":"map","values":{"type":"map","values":"string"}}},
        {"name":"a","type":{"type":"array","items":{"type":"map","values":"long"}}},
        {"name":"r","type":{"type":"map","values":{"type":"record","name":"V","fields":[
            {"name":"x","type":"long"},{"name":"y","type":["null","string"]}]}}},
        {"name":"p","type":["null","long"]}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move |m: u64| rng.below(m);
    // (row, encoding) -> one encoded map: `value` encodes entry `i`'s value.
    fn map(
        out: &mut Vec<u8>,
        entries: usize,
        cuts: &mut dyn FnMut(u64) -> u64,
        value: &mut dyn FnMut(usize, &mut Vec<u8>),
    ) {
        let encoded: Vec<Vec<u8>> = (0..entries)
            .map(|i| {
                let mut e = Vec::new();
                string(&format!("key{i}"), &mut e);
                value(i, &mut e);
                e
            })
            .collect();
        blocks(out, &encoded, 5, cuts);
    }
    let rows = 400;
    let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
    let mut strings: Vec<Vec<(String, String)>> = Vec::new();
    for row in 0..rows {
        // The same random choices for every encoding: draw them first.
        let sizes: Vec<usize> = (0..6).map(|_| next(5) as usize).collect();
        let inner: Vec<usize> = (0..sizes[3]).map(|_| next(4) as usize).collect();
        let doubles: Vec<Option<u64>> = (0..sizes[2])
            .map(|_| (next(3) > 0).then(|| next(u64::MAX)))
            .collect();
        let n_present = next(4) > 0;
        let seed = next(u64::MAX);
        let s: Vec<(String, String)> = (0..sizes[0])
            .map(|i| {
                (
                    format!("key{i}"),
                    "v".repeat(next(40) as usize) + &row.to_string(),
                )
            })
            .collect();
        for (e, out) in encodings.iter_mut().enumerate() {
            // The same blocks in every encoding.
            let mut y = seed | 1;
            let mut cuts = move |m: u64| {
                y ^= y << 13;
                y ^= y >> 7;
                y ^= y << 17;
                y % m
            };
            let pad_inner = e == 2 && row % 3 == 0;
            map(out, s.len(), &mut cuts, &mut |i, o| string(&s[i].1, o));
            map(out, sizes[1], &mut cuts, &mut |i, o| {
                zigzag((row as i64 - 200) << (i * 9), o)
            });
            if n_present {
                out.push(2);
                map(
                    out,
                    doubles.len(),
                    &mut cuts,
                    &mut |i, o| match doubles[i] {
                        None => o.push(0),
                        Some(bits) => {
                            o.extend(if pad_inner { &[0x82, 0][..] } else { &[2][..] });
                            o.extend(bits.to_le_bytes());
                        }
                    },
                );
            } else {
                out.push(0);
            }
            map(out, inner.len(), &mut cuts, &mut |i, o| {
                let mut c2 = |m: u64| (i as u64 + 1) % m;
                map(o, inner[i], &mut c2, &mut |j, o2| {
                    string(&format!("{row}.{i}.{j}"), o2)
                });
            });
            let items: Vec<Vec<u8>> = (0..sizes[4])
                .map(|i| {
                    let mut item = Vec::new();
                    let mut c2 = |m: u64| (i as u64 + 2) % m;
                    map(&mut item, i + 1, &mut c2, &mut |j, o| {
                        zigzag(j as i64 - i as i64, o)
                    });
                    item
                })
                .collect();
            blocks(out, &items, 5, &mut cuts);
            map(out, sizes[5], &mut cuts, &mut |i, o| {
                zigzag(i as i64 * 1000 - row as i64, o);
                if i % 2 == 1 {
                    o.push(0);
                } else {
                    o.extend(if pad_inner { &[0x82, 0][..] } else { &[2][..] });
                    string(&format!("y{row}.{i}"), o);
                }
            });
            // `p`: present, its index padded in the second encoding.
            out.extend(if e == 1 { &[0x82, 0][..] } else { &[2][..] });
            zigzag(row as i64, out);
        }
        strings.push(s);
    }
    for batch_size in [1, 7, 1000] {
        let decoded: Vec<Vec<arrow_array::RecordBatch>> = encodings
            .iter()
            .map(|data| {
                let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
                    .unwrap()
                    .decoder()
                    .with_batch_size(batch_size);
                let mut batches = d.decode_block(data, rows as u64).unwrap();
                batches.extend(d.flush().unwrap());
                batches
            })
            .collect();
        assert_eq!(
            decoded[0], decoded[1],
            "batch size {batch_size}: record fails at the end"
        );
        assert_eq!(
            decoded[0], decoded[2],
            "batch size {batch_size}: fails inside maps"
        );
        // And the string maps hold what was written.
        let mut got = Vec::new();
        for b in &decoded[0] {
            let m = b.column(0).as_map();
            for r in 0..b.num_rows() {
                let entries = m.value(r);
                let keys = entries.column(0).as_string::<i32>();
                let values = entries.column(1).as_string::<i32>();
                got.push(
                    (0..keys.len())
                        .map(|i| (keys.value(i).to_string(), values.value(i).to_string()))
                        .collect::<Vec<_>>(),
                );
            }
        }
        assert_eq!(got, strings, "batch size {batch_size}");
    }
    // Row 1: every map empty, `n` null, `p` null; row 2 the same but `m` holds a map whose
    // second string runs past the data.
    let mut bad = vec![0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    bad.push(2);
    string("k", &mut bad);
    bad.push(4);
    string("a", &mut bad);
    string("ok", &mut bad);
    string("b", &mut bad);
    zigzag(40, &mut bad);
    bad.extend(b"short");
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&bad, 2)
        .unwrap_err();
    assert!(e.field_path().starts_with('m'), "{e}");
}
