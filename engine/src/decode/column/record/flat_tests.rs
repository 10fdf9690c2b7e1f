//! Tests of the bulk path for records of varints only (`StructCol::decode_flat`): ints,
//! longs, booleans and enums decoded a chunk of rows at a time, each column dealt out and
//! checked in one pass, and a chunk with a bad value dropped from every column.

use crate::decode::column::extend_checked;
use crate::decode::probe::{self, FLAT_RECORDS};
use crate::decode::test_encode::{zigzag, Rng};
use crate::decode::{DecodeOptions, DecodePlan};
use crate::schema::Schema;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int32Type, Int64Type};
use arrow_array::RecordBatch;

const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
    {"name":"i","type":"int"},
    {"name":"l","type":"long"},
    {"name":"b","type":"boolean"},
    {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
    {"name":"d","type":{"type":"int","logicalType":"date"}}]}"#;

/// One row's values: int, long, boolean, enum index, date.
type Row = (i32, i64, bool, i32, i32);

fn random_rows(n: usize, seed: u64) -> Vec<Row> {
    let mut rng = Rng::new(seed);
    let mut next = move |m: u64| rng.below(m);
    (0..n)
        .map(|_| {
            (
                (next(1 << 32) as u32 as i32) >> next(32),
                (next(u64::MAX) as i64) >> next(64),
                next(2) == 1,
                next(3) as i32,
                next(80_000) as i32 - 40_000,
            )
        })
        .collect()
}

/// The rows encoded; field `bad.1` of row `bad.0`, if given, replaced by the bytes `bad.2`.
fn encode(rows: &[Row], bad: Option<(usize, usize, &[u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (r, &(i, l, b, e, d)) in rows.iter().enumerate() {
        let mut fields: [Vec<u8>; 5] = Default::default();
        zigzag(i.into(), &mut fields[0]);
        zigzag(l, &mut fields[1]);
        fields[2].push(u8::from(b));
        zigzag(e.into(), &mut fields[3]);
        zigzag(d.into(), &mut fields[4]);
        if let Some((row, field, bytes)) = bad {
            if row == r {
                fields[field] = bytes.to_vec();
            }
        }
        fields.iter().for_each(|f| out.extend(f));
    }
    out
}

fn values(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let i = b.column(0).as_primitive::<Int32Type>();
        let l = b.column(1).as_primitive::<Int64Type>();
        let bools = b.column(2).as_boolean();
        let e = b.column(3).as_dictionary::<Int32Type>();
        let d = b.column(4).as_primitive::<Date32Type>();
        for r in 0..b.num_rows() {
            out.push((
                i.value(r),
                l.value(r),
                bools.value(r),
                e.keys().value(r),
                d.value(r),
            ));
        }
    }
    out
}

/// Random rows (ints and longs of every width) read back as written, in batches of 7 rows
/// (too few for the bulk path: the record loop reads them), 1000 and 5000 (every row read by
/// the bulk path, in chunks that end mid-batch and mid-block).
#[test]
fn records_of_varints_are_read_in_bulk() {
    let plan = DecodePlan::new(&Schema::parse(SCHEMA).unwrap(), &DecodeOptions::default()).unwrap();
    let rows = random_rows(3000, 0x2545_F491_4F6C_DD1D);
    let data = encode(&rows, None);
    for batch_size in [7, 1000, 5000] {
        let mut d = plan.decoder().with_batch_size(batch_size);
        let before = probe::get(&FLAT_RECORDS);
        let mut batches = d.decode_block(&data, rows.len() as u64).unwrap();
        batches.extend(d.flush().unwrap());
        assert_eq!(values(&batches), rows, "batch size {batch_size}");
        let bulk = if batch_size < 16 {
            0
        } else {
            rows.len() as u64
        };
        assert_eq!(
            probe::get(&FLAT_RECORDS) - before,
            bulk,
            "batch size {batch_size}"
        );
    }
}

/// A value the bulk path decodes but must refuse (an int past 32 bits, a boolean byte of 2 or 3
/// or a boolean written as a padded varint, which the bulk decoder reads as 0,
/// an enum index past the symbols or negative, a date past 32 bits), in the first row, at a
/// chunk's edges, mid-chunk or in the last row: the error names the field and the record,
/// and the rows before it, kept for a flush, are the rows written (so the failed chunk's
/// values were dropped from every column before the record loop read them again).
#[test]
fn a_bad_varint_in_a_bulk_chunk_names_its_record_and_keeps_the_rows_before() {
    let plan = DecodePlan::new(&Schema::parse(SCHEMA).unwrap(), &DecodeOptions::default()).unwrap();
    let rows = random_rows(2500, 0x9E37_79B9_7F4A_7C15);
    let long = |v: i64| {
        let mut out = Vec::new();
        zigzag(v, &mut out);
        out
    };
    let bad: [(usize, &str, Vec<u8>); 7] = [
        (0, "i", long(1 << 40)),
        (2, "b", vec![2]),
        (2, "b", vec![3]),
        (2, "b", vec![0x80, 0x00]),
        (3, "e", long(3)),
        (3, "e", long(-1)),
        (4, "d", long(-(1 << 33))),
    ];
    for (field, name, bytes) in &bad {
        for row in [0, 1, 1023, 1024, 1700, rows.len() - 1] {
            let data = encode(&rows, Some((row, *field, bytes)));
            let mut d = plan.decoder().with_batch_size(5000);
            let before = probe::get(&FLAT_RECORDS);
            let e = d.decode_block(&data, rows.len() as u64).unwrap_err();
            // The chunks before the bad one were read in bulk.
            assert_eq!(
                probe::get(&FLAT_RECORDS) - before,
                (row / 1024 * 1024) as u64,
                "{name} at {row}"
            );
            assert_eq!(e.record(), Some(row as u64), "{name} at {row}: {e}");
            assert_eq!(e.field_path(), *name, "{name} at {row}: {e}");
            let kept: Vec<RecordBatch> = d.flush().unwrap().into_iter().collect();
            assert_eq!(values(&kept), rows[..row], "{name} at {row}");
        }
    }
}

/// `extend_checked` against a plain loop: every field of rows of 1 to 5 values, with a
/// check that some values fail, appended after what the vector held.
#[test]
fn extend_checked_matches_a_plain_loop() {
    let mut rng = Rng::new(0xD1B5_4A32_D192_ED03);
    for k in 1..=5 {
        for rows in [0, 1, 2, 15, 64, 333] {
            let values: Vec<i64> = (0..rows * k).map(|_| rng.below(1000) as i64).collect();
            for j in 0..k {
                let limit = rng.below(1100) as i64;
                let f = |v: i64| (v as i32 * 2, v < limit);
                let mut got = vec![-7, -8];
                let valid = extend_checked(&mut got, &values, j, k, f);
                let mut want = vec![-7, -8];
                let mut all = true;
                for row in values.chunks_exact(k) {
                    let (x, ok) = f(row[j]);
                    want.push(x);
                    all &= ok;
                }
                assert_eq!(got, want, "k {k} rows {rows} field {j}");
                assert_eq!(valid, all, "k {k} rows {rows} field {j}");
            }
        }
    }
}

/// Enums resolved against a reader's symbols (reordered, one writer symbol missing) are
/// remapped by the bulk path; the missing symbol in a row is an error of that field and
/// record, with the rows before it kept.
#[test]
fn records_of_varints_with_a_remapped_enum() {
    let reader = SCHEMA.replace(r#"["A","B","C"]"#, r#"["C","A"]"#);
    let plan = DecodePlan::resolve(
        &Schema::parse(SCHEMA).unwrap(),
        &Schema::parse(&reader).unwrap(),
        &DecodeOptions::default(),
    )
    .unwrap();
    let mut rows = random_rows(1500, 0x8CB9_2BA7_2F3D_8DD7);
    // Writer indexes 0 (A) and 2 (C) only, read as the reader's 1 and 0.
    rows.iter_mut()
        .for_each(|r| r.3 = [0, 2][(r.1 & 1) as usize]);
    let data = encode(&rows, None);
    let before = probe::get(&FLAT_RECORDS);
    let mut d = plan.decoder().with_batch_size(5000);
    let mut batches = d.decode_block(&data, rows.len() as u64).unwrap();
    batches.extend(d.flush().unwrap());
    assert_eq!(probe::get(&FLAT_RECORDS) - before, rows.len() as u64);
    let want: Vec<Row> = rows
        .iter()
        .map(|&(i, l, b, e, d)| (i, l, b, if e == 0 { 1 } else { 0 }, d))
        .collect();
    assert_eq!(values(&batches), want);

    let mut missing = rows.clone();
    missing[1200].3 = 1; // B: not among the reader's symbols
    let mut d = plan.decoder().with_batch_size(5000);
    let e = d
        .decode_block(&encode(&missing, None), rows.len() as u64)
        .unwrap_err();
    assert_eq!(e.record(), Some(1200), "{e}");
    assert_eq!(e.field_path(), "e", "{e}");
    let kept: Vec<RecordBatch> = d.flush().unwrap().into_iter().collect();
    assert_eq!(values(&kept), want[..1200]);
}

/// Padded varints (legal for ints, longs and enums) beside booleans send their chunk to the
/// record loop, which reads them; the other chunks are read in bulk.
#[test]
fn padded_varints_beside_booleans_are_read() {
    let plan = DecodePlan::new(&Schema::parse(SCHEMA).unwrap(), &DecodeOptions::default()).unwrap();
    let mut rows = random_rows(2500, 0x6A09_E667_F3BC_C908);
    rows[1500].0 = 1;
    // 1 as a three-byte varint (zigzag 2, then two continuation bytes).
    let data = encode(&rows, Some((1500, 0, &[0x82, 0x80, 0x00])));
    let mut d = plan.decoder().with_batch_size(5000);
    let before = probe::get(&FLAT_RECORDS);
    let mut batches = d.decode_block(&data, rows.len() as u64).unwrap();
    batches.extend(d.flush().unwrap());
    assert_eq!(values(&batches), rows);
    // The first chunk in bulk; the one with the padded int (and the rest) by the record loop.
    assert_eq!(probe::get(&FLAT_RECORDS) - before, 1024);
}
