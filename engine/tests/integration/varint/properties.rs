//! Property tests: every kernel equals `Scalar` on random streams, truncated and damaged at
//! every offset, single reads, hinted reads and bulk paths alike.

use super::*;

/// A xorshift64 generator from `seed` (non-zero): the tests' deterministic pseudo-random
/// values.
pub(super) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// A value whose varint is exactly `len` bytes.
pub(super) fn value_of_len(len: usize, raw: u64) -> u64 {
    if len == 1 {
        return raw & 0x7f;
    }
    let bits = (7 * len).min(64);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    (raw & mask) | (1 << (7 * (len - 1)))
}

/// Raw values with random lengths: either any length 1 to 10, or lengths from a narrow set
/// (like the benchmarks' mixes).
pub(super) fn values() -> impl Strategy<Value = Vec<u64>> {
    let any_len = (1usize..=MAX_LEN, any::<u64>()).prop_map(|(l, r)| value_of_len(l, r));
    let short = (1usize..=2, any::<u64>()).prop_map(|(l, r)| value_of_len(l, r));
    let long = (8usize..=MAX_LEN, any::<u64>()).prop_map(|(l, r)| value_of_len(l, r));
    prop_oneof![
        prop::collection::vec(any_len, 0..80),
        prop::collection::vec(short, 0..120),
        prop::collection::vec(long, 0..30),
    ]
}

/// Encoded streams, sometimes damaged: a byte replaced, or runs of continuation bytes.
pub(super) fn streams() -> impl Strategy<Value = Vec<u8>> {
    let clean = values().prop_map(|vs| vs.into_iter().flat_map(reference_encode).collect());
    let damaged = (values(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(vs, i, b)| {
        let mut bytes: Vec<u8> = vs.into_iter().flat_map(reference_encode).collect();
        if !bytes.is_empty() {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        bytes
    });
    let runs = (
        values(),
        any::<prop::sample::Index>(),
        1usize..14,
        any::<u8>(),
    )
        .prop_map(|(vs, i, run, last)| {
            let mut bytes: Vec<u8> = vs.into_iter().flat_map(reference_encode).collect();
            let at = i.index(bytes.len() + 1);
            let mut ins = vec![0x80 | last; run];
            ins.push(last & 3);
            bytes.splice(at..at, ins);
            bytes
        });
    let noise = prop::collection::vec(any::<u8>(), 0..200);
    prop_oneof![4 => clean, 2 => damaged, 2 => runs, 1 => noise]
}

/// Decode value by value with `kind` until an error or the end; the whole trace.
pub(super) fn trace(
    kind: KernelKind,
    buf: &[u8],
    start: usize,
) -> (Vec<u64>, usize, Option<VarintError>) {
    let mut out = Vec::new();
    let mut p = start;
    while p < buf.len() {
        match read_u64(kind, buf, p) {
            Ok((v, next)) => {
                out.push(v);
                p = next;
            }
            Err(e) => return (out, p, Some(e)),
        }
    }
    (out, p, None)
}

/// [`trace`] through `read_u64_hinted`, one hint for the whole stream, starting from `hint`.
/// Also returns whether the hint was in the branch-free mode before each read.
pub(super) fn trace_hinted(
    kind: KernelKind,
    buf: &[u8],
    start: usize,
    mut hint: ReadHint,
) -> ((Vec<u64>, usize, Option<VarintError>), Vec<bool>) {
    let mut out = Vec::new();
    let mut modes = Vec::new();
    let mut p = start;
    while p < buf.len() {
        modes.push(hint.branchless());
        let mut q = p;
        match dispatch_kernel!(kind, k => k.read_u64_hinted(buf, &mut q, &mut hint)) {
            Ok(v) => {
                out.push(v);
                p = q;
            }
            Err(e) => return ((out, p, Some(e)), modes),
        }
    }
    ((out, p, None), modes)
}

/// Hints in each state a stream can leave them in: fresh, predicting 5, 9 and 10 bytes (the
/// 9- and 10-byte checks look past the first word), and in the branch-free mode (after random
/// lengths). Trained with `kind` itself, once per process.
pub(super) fn trained_hints(kind: KernelKind) -> Vec<ReadHint> {
    use std::sync::OnceLock;
    static HINTS: OnceLock<Vec<(KernelKind, Vec<ReadHint>)>> = OnceLock::new();
    let all = HINTS.get_or_init(|| kernels().into_iter().map(|k| (k, train_hints(k))).collect());
    all.iter().find(|(k, _)| *k == kind).unwrap().1.clone()
}

pub(super) fn train_hints(kind: KernelKind) -> Vec<ReadHint> {
    let mut next = xorshift(0x3c6e_f372_fe94_f82bu64);
    let mut hints = vec![ReadHint::default()];
    for lens in [&[5usize][..], &[9], &[10], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]] {
        let bytes: Vec<u8> = (0..400)
            .flat_map(|_| {
                let len = lens[(next() % lens.len() as u64) as usize];
                reference_encode(value_of_len(len, next()))
            })
            .collect();
        let mut hint = ReadHint::default();
        let mut p = 0;
        while p < bytes.len() {
            dispatch_kernel!(kind, k => k.read_u64_hinted(&bytes, &mut p, &mut hint)).unwrap();
        }
        // Only `bmi2` learns (the other kernels' hinted reads are their stateless ones).
        if lens.len() > 1 && kind == KernelKind::Bmi2 {
            assert!(
                hint.branchless(),
                "{kind}: random lengths leave the branch-free mode on"
            );
        }
        hints.push(hint);
    }
    hints
}

/// Compare every operation of `kind` with `Scalar` on `buf` from `start`.
pub(super) fn check_against_scalar(kind: KernelKind, buf: &[u8], start: usize) {
    let s = KernelKind::Scalar;
    let reference = trace(s, buf, start);
    assert_eq!(trace(kind, buf, start), reference, "{kind}: trace");
    for hint in trained_hints(kind) {
        assert_eq!(
            trace_hinted(kind, buf, start, hint).0,
            reference,
            "{kind}: hinted trace from {hint:?}"
        );
    }
    let decoded = reference.0.len();
    // Counts around the number of complete varints, so the error (if any) is reached, and
    // well past it, so that the bulk block decoder (which needs room for a block of values
    // beyond its position) meets the error itself; and counts that end inside a block
    // followed by more varints, where the block decoder must stop at the `n`-th value.
    for n in [
        0,
        1,
        decoded / 2,
        decoded,
        decoded + 1,
        decoded + 2,
        decoded + 80,
        decoded.saturating_sub(1),
        decoded / 3,
        16,
        64,
        65,
        buf.len(),
    ] {
        let what = format!("{kind}: n = {n}, start = {start}, buf = {buf:02x?}");
        assert_eq!(
            read_longs(kind, buf, start, n),
            read_longs(s, buf, start, n),
            "read_longs {what}"
        );
        assert_eq!(
            read_ints(kind, buf, start, n),
            read_ints(s, buf, start, n),
            "read_ints {what}"
        );
        assert_eq!(
            skip(kind, buf, start, n),
            skip(s, buf, start, n),
            "skip {what}"
        );
    }
    let mut p = start;
    for _ in 0..decoded.min(4) {
        assert_eq!(
            read_int(kind, buf, p),
            read_int(s, buf, p),
            "{kind}: read_int"
        );
        p = read_u64(s, buf, p).unwrap().1;
    }
}

/// Long streams for the bulk block decoder (64-byte blocks, groups of values decoded past the
/// block's last one): 60 to 400 values from one length mix, then arbitrary bytes (what follows
/// an array inside an Avro block), sometimes damaged (a byte replaced, or a run of
/// continuation bytes inserted) or with one valid 5- to 8-byte value inserted at a varint
/// boundary (blocks of short varints take their own path). Mixes include values above
/// `u32::MAX` (ints out of range) and mixes without them.
pub(super) fn long_streams() -> impl Strategy<Value = Vec<u8>> {
    let mixes: Vec<Vec<usize>> = vec![
        vec![1],
        vec![1, 2],
        (1..=MAX_LEN).collect(),
        vec![1, 2, 3, 4],
        vec![1, 3],
        vec![4],
        vec![3, 4, 5],
        vec![5],
        vec![8],
        vec![8, 9, 10],
        vec![10],
        vec![1, 10],
    ];
    (
        prop::sample::select(mixes),
        60usize..400,
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..100),
        0u8..5,
        any::<prop::sample::Index>(),
        any::<u8>(),
        any::<bool>(),
    )
        .prop_map(|(mix, count, seed, tail, damage, at, byte, small)| {
            let mut next = xorshift(seed | 1);
            let mut bytes = Vec::new();
            for _ in 0..count {
                let len = mix[(next() % mix.len() as u64) as usize];
                let mut v = value_of_len(len, next());
                if small && len <= 5 {
                    // Keep 5-byte values within u32 (valid ints).
                    v = value_of_len(len.min(4), v);
                }
                bytes.extend(reference_encode(v));
            }
            let at = at.index(bytes.len());
            match damage {
                0 => bytes[at] = byte,
                1 => {
                    let run = 9 + usize::from(byte % 4);
                    bytes.splice(at..at, std::iter::repeat_n(0x80 | byte, run));
                }
                2 => {
                    // One longer (valid) value amid short ones: a block changes paths.
                    let v = value_of_len(5 + usize::from(byte % 4), next());
                    let at = bytes[..at]
                        .iter()
                        .rposition(|&b| b < 0x80)
                        .map_or(0, |p| p + 1);
                    bytes.splice(at..at, reference_encode(v));
                }
                _ => {}
            }
            bytes.extend(tail);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn kernels_equal_scalar_on_long_streams(buf in long_streams(), start in 0usize..2) {
        let start = start.min(buf.len());
        for kind in kernels() {
            check_against_scalar(kind, &buf, start);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn kernels_equal_scalar_on_streams(buf in streams(), start in 0usize..3) {
        let start = start.min(buf.len());
        for kind in kernels() {
            check_against_scalar(kind, &buf, start);
        }
    }

    #[test]
    fn kernels_equal_scalar_on_every_truncation(buf in streams()) {
        let buf = &buf[..buf.len().min(160)];
        for cut in 0..=buf.len() {
            for kind in kernels() {
                check_against_scalar(kind, &buf[..cut], 0);
            }
        }
    }

    #[test]
    fn encoders_equal_scalar(raws in values(), signed in prop::collection::vec(any::<i64>(), 0..100)) {
        let longs: Vec<i64> = raws.iter().map(|&v| unzigzag64(v)).chain(signed).collect();
        let mut want = Vec::new();
        Scalar.write_longs(&longs, &mut want);
        for kind in kernels() {
            prop_assert_eq!(&write_longs(kind, &longs), &want, "{}", kind);
            let mut single = Vec::new();
            for &v in &longs {
                dispatch_kernel!(kind, k => k.write_long(v, &mut single));
            }
            prop_assert_eq!(&single, &want, "{}", kind);
            // The writer, into a vector with content and no spare capacity (it grows).
            let mut written = vec![0xaa];
            written.shrink_to_fit();
            dispatch_kernel!(kind, k => {
                let mut w = Writer::new(k, &mut written);
                for &v in &longs {
                    w.write_long(v);
                }
            });
            prop_assert_eq!(written[0], 0xaa);
            prop_assert_eq!(&written[1..], &want[..], "{}", kind);
            for &v in &raws {
                prop_assert_eq!(write_u64(kind, v), reference_encode(v));
            }
            prop_assert_eq!(
                read_longs(kind, &want, 0, longs.len()),
                Ok((longs.clone(), want.len()))
            );
        }
    }
}

/// `clean`, then for each depth: a copy with a run of 12 continuation bytes inserted there
/// (overlong), and a copy per byte of `replaced` with the byte at that depth replaced by it.
pub(super) fn with_damage(clean: &[u8], depths: &[usize], replaced: &[u8]) -> Vec<Vec<u8>> {
    let mut bufs = vec![clean.to_vec()];
    for &depth in depths {
        let mut b = clean.to_vec();
        b.splice(depth..depth, [0xffu8; 12]);
        bufs.push(b);
        for &bad in replaced {
            let mut b = clean.to_vec();
            b[depth] = bad;
            bufs.push(b);
        }
    }
    bufs
}

/// Long streams, so that the bulk paths run several probe/run blocks and switch modes:
/// uniform stretches, random-length stretches, one-byte runs, then a damaged byte at several
/// depths. Every kernel must equal `Scalar`.
#[test]
fn long_streams_switch_bulk_modes_and_equal_scalar() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut values = Vec::new();
    for segment in 0..24 {
        let fixed = 1 + segment % 10;
        for _ in 0..300 {
            let len = match segment % 4 {
                0 => fixed,
                1 => 1 + (next() % 10) as usize,
                2 => 1 + (next() % 2) as usize,
                _ => 1,
            };
            values.push(value_of_len(len, next()));
        }
    }
    let clean: Vec<u8> = values.iter().flat_map(|&v| reference_encode(v)).collect();
    let depths = [5usize, 700, 3001, clean.len() / 2, clean.len() - 3];
    let bufs = with_damage(&clean, &depths, &[0xff, 0x00, 0x7f]);
    let s = KernelKind::Scalar;
    for buf in &bufs {
        for kind in kernels() {
            for n in [values.len(), values.len() - 1, 2000, 4097, values.len() + 1] {
                assert_eq!(
                    read_longs(kind, buf, 0, n),
                    read_longs(s, buf, 0, n),
                    "{kind}: n = {n}"
                );
                assert_eq!(
                    read_ints(kind, buf, 0, n),
                    read_ints(s, buf, 0, n),
                    "{kind}"
                );
                assert_eq!(skip(kind, buf, 0, n), skip(s, buf, 0, n), "{kind}: n = {n}");
            }
        }
    }
}

/// Single-value reads with one hint across a long stream whose length mix changes: uniform
/// stretches (predicted mode), random-length stretches long enough to switch to the
/// branch-free mode and for its run to end inside them, one-byte runs, then damage at several
/// depths. Every kernel must equal `Scalar`, and `bmi2` (the kernel whose reads learn) must
/// have used both modes.
#[test]
fn hinted_reads_switch_modes_and_equal_scalar() {
    let mut next = xorshift(0x510e_527f_ade6_82d1u64);
    let mut values = Vec::new();
    for segment in 0..19 {
        let fixed = 2 + segment % 9;
        // The last segment is uniform and longer than a branch-free run (16 KiB).
        let count = match segment {
            18 => 9000,
            _ if segment % 3 == 1 => 6000,
            _ => 400,
        };
        for _ in 0..count {
            let len = match segment % 3 {
                0 => fixed,
                1 => 1 + (next() % 10) as usize,
                _ => 1 + usize::from(next().is_multiple_of(16)),
            };
            values.push(value_of_len(len, next()));
        }
    }
    let clean: Vec<u8> = values.iter().flat_map(|&v| reference_encode(v)).collect();
    let depths = [3usize, 5000, clean.len() / 2, clean.len() - 2];
    let bufs = with_damage(&clean, &depths, &[0x00]);
    let s = KernelKind::Scalar;
    for buf in &bufs {
        let reference = trace(s, buf, 0);
        for kind in kernels() {
            let (got, modes) = trace_hinted(kind, buf, 0, ReadHint::default());
            assert_eq!(got, reference, "{kind}");
            if kind == KernelKind::Bmi2 && buf == &clean {
                assert!(
                    modes.contains(&true) && modes.contains(&false),
                    "{kind}: both modes"
                );
                // The branch-free mode is left again (its run ends, lengths are uniform).
                let last_on = modes.iter().rposition(|&m| m).unwrap();
                assert!(last_on + 1000 < modes.len(), "{kind}: left at {last_on}");
            }
        }
    }
}

/// The block decoder's path for blocks of varints of at most four bytes, at its edges: one
/// longer varint (5, 8 or 10 bytes, or an overlong run) among one- to four-byte varints, at
/// every byte offset of the first three 64-byte blocks, so it also crosses a block boundary
/// (the block after it starts inside it). Every kernel must equal `Scalar`.
#[test]
fn one_long_varint_among_short_ones_at_every_offset() {
    let mut next = xorshift(0x6a09_e667_f3bc_c909u64);
    let short: Vec<u8> = (0..200)
        .flat_map(|i| reference_encode(value_of_len(1 + (i * 7 + i / 3) % 4, next())))
        .collect();
    let s = KernelKind::Scalar;
    for long in [5usize, 8, 10, 11] {
        let inserted = if long == 11 {
            vec![0x81; 11]
        } else {
            reference_encode(value_of_len(long, next()))
        };
        for at in 0..3 * 64 + 8 {
            // Insert at the varint boundary at or before `at`.
            let at = short[..at]
                .iter()
                .rposition(|&b| b < 0x80)
                .map_or(0, |p| p + 1);
            let mut buf = short.clone();
            buf.splice(at..at, inserted.iter().copied());
            for kind in kernels() {
                for n in [150, 199] {
                    assert_eq!(
                        read_longs(kind, &buf, 0, n),
                        read_longs(s, &buf, 0, n),
                        "{kind}: long {long} at {at}, n = {n}"
                    );
                    assert_eq!(
                        read_ints(kind, &buf, 0, n),
                        read_ints(s, &buf, 0, n),
                        "{kind}: long {long} at {at}, n = {n}"
                    );
                }
            }
        }
    }
}

/// The bulk encoder's group paths (eight one-byte values, one- and two-byte groups, one- to
/// three-byte groups, the word path) on streams of each mix, with signs: every kernel equals
/// `Scalar` and decodes back.
#[test]
fn bulk_encode_groups_equal_scalar() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mixes: [&[usize]; 7] = [&[1], &[2], &[1, 2], &[3], &[1, 2, 3], &[2, 3, 4], &[1, 10]];
    for mix in mixes {
        let longs: Vec<i64> = (0..203)
            .map(|_| {
                let len = mix[(next() % mix.len() as u64) as usize];
                unzigzag64(value_of_len(len, next()))
            })
            .collect();
        let mut want = Vec::new();
        Scalar.write_longs(&longs, &mut want);
        for kind in kernels() {
            assert_eq!(write_longs(kind, &longs), want, "{kind}: mix {mix:?}");
            assert_eq!(
                read_longs(kind, &want, 0, longs.len()),
                Ok((longs.clone(), want.len())),
                "{kind}: mix {mix:?}"
            );
        }
    }
}
