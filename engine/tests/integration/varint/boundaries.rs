//! Round trips at every 7-bit length boundary and every malformed input, for every kernel.

use super::*;

#[test]
fn round_trip_at_every_length_boundary() {
    for kind in kernels() {
        for v in boundary_values() {
            let enc = write_u64(kind, v);
            assert_eq!(enc, reference_encode(v), "{kind}: encode {v:#x}");
            for buf in with_and_without_padding(&enc) {
                assert_eq!(
                    read_u64(kind, &buf, 0),
                    Ok((v, enc.len())),
                    "{kind}: {v:#x}"
                );
                assert_eq!(skip(kind, &buf, 0, 1), Ok(enc.len()), "{kind}: skip {v:#x}");
                // Also at an odd offset inside a larger buffer.
                let mut shifted = vec![0x7f, 0x01];
                shifted.extend(&buf);
                assert_eq!(read_u64(kind, &shifted, 2), Ok((v, enc.len() + 2)));
            }
        }
        for v in boundary_longs() {
            let enc = write_long(kind, v);
            assert_eq!(enc, reference_encode(zigzag64(v)), "{kind}: encode {v}");
            assert_eq!(unzigzag64(zigzag64(v)), v);
            for buf in with_and_without_padding(&enc) {
                assert_eq!(read_long(kind, &buf, 0), Ok((v, enc.len())), "{kind}: {v}");
                let int = read_int(kind, &buf, 0);
                match i32::try_from(v) {
                    Ok(i) => assert_eq!(int, Ok((i, enc.len())), "{kind}: int {v}"),
                    Err(_) => assert_eq!(int, Err(VarintError::IntOutOfRange), "{kind}: {v}"),
                }
            }
        }
    }
}

#[test]
fn bulk_round_trip_at_every_length_boundary() {
    let longs = boundary_longs();
    // Repeat the list in several rotations so every value lands at every bulk-window offset.
    let mut values = Vec::new();
    for r in 0..17 {
        let mut l = longs.clone();
        l.rotate_left(r % longs.len());
        values.extend(l);
    }
    let ints: Vec<i64> = values
        .iter()
        .copied()
        .filter(|v| i32::try_from(*v).is_ok())
        .collect();
    for kind in kernels() {
        let enc = write_longs(kind, &values);
        let expected: Vec<u8> = values
            .iter()
            .flat_map(|&v| reference_encode(zigzag64(v)))
            .collect();
        assert_eq!(enc, expected, "{kind}: write_longs");
        for buf in with_and_without_padding(&enc) {
            assert_eq!(
                read_longs(kind, &buf, 0, values.len()),
                Ok((values.clone(), enc.len())),
                "{kind}"
            );
            assert_eq!(skip(kind, &buf, 0, values.len()), Ok(enc.len()), "{kind}");
        }
        let enc_ints = write_longs(kind, &ints);
        let want: Vec<i32> = ints.iter().map(|&v| v as i32).collect();
        assert_eq!(
            read_ints(kind, &enc_ints, 0, ints.len()),
            Ok((want, enc_ints.len()))
        );
    }
}

#[test]
fn every_one_and_two_byte_value_round_trips() {
    for kind in kernels() {
        let values: Vec<i64> = (-8192..8192).collect();
        let enc = write_longs(kind, &values);
        let mut single = Vec::new();
        for &v in &values {
            dispatch_kernel!(kind, k => k.write_long(v, &mut single));
        }
        assert_eq!(enc, single, "{kind}");
        assert_eq!(
            read_longs(kind, &enc, 0, values.len()),
            Ok((values.clone(), enc.len()))
        );
        let mut p = 0;
        for &v in &values {
            let (got, next) = read_long(kind, &enc, p).unwrap();
            assert_eq!(got, v, "{kind}");
            p = next;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Malformed input.

/// Every malformed case with the error every kernel must report for it.
pub(super) fn malformed_cases() -> Vec<(Vec<u8>, VarintError)> {
    let mut cases = vec![
        (vec![], VarintError::Truncated),
        (vec![0x80], VarintError::Truncated),
        (vec![0xff; 9], VarintError::Truncated),
        ([vec![0x80; 9], vec![0x02]].concat(), VarintError::Overlong),
        ([vec![0xff; 9], vec![0x7f]].concat(), VarintError::Overlong),
        ([vec![0x80; 9], vec![0x80]].concat(), VarintError::Overlong),
        ([vec![0x80; 10], vec![0x00]].concat(), VarintError::Overlong),
        (vec![0xff; 11], VarintError::Overlong),
        (vec![0xff; 40], VarintError::Overlong),
    ];
    for len in 1..MAX_LEN {
        cases.push((vec![0x80; len], VarintError::Truncated));
    }
    cases
}

#[test]
fn malformed_input_is_rejected_by_every_kernel() {
    for kind in kernels() {
        for (bytes, err) in malformed_cases() {
            // Padding only matters for the non-truncated cases (it would complete the others).
            let bufs: Vec<Vec<u8>> = if err == VarintError::Truncated {
                vec![bytes.clone()]
            } else {
                with_and_without_padding(&bytes).to_vec()
            };
            for buf in bufs {
                let what = format!("{kind}: {buf:02x?}");
                assert_eq!(read_u64(kind, &buf, 0), Err(err), "{what}");
                assert_eq!(read_long(kind, &buf, 0).map(|_| ()), Err(err), "{what}");
                assert_eq!(read_int(kind, &buf, 0).map(|_| ()), Err(err), "{what}");
                assert_eq!(skip(kind, &buf, 0, 1), Err(err), "{what}");
                assert_eq!(read_longs(kind, &buf, 0, 1).map(|_| ()), Err(err), "{what}");
                assert_eq!(read_ints(kind, &buf, 0, 1).map(|_| ()), Err(err), "{what}");
                // The same varint after 40 good ones, so bulk paths meet it mid-stream.
                let mut long = vec![0x02; 40];
                long.extend(&buf);
                assert_eq!(skip(kind, &long, 0, 41), Err(err), "{what}");
                assert_eq!(
                    read_longs(kind, &long, 0, 41).map(|_| ()),
                    Err(err),
                    "{what}"
                );
                assert_eq!(
                    read_ints(kind, &long, 0, 41).map(|_| ()),
                    Err(err),
                    "{what}"
                );
            }
        }
        // Reading at or past the end.
        assert_eq!(read_u64(kind, &[1, 2], 2), Err(VarintError::Truncated));
        assert_eq!(read_u64(kind, &[1, 2], 7), Err(VarintError::Truncated));
        assert_eq!(skip(kind, &[1, 2], 0, 3), Err(VarintError::Truncated));
        assert_eq!(read_longs(kind, &[1, 2], 0, 3), Err(VarintError::Truncated));
        // The largest 10-byte varints are valid.
        let max = [vec![0xff; 9], vec![0x01]].concat();
        assert_eq!(read_u64(kind, &max, 0), Ok((u64::MAX, 10)));
        let top = [vec![0x80; 9], vec![0x01]].concat();
        assert_eq!(read_u64(kind, &top, 0), Ok((1 << 63, 10)));
    }
}

#[test]
fn ints_outside_i32_are_rejected() {
    let bad = [
        i64::from(i32::MAX) + 1,
        i64::from(i32::MIN) - 1,
        i64::MAX,
        i64::MIN,
    ];
    for kind in kernels() {
        for v in bad {
            let enc = write_long(kind, v);
            for buf in with_and_without_padding(&enc) {
                assert_eq!(read_int(kind, &buf, 0), Err(VarintError::IntOutOfRange));
                assert_eq!(read_ints(kind, &buf, 0, 1), Err(VarintError::IntOutOfRange));
                // Out of range before a truncation: range error first, as value by value.
                let mut long = write_longs(kind, &[1; 30]);
                long.extend(&enc);
                long.push(0x80);
                assert_eq!(
                    read_ints(kind, &long, 0, 32),
                    Err(VarintError::IntOutOfRange),
                    "{kind}"
                );
                // Truncation before the out-of-range value: truncation first.
                assert_eq!(read_ints(kind, &long, 0, 30), Ok(((vec![1; 30]), 30)));
            }
        }
    }
}
