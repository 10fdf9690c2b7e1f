//! The `bench.Counters` shape: per-host metric windows with 256 long counters.
//!
//! 400 hosts (ids 1–6000: mostly 2-byte varints) each report once per one-minute window
//! (`window` is epoch seconds, a 5-byte varint). Each of the 256 counter positions has a fixed
//! probability of being a "small" counter (error counts, retries: 0–63, 40 % zeros, 1 byte)
//! rather than a "large" one (bytes, requests: a 3-byte varint); the probabilities are 95, 75,
//! 50, 25 or 5 %, so a row mixes 1- and 3-byte values roughly half and half, in no fixed
//! pattern.

use serde::ser::{Serialize, SerializeTupleStruct, Serializer};

use super::RowGenerator;
use crate::rng::Rng;

/// Hosts reporting in each window.
const HOSTS: usize = 400;
/// Counters per row.
const VALUES: usize = 256;
/// 2025-03-01T00:00:00Z in seconds.
const START_SECONDS: i64 = 1_740_787_200;
/// Probabilities (percent) that a counter position holds small values.
const SMALL_PERCENT: [u32; 5] = [95, 75, 50, 25, 5];

/// One `bench.Counters` record.
#[derive(Debug, Clone)]
pub(crate) struct Counters {
    host: i32,
    window: i64,
    values: Vec<i64>,
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut r = serializer.serialize_tuple_struct("Counters", 3)?;
        r.serialize_field(&self.host)?;
        r.serialize_field(&self.window)?;
        r.serialize_field(self.values.as_slice())?;
        r.end()
    }
}

/// Generates `bench.Counters` rows.
#[derive(Debug)]
pub(crate) struct CountersGenerator {
    hosts: Vec<i32>,
    /// Per position: probability (percent) of a small value.
    small_percent: Vec<u32>,
    next_host: usize,
    window: i64,
    row: Counters,
}

impl RowGenerator for CountersGenerator {
    type Row = Counters;

    fn new(rng: &mut Rng) -> Self {
        let hosts = (0..HOSTS).map(|_| rng.range(1, 6_000) as i32).collect();
        let small_percent = (0..VALUES).map(|_| rng.pick(&SMALL_PERCENT)).collect();
        CountersGenerator {
            hosts,
            small_percent,
            next_host: 0,
            window: START_SECONDS + 60 * rng.range(0, 1_440),
            row: Counters {
                host: 0,
                window: 0,
                values: vec![0; VALUES],
            },
        }
    }

    fn next_row(&mut self, rng: &mut Rng) -> &Counters {
        if self.next_host == HOSTS {
            self.next_host = 0;
            self.window += 60;
        }
        let row = &mut self.row;
        row.host = self.hosts[self.next_host];
        self.next_host += 1;
        row.window = self.window;
        for (v, &p) in row.values.iter_mut().zip(&self.small_percent) {
            *v = if rng.below(100) < u64::from(p) {
                if rng.chance(0.4) {
                    0
                } else {
                    rng.range(1, 63)
                }
            } else {
                rng.varint_sized(3)
            };
        }
        &self.row
    }
}
