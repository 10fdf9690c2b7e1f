//! Parquet's RLE / bit-packing hybrid encoding, for the definition levels and dictionary ids
//! of the pages `dictionary.rs` writes.
//!
//! A run of at least [`MIN_RUN`] equal values is one RLE run (a header and the value); other
//! values are bit-packed in groups of eight, at most [`MAX_GROUPS`] groups per header (the
//! `parquet` crate's limit, so that every reader takes them). The last group is padded with
//! zeros; the page header says how many values there are.

/// Equal values from which a run is written as one RLE run.
const MIN_RUN: usize = 8;

/// Groups of eight bit-packed values under one header at most.
const MAX_GROUPS: usize = 63;

/// The bits a value up to `max` needs (0 for 0).
pub fn bits_for(max: u64) -> u8 {
    (u64::BITS - max.leading_zeros()) as u8
}

/// Appends `values`, each below `1 << width` (`width` ≤ 32), hybrid-encoded to `out`.
pub fn encode<T: Copy + Into<u32> + Eq>(values: &[T], width: u8, out: &mut Vec<u8>) {
    debug_assert!(width <= 32);
    let n = values.len();
    let mut i = 0;
    while i < n {
        let run = run_length(&values[i..]);
        if run >= MIN_RUN {
            rle(run, values[i].into(), width, out);
            i += run;
            continue;
        }
        // Bit-packed groups from `i` until a run starts at a group's start.
        let start = i;
        let mut groups = 0;
        loop {
            i += 8;
            groups += 1;
            if i >= n || groups == MAX_GROUPS || starts_run(&values[i..]) {
                break;
            }
        }
        let end = i.min(n);
        i = end;
        uleb((groups as u64) << 1 | 1, out);
        pack(&values[start..end], groups * 8, width, out);
    }
}

/// How many values at the start of `values` equal the first one (at least 1).
fn run_length<T: Eq>(values: &[T]) -> usize {
    let first = &values[0];
    values.iter().take_while(|v| *v == first).count()
}

/// Whether `values` starts with [`MIN_RUN`] equal values.
fn starts_run<T: Eq>(values: &[T]) -> bool {
    values.len() >= MIN_RUN && values[1..MIN_RUN].iter().all(|v| *v == values[0])
}

/// An RLE run: its length, then the value in whole bytes, little-endian.
fn rle(run: usize, value: u32, width: u8, out: &mut Vec<u8>) {
    uleb((run as u64) << 1, out);
    let bytes = usize::from(width).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

/// `values` bit-packed at `width` bits each, least significant bit first, padded with zeros
/// to `count` values.
fn pack<T: Copy + Into<u32>>(values: &[T], count: usize, width: u8, out: &mut Vec<u8>) {
    let width = u32::from(width);
    out.reserve(count * width as usize / 8);
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    let padding = count - values.len();
    for value in values
        .iter()
        .map(|&v| v.into())
        .chain(std::iter::repeat_n(0, padding))
    {
        acc |= u64::from(value) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    debug_assert_eq!(bits, 0, "eight values of any width are whole bytes");
}

/// An unsigned LEB128 varint.
fn uleb(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A plain decoder of the hybrid encoding, as the format describes it.
    fn decode(mut bytes: &[u8], width: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < n {
            let mut header = 0u64;
            let mut shift = 0;
            loop {
                let b = bytes[0];
                bytes = &bytes[1..];
                header |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            if header & 1 == 0 {
                let len = usize::from(width).div_ceil(8);
                let mut value = [0u8; 4];
                value[..len].copy_from_slice(&bytes[..len]);
                bytes = &bytes[len..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(value),
                    (header >> 1) as usize,
                ));
            } else {
                let count = (header >> 1) as usize * 8;
                let len = count * usize::from(width) / 8;
                let (packed, rest) = bytes.split_at(len);
                bytes = rest;
                for k in 0..count {
                    let mut v = 0u32;
                    for b in 0..usize::from(width) {
                        let bit = k * usize::from(width) + b;
                        v |= u32::from(packed[bit / 8] >> (bit % 8) & 1) << b;
                    }
                    out.push(v);
                }
            }
        }
        out.truncate(n);
        assert!(bytes.is_empty(), "no bytes left over");
        out
    }

    proptest! {
        #[test]
        fn decodes_to_what_was_encoded(
            width in 1u8..=32,
            runs in proptest::collection::vec((any::<u32>(), 1usize..40), 0..60),
        ) {
            let mask = if width == 32 { u32::MAX } else { (1 << width) - 1 };
            let values: Vec<u32> = runs
                .iter()
                .flat_map(|&(v, n)| std::iter::repeat_n(v & mask, n))
                .collect();
            let mut out = Vec::new();
            encode(&values, width, &mut out);
            prop_assert_eq!(decode(&out, width, values.len()), values);
        }
    }

    #[test]
    fn long_runs_are_one_run_and_mixed_values_are_packed() {
        let mut out = Vec::new();
        encode(&[1u8; 1000], 1, &mut out);
        assert_eq!(out, [0xd0, 0x0f, 1]);
        let mut out = Vec::new();
        encode(&[0u8, 1, 0, 1, 1, 0, 0, 1], 1, &mut out);
        assert_eq!(out, [0x03, 0b1001_1010]);
        assert_eq!(bits_for(0), 0);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(49), 6);
    }
}
