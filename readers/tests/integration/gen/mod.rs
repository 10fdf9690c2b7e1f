//! Seeded, reproducible generators: random Avro schemas, random values for them, and container
//! files written by apache-avro's Writer with many blocks (some of one record, some empty).
//!
//! [`Rng`] is here; the generators are in `schemas`, `values` and `files`.

use apache_avro::types::Value;
use apache_avro::{Codec, Days, Decimal, Duration, Millis, Months, Schema, Uuid};
use arrow::datatypes::i256;
use serde_json::{json, Value as Json};

use crate::oracle::{max_precision_for_fixed, Container, Model, TsUnit, S};

/// SplitMix64: small, fast, good enough, and stable across platforms and crate versions.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

mod files;
mod schemas;
mod values;

pub use files::*;
pub use schemas::*;
pub use values::*;
