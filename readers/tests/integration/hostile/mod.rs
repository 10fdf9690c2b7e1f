//! Hostile hand-made files, built byte by byte: each must give an `Err` (never a panic, never a
//! huge allocation, never a long loop) whose message says where: block index, byte offset and
//! field path where they apply.
//!
//! This module holds the byte-level builders and checks; the cases are in [`framing`] (the
//! container: header, blocks, codecs), [`values`] (record data: counts, lengths, varints,
//! branches, bulk paths) and [`locations`] (what errors name: files, streams, offsets, fields).

use std::time::{Duration, Instant};

use crate::alloc_guard;
use crate::harness::{read_avrow, read_avrow_caught, with_timeout, Opts, Src};

pub(crate) const SYNC: [u8; 16] = *b"SYNC-MARKER-0123";

/// Zigzag varint.
pub(crate) fn long(out: &mut Vec<u8>, v: i64) {
    crate::gen::write_long(out, v)
}

pub(crate) fn varint(v: i64) -> Vec<u8> {
    let mut o = Vec::new();
    long(&mut o, v);
    o
}

pub(crate) fn string(out: &mut Vec<u8>, s: &[u8]) {
    long(out, s.len() as i64);
    out.extend_from_slice(s);
}

/// A header with the given metadata entries (in order), then the sync marker.
pub(crate) fn header_with(meta: &[(&str, &[u8])]) -> Vec<u8> {
    let mut h = b"Obj\x01".to_vec();
    if !meta.is_empty() {
        long(&mut h, meta.len() as i64);
        for (k, v) in meta {
            string(&mut h, k.as_bytes());
            string(&mut h, v);
        }
    }
    long(&mut h, 0);
    h.extend_from_slice(&SYNC);
    h
}

pub(crate) fn header(schema: &str) -> Vec<u8> {
    header_with(&[("avro.schema", schema.as_bytes()), ("avro.codec", b"null")])
}

/// A block: count, byte size, data, sync.
pub(crate) fn block(count: i64, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    long(&mut b, count);
    long(&mut b, data.len() as i64);
    b.extend_from_slice(data);
    b.extend_from_slice(&SYNC);
    b
}

pub(crate) fn file(schema: &str, blocks: &[Vec<u8>]) -> Vec<u8> {
    let mut f = header(schema);
    for b in blocks {
        f.extend_from_slice(b);
    }
    f
}

pub(crate) fn rec(fields: &str) -> String {
    format!(r#"{{"type":"record","name":"R","fields":[{fields}]}}"#)
}

/// The file must fail; the message must contain every `needles` entry (case-insensitive).
/// Also: no panic, no huge allocation, and fast.
#[track_caller]
fn expect_err(what: &str, bytes: &[u8], needles: &[&str]) -> String {
    expect_err_with(what, bytes, needles, &Opts::batch(4))
}

#[track_caller]
pub(crate) fn expect_err_with(what: &str, bytes: &[u8], needles: &[&str], opts: &Opts) -> String {
    let (huge_before, _) = alloc_guard::huge();
    let start = Instant::now();
    let (b, o) = (bytes.to_vec(), opts.clone());
    let r = with_timeout(what, Duration::from_secs(20), move || {
        read_avrow_caught(&b, &o)
    });
    let took = start.elapsed();
    let (huge_after, largest) = alloc_guard::huge();
    let msg = match r {
        Err(p) => panic!("{what}: avrow panicked: {p}"),
        Ok(Ok(d)) => panic!(
            "{what}: avrow accepted it ({} rows in {} batches)",
            d.num_rows(),
            d.batches.len()
        ),
        Ok(Err(e)) => e,
    };
    assert!(
        huge_after == huge_before,
        "{what}: a huge allocation ({largest} bytes) was requested"
    );
    assert!(
        took < Duration::from_secs(10),
        "{what}: took {took:?} to fail"
    );
    let lower = msg.to_lowercase();
    for n in needles {
        assert!(
            lower.contains(&n.to_lowercase()),
            "{what}: error message lacks {n:?}: {msg}"
        );
    }
    // A data error (one that names a field) also names the block and a byte offset.
    if needles.iter().any(|n| n.starts_with("field ")) {
        assert!(lower.contains("block "), "{what}: no block index in {msg}");
        assert_offset(what, &msg);
    }
    msg
}

/// The message names block `i`: the word "block" and the number as a token.
#[track_caller]
pub(crate) fn assert_block(what: &str, msg: &str, i: usize) {
    let lower = msg.to_lowercase();
    let tokens: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    assert!(
        lower.contains("block") && tokens.contains(&i.to_string().as_str()),
        "{what}: the error does not name block {i}: {msg}"
    );
}

/// The message gives a byte offset ("offset N" or "byte N").
#[track_caller]
fn assert_offset(what: &str, msg: &str) {
    let lower = msg.to_lowercase();
    let has = ["offset ", "byte "].iter().any(|w| {
        lower
            .match_indices(w)
            .any(|(i, _)| lower[i + w.len()..].starts_with(|c: char| c.is_ascii_digit()))
    });
    assert!(has, "{what}: the error gives no byte offset: {msg}");
}

pub(crate) fn long_rec() -> String {
    rec(r#"{"name":"x","type":"long"}"#)
}

mod framing;
mod locations;
mod typed;
mod values;
