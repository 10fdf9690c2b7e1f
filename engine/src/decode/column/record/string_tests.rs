//! Tests of the row loop for records of strings and bytes only
//! (`StructCol::decode_rows_strings`): each field read as a string, with no dispatch on its
//! kind, against the values written.

use super::tests::check_cuts;
use crate::decode::probe::{self, SLOW_RECORDS};
use crate::decode::test_encode::{string, zigzag, Rng};
use crate::decode::{DecodeOptions, DecodePlan};
use crate::schema::Schema;
use arrow_array::cast::AsArray;
use arrow_array::RecordBatch;

const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
    {"name":"s","type":"string"},
    {"name":"b","type":"bytes"},
    {"name":"u","type":{"type":"string","logicalType":"unknown-kind"}}]}"#;

/// One row: the two strings and the bytes.
type Row = (String, Vec<u8>, String);

fn random_rows(n: usize, seed: u64) -> Vec<Row> {
    let mut rng = Rng::new(seed);
    let mut next = move |m: u64| rng.below(m);
    const PIECES: [&str; 6] = ["a", "GET /", "é", "日本", "🦀", "0123456789"];
    let text = |next: &mut dyn FnMut(u64) -> u64| {
        // Empty, short (at most 16 bytes) and long strings, some with multi-byte characters.
        let pieces = [0, 1, 3, 12][next(4) as usize];
        (0..pieces)
            .map(|_| PIECES[next(6) as usize])
            .collect::<String>()
    };
    (0..n)
        .map(|_| {
            let s = text(&mut next);
            let b = (0..next(40)).map(|_| next(256) as u8).collect();
            let u = text(&mut next);
            (s, b, u)
        })
        .collect()
}

/// The rows encoded, and where each ends.
fn encode(rows: &[Row]) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::new();
    let mut ends = Vec::new();
    for (s, b, u) in rows {
        string(s, &mut out);
        zigzag(b.len() as i64, &mut out);
        out.extend(b);
        string(u, &mut out);
        ends.push(out.len());
    }
    (out, ends)
}

fn values(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for batch in batches {
        let s = batch.column(0).as_string::<i32>();
        let b = batch.column(1).as_binary::<i32>();
        let u = batch.column(2).as_string::<i32>();
        for r in 0..batch.num_rows() {
            out.push((
                s.value(r).to_string(),
                b.value(r).to_vec(),
                u.value(r).to_string(),
            ));
        }
    }
    out
}

/// Random rows (empty, short and long strings, multi-byte characters, bytes of any value)
/// are read by the strings loop (`STRING_ROWS`) alone (no row decoded again) and equal the values written,
/// in batches of 1, 7 and 1000 rows; cut short anywhere, the rows before the cut read alike
/// and the cut row fails. An invalid string and a length past the data name their record and
/// field.
#[test]
fn records_of_strings_match_the_values_written() {
    let plan = DecodePlan::new(&Schema::parse(SCHEMA).unwrap(), &DecodeOptions::default()).unwrap();
    assert!(plan.decoder().root.reads_strings());
    let rows = random_rows(700, 0xA076_1D64_78BD_642F);
    let (data, ends) = encode(&rows);
    for batch_size in [1, 7, 1000] {
        let mut d = plan.decoder().with_batch_size(batch_size);
        let before = probe::get(&SLOW_RECORDS);
        let mut batches = d.decode_block(&data, rows.len() as u64).unwrap();
        batches.extend(d.flush().unwrap());
        assert_eq!(
            probe::get(&SLOW_RECORDS) - before,
            0,
            "batch size {batch_size}"
        );
        assert_eq!(
            probe::get(&probe::LAST_LOOP),
            u64::from(crate::decode::STRING_ROWS)
        );
        assert_eq!(values(&batches), rows, "batch size {batch_size}");
    }
    let mut d = plan.decoder();
    let whole = d.decode_block(&data, rows.len() as u64).unwrap();
    let whole = whole.into_iter().chain(d.flush().unwrap()).next().unwrap();
    check_cuts(&plan, &data, &ends, &whole);

    // Row 300's `u` not UTF-8 (found by the per-buffer check, named again).
    let mut invalid = rows.clone();
    invalid[300].2 = "x".into();
    let (mut bad, bad_ends) = encode(&invalid);
    bad[bad_ends[300] - 1] = 0xFF;
    let e = plan
        .decoder()
        .decode_block(&bad, rows.len() as u64)
        .unwrap_err();
    assert_eq!(e.field_path(), "u", "{e}");
    assert_eq!(e.record(), Some(300), "{e}");

    // Row 9's `b` longer than the data.
    let (mut long, _) = encode(&rows[..9]);
    string("s", &mut long);
    zigzag(1 << 20, &mut long);
    long.extend([1, 2, 3]);
    let e = plan.decoder().decode_block(&long, 10).unwrap_err();
    assert_eq!(e.field_path(), "b", "{e}");
    assert_eq!(e.record(), Some(9), "{e}");
}
