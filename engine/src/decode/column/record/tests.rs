//! Tests of the record loops: records nested two deep and more read by one loop over their
//! leaves, against the value-by-value path.

use crate::decode::test_encode::{branch as write_branch, string, zigzag};
use crate::decode::{DecodeOptions, DecodePlan};
use crate::schema::Schema;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;

/// Records nested three deep (`r.a.b.c`, with an empty record and a nullable record beside
/// them) are read by one loop over the leaves (`StructCol::decode_rows_nested`). The same
/// rows encoded plainly, with some rows' branch indexes padded (legal: those rows fail the
/// fast path and are decoded again through the tree, between runs of fast rows) and with
/// every index padded (every row decoded value by value) give equal batches of 1, 7 and 1000
/// rows, with the values written. A string past the data and an invalid string deep inside
/// name their record and field.
#[test]
fn records_nested_deep_match_the_reference() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"id","type":"long"},
        {"name":"a","type":{"type":"record","name":"A","fields":[
            {"name":"x","type":"int"},
            {"name":"b","type":{"type":"record","name":"B","fields":[
                {"name":"s","type":"string"},
                {"name":"c","type":{"type":"record","name":"C","fields":[
                    {"name":"d","type":"double"},
                    {"name":"e","type":["null","string"]}]}},
                {"name":"empty","type":{"type":"record","name":"E","fields":[]}}]}},
            {"name":"y","type":"boolean"}]}},
        {"name":"z","type":["null",{"type":"record","name":"Z","fields":[
            {"name":"q","type":"long"}]}]},
        {"name":"tail","type":"string"}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut x = 0x1234_5678_9ABC_DEF1u64;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let rows = 700;
    // Plain, some rows padded, every row padded.
    let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
    let (mut ids, mut deep) = (Vec::new(), Vec::new());
    for row in 0..rows {
        let id = next(1 << 40) as i64 - (1 << 39);
        let x = next(1000) as i64;
        let s = "s".repeat(next(20) as usize) + &row.to_string();
        let d = next(1 << 52) as f64 / 7.0;
        let e = (next(3) > 0).then(|| format!("e{row}"));
        let y = next(2) as u8;
        let q = (next(2) > 0).then(|| next(1 << 20) as i64);
        let tail = format!("t{}", next(100));
        let pad_some = next(5) == 0;
        for (k, out) in encodings.iter_mut().enumerate() {
            let pad = k == 2 || (k == 1 && pad_some);
            zigzag(id, out);
            zigzag(x, out);
            string(&s, out);
            out.extend(d.to_le_bytes());
            write_branch(i64::from(e.is_some()), pad, out);
            if let Some(e) = &e {
                string(e, out);
            }
            out.push(y);
            write_branch(i64::from(q.is_some()), pad, out);
            if let Some(q) = q {
                zigzag(q, out);
            }
            string(&tail, out);
        }
        ids.push(id);
        deep.push(e);
    }
    let decode = |data: &[u8], batch_size: usize| {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let mut batches = d.decode_block(data, rows as u64).unwrap();
        batches.extend(d.flush().unwrap());
        batches
    };
    for batch_size in [1, 7, 1000] {
        let plain = decode(&encodings[0], batch_size);
        assert_eq!(
            plain,
            decode(&encodings[1], batch_size),
            "batch size {batch_size}"
        );
        assert_eq!(
            plain,
            decode(&encodings[2], batch_size),
            "batch size {batch_size}"
        );
        let (mut got_ids, mut got_deep) = (Vec::new(), Vec::new());
        for b in &plain {
            got_ids.extend(
                b.column(0)
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .copied(),
            );
            let c = b
                .column(1)
                .as_struct()
                .column(1)
                .as_struct()
                .column(1)
                .as_struct();
            assert_eq!(c.len(), b.num_rows());
            got_deep.extend(
                c.column(1)
                    .as_string::<i32>()
                    .iter()
                    .map(|e| e.map(str::to_string)),
            );
        }
        assert_eq!(got_ids, ids, "batch size {batch_size}");
        assert_eq!(got_deep, deep, "batch size {batch_size}");
    }

    // Two good rows, then a third whose `e` runs past the data.
    let mut bad = encodings[0].clone();
    let good = {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder();
        let mut pos = 0;
        d.decode_rows(&bad, &mut pos, 2).unwrap();
        pos
    };
    bad.truncate(good);
    let mut row = Vec::new();
    zigzag(1, &mut row);
    zigzag(2, &mut row);
    string("s", &mut row);
    row.extend(1.5f64.to_le_bytes());
    write_branch(1, false, &mut row);
    zigzag(50, &mut row);
    row.extend(b"short");
    bad.extend(&row);
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&bad, 3)
        .unwrap_err();
    assert_eq!(e.field_path(), "a.b.c.e", "{e}");
    assert!(e.to_string().contains("record 2"), "{e}");

    // An invalid string in `s` of row 5, found by the per-buffer check, named again.
    let mut invalid = Vec::new();
    for r in 0..8 {
        zigzag(r, &mut invalid);
        zigzag(r, &mut invalid);
        string(if r == 5 { "\u{0}" } else { "ok" }, &mut invalid);
        if r == 5 {
            *invalid.last_mut().unwrap() = 0xFF;
        }
        invalid.extend(0f64.to_le_bytes());
        write_branch(0, false, &mut invalid);
        invalid.push(1);
        write_branch(0, false, &mut invalid);
        string("t", &mut invalid);
    }
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&invalid, 8)
        .unwrap_err();
    assert_eq!(e.field_path(), "a.b.s", "{e}");
    assert!(e.to_string().contains("record 5"), "{e}");
}
