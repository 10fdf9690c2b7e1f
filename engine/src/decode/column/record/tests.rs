//! Tests of the record loops: records nested two deep and more read by one loop over their
//! leaves, and arrays of records read on the enclosing cursor, against the value-by-value
//! path.

use crate::decode::probe::{self, counting, SLOW_RECORDS};
use crate::decode::test_encode::{blocks, branch as write_branch, string, zigzag, Rng};
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
    let mut rng = Rng::new(0x1234_5678_9ABC_DEF1);
    let mut next = move |m: u64| rng.below(m);
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
    let plan = DecodePlan::new(&schema, &DecodeOptions::default()).unwrap();
    let decode = |data: &[u8], batch_size: usize| decode_all(&plan, data, rows, batch_size);
    for batch_size in [1, 7, 1000] {
        let before = probe::get(&SLOW_RECORDS);
        let plain = decode(&encodings[0], batch_size);
        // (Read by the nested loop alone, no row decoded again.)
        assert_eq!(probe::get(&SLOW_RECORDS), before, "batch size {batch_size}");
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

/// Arrays of records in a field, in a nullable field, as map values and as array items are
/// read on the enclosing fast path's cursor (`ListCol::records_sticky`). The same rows
/// encoded plainly, with some items' branch indexes padded (legal: the row fails its fast
/// path inside an array and is decoded again value by value) and with every index padded
/// give equal batches of 1, 7 and 1000 rows; random blocks, some with byte sizes. An item
/// whose string runs past the data names the field; a block count past the data fails.
#[test]
fn arrays_of_records_on_the_fast_path_match_the_reference() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"id","type":"long"},
        {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
            {"name":"sku","type":"string"},
            {"name":"qty","type":"int"},
            {"name":"opt","type":["null","long"]},
            {"name":"sub","type":{"type":"record","name":"Sub","fields":[
                {"name":"v","type":"double"}]}}]}}},
        {"name":"n","type":["null",{"type":"array","items":"Line"}]},
        {"name":"m","type":{"type":"map","values":{"type":"array","items":"Line"}}},
        {"name":"aa","type":{"type":"array","items":{"type":"array","items":"Line"}}},
        {"name":"tail","type":"string"}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut rng = Rng::new(0x0DDB_1A5E_5BAD_5EED);
    let mut next = move |m: u64| rng.below(m);
    // One line, as three encodings: plain, padded where `pad`, every index padded.
    let line = |row: usize, i: u64, pad: bool, out: &mut [Vec<u8>; 3]| {
        for (k, o) in out.iter_mut().enumerate() {
            string(&format!("sku-{row}-{i}"), o);
            zigzag(i as i64 * 3 - 7, o);
            let present = !i.is_multiple_of(3);
            write_branch(i64::from(present), k == 2 || (k == 1 && pad), o);
            if present {
                zigzag(i as i64 * 1000, o);
            }
            o.extend((i as f64 / 4.0).to_le_bytes());
        }
    };
    // An array of `count` lines in random blocks (the same cuts for every encoding).
    let array = |row: usize,
                 count: u64,
                 pad: u64,
                 out: &mut [Vec<u8>; 3],
                 next: &mut dyn FnMut(u64) -> u64| {
        let mut items: [Vec<Vec<u8>>; 3] = Default::default();
        for i in 0..count {
            let mut one: [Vec<u8>; 3] = Default::default();
            line(row, i, i == pad, &mut one);
            for (k, o) in one.into_iter().enumerate() {
                items[k].push(o);
            }
        }
        let seed = next(u64::MAX);
        for k in 0..3 {
            let mut rng = Rng::new(seed | 1);
            blocks(&mut out[k], &items[k], 5, &mut |m| rng.below(m));
        }
    };
    let rows = 300;
    let mut enc: [Vec<u8>; 3] = Default::default();
    let mut ids = Vec::new();
    for row in 0..rows {
        let id = next(1 << 30) as i64;
        ids.push(id);
        // A padded index in about one row in four, in one of its arrays.
        let pad_in = next(4);
        let pad_at = |which: u64, count: u64, next: &mut dyn FnMut(u64) -> u64| {
            if which == pad_in && count > 0 {
                next(count)
            } else {
                u64::MAX
            }
        };
        for o in enc.iter_mut() {
            zigzag(id, o);
        }
        let count = next(8);
        let pad = pad_at(0, count, &mut next);
        array(row, count, pad, &mut enc, &mut next);
        let present = next(3) > 0;
        for (k, o) in enc.iter_mut().enumerate() {
            write_branch(i64::from(present), k == 2, o);
        }
        if present {
            let count = next(5);
            let pad = pad_at(1, count, &mut next);
            array(row, count, pad, &mut enc, &mut next);
        }
        let entries = next(3);
        for o in enc.iter_mut() {
            zigzag(entries as i64, o);
        }
        for e in 0..entries {
            for o in enc.iter_mut() {
                string(&format!("k{e}"), o);
            }
            let count = next(4);
            let pad = pad_at(2, count, &mut next);
            array(row, count, pad, &mut enc, &mut next);
        }
        // (A map or array of no entries is the one 0 already written.)
        if entries > 0 {
            for o in enc.iter_mut() {
                o.push(0);
            }
        }
        let outer = next(3);
        for o in enc.iter_mut() {
            zigzag(outer as i64, o);
        }
        for _ in 0..outer {
            let count = next(4);
            let pad = pad_at(3, count, &mut next);
            array(row, count, pad, &mut enc, &mut next);
        }
        for o in enc.iter_mut() {
            if outer > 0 {
                o.push(0);
            }
            string(&format!("tail{row}"), o);
        }
    }
    let plan = DecodePlan::new(&schema, &DecodeOptions::default()).unwrap();
    let decode = |data: &[u8], batch_size: usize| decode_all(&plan, data, rows, batch_size);
    for batch_size in [1, 7, 1000] {
        let plain = decode(&enc[0], batch_size);
        assert_eq!(
            plain,
            decode(&enc[1], batch_size),
            "batch size {batch_size}"
        );
        assert_eq!(
            plain,
            decode(&enc[2], batch_size),
            "batch size {batch_size}"
        );
        let got: Vec<i64> = plain
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect();
        assert_eq!(got, ids, "batch size {batch_size}");
        let tails: Vec<String> = plain
            .iter()
            .flat_map(|b| {
                b.column(5)
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.unwrap().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(tails.last().unwrap(), &format!("tail{}", rows - 1));
    }

    // One good row, then a row whose second line's `sku` runs past the data.
    let mut bad = Vec::new();
    for row in 0..2 {
        zigzag(row, &mut bad);
        zigzag(2, &mut bad);
        string("a", &mut bad);
        zigzag(1, &mut bad);
        write_branch(0, false, &mut bad);
        bad.extend(0f64.to_le_bytes());
        if row == 0 {
            string("b", &mut bad);
            zigzag(1, &mut bad);
            write_branch(0, false, &mut bad);
            bad.extend(0f64.to_le_bytes());
            bad.push(0);
            bad.push(0); // n: null
            bad.push(0); // m: empty
            bad.push(0); // aa: empty
            string("t", &mut bad);
        } else {
            zigzag(40, &mut bad);
            bad.extend(b"short");
        }
    }
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&bad, 2)
        .unwrap_err();
    assert!(e.field_path().starts_with("lines"), "{e}");
    assert!(e.to_string().contains("record 1"), "{e}");
    // A block of a billion lines in a few bytes: refused, nothing allocated for them.
    let mut huge = Vec::new();
    zigzag(1, &mut huge);
    zigzag(1 << 30, &mut huge);
    string("a", &mut huge);
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&huge, 1)
        .unwrap_err();
    assert!(e.field_path().starts_with("lines"), "{e}");
}

/// Arrays of records of varints only and of fixed-size fields only, whose long blocks the
/// bulk record paths read (`StructCol::decode_n` from `ListCol::records_sticky`) and short
/// ones the fields loop: the values written, in blocks of 1 to 40 items, some with byte
/// sizes; a bad varint in a long block names its field.
#[test]
fn arrays_of_flat_records_in_long_and_short_blocks() {
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"pts","type":{"type":"array","items":{"type":"record","name":"P","fields":[
            {"name":"x","type":"long"},{"name":"y","type":"int"}]}}},
        {"name":"ms","type":{"type":"array","items":{"type":"record","name":"M","fields":[
            {"name":"a","type":"double"},{"name":"b","type":"float"}]}}},
        {"name":"tail","type":"string"}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let mut rng = Rng::new(0x5851_F42D_4C95_7F2D);
    let mut next = move |m: u64| rng.below(m);
    let rows = 400;
    let mut data = Vec::new();
    let (mut xs, mut bs) = (Vec::new(), Vec::new());
    for row in 0..rows {
        let n = next(60) as usize;
        let pts: Vec<(i64, i32)> = (0..n)
            .map(|_| {
                (
                    (next(u64::MAX) as i64) >> next(64),
                    next(1 << 20) as i32 - (1 << 19),
                )
            })
            .collect();
        let ms: Vec<(f64, f32)> = (0..next(50))
            .map(|i| (i as f64 * 1.5, row as f32 / 3.0))
            .collect();
        // Blocks of 1 to 40 items, a third with byte sizes.
        let mut write =
            |items: Vec<Vec<u8>>, data: &mut Vec<u8>| blocks(data, &items, 40, &mut next);
        write(
            pts.iter()
                .map(|&(x, y)| {
                    let mut e = Vec::new();
                    zigzag(x, &mut e);
                    zigzag(y.into(), &mut e);
                    e
                })
                .collect(),
            &mut data,
        );
        write(
            ms.iter()
                .map(|&(a, b)| {
                    let mut e = a.to_le_bytes().to_vec();
                    e.extend(b.to_le_bytes());
                    e
                })
                .collect(),
            &mut data,
        );
        string(&format!("t{row}"), &mut data);
        xs.push(pts.iter().map(|p| p.0).collect::<Vec<_>>());
        bs.push(ms.iter().map(|m| m.1).collect::<Vec<_>>());
    }
    for batch_size in [1, 7, 1000] {
        let mut d = DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
            .with_batch_size(batch_size);
        let mut batches = d.decode_block(&data, rows as u64).unwrap();
        batches.extend(d.flush().unwrap());
        let (mut got_x, mut got_b) = (Vec::new(), Vec::new());
        for b in &batches {
            let pts = b.column(0).as_list::<i32>();
            let ms = b.column(1).as_list::<i32>();
            for r in 0..b.num_rows() {
                let p = pts.value(r);
                got_x.push(
                    p.as_struct()
                        .column(0)
                        .as_primitive::<Int64Type>()
                        .values()
                        .to_vec(),
                );
                let m = ms.value(r);
                got_b.push(
                    m.as_struct()
                        .column(1)
                        .as_primitive::<arrow_array::types::Float32Type>()
                        .values()
                        .to_vec(),
                );
            }
        }
        assert_eq!(got_x, xs, "batch size {batch_size}");
        assert_eq!(got_b, bs, "batch size {batch_size}");
    }
    // One row: a block of 20 points whose 18th `y` is out of the int range.
    let mut bad = Vec::new();
    zigzag(20, &mut bad);
    for i in 0..20 {
        zigzag(i, &mut bad);
        zigzag(if i == 17 { 1 << 40 } else { i }, &mut bad);
    }
    bad.push(0);
    bad.push(0);
    string("t", &mut bad);
    let e = DecodePlan::new(&schema, &DecodeOptions::default())
        .unwrap()
        .decoder()
        .decode_block(&bad, 1)
        .unwrap_err();
    assert!(e.field_path().starts_with("pts"), "{e}");
    assert!(e.field_path().ends_with('y'), "{e}");
}

/// Records of scalars and nullable scalars are read by their own loop
/// (`StructCol::decode_rows_scalar`), with and without nullable `int`s and enums among the
/// fields (two of the loop's forms; the third, with unions:
/// `records_with_unions_of_scalars_match_the_reference`). Random rows of every scalar kind
/// (numbers, boolean, enum, strings short and long, bytes, fixed, decimals on bytes and on
/// fixed, uuid) and their nullable forms, null first and null second, encoded plainly, with
/// some rows' branch indexes padded (legal: those rows, and only those, fail the fast path
/// and are decoded again value by value) and with every index padded (every row decoded
/// value by value, the reference),
/// give equal batches of 1, 7 and 1000 rows, with the strings written. Cut short anywhere,
/// the rows before the cut read alike, and the row cut fails.
#[test]
fn records_of_scalars_match_the_reference() {
    const KINDS: &[&str] = &[
        r#""long""#,
        r#""int""#,
        r#""float""#,
        r#""double""#,
        r#""boolean""#,
        r#"{"type":"enum","name":"E","symbols":["A","B","C"]}"#,
        r#""string""#,
        r#""bytes""#,
        r#"{"type":"fixed","name":"F","size":5}"#,
        r#"{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}"#,
        r#"{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":18,"scale":3}"#,
        r#"{"type":"string","logicalType":"uuid"}"#,
    ];
    // A kind's value: its encoding, and for strings the text.
    fn value(kind: usize, long: bool, next: &mut impl FnMut(u64) -> u64) -> (Vec<u8>, String) {
        let mut out = Vec::new();
        let mut text = String::new();
        match kind {
            0 | 1 | 5 => {
                let v = match kind {
                    0 => next(1 << 50) as i64 - (1 << 49),
                    1 => next(1 << 31) as i64 - (1 << 30),
                    _ => next(3) as i64,
                };
                zigzag(v, &mut out);
            }
            2 => out.extend((next(1 << 20) as f32).to_le_bytes()),
            3 => out.extend((next(1 << 52) as f64 / 3.0).to_le_bytes()),
            4 => out.push(next(2) as u8),
            6 | 7 => {
                let n = if long { 100 + next(300) } else { next(12) } as usize;
                text = (0..n)
                    .map(|i| char::from(b'a' + ((i as u64 + next(26)) % 26) as u8))
                    .collect();
                string(&text, &mut out);
            }
            8 => out.extend((0..5).map(|_| next(256) as u8)),
            9 => {
                let n = 1 + next(8) as i64;
                zigzag(n, &mut out);
                out.extend((0..n).map(|_| next(256) as u8));
            }
            10 => {
                // Within the precision's 18 digits.
                let v = next(1_999_999_999_999_999_999) as i64 - 999_999_999_999_999_999;
                out.extend(v.to_be_bytes());
            }
            _ => {
                text = format!(
                    "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                    next(1 << 32),
                    next(1 << 16),
                    next(1 << 16),
                    next(1 << 16),
                    next(1 << 48)
                );
                string(&text, &mut out);
            }
        }
        (out, text)
    }
    for with_numbers in [false, true] {
        // Every kind plain, then nullable (null first, then null second), a long-valued
        // string among them; nullable ints and enums only `with_numbers`.
        let mut fields = Vec::new();
        let mut kinds = Vec::new();
        for (k, kind) in KINDS.iter().enumerate() {
            let kind = kind.replace("\"name\":\"", &format!("\"name\":\"p{k}"));
            fields.push(format!(r#"{{"name":"p{k}","type":{kind}}}"#));
            kinds.push((k, None, false));
        }
        for (k, kind) in KINDS.iter().enumerate() {
            if !with_numbers && matches!(k, 1 | 5) {
                continue;
            }
            let null_first = k % 2 == 0;
            let kind = kind.replace("\"name\":\"", &format!("\"name\":\"n{k}"));
            let union = if null_first {
                format!(r#"["null",{kind}]"#)
            } else {
                format!(r#"[{kind},"null"]"#)
            };
            fields.push(format!(r#"{{"name":"n{k}","type":{union}}}"#));
            kinds.push((k, Some(null_first), false));
        }
        fields.push(r#"{"name":"long_text","type":["null","string"]}"#.to_string());
        kinds.push((6, Some(true), true));
        let schema = format!(
            r#"{{"type":"record","name":"r","fields":[{}]}}"#,
            fields.join(",")
        );
        let schema = Schema::parse(&schema).unwrap();
        let plan = DecodePlan::new(&schema, &DecodeOptions::default()).unwrap();
        let d = plan.decoder();
        assert!(
            d.root.reads_scalars(),
            "the scalar loop reads these records"
        );
        assert_eq!(d.root.inlines_nullable_numbers(), with_numbers);

        let mut rng = Rng::new(0x5CA1_AB1E_0000_0001 + u64::from(with_numbers));
        let mut next = move |m: u64| rng.below(m);
        let rows = 600;
        let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
        let mut texts = Vec::new();
        // Where each row ends in the plain encoding.
        let mut ends = Vec::new();
        let mut padded_rows = 0;
        for _ in 0..rows {
            let pad_some = next(4) == 0;
            padded_rows += u64::from(pad_some);
            let mut row_text = Vec::new();
            let values: Vec<_> = kinds
                .iter()
                .map(|&(k, nullable, long)| {
                    let present = nullable.is_none() || next(3) > 0;
                    let (bytes, text) = value(k, long, &mut next);
                    (nullable, present, bytes, text)
                })
                .collect();
            for (e, out) in encodings.iter_mut().enumerate() {
                let pad = e == 2 || (e == 1 && pad_some);
                for (nullable, present, bytes, _) in &values {
                    if let Some(null_first) = nullable {
                        let index = if *present == *null_first { 1 } else { 0 };
                        write_branch(index, pad, out);
                    }
                    if *present {
                        out.extend(bytes);
                    }
                }
            }
            ends.push(encodings[0].len());
            for (nullable, present, _, text) in &values {
                if nullable.is_some() && !present {
                    row_text.push(None);
                } else {
                    row_text.push(Some(text.clone()));
                }
            }
            texts.push(row_text);
        }
        for batch_size in [1, 7, 1000] {
            let reference = decode_three(&plan, &encodings, rows, padded_rows, batch_size);
            // The strings as written: the plain `string` field and the long nullable one.
            let string_fields = [6, kinds.len() - 1];
            let mut row = 0;
            for b in &reference {
                for i in 0..b.num_rows() {
                    for &f in &string_fields {
                        let col = b.column(f).as_string::<i32>();
                        let got = col.is_valid(i).then(|| col.value(i).to_string());
                        assert_eq!(got, texts[row][f], "row {row} field {f}");
                    }
                    row += 1;
                }
            }
            assert_eq!(row, rows);
        }
        let whole = decode_all(&plan, &encodings[2], rows, 1000);
        check_cuts(&plan, &encodings[0], &ends, &whole[0]);
    }
}

/// `rows` records of one block, `data`, decoded in batches of `batch_size` rows (the last
/// one flushed).
fn decode_all(
    plan: &DecodePlan,
    data: &[u8],
    rows: usize,
    batch_size: usize,
) -> Vec<arrow_array::RecordBatch> {
    let mut d = plan.decoder().with_batch_size(batch_size);
    let mut batches = d.decode_block(data, rows as u64).unwrap();
    batches.extend(d.flush().unwrap());
    batches
}

/// The same rows in three encodings decoded in batches of `batch_size`: `encodings[2]`, every
/// row's union or nullable index padded (each row decoded again value by value, once: the
/// reference); `encodings[0]`, plain (read by the fast loop alone, no row decoded again);
/// `encodings[1]`, `padded_rows` rows padded (those, and only those, decoded again). All
/// three give the same batches; returns the reference's.
fn decode_three(
    plan: &DecodePlan,
    encodings: &[Vec<u8>; 3],
    rows: usize,
    padded_rows: u64,
    batch_size: usize,
) -> Vec<arrow_array::RecordBatch> {
    let decode = |e: usize| {
        counting(&SLOW_RECORDS, || {
            decode_all(plan, &encodings[e], rows, batch_size)
        })
    };
    let (reference, again) = decode(2);
    assert_eq!(
        again, rows as u64,
        "every padded row again, batch size {batch_size}"
    );
    for (e, expected) in [(0, 0), (1, padded_rows)] {
        let (batches, again) = decode(e);
        assert_eq!(batches, reference, "encoding {e}, batch size {batch_size}");
        assert_eq!(
            again, expected,
            "rows decoded again, encoding {e}, batch size {batch_size}"
        );
    }
    reference
}

/// Cut short anywhere (every 97th byte of `plain`, whose rows end at `ends`): the rows that
/// end before the cut read by the fast loop alone (the data ending right after them, or
/// inside the next row) equal the reference's (`whole`, every row); asked for with the row
/// cut, the read fails (never a panic) and keeps them (read again by the checked path, which
/// a failed read takes).
pub(super) fn check_cuts(
    plan: &DecodePlan,
    plain: &[u8],
    ends: &[usize],
    whole: &arrow_array::RecordBatch,
) {
    for cut in (0..plain.len()).step_by(97) {
        let complete = ends.iter().filter(|&&end| end <= cut).count();
        if complete > 0 {
            let mut fast = plan.decoder();
            let mut pos = 0;
            fast.decode_rows(&plain[..cut], &mut pos, complete).unwrap();
            assert_eq!(pos, ends[complete - 1], "cut at {cut}");
            let read = fast.flush().unwrap().unwrap();
            assert_eq!(read, whole.slice(0, complete), "cut at {cut}");
        }
        let mut fast = plan.decoder();
        let mut pos = 0;
        assert!(
            fast.decode_rows(&plain[..cut], &mut pos, complete + 1)
                .is_err(),
            "cut at {cut}"
        );
        let kept = fast.flush().unwrap();
        assert_eq!(
            kept.as_ref().map_or(0, |b| b.num_rows()),
            complete,
            "cut at {cut}"
        );
        if let Some(kept) = kept {
            assert_eq!(kept, whole.slice(0, complete), "cut at {cut}");
        }
    }
}

/// Records whose fields are general unions of scalars (and null), beside scalars and
/// nullable ones, are read by the scalar loop with the unions' reads in it
/// (`StructCol::decode_rows_scalar` with `UNIONS`). Random rows (branches of every scalar
/// kind) encoded plainly, with some rows' nullable index padded (those rows, and only those,
/// fail the loop and are decoded again value by value) and with every such index padded
/// (every row decoded again: the reference), give equal batches of 1, 7 and 1000 rows, with
/// the union values as written; cut short anywhere, the rows before the cut read alike. A
/// branch index past the union's branches names the union's field and its record.
#[test]
fn records_with_unions_of_scalars_match_the_reference() {
    use arrow_array::types::{Float64Type, Int32Type};
    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"id","type":"long"},
        {"name":"u4","type":["null","string","long","double"]},
        {"name":"n","type":["null","int"]},
        {"name":"u3","type":["int","string","boolean",
            {"type":"enum","name":"E","symbols":["A","B"]}]},
        {"name":"u5","type":["bytes",{"type":"fixed","name":"F","size":4},"float","null",
            {"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":18,"scale":2},
            {"type":"string","logicalType":"uuid"}]},
        {"name":"s","type":"string"}]}"#;
    let schema = Schema::parse(SCHEMA).unwrap();
    let plan = DecodePlan::new(&schema, &DecodeOptions::default()).unwrap();
    let d = plan.decoder();
    assert!(d.root.reads_scalars() && d.root.scalar_unions());

    let mut rng = Rng::new(0x0123_4567_89AB_CDEF);
    let mut next = move |m: u64| rng.below(m);
    let rows = 800;
    let mut encodings = [Vec::new(), Vec::new(), Vec::new()];
    // Each row's `u4` (branch, and its value as text) and `u3` branch and int value.
    let mut written = Vec::new();
    let mut padded_rows = 0;
    // Where each row ends in the plain encoding.
    let mut ends = Vec::new();
    for row in 0..rows {
        let id = next(1 << 40) as i64;
        let b4 = next(4) as i64;
        let text = format!("v{}", "x".repeat(next(70) as usize));
        let long = next(1 << 45) as i64 - (1 << 44);
        let double = next(1 << 30) as f64 / 7.0;
        let n = (next(3) > 0).then(|| next(1 << 31) as i64 - (1 << 30));
        let b3 = next(4) as i64;
        let int = next(1 << 20) as i64 - (1 << 19);
        let pad_some = next(4) == 0;
        padded_rows += u64::from(pad_some);
        let b5 = next(6) as i64;
        let mut u5 = Vec::new();
        zigzag(b5, &mut u5);
        match b5 {
            0 => {
                let n = next(20);
                zigzag(n as i64, &mut u5);
                u5.extend((0..n).map(|_| next(256) as u8));
            }
            1 => u5.extend((0..4).map(|_| next(256) as u8)),
            2 => u5.extend((next(1 << 20) as f32).to_le_bytes()),
            4 => u5.extend((next(1 << 50) as i64 - (1 << 49)).to_be_bytes()),
            5 => string(
                &format!(
                    "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                    next(1 << 32),
                    next(1 << 16),
                    next(1 << 16),
                    next(1 << 16),
                    next(1 << 48)
                ),
                &mut u5,
            ),
            _ => {}
        }
        for (e, out) in encodings.iter_mut().enumerate() {
            let pad = e == 2 || (e == 1 && pad_some);
            zigzag(id, out);
            zigzag(b4, out);
            match b4 {
                1 => string(&text, out),
                2 => zigzag(long, out),
                3 => out.extend(double.to_le_bytes()),
                _ => {}
            }
            write_branch(i64::from(n.is_some()), pad, out);
            if let Some(n) = n {
                zigzag(n, out);
            }
            zigzag(b3, out);
            match b3 {
                0 => zigzag(int, out),
                1 => string(&text, out),
                2 => out.push((row % 2) as u8),
                _ => zigzag((row % 2) as i64, out),
            }
            out.extend(&u5);
            string(&format!("s{row}"), out);
        }
        ends.push(encodings[0].len());
        written.push((b4, text, long, double, b3, int));
    }
    for batch_size in [1, 7, 1000] {
        let reference = decode_three(&plan, &encodings, rows, padded_rows, batch_size);
        // The union values as written.
        let mut row = 0;
        for b in &reference {
            let u4 = b.column(1).as_union();
            let u3 = b.column(3).as_union();
            for i in 0..b.num_rows() {
                let (b4, text, long, double, b3, int) = &written[row];
                assert_eq!(i64::from(u4.type_id(i)), *b4, "row {row}");
                let v = u4.value(i);
                match b4 {
                    1 => assert_eq!(v.as_string::<i32>().value(0), text),
                    2 => assert_eq!(v.as_primitive::<Int64Type>().value(0), *long),
                    3 => assert_eq!(v.as_primitive::<Float64Type>().value(0), *double),
                    _ => assert_eq!(v.data_type(), &arrow_schema::DataType::Null),
                }
                assert_eq!(i64::from(u3.type_id(i)), *b3, "row {row}");
                if *b3 == 0 {
                    let v = u3.value(i);
                    assert_eq!(i64::from(v.as_primitive::<Int32Type>().value(0)), *int);
                }
                row += 1;
            }
        }
        assert_eq!(row, rows);
    }
    // Cut anywhere, inside a union's value too.
    let whole = decode_all(&plan, &encodings[2], rows, 1000);
    check_cuts(&plan, &encodings[0], &ends, &whole[0]);
    // Row 3's `u4` has branch index 4 (of 4 branches): the error names the field and row.
    let mut bad = Vec::new();
    for row in 0..5 {
        zigzag(row, &mut bad);
        zigzag(if row == 3 { 4 } else { 2 }, &mut bad);
        zigzag(row, &mut bad);
        write_branch(0, false, &mut bad);
        zigzag(0, &mut bad);
        zigzag(7, &mut bad);
        zigzag(3, &mut bad);
        string("s", &mut bad);
    }
    let e = plan.decoder().decode_block(&bad, 5).unwrap_err();
    assert_eq!(e.field_path(), "u4", "{e}");
    assert!(e.to_string().contains("record 3"), "{e}");
}
