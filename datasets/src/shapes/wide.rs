//! The `bench.WideRecord` shape: 100 flat fields, ten groups of ten types.
//!
//! Field `f{10g + k}` has type `k` of: long, int, double, float, boolean, string, nullable long,
//! nullable string, timestamp-millis, date. Distributions: longs take 1–5 varint bytes (mostly
//! 3–4), ints 1–3; strings mix 2-letter codes, words, e-mail addresses and 36-character UUIDs;
//! nullable longs are null 10–28 % and nullable strings 30–12 % depending on the group;
//! timestamps are 2023–2025 instants (6-byte varints) with 12 % `9999-12-31` "open-ended"
//! sentinels (7 bytes); even groups hold recent dates (3 bytes, 12 % sentinel, 4 bytes) and odd
//! groups birth dates 1940–2006 (negative before 1970; 2–3 bytes).

use serde::ser::{Serialize, SerializeTupleStruct, Serializer};

use super::{RowGenerator, FIRST_NAMES, HEX, LAST_NAMES};
use crate::rng::{push_num, push_random, Rng};

/// Number of ten-field groups.
const GROUPS: usize = 10;

/// 9999-12-31T00:00:00Z in milliseconds since the epoch.
const END_OF_TIME_MILLIS: i64 = 253_402_214_400_000;
/// 9999-12-31 in days since the epoch.
const END_OF_TIME_DAYS: i32 = 2_932_896;
/// 2023-01-01T00:00:00Z in milliseconds.
const MILLIS_2023: i64 = 1_672_531_200_000;
/// 2026-01-01T00:00:00Z in milliseconds.
const MILLIS_2026: i64 = 1_767_225_600_000;
/// 2023-01-01 in days.
const DAYS_2023: i64 = 19_358;
/// 1940-01-01 in days (negative: before the epoch).
const DAYS_1940: i64 = -10_957;
/// 2006-12-31 in days.
const DAYS_2006_END: i64 = 13_513;

/// Short status-like words.
const WORDS: &[&str] = &[
    "active",
    "pending",
    "closed",
    "archived",
    "on_hold",
    "shipped",
    "refunded",
    "trial",
    "suspended",
    "new",
];
/// ISO country codes.
const COUNTRIES: &[&str] = &[
    "US", "DE", "FR", "JP", "BR", "IN", "NG", "GB", "CA", "AU", "KR",
];
/// E-mail domains.
const DOMAINS: &[&str] = &[
    "example.com",
    "mail.example.org",
    "corp.example.net",
    "ex.io",
];

/// One group of ten fields of `bench.WideRecord`.
#[derive(Debug, Clone, Default)]
struct Group {
    long: i64,
    int: i32,
    double: f64,
    float: f32,
    boolean: bool,
    string: String,
    nullable_long: Option<i64>,
    nullable_string: String,
    nullable_string_is_null: bool,
    timestamp_millis: i64,
    date: i32,
}

/// One `bench.WideRecord` record.
#[derive(Debug, Clone)]
pub(crate) struct Wide {
    groups: Vec<Group>,
}

impl Serialize for Wide {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut r = serializer.serialize_tuple_struct("WideRecord", GROUPS * 10)?;
        for g in &self.groups {
            r.serialize_field(&g.long)?;
            r.serialize_field(&g.int)?;
            r.serialize_field(&g.double)?;
            r.serialize_field(&g.float)?;
            r.serialize_field(&g.boolean)?;
            r.serialize_field(g.string.as_str())?;
            r.serialize_field(&g.nullable_long)?;
            let s = (!g.nullable_string_is_null).then_some(g.nullable_string.as_str());
            r.serialize_field(&s)?;
            r.serialize_field(&g.timestamp_millis)?;
            r.serialize_field(&g.date)?;
        }
        r.end()
    }
}

/// Generates `bench.WideRecord` rows.
#[derive(Debug)]
pub(crate) struct WideGenerator {
    row: Wide,
}

impl RowGenerator for WideGenerator {
    type Row = Wide;

    fn new(_rng: &mut Rng) -> Self {
        WideGenerator {
            row: Wide {
                groups: vec![Group::default(); GROUPS],
            },
        }
    }

    fn next_row(&mut self, rng: &mut Rng) -> &Wide {
        for (i, g) in self.row.groups.iter_mut().enumerate() {
            let gi = i as f64;
            g.long = rng.varint_mixed(1, &[5, 10, 35, 35, 15]);
            g.int = rng.varint_mixed(1, &[40, 35, 25]) as i32;
            // Money-like amounts whose scale depends on the group; 8 % negative (refunds).
            let scale = [10.0, 100.0, 1_000.0, 100_000.0][i % 4];
            let cents = (rng.unit() * scale * 100.0) as i64;
            let sign = if rng.chance(0.08) { -1.0 } else { 1.0 };
            g.double = sign * cents as f64 / 100.0;
            // A sensor-like measurement.
            g.float = (40.0 + 4.0 * gi + 12.5 * rng.normalish()) as f32;
            g.boolean = rng.chance(0.1 + 0.08 * gi);
            g.string.clear();
            push_string(&mut g.string, rng);
            g.nullable_long = if rng.chance(0.10 + 0.02 * gi) {
                None
            } else {
                Some(rng.varint_mixed(1, &[10, 15, 30, 30, 15]))
            };
            g.nullable_string_is_null = rng.chance(0.30 - 0.02 * gi);
            g.nullable_string.clear();
            if !g.nullable_string_is_null {
                push_string(&mut g.nullable_string, rng);
            }
            g.timestamp_millis = if rng.chance(0.12) {
                END_OF_TIME_MILLIS
            } else {
                rng.range(MILLIS_2023, MILLIS_2026 - 1)
            };
            g.date = if i % 2 == 0 {
                if rng.chance(0.12) {
                    END_OF_TIME_DAYS
                } else {
                    rng.range(DAYS_2023, DAYS_2023 + 3 * 365) as i32
                }
            } else {
                rng.range(DAYS_1940, DAYS_2006_END) as i32
            };
        }
        &self.row
    }
}

/// Appends a string of one of several kinds, from 2 to 36+ characters.
fn push_string(s: &mut String, rng: &mut Rng) {
    match rng.weighted(&[20, 35, 15, 15, 15]) {
        0 => s.push_str(rng.pick(COUNTRIES)),
        1 => s.push_str(rng.pick(WORDS)),
        2 => {
            // first.last42@domain
            for ch in rng.pick(FIRST_NAMES).chars() {
                s.push(ch.to_ascii_lowercase());
            }
            s.push('.');
            for ch in rng
                .pick(LAST_NAMES)
                .chars()
                .filter(char::is_ascii_alphabetic)
            {
                s.push(ch.to_ascii_lowercase());
            }
            if rng.chance(0.5) {
                push_num(s, rng.below(100), 0);
            }
            s.push('@');
            s.push_str(rng.pick(DOMAINS));
        }
        3 => {
            // A UUID in canonical form.
            for (k, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
                if k > 0 {
                    s.push('-');
                }
                push_random(s, rng, HEX, n);
            }
        }
        _ => {
            // A reference like INV-2024-000123.
            s.push_str("INV-");
            push_num(s, 2023 + rng.below(3), 4);
            s.push('-');
            push_num(s, rng.below(1_000_000), 6);
        }
    }
}
