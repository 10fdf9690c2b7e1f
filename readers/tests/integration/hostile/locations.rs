//! What hostile-input errors name: the file, the stream, the offset of the bad value and the
//! field, projected away or not.

use super::*;

/// An error from `open(path)` names the file.
#[test]
fn errors_from_files_name_the_file() {
    let schema = rec(r#"{"name":"i","type":"int"}"#);
    let f = file(&schema, &[block(1, &varint(1 << 40))]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile-input.avro");
    std::fs::write(&path, &f).unwrap();
    let r = Opts::default()
        .builder()
        .open(&path)
        .and_then(|r| r.collect::<Result<Vec<_>, _>>());
    let e = r.expect_err("int 2^40 accepted").to_string();
    assert!(
        e.contains("hostile-input.avro"),
        "error does not name the file: {e}"
    );
    let e = Opts::default()
        .builder()
        .open(dir.path().join("does-not-exist.avro"))
        .expect_err("opening a missing file succeeded")
        .to_string();
    assert!(e.contains("does-not-exist.avro"), "{e}");
}

/// Every hostile file above is also rejected through `read_stream`.
#[test]
fn hostile_inputs_through_streams() {
    let schema = rec(r#"{"name":"s","type":"string"}"#);
    let mut d = varint(1 << 60);
    d.extend_from_slice(b"abc");
    let opts = Opts {
        src: Src::Stream,
        ..Opts::default()
    };
    expect_err_with(
        "stream: string length 2^60",
        &file(&schema, &[block(1, &d)]),
        &["field s"],
        &opts,
    );
    let mut f = header(&long_rec());
    long(&mut f, 1);
    long(&mut f, 1 << 60);
    f.extend_from_slice(&varint(5));
    expect_err_with("stream: block size 2^60", &f, &[], &opts);
    let f = file(&long_rec(), &[block(1 << 62, &varint(5))]);
    expect_err_with("stream: block count 2^62", &f, &[], &opts);
}

/// A projected-away array whose block byte size is wrong: skipping by that size must not jump
/// outside the data or loop; it is an error.
#[test]
fn skipped_array_with_bad_byte_size() {
    let schema =
        rec(r#"{"name":"a","type":{"type":"array","items":"long"}},{"name":"keep","type":"int"}"#);
    let projected = Opts {
        projection: Some(vec!["keep".into()]),
        ..Opts::batch(4)
    };
    for size in [1i64 << 60, 1 << 31, 1000, -7] {
        let mut d = varint(-2);
        long(&mut d, size);
        d.extend_from_slice(&[2, 4]); // two longs
        d.push(0); // end of array
        d.push(6); // keep = 3
        let f = file(&schema, &[block(1, &d)]);
        expect_err_with(
            &format!("skipped array, byte size {size}"),
            &f,
            &[],
            &projected,
        );
        expect_err(&format!("decoded array, byte size {size}"), &f, &[]);
    }
    // A skipped string whose length runs past the block.
    let schema = rec(r#"{"name":"s","type":"string"},{"name":"keep","type":"int"}"#);
    let mut d = varint(1 << 40);
    d.extend_from_slice(b"ab");
    d.push(6);
    let f = file(&schema, &[block(1, &d)]);
    expect_err_with("skipped string length 2^40", &f, &["field s"], &projected);
}

/// The byte offset in an error points at the bad value (not just somewhere in the block).
#[test]
fn error_offsets_point_at_the_bad_value() {
    // Three records (long x, string s); the third record's string is bad in each case.
    let schema = rec(r#"{"name":"x","type":"long"},{"name":"s","type":"string"}"#);
    let mut d = Vec::new();
    for i in 0..2 {
        long(&mut d, i);
        string(&mut d, b"fine");
    }
    long(&mut d, 2);
    let bad_at = d.len();
    let cases: [(&str, Vec<u8>); 3] = [
        ("negative length", varint(-4)),
        ("length past the end", varint(1000)),
        ("invalid UTF-8", {
            let mut v = Vec::new();
            string(&mut v, b"\xff\xfe");
            v
        }),
    ];
    for (what, tail) in cases {
        let mut data = d.clone();
        data.extend_from_slice(&tail);
        let end = data.len();
        let m = expect_err(what, &file(&schema, &[block(3, &data)]), &["field s"]);
        let lower = m.to_lowercase();
        let off = lower
            .find("at byte ")
            .and_then(|_| lower.rfind("at byte "))
            .map(|i| {
                lower[i + 8..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("{what}: no offset in {m}"));
        assert!(
            (bad_at..=end).contains(&off),
            "{what}: the error points at byte {off} of the block data, the bad value is at {bad_at}..{end}: {m}"
        );
    }
}

#[test]
fn errors_in_projected_away_fields_name_their_field() {
    // Only `keep` is read; the fields after it are skipped as one run of columns (and the
    // array of longs in bulk), but an error still names the field it is in.
    let schema = rec(r#"{"name":"keep","type":"long"},{"name":"a","type":"long"},
           {"name":"b","type":"int"},{"name":"s","type":"string"},
           {"name":"xs","type":{"type":"array","items":"long"}}"#);
    let row = |d: &mut Vec<u8>, r: i64| {
        long(d, r);
        long(d, r << 40);
        long(d, -r);
        string(d, b"abc");
        long(d, 3);
        (0..3).for_each(|k| long(d, r * k));
        long(d, 0);
    };
    let opts = Opts {
        projection: Some(vec!["keep".into()]),
        ..Opts::batch(4)
    };
    let mut good = Vec::new();
    (0..50).for_each(|r| row(&mut good, r));
    let decoded = read_avrow(&file(&schema, &[block(50, &good)]), &opts).expect("valid");
    assert_eq!(decoded.num_rows(), 50);
    // Row 7's string is longer than the data left.
    let mut d = Vec::new();
    (0..7).for_each(|r| row(&mut d, r));
    long(&mut d, 7);
    long(&mut d, 1);
    long(&mut d, 2);
    long(&mut d, 1000);
    expect_err_with(
        "string past the end",
        &file(&schema, &[block(8, &d)]),
        &["field s", "record 7"],
        &opts,
    );
    // Row 3's array has an overlong varint.
    let mut d = Vec::new();
    (0..3).for_each(|r| row(&mut d, r));
    long(&mut d, 3);
    long(&mut d, 1);
    long(&mut d, 2);
    string(&mut d, b"x");
    long(&mut d, 2);
    long(&mut d, 5);
    d.extend_from_slice(&[0xff; 11]);
    long(&mut d, 0);
    expect_err_with(
        "overlong varint in a skipped array",
        &file(&schema, &[block(4, &d)]),
        &["field xs", "record 3"],
        &opts,
    );
}
