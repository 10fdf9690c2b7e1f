//! Random values for a schema, biased to the edges (varint lengths, NaNs, decimal limits).

use super::*;

pub(super) const STRINGS: [&str; 10] = [
    "",
    "a",
    "hello",
    "é",
    "中文字符",
    "😀🎉",
    "nul\u{0}byte",
    "line\nbreak",
    "\u{10FFFF}",
    "ascii and ünïcödé",
];

pub(super) fn random_string(rng: &mut Rng) -> String {
    if rng.one_in(2) {
        return rng.pick(&STRINGS).to_string();
    }
    // Mostly short (inline in a view), sometimes long (multi-byte varint length).
    let n = if rng.one_in(12) {
        rng.range(100, 3000)
    } else {
        rng.range(0, 24)
    };
    (0..n)
        .map(|_| match rng.below(5) {
            0 => char::from_u32(0x4e00 + rng.below(0x100) as u32).unwrap(),
            1 => char::from_u32(0x1F600 + rng.below(0x40) as u32).unwrap(),
            2 => char::from_u32(0xC0 + rng.below(0x40) as u32).unwrap(),
            _ => (b'a' + rng.below(26) as u8) as char,
        })
        .collect()
}

/// A value next to a varint length boundary: zigzag(v) crosses 7k bits at |v| = 2^(7k-1).
pub(super) fn varint_edge(rng: &mut Rng, max_k: usize) -> i64 {
    let k = rng.range(1, max_k);
    let base = if 7 * k > 63 {
        i64::MAX
    } else {
        1i64 << (7 * k - 1)
    };
    let v = base.saturating_add(rng.below(3) as i64 - 1);
    if rng.one_in(2) {
        v
    } else {
        v.saturating_neg()
    }
}

pub(super) fn random_i32(rng: &mut Rng) -> i32 {
    match rng.below(9) {
        8 => varint_edge(rng, 5).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        0 => *rng.pick(&[i32::MIN, i32::MAX, 0, -1, 1, 63, 64, -64, -65, 8191, 8192]),
        1 => rng.next_u64() as i32,
        2 => (rng.next_u64() as i32) >> rng.below(32),
        _ => rng.range(0, 200) as i32 - 100,
    }
}

pub(super) fn random_i64(rng: &mut Rng) -> i64 {
    match rng.below(9) {
        8 => varint_edge(rng, 10),
        0 => *rng.pick(&[
            i64::MIN,
            i64::MAX,
            0,
            -1,
            1,
            i32::MIN as i64 - 1,
            i32::MAX as i64 + 1,
            1 << 62,
            -(1 << 62),
        ]),
        1 => rng.next_u64() as i64,
        2 => (rng.next_u64() as i64) >> rng.below(64),
        _ => rng.range(0, 2000) as i64 - 1000,
    }
}

pub(super) fn random_f64(rng: &mut Rng) -> f64 {
    match rng.below(6) {
        0 => *rng.pick(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            5e-324,
        ]),
        1 => f64::from_bits(rng.next_u64()),
        _ => (rng.next_u64() % 100_000) as f64 / 7.0 - 5000.0,
    }
}

pub(super) fn random_f32(rng: &mut Rng) -> f32 {
    match rng.below(6) {
        0 => *rng.pick(&[
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            1e-45,
        ]),
        1 => f32::from_bits(rng.next_u64() as u32),
        _ => (rng.next_u64() % 100_000) as f32 / 7.0 - 5000.0,
    }
}

/// Minimal big-endian two's complement bytes of `v` (at least one byte).
pub fn minimal_be(v: i256) -> Vec<u8> {
    let b = v.to_be_bytes();
    let neg = v < i256::ZERO;
    let fill = if neg { 0xff } else { 0 };
    let mut start = 0;
    while start < 31 && b[start] == fill && ((b[start + 1] & 0x80 != 0) == neg) {
        start += 1;
    }
    b[start..].to_vec()
}

pub(super) fn pow10(p: usize) -> i256 {
    let mut v = i256::ONE;
    for _ in 0..p {
        v = v.wrapping_mul(i256::from_i128(10));
    }
    v
}

/// A random unscaled decimal with at most `p` digits.
pub fn random_decimal(rng: &mut Rng, p: usize) -> i256 {
    let max = pow10(p).wrapping_sub(i256::ONE);
    match rng.below(6) {
        0 => max,
        1 => max.wrapping_neg(),
        2 => i256::ZERO,
        _ => {
            let digits = rng.range(1, p);
            let mut v = i256::ZERO;
            for _ in 0..digits {
                v = v
                    .wrapping_mul(i256::from_i128(10))
                    .wrapping_add(i256::from_i128(rng.below(10) as i128));
            }
            if rng.one_in(2) {
                v.wrapping_neg()
            } else {
                v
            }
        }
    }
}

/// A random value of type `s`. `depth` bounds nesting of collections.
pub fn random_value(rng: &mut Rng, model: &Model, s: &S, depth: usize) -> Value {
    let s = model.resolve(s);
    match s {
        S::Null => Value::Null,
        S::Boolean => Value::Boolean(rng.one_in(2)),
        S::Int => Value::Int(random_i32(rng)),
        S::Long => Value::Long(random_i64(rng)),
        S::Float => Value::Float(random_f32(rng)),
        S::Double => Value::Double(random_f64(rng)),
        S::Bytes => {
            let n = match rng.below(12) {
                0..=2 => 0,
                3 => rng.range(128, 20_000),
                _ => rng.range(0, 40),
            };
            Value::Bytes(rng.bytes(n))
        }
        S::String => Value::String(random_string(rng)),
        S::Fixed { size, .. } => Value::Fixed(*size, rng.bytes(*size)),
        S::Enum { symbols, .. } => {
            let i = rng.below(symbols.len());
            Value::Enum(i as u32, symbols[i].clone())
        }
        S::Array(items) => {
            let n = if depth == 0 || rng.one_in(4) {
                0
            } else if depth >= 3 && rng.one_in(10) {
                rng.range(20, 150)
            } else {
                rng.range(0, 5)
            };
            Value::Array(
                (0..n)
                    .map(|_| random_value(rng, model, items, depth.saturating_sub(1)))
                    .collect(),
            )
        }
        S::Map(values) => {
            let n = if depth == 0 || rng.one_in(4) {
                0
            } else {
                rng.range(0, 5)
            };
            let mut m = std::collections::HashMap::new();
            for _ in 0..n {
                m.insert(
                    random_string(rng),
                    random_value(rng, model, values, depth.saturating_sub(1)),
                );
            }
            Value::Map(m)
        }
        S::Record { fields, .. } => Value::Record(
            fields
                .iter()
                .map(|(n, fs)| (n.clone(), random_value(rng, model, fs, depth)))
                .collect(),
        ),
        S::Union(branches) => {
            let i = rng.below(branches.len());
            Value::Union(
                i as u32,
                Box::new(random_value(rng, model, &branches[i], depth)),
            )
        }
        S::Decimal { precision, .. } => {
            Value::Decimal(Decimal::from(minimal_be(random_decimal(rng, *precision))))
        }
        S::Uuid { .. } => {
            let b: [u8; 16] = rng.bytes(16).try_into().unwrap();
            Value::Uuid(Uuid::from_bytes(b))
        }
        S::Date => Value::Date(random_i32(rng)),
        // Times of day within a day (others are decode errors), the bounds often.
        S::TimeMillis => Value::TimeMillis(match rng.below(8) {
            0 => 0,
            1 => 86_399_999,
            _ => rng.below(86_400_000) as i32,
        }),
        S::TimeMicros => Value::TimeMicros(match rng.below(8) {
            0 => 0,
            1 => 86_399_999_999,
            _ => rng.below(86_400_000_000) as i64,
        }),
        S::Timestamp { unit, local } => {
            let v = random_i64(rng);
            match (unit, local) {
                (TsUnit::Millis, false) => Value::TimestampMillis(v),
                (TsUnit::Micros, false) => Value::TimestampMicros(v),
                (TsUnit::Nanos, false) => Value::TimestampNanos(v),
                (TsUnit::Millis, true) => Value::LocalTimestampMillis(v),
                (TsUnit::Micros, true) => Value::LocalTimestampMicros(v),
                (TsUnit::Nanos, true) => Value::LocalTimestampNanos(v),
            }
        }
        S::Duration { .. } => {
            let m = if rng.one_in(4) {
                i32::MAX as u32
            } else {
                rng.below(1000) as u32
            };
            let d = if rng.one_in(4) {
                i32::MAX as u32
            } else {
                rng.below(1000) as u32
            };
            let ms = if rng.one_in(4) {
                u32::MAX
            } else {
                rng.next_u64() as u32
            };
            Value::Duration(Duration::new(Months::new(m), Days::new(d), Millis::new(ms)))
        }
        S::Ref(_) => unreachable!(),
    }
}
