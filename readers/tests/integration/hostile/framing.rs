//! Hostile containers: block counts and sizes, sync markers, magic, schemas, metadata,
//! codecs.

use super::*;

#[test]
fn block_count_huge() {
    let f = file(
        &long_rec(),
        &[block(1, &varint(5)), block(1 << 62, &varint(5))],
    );
    let m = expect_err("block count 2^62", &f, &[]);
    assert_block("block count 2^62", &m, 1);
}

#[test]
fn block_count_negative() {
    let f = file(&long_rec(), &[block(-3, &varint(5))]);
    let m = expect_err("negative block count", &f, &[]);
    assert_block("negative block count", &m, 0);
}

#[test]
fn block_size_huge_or_negative() {
    for size in [1i64 << 60, i64::MAX, -1, -(1 << 40)] {
        let mut f = header(&long_rec());
        long(&mut f, 1);
        long(&mut f, size);
        f.extend_from_slice(&varint(5));
        f.extend_from_slice(&SYNC);
        let m = expect_err(&format!("block byte size {size}"), &f, &[]);
        assert_block(&format!("block byte size {size}"), &m, 0);
    }
}

#[test]
fn block_count_exceeds_records_present() {
    let f = file(&long_rec(), &[block(3, &varint(5))]);
    let m = expect_err("3 records declared, 1 present", &f, &[]);
    assert_block("3 records declared, 1 present", &m, 0);
}

#[test]
fn bad_sync_marker() {
    let mut f = file(&long_rec(), &[block(1, &varint(5)), block(1, &varint(6))]);
    let n = f.len();
    f[n - 3] ^= 0x55; // the second block's marker
    let m = expect_err("bad sync marker", &f, &["sync"]);
    assert_block("bad sync marker", &m, 1);
}

#[test]
fn bad_magic_and_empty_input() {
    let mut f = file(&long_rec(), &[block(1, &varint(5))]);
    f[3] = 2;
    expect_err("bad magic", &f, &[]);
    expect_err("empty input", &[], &[]);
    expect_err("magic only", b"Obj\x01", &[]);
}

#[test]
fn missing_schema() {
    let mut f = header_with(&[("avro.codec", b"null")]);
    f.extend_from_slice(&block(1, &varint(5)));
    expect_err("missing avro.schema", &f, &["avro.schema"]);
}

#[test]
fn unknown_codec() {
    let mut f = header_with(&[
        ("avro.schema", long_rec().as_bytes()),
        ("avro.codec", b"lz5-turbo"),
    ]);
    f.extend_from_slice(&block(1, &varint(5)));
    expect_err("unknown codec", &f, &["lz5-turbo"]);
}

#[test]
fn invalid_schemas_are_rejected_naming_the_problem() {
    for (schema, needle) in [
        ("{not json", ""),
        (
            r#"{"type":"record","name":"R","fields":[{"name":"x","type":"Nope"}]}"#,
            "Nope",
        ),
        (
            r#"{"type":"record","name":"R","fields":[{"name":"x","type":["int","int"]}]}"#,
            "int",
        ),
        (
            r#"{"type":"record","name":"R","fields":[{"name":"x","type":["int",["string","long"]]}]}"#,
            "union",
        ),
        (
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"fixed","name":"D","size":2}},{"name":"b","type":{"type":"enum","name":"D","symbols":["A"]}}]}"#,
            "D",
        ),
        (r#"{"type":"record","name":"1bad","fields":[]}"#, "1bad"),
    ] {
        let mut f = header_with(&[("avro.schema", schema.as_bytes())]);
        f.extend_from_slice(&block(0, &[]));
        let needles: Vec<&str> = [needle].into_iter().filter(|n| !n.is_empty()).collect();
        expect_err(&format!("invalid schema {schema}"), &f, &needles);
    }
}

#[test]
fn huge_metadata_counts_and_lengths() {
    // metadata map count 2^60
    let mut f = b"Obj\x01".to_vec();
    long(&mut f, 1 << 60);
    string(&mut f, b"avro.schema");
    expect_err("metadata count 2^60", &f, &[]);
    // metadata key length 2^60
    let mut f = b"Obj\x01".to_vec();
    long(&mut f, 1);
    long(&mut f, 1 << 60);
    f.extend_from_slice(b"avro.schema");
    expect_err("metadata key length 2^60", &f, &[]);
    // metadata value length 2^59
    let mut f = b"Obj\x01".to_vec();
    long(&mut f, 1);
    string(&mut f, b"avro.schema");
    long(&mut f, 1 << 59);
    f.extend_from_slice(b"\"long\"");
    expect_err("metadata value length 2^59", &f, &[]);
}

#[test]
fn snappy_crc_mismatch() {
    let data = {
        let mut d = Vec::new();
        for i in 0..10 {
            long(&mut d, i * 1000);
        }
        d
    };
    let mut compressed = data.clone();
    apache_avro::Codec::Snappy
        .compress(&mut compressed)
        .unwrap();
    let n = compressed.len();
    compressed[n - 1] ^= 0x01; // the big-endian CRC-32 of the uncompressed data
    let mut f = header_with(&[
        ("avro.schema", long_rec().as_bytes()),
        ("avro.codec", b"snappy"),
    ]);
    let mut good = data.clone();
    apache_avro::Codec::Snappy.compress(&mut good).unwrap();
    f.extend_from_slice(&block(10, &good));
    f.extend_from_slice(&block(10, &compressed));
    let m = expect_err("snappy CRC mismatch", &f, &[]);
    assert_block("snappy CRC mismatch", &m, 1);
    assert!(
        m.to_lowercase().contains("crc") || m.to_lowercase().contains("checksum"),
        "{m}"
    );
}

#[test]
fn corrupt_compressed_blocks() {
    for codec in ["deflate", "snappy", "zstandard", "bzip2", "xz"] {
        let mut f = header_with(&[
            ("avro.schema", long_rec().as_bytes()),
            ("avro.codec", codec.as_bytes()),
        ]);
        f.extend_from_slice(&block(3, b"\x07garbage, not compressed at all \xff\xfe"));
        let m = expect_err(&format!("garbage {codec} block"), &f, &[]);
        assert_block(&format!("garbage {codec} block"), &m, 0);
    }
}
