//! Tests of the skips: the fast paths (and the record loop's arm for a skipped column) against
//! the reference on random trees and at the edges of their varints; runs of skipped fields
//! merged, their errors naming the field.

use super::*;
use crate::varint::{test_rng, Scalar};
use std::cell::Cell;

/// A random skip tree of at most `depth` levels.
fn tree(rng: &mut impl FnMut() -> u64, depth: usize) -> Skip {
    let leaf = depth == 0 || rng().is_multiple_of(3);
    match rng() % if leaf { 6 } else { 12 } {
        0 => Skip::Bytes((rng() % 9) as usize),
        1 | 2 => Skip::Varint,
        3 => Skip::Varints(2 + (rng() % 7) as usize),
        4 => Skip::Sized,
        5 => Skip::Bytes(0),
        6 => Skip::Array(Box::new(tree(rng, depth - 1))),
        7 => Skip::Map(Box::new(tree(rng, depth - 1))),
        8 => Skip::record((0..rng() % 4).map(|_| tree(rng, depth - 1)).collect()),
        9 => Skip::union((0..1 + rng() % 3).map(|_| tree(rng, depth - 1)).collect()),
        10 => {
            // A nullable flat value, either way round.
            let value = [
                Skip::Varint,
                Skip::Sized,
                Skip::Bytes(1 + (rng() % 9) as usize),
            ][(rng() % 3) as usize]
                .clone();
            let mut branches = vec![Skip::Bytes(0), value];
            if rng().is_multiple_of(2) {
                branches.reverse();
            }
            Skip::union(branches)
        }
        _ => {
            let names: Vec<Arc<str>> = vec!["a".into(), "b".into(), "c".into()];
            let mut s = tree(rng, depth - 1);
            for n in &names[1..] {
                s = s.then_field(&names[0], n.clone(), tree(rng, depth - 1));
            }
            s
        }
    }
}

fn varint(out: &mut Vec<u8>, v: i64) {
    let mut x = crate::varint::zigzag64(v);
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// A value of `s`, mostly well-formed (sometimes with a block byte size, sometimes
/// with a wrong count or length).
fn value(rng: &mut impl FnMut() -> u64, s: &Skip, out: &mut Vec<u8>) {
    match s {
        Skip::Bytes(n) => out.extend((0..*n).map(|_| rng() as u8)),
        Skip::Varint | Skip::Int | Skip::Enum(_) | Skip::Boolean => {
            varint(out, (rng() >> (rng() % 64)) as i64)
        }
        Skip::Varints(k) => (0..*k).for_each(|_| varint(out, (rng() >> (rng() % 64)) as i64)),
        Skip::Sized | Skip::Str => {
            // Lengths of one byte mostly, of two (64 or more) and three (8192) sometimes.
            let n = match rng() % 16 {
                0..=11 => rng() % 6,
                12..=14 => 60 + rng() % 200,
                _ => 8190 + rng() % 4,
            };
            varint(out, n as i64);
            out.extend((0..n).map(|_| rng() as u8));
        }
        Skip::Array(item) | Skip::Map(item) => {
            for _ in 0..rng() % 3 {
                let n = rng() % 5;
                let mut items = Vec::new();
                for _ in 0..n {
                    if matches!(s, Skip::Map(_)) {
                        value(rng, &Skip::Sized, &mut items);
                    }
                    value(rng, item, &mut items);
                }
                if rng().is_multiple_of(3) {
                    varint(out, -(n as i64));
                    varint(out, items.len() as i64);
                } else {
                    varint(out, n as i64);
                }
                out.extend(items);
            }
            varint(out, 0);
        }
        Skip::Record(parts) => parts.iter().for_each(|p| value(rng, p, out)),
        Skip::Fields(fields, _) => fields.iter().for_each(|(_, p)| value(rng, p, out)),
        Skip::Union(branches) => {
            let b = rng() as usize % branches.len();
            varint(out, b as i64);
            value(rng, &branches[b], out);
        }
        Skip::NullOrVarint(null) | Skip::NullOrSized(null) | Skip::NullOrBytes(null, _) => {
            let b = rng() % 2;
            varint(out, b as i64);
            if b != u64::from(*null) {
                let flat = match s {
                    Skip::NullOrVarint(_) => Skip::Varint,
                    Skip::NullOrSized(_) => Skip::Sized,
                    Skip::NullOrBytes(_, n) => Skip::Bytes(*n),
                    _ => unreachable!(),
                };
                value(rng, &flat, out);
            }
        }
        Skip::TooDeep(..) => {}
    }
}

fn reference(s: &Skip, buf: &[u8]) -> Option<usize> {
    let failed = Cell::new(false);
    let mut c = Cursor::new(buf, 0, Scalar, &failed);
    s.skip(&mut c).ok().map(|()| c.pos)
}

fn sticky(s: &Skip, buf: &[u8]) -> Option<usize> {
    let failed = Cell::new(false);
    let c = Cursor::new(buf, 0, Scalar, &failed);
    let mut f = Sticky::new(&c);
    s.skip_sticky(&mut f);
    (!f.failed()).then_some(f.pos)
}

/// [`sticky`] through the record loop's arm for a skipped column.
fn column(s: &Skip, buf: &[u8]) -> Option<usize> {
    let failed = Cell::new(false);
    let c = Cursor::new(buf, 0, Scalar, &failed);
    let mut f = Sticky::new(&c);
    s.skip_column_sticky(&mut f);
    (!f.failed()).then_some(f.pos)
}

/// The fast path accepts exactly what the reference accepts and stops where it does: on
/// values of random trees, intact, cut short and with bytes changed.
#[test]
fn sticky_agrees_with_the_reference() {
    let mut rng = test_rng(5);
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..20_000 {
        let s = tree(&mut rng, 3);
        // Half the time a record's part (a one-part record collapses to its part): the
        // record loop's inline paths.
        // A quarter of the time a run of skipped fields: the record loop's arm for a
        // skipped column.
        let s = match rng() % 4 {
            0 | 1 => Skip::record(vec![Skip::Sized, s]),
            2 => Skip::Sized.then_field(&Arc::from("a"), Arc::from("b"), s),
            _ => s,
        };
        let mut buf = Vec::new();
        for _ in 0..1 + rng() % 3 {
            value(&mut rng, &s, &mut buf);
        }
        // Bytes after the values half the time: the fast paths that read ahead of a value
        // (16 bytes for a nullable one) run where the data goes on.
        if rng().is_multiple_of(2) {
            let more = 16 + rng() % 16;
            buf.extend((0..more).map(|_| rng() as u8));
        }
        match rng() % 4 {
            0 => buf.truncate((rng() as usize) % (buf.len() + 1)),
            1 if !buf.is_empty() => {
                let i = rng() as usize % buf.len();
                buf[i] = rng() as u8;
            }
            _ => {}
        }
        let want = reference(&s, &buf);
        assert_eq!(sticky(&s, &buf), want, "{s:?} on {buf:02x?}");
        assert_eq!(column(&s, &buf), want, "column {s:?} on {buf:02x?}");
        if want.is_some() {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    // Both outcomes were exercised.
    assert!(ok > 1000 && bad > 1000, "{ok} accepted, {bad} refused");
}

/// The record loop's inline paths at the edges of their varints: counts and sizes at the
/// ends of the range, products that overflow, branch indexes out of range.
#[test]
fn inline_parts_agree_with_the_reference_at_the_edges() {
    let s = Skip::record(vec![
        Skip::Sized,
        Skip::Union(vec![
            Skip::Bytes(0),
            Skip::Varint,
            Skip::Sized,
            Skip::Bytes(4),
        ]),
        Skip::Array(Box::new(Skip::Bytes(8))),
        Skip::Varint,
    ]);
    let edges = [
        0,
        1,
        -1,
        2,
        3,
        4,
        -2,
        i64::MAX,
        i64::MIN,
        i64::MAX / 8 + 1,
        1 << 40,
    ];
    let mut checked = 0;
    for &branch in &edges {
        for &count in &edges {
            for &size in &edges {
                let mut buf = vec![0];
                varint(&mut buf, branch);
                buf.extend([1, 2, 3, 4]);
                varint(&mut buf, count);
                varint(&mut buf, size);
                buf.extend([0u8; 24]);
                varint(&mut buf, 0);
                varint(&mut buf, 5);
                for cut in [buf.len(), buf.len() / 2] {
                    let b = &buf[..cut];
                    assert_eq!(sticky(&s, b), reference(&s, b), "{b:02x?}");
                    assert_eq!(column(&s, b), reference(&s, b), "{b:02x?}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * edges.len().pow(3));
}

#[test]
fn runs_of_fields_merge_and_name_their_field() {
    let a: Arc<str> = "a".into();
    let s = Skip::Varint
        .then_field(&a, "b".into(), Skip::Varint)
        .then_field(&a, "c".into(), Skip::Sized);
    let Skip::Fields(fields, merged) = &s else {
        panic!("{s:?}")
    };
    assert_eq!(fields.len(), 3);
    assert!(
        matches!(&**merged, Skip::Record(p) if matches!(p[..], [Skip::Varints(2), Skip::Sized]))
    );
    // The string's length is cut short: the error is in field `c`.
    let failed = Cell::new(false);
    let mut c = Cursor::new(&[2, 4, 10], 0, Scalar, &failed);
    let e = s.skip(&mut c).unwrap_err();
    assert_eq!(e.field_path(), "c", "{e}");
}
