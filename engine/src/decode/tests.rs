//! Tests of the record decoder: cutting blocks into batches, pausing inside them, and the
//! fast paths against the reference.

use super::*;
use crate::decode::test_encode::Rng;
use crate::varint::Scalar;
use arrow_array::cast::AsArray;
use arrow_array::{Array, Int64Array};

fn decoder(json: &str, batch_size: usize) -> RecordDecoder {
    let schema = Schema::parse(json).unwrap();
    DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .with_batch_size(batch_size)
}

fn longs(batches: &[RecordBatch]) -> Vec<i64> {
    let column = |b: &RecordBatch| {
        let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        a.values().to_vec()
    };
    batches.iter().flat_map(column).collect()
}

/// Zigzag varints of `values`, one record each.
fn encode(values: impl IntoIterator<Item = i64>) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        Scalar.write_long(v, &mut out);
    }
    out
}

const LONGS: &str = r#"{"type":"record","name":"r","fields":[{"name":"v","type":"long"}]}"#;

/// A consumer that drops each batch before the next block is decoded: the batch that
/// began in the middle of a block fills the dropped batch's buffers (its room deferred to
/// its next block), and a decoder's first batch gets a whole batch's room at its second
/// block, from buffers a reader that is gone gave back.
#[test]
fn batches_begun_mid_block_reuse_the_dropped_batches_buffers() {
    const STRINGS: &str = r#"{"type":"record","name":"r","fields":[{"name":"s","type":"string"}]}"#;
    let text = "x".repeat(1000);
    let mut block = Vec::new();
    for _ in 0..30 {
        crate::decode::test_encode::string(&text, &mut block);
    }
    let values = |b: &RecordBatch| b.column(0).as_string::<i32>().values().as_ptr();
    // Blocks of 30 rows, batches of 400: every batch after the first begins mid-block.
    let read = |d: &mut RecordDecoder| {
        let mut seen = Vec::new();
        for _ in 0..100 {
            for batch in d.decode_block(&block, 30).unwrap() {
                assert_eq!(batch.num_rows(), 400);
                seen.push(values(&batch));
            }
        }
        // The rest, as a reader flushes it at the end of the file.
        assert_eq!(d.flush().unwrap().map(|b| b.num_rows()), Some(200));
        seen
    };
    let mut d = decoder(STRINGS, 400);
    let seen = read(&mut d);
    assert_eq!(seen.len(), 7);
    for (i, p) in seen.iter().enumerate().skip(1) {
        assert_eq!(*p, seen[0], "batch {i} is in fresh memory");
    }
    drop(d);
    // The next reader's first batch: the buffer the last one left.
    let mut next = decoder(STRINGS, 400);
    assert_eq!(read(&mut next)[0], seen[0]);
}

#[test]
fn a_block_is_cut_into_batches_and_the_rest_stays_buffered() {
    let mut d = decoder(LONGS, 1000);
    let values: Vec<i64> = (0..2500).map(|i| i * 7919 - 5000).collect();
    let batches = d.decode_block(&encode(values.clone()), 2500).unwrap();
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
        [1000, 1000]
    );
    assert_eq!(d.buffered_rows(), 500);
    let mut all = batches;
    all.extend(d.flush().unwrap());
    assert_eq!(longs(&all), values);
}

#[test]
fn a_full_batch_buffered_before_the_block_is_handed_out_first() {
    let mut d = decoder(LONGS, 4);
    let mut pos = 0;
    d.decode_rows(&encode(0..6), &mut pos, 6).unwrap();
    assert_eq!(d.buffered_rows(), 6);
    let batches = d.decode_block(&encode(6..9), 3).unwrap();
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
        [6]
    );
    let mut all = batches;
    all.extend(d.flush().unwrap());
    assert_eq!(longs(&all), (0..9).collect::<Vec<_>>());
}

#[test]
fn records_of_zero_bytes_repeat_one_batch() {
    let json = r#"{"type":"record","name":"r","fields":[{"name":"n","type":"null"}]}"#;
    let mut d = decoder(json, 1000);
    let batches = d.decode_block(&[], 10_000_500).unwrap();
    assert_eq!(batches.len(), 10_000);
    assert!(batches.iter().all(|b| b.num_rows() == 1000));
    // One batch, handed out again: every clone shares its arrays.
    assert!(batches
        .iter()
        .all(|b| Arc::ptr_eq(b.column(0), batches[0].column(0))));
    assert_eq!(d.buffered_rows(), 500);
    assert_eq!(d.flush().unwrap().unwrap().num_rows(), 500);
}

/// A sink that is full once it holds `pause_after` batches (the caller empties it).
struct Pausing {
    batches: Vec<RecordBatch>,
    pause_after: usize,
}

impl BatchSink for Pausing {
    fn push(&mut self, batch: RecordBatch) {
        self.batches.push(batch);
    }
    fn is_full(&self) -> bool {
        self.batches.len() >= self.pause_after
    }
}

/// Blocks decoded in parts, with the sink emptied at every pause, give the batches of
/// whole blocks; each part hands out at most `pause_after` batches, and nothing is
/// buffered at a pause. Random blocks, batch sizes and pauses, records with strings.
#[test]
fn blocks_decoded_in_parts_match_whole_blocks() {
    const ROWS: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"v","type":"long"},{"name":"s","type":["null","string"]}]}"#;
    let mut rng = Rng::new(0x9a7);
    for round in 0..200 {
        let batch_size = 1 + rng.below(50) as usize;
        let pause_after = 1 + rng.below(3) as usize;
        let blocks: Vec<(Vec<u8>, u64)> = (0..1 + rng.below(4))
            .map(|_| {
                let n = rng.below(300);
                let mut data = Vec::new();
                for _ in 0..n {
                    crate::decode::test_encode::zigzag(
                        rng.next() as i64 >> rng.below(64),
                        &mut data,
                    );
                    if rng.below(3) == 0 {
                        data.push(0);
                    } else {
                        data.push(2);
                        let text = "é".repeat(rng.below(5) as usize);
                        crate::decode::test_encode::string(&text, &mut data);
                    }
                }
                (data, n)
            })
            .collect();
        let mut whole = decoder(ROWS, batch_size);
        let mut expect = Vec::new();
        for (data, n) in &blocks {
            whole.decode_block_into(data, *n, *n, &mut expect).unwrap();
        }
        expect.extend(whole.flush().unwrap());
        let mut parts = decoder(ROWS, batch_size);
        let mut got = Vec::new();
        for (data, n) in &blocks {
            let mut progress = BlockProgress::default();
            loop {
                let mut out = Pausing {
                    batches: Vec::new(),
                    pause_after,
                };
                let done = parts
                    .decode_block_part(data, *n, *n, &mut out, &mut progress)
                    .unwrap();
                assert!(out.batches.len() <= pause_after.max(2), "round {round}");
                got.extend(out.batches);
                if done {
                    break;
                }
                assert_eq!(parts.buffered_rows(), 0, "round {round}");
                assert!(progress.records() < *n, "round {round}");
            }
            assert_eq!(progress.records(), *n);
            assert_eq!(progress.offset(), data.len());
        }
        got.extend(parts.flush().unwrap());
        let sizes = |b: &[RecordBatch]| b.iter().map(|b| b.num_rows()).collect::<Vec<_>>();
        assert_eq!(sizes(&got), sizes(&expect), "round {round}");
        assert_eq!(got, expect, "round {round}");
    }
}

/// An error after a pause names the record from the block's first one.
#[test]
fn an_error_after_a_pause_counts_records_from_the_block_start() {
    let mut d = decoder(LONGS, 10);
    let mut data = encode(0..25);
    data.extend([0x80; 12]);
    let mut progress = BlockProgress::default();
    let mut parts = 0;
    let error = loop {
        let mut out = Pausing {
            batches: Vec::new(),
            pause_after: 1,
        };
        match d.decode_block_part(&data, 26, 26, &mut out, &mut progress) {
            Ok(done) => {
                assert!(!done);
                assert_eq!(
                    longs(&out.batches),
                    (parts * 10..parts * 10 + 10).collect::<Vec<_>>()
                );
                parts += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(parts, 2);
    assert_eq!(error.record(), Some(25), "{error}");
    assert_eq!(error.offset(), 25);
    assert_eq!(d.buffered_rows(), 5);
}

#[test]
fn bytes_after_the_last_record_are_an_error() {
    let mut d = decoder(LONGS, 1000);
    let mut data = encode([1, 2]);
    data.push(0);
    let e = d.decode_block(&data, 2).unwrap_err();
    assert!(matches!(e.kind(), DecodeErrorKind::TrailingBytes(1)), "{e}");
}

/// Nullable fields read their branch index as one byte on the fast path; an index written
/// as a longer (padded) varint sends the record to the reference path, which reads it as
/// before, and a bad index is an error naming the field, whichever order the union has.
#[test]
fn nullable_branch_bytes_padded_indexes_and_bad_indexes() {
    const NULLABLE: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":["null","long"]},{"name":"b","type":["double","null"]}]}"#;
    let mut d = decoder(NULLABLE, 100);
    let mut data = Vec::new();
    let mut expect = Vec::new();
    for i in 0..100i64 {
        // a: null every third record; b: null every fifth.
        let a = (i % 3 != 0).then_some(i * 1000 - 7);
        let b = (i % 5 != 0).then_some(i as f64 * 0.5);
        let padded = i % 7 == 0;
        match a {
            Some(_) if padded => data.extend([0x82, 0x00]),
            Some(_) => data.push(2),
            None if padded => data.extend([0x80, 0x80, 0x00]),
            None => data.push(0),
        }
        if let Some(v) = a {
            Scalar.write_long(v, &mut data);
        }
        match b {
            Some(v) => {
                data.push(if padded { 0x80 } else { 0 });
                if padded {
                    data.push(0);
                }
                data.extend(v.to_le_bytes());
            }
            None => data.push(2),
        }
        expect.push((a, b));
    }
    let batches = d.decode_block(&data, 100).unwrap();
    assert_eq!(batches.len(), 1);
    let a = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let b = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    let got: Vec<_> = (0..100)
        .map(|i| {
            (
                a.is_valid(i).then(|| a.value(i)),
                b.is_valid(i).then(|| b.value(i)),
            )
        })
        .collect();
    assert_eq!(got, expect);
    assert_eq!(a.null_count(), 34);
    assert_eq!(b.null_count(), 20);

    // All valid: no null buffer at all.
    let mut d = decoder(NULLABLE, 10);
    let mut data = Vec::new();
    for i in 0..10i64 {
        data.push(2);
        Scalar.write_long(i, &mut data);
        data.push(0);
        data.extend(1.5f64.to_le_bytes());
    }
    let batches = d.decode_block(&data, 10).unwrap();
    assert!(batches[0].column(0).nulls().is_none());
    assert!(batches[0].column(1).nulls().is_none());

    // Branch index 2 (the byte 4) in either order of the union.
    for (bad, field) in [(vec![4u8, 0], "a"), (vec![0, 4], "b")] {
        let mut d = decoder(NULLABLE, 1000);
        let e = d.decode_block(&bad, 1).unwrap_err();
        assert!(
            matches!(e.kind(), DecodeErrorKind::UnionIndex { index: 2, .. }),
            "{e}"
        );
        assert_eq!(e.field_path(), field, "{e}");
    }
}

/// Nullable numbers are read with no branch on null (the number read from the bytes after
/// the index either way, kept only if present): the same batches as the reference path,
/// which a padded branch index sends every record to, for numbers at their extremes, in
/// either order of the union, the last value of the block included.
#[test]
fn nullable_numbers_without_a_branch_match_the_reference() {
    use super::test_encode::{branch, string};
    const NUMBERS: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"i","type":["null","int"]},{"name":"l","type":["long","null"]},
        {"name":"s","type":"string"},
        {"name":"f","type":["null","float"]},{"name":"d","type":["double","null"]},
        {"name":"b","type":["null","boolean"]},
        {"name":"e","type":[{"type":"enum","name":"E","symbols":["A","B","C"]},"null"]},
        {"name":"t","type":["null","string"]},{"name":"y","type":["bytes","null"]}]}"#;
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next();
    let rows = 2000;
    let (mut plain, mut padded) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        let r = next();
        let long = match r % 5 {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => (next() as i64) >> (next() % 64),
        };
        let int = [i32::MIN, i32::MAX, -1, 0, (next() >> 40) as i32][(r >> 8) as usize % 5];
        // (null index, present, value bytes) per nullable field, then the string.
        // Strings and bytes of one-byte and two-byte lengths, under and over the 64
        // bytes copied by one fixed move; a column of long values (`y`) takes the
        // branching path from its second batch.
        let text = |len: u64| {
            let mut v = Vec::new();
            Scalar.write_long(len as i64, &mut v);
            v.extend((0..len).map(|i| b'a' + (i % 26) as u8));
            v
        };
        let short = [0, 3, 63, 64, 65, 70][(r >> 40) as usize % 6];
        let long_len = 40 + (r >> 44) % 260;
        let fields: [(i64, bool, Vec<u8>); 8] = [
            (0, r >> 16 & 3 != 0, {
                let mut v = Vec::new();
                Scalar.write_long(int.into(), &mut v);
                v
            }),
            (1, r >> 18 & 3 != 0, {
                let mut v = Vec::new();
                Scalar.write_long(long, &mut v);
                v
            }),
            (
                0,
                r >> 20 & 1 != 0,
                f32::from_bits(next() as u32).to_le_bytes().to_vec(),
            ),
            (
                1,
                r >> 21 & 1 != 0,
                f64::from_bits(next()).to_le_bytes().to_vec(),
            ),
            (0, r >> 22 & 1 != 0, vec![(r >> 30) as u8 & 1]),
            (1, r >> 23 & 3 != 0, vec![(r >> 32) as u8 % 3 * 2]),
            (0, r >> 25 & 1 != 0, text(short)),
            (1, r >> 26 & 3 != 0, text(long_len)),
        ];
        for (out, pad) in [(&mut plain, false), (&mut padded, true)] {
            for (k, (null, present, value)) in fields.iter().enumerate() {
                if k == 2 {
                    string(&"x".repeat((r >> 24) as usize % 20), out);
                }
                let index = if *present { 1 - null } else { *null };
                branch(index, pad, out);
                if *present {
                    out.extend(value);
                }
            }
        }
    }
    for batch_size in [3, 1000] {
        let decode = |data: &[u8]| {
            let mut d = decoder(NUMBERS, batch_size);
            let mut batches = d.decode_block(data, rows).unwrap();
            batches.extend(d.flush().unwrap());
            batches
        };
        let before = probe::get(&probe::SLOW_RECORDS);
        let reference = decode(&padded);
        assert_eq!(
            probe::get(&probe::SLOW_RECORDS) - before,
            rows,
            "every row decoded again"
        );
        let before = probe::get(&probe::SLOW_RECORDS);
        assert_eq!(decode(&plain), reference, "batch size {batch_size}");
        // (Read by the row loop alone: no row decoded again.)
        assert_eq!(
            probe::get(&probe::SLOW_RECORDS),
            before,
            "batch size {batch_size}"
        );
        // The same record as the one field of another: read by the record loop's fields
        // path (the numbers through a call, `number_or_null_out`), not the row loop.
        let wrapped =
            format!(r#"{{"type":"record","name":"w","fields":[{{"name":"r","type":{NUMBERS}}}]}}"#);
        let mut d = decoder(&wrapped, batch_size);
        let mut batches = d.decode_block(&plain, rows).unwrap();
        batches.extend(d.flush().unwrap());
        assert_eq!(batches.len(), reference.len());
        for (w, r) in batches.iter().zip(&reference) {
            let inner = w.column(0).as_struct();
            assert_eq!(inner.columns(), r.columns(), "batch size {batch_size}");
        }
    }
    // An int out of range and a value cut short are errors of their field, as on the
    // reference path.
    let mut bad = vec![2];
    Scalar.write_long(i64::from(i32::MAX) + 1, &mut bad);
    bad.extend([0; 16]);
    let e = decoder(NUMBERS, 10).decode_block(&bad, 1).unwrap_err();
    assert_eq!(e.field_path(), "i", "{e}");
    let e = decoder(NUMBERS, 10)
        .decode_block(&[0, 2, 6, b'a', b'b', b'c', 2, 1, 2], 1)
        .unwrap_err();
    assert_eq!(e.field_path(), "f", "{e}");
    // A boolean byte of 2, an enum index past the symbols (each with 16 bytes after it:
    // the values are read ahead either way).
    let head = [0u8, 2, 0, 0, 2];
    for (tail, field) in [
        (vec![2u8, 2], "b"),
        (vec![0, 0, 6], "e"),
        (vec![0, 0, 0, 2, 40], "t"),
    ] {
        let mut bad = head.to_vec();
        bad.extend(tail);
        bad.extend([0; 16]);
        let e = decoder(NUMBERS, 10).decode_block(&bad, 1).unwrap_err();
        assert_eq!(e.field_path(), field, "{e}");
    }
}

/// Nested records (plain, nullable, in arrays) are decoded on their enclosing record's fast
/// path. Every row written with padded branch indexes (legal) fails that path and is decoded
/// by the value-by-value reference; rows padded only in their innermost nullable field fail
/// it after the outer fields were appended. All three encodings give the same batches.
#[test]
fn nested_records_on_the_fast_path_match_the_reference() {
    use super::test_encode::{branch, string};
    const NESTED: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"id","type":"long"},
        {"name":"a","type":{"type":"record","name":"A","fields":[
            {"name":"x","type":"long"},
            {"name":"b","type":{"type":"record","name":"B","fields":[
                {"name":"s","type":"string"},{"name":"n","type":["null","long"]},
                {"name":"c","type":{"type":"record","name":"C","fields":[
                    {"name":"t","type":["null","long"]},
                    {"name":"d","type":{"type":"record","name":"D","fields":[
                        {"name":"u","type":"string"},
                        {"name":"p","type":["null","int"]}]}}]}},
                {"name":"m","type":["null",{"type":"record","name":"M","fields":[
                    {"name":"g","type":"string"},
                    {"name":"h","type":["null","long"]}]}]}]}}]}},
        {"name":"o","type":["null",{"type":"record","name":"O","fields":[
            {"name":"y","type":"int"},{"name":"z","type":"string"},
            {"name":"w","type":["null","double"]}]}]},
        {"name":"l","type":{"type":"array","items":{"type":"record","name":"L","fields":[
            {"name":"k","type":"string"},
            {"name":"v","type":{"type":"record","name":"V","fields":[
                {"name":"q","type":["null","long"]}]}}]}}}]}"#;
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    let mut next = move |m: u64| rng.below(m);
    // (pad every branch index, pad only the innermost ones) -> bytes.
    let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
    let rows = 300;
    for row in 0..rows as i64 {
        let (n, o, w) = (next(3) > 0, next(4) > 0, next(2) > 0);
        let items: Vec<(u64, bool)> = (0..next(4)).map(|_| (next(1000), next(3) > 0)).collect();
        for (e, out) in encodings.iter_mut().enumerate() {
            let pad_all = e == 1;
            let pad_inner = pad_all || (e == 2 && row % 3 == 0);
            Scalar.write_long(row * 1001, out);
            Scalar.write_long(-row, out);
            string(&format!("s{row}"), out);
            branch(n as i64, pad_inner, out);
            if n {
                Scalar.write_long(row << 20, out);
            }
            // Records four deep: C and D alternate between a call and inline code.
            branch(i64::from(row % 5 != 0), pad_inner, out);
            if row % 5 != 0 {
                Scalar.write_long(row * 3, out);
            }
            string(&"u".repeat(row as usize % 4), out);
            branch(i64::from(w), pad_inner, out);
            if w {
                Scalar.write_long(row % 1000, out);
            }
            // A nullable record inside them (inline in B's called code).
            branch(i64::from(row % 3 != 0), pad_all, out);
            if row % 3 != 0 {
                string(&"g".repeat(row as usize % 5), out);
                branch(i64::from(n), pad_inner, out);
                if n {
                    Scalar.write_long(row * 7, out);
                }
            }
            branch(o as i64, pad_all, out);
            if o {
                Scalar.write_long(row % 77, out);
                string(&"z".repeat(row as usize % 9), out);
                branch(w as i64, pad_inner, out);
                if w {
                    out.extend((row as f64 * 0.25).to_le_bytes());
                }
            }
            if !items.is_empty() {
                Scalar.write_long(items.len() as i64, out);
                for &(k, q) in &items {
                    string(&format!("k{k}"), out);
                    branch(q as i64, pad_inner, out);
                    if q {
                        Scalar.write_long(k as i64 - 500, out);
                    }
                }
            }
            out.push(0);
        }
    }
    for batch_size in [7, 1000] {
        let decoded: Vec<Vec<RecordBatch>> = encodings
            .iter()
            .map(|data| {
                let mut d = decoder(NESTED, batch_size);
                let mut batches = d.decode_block(data, rows).unwrap();
                batches.extend(d.flush().unwrap());
                batches
            })
            .collect();
        let total: usize = decoded[0].iter().map(|b| b.num_rows()).sum();
        assert_eq!(total as u64, rows);
        assert_eq!(
            decoded[0], decoded[1],
            "batch size {batch_size}: all padded"
        );
        assert_eq!(
            decoded[0], decoded[2],
            "batch size {batch_size}: inner padded"
        );
    }

    // A bad branch index deep inside is named by its path: in B, four records deep
    // (after the inner records' first fields were read), and in a nullable record among
    // them. (The zeros after each are the rest of the record's minimum size.)
    for (head, bad_index, path) in [
        (&[2, 2, 2, b's', 6][..], 3, "a.b.n"),
        (&[2, 2, 2, b's', 0, 0, 0, 4][..], 2, "a.b.c.d.p"),
        (&[2, 2, 2, b's', 0, 0, 0, 0, 2, 0, 4][..], 2, "a.b.m.h"),
    ] {
        let mut data = head.to_vec();
        data.extend([0; 12]);
        let e = decoder(NESTED, 10).decode_block(&data, 1).unwrap_err();
        assert!(
            matches!(e.kind(), DecodeErrorKind::UnionIndex { index, .. } if *index == bad_index),
            "{path}: {e}"
        );
        assert_eq!(e.field_path(), path, "{e}");
    }
}
