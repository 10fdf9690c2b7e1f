//! The `bench.Order` shape: an e-commerce order with 10 nested lines, 64 counters and a map.
//!
//! Distributions: ids come from three sharded sequences whose zigzag varints take 3, 4 and 5
//! bytes (30/50/20 %); the 64 counters take 3, 4 or 5 bytes (45/40/15 %); `item_count` (the
//! sum of the line quantities, 10..=50) and the quantities (1..=5, skewed to 1) take 1 byte;
//! prices are cent amounts in four magnitude classes; `note` is null 25 % of the time.

use serde::ser::{Serialize, SerializeMap, SerializeTupleStruct, Serializer};

use super::{push_customer, RowGenerator, ALNUM_UPPER};
use crate::rng::{push_num, push_random, Rng};

/// Lines per order (the schema allows any number; the benchmark shape fixes 10).
const LINES: usize = 10;
/// Counters per order.
const COUNTERS: usize = 64;

/// Free-text delivery notes and order tags, of very different lengths.
const NOTES: &[&str] = &[
    "Leave at front door",
    "gift",
    "Please call on arrival",
    "Deliver to reception, 3rd floor, ask for the facilities manager",
    "fragile",
    "No substitutions",
    "Ring twice",
    "Customer requested invoice by email",
    "Back entrance via alley; dog is friendly",
    "Hold until Monday",
    "Gift wrap with card: Happy birthday, Sam!",
    "PO #4471-B",
];

/// Sales channels (`attributes["channel"]`).
const CHANNELS: &[&str] = &["web", "ios", "android", "pos", "partner-api", "phone"];
/// Fulfilment regions (`attributes["region"]`).
const REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-2",
    "eu-west-1",
    "eu-central-1",
    "ap-southeast-2",
    "sa-east-1",
    "me-central-1",
];
/// SKU category prefixes.
const CATEGORIES: &[&str] = &["HW", "APP", "BK", "EL", "GR", "TOY", "HOME", "SPT", "BTY"];
/// Apparel sizes, appended to some SKUs.
const SIZES: &[&str] = &["XS", "S", "M", "L", "XL", "XXL"];

/// One `bench.Line` record.
#[derive(Debug, Clone, Default)]
pub(crate) struct Line {
    sku: String,
    quantity: i32,
    unit_price: f64,
}

impl Serialize for Line {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut r = serializer.serialize_tuple_struct("Line", 3)?;
        r.serialize_field(self.sku.as_str())?;
        r.serialize_field(&self.quantity)?;
        r.serialize_field(&self.unit_price)?;
        r.end()
    }
}

/// The two-entry `attributes` map, serialized in a fixed key order so output is deterministic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attributes {
    channel: &'static str,
    region: &'static str,
}

impl Serialize for Attributes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(2))?;
        m.serialize_entry("channel", self.channel)?;
        m.serialize_entry("region", self.region)?;
        m.end()
    }
}

/// One `bench.Order` record.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    id: i64,
    customer: String,
    total: f64,
    item_count: i32,
    paid: bool,
    note: Option<&'static str>,
    lines: Vec<Line>,
    counters: Vec<i64>,
    attributes: Attributes,
}

impl Serialize for Order {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut r = serializer.serialize_tuple_struct("Order", 9)?;
        r.serialize_field(&self.id)?;
        r.serialize_field(self.customer.as_str())?;
        r.serialize_field(&self.total)?;
        r.serialize_field(&self.item_count)?;
        r.serialize_field(&self.paid)?;
        r.serialize_field(&self.note)?;
        r.serialize_field(self.lines.as_slice())?;
        r.serialize_field(self.counters.as_slice())?;
        r.serialize_field(&self.attributes)?;
        r.end()
    }
}

/// Generates `bench.Order` rows.
#[derive(Debug)]
pub(crate) struct OrderGenerator {
    /// Next id of each shard; shard `k` stays within the `3 + k`-byte varint range.
    shard_next: [i64; 3],
    row: Order,
}

/// Inclusive id bounds per shard: values whose zigzag varint takes 3, 4 and 5 bytes.
const SHARD_BOUNDS: [(i64, i64); 3] = [
    (1 << 13, (1 << 20) - 1),
    (1 << 20, (1 << 27) - 1),
    (1 << 27, (1 << 34) - 1),
];

impl RowGenerator for OrderGenerator {
    type Row = Order;

    fn new(rng: &mut Rng) -> Self {
        let mut shard_next = [0; 3];
        for (next, &(lo, hi)) in shard_next.iter_mut().zip(&SHARD_BOUNDS) {
            *next = rng.range(lo, lo + (hi - lo) / 2);
        }
        OrderGenerator {
            shard_next,
            row: Order {
                id: 0,
                customer: String::with_capacity(48),
                total: 0.0,
                item_count: 0,
                paid: false,
                note: None,
                lines: vec![Line::default(); LINES],
                counters: vec![0; COUNTERS],
                attributes: Attributes {
                    channel: CHANNELS[0],
                    region: REGIONS[0],
                },
            },
        }
    }

    fn next_row(&mut self, rng: &mut Rng) -> &Order {
        let shard = rng.weighted(&[30, 50, 20]);
        let (lo, hi) = SHARD_BOUNDS[shard];
        let id = self.shard_next[shard];
        let step = rng.range(1, 3);
        self.shard_next[shard] = if id + step > hi { lo } else { id + step };

        let row = &mut self.row;
        row.id = id;
        row.customer.clear();
        push_customer(&mut row.customer, rng);

        let mut total_cents: i64 = 0;
        let mut items: i32 = 0;
        for line in &mut row.lines {
            line.sku.clear();
            push_sku(&mut line.sku, rng);
            line.quantity = 1 + rng.weighted(&[50, 25, 12, 8, 5]) as i32;
            let cents = price_cents(rng);
            line.unit_price = cents as f64 / 100.0;
            total_cents += cents * i64::from(line.quantity);
            items += line.quantity;
        }
        // Shipping, free above 50.00.
        if total_cents < 5_000 {
            total_cents += 499;
        }
        row.total = total_cents as f64 / 100.0;
        row.item_count = items;
        row.paid = rng.chance(0.88);
        row.note = if rng.chance(0.75) {
            Some(rng.pick(NOTES))
        } else {
            None
        };
        for c in &mut row.counters {
            *c = rng.varint_mixed(3, &[45, 40, 15]);
        }
        row.attributes = Attributes {
            channel: rng.pick(CHANNELS),
            region: rng.pick(REGIONS),
        };
        &self.row
    }
}

/// A unit price in cents: 30 % under 10.00, 45 % 10–100, 20 % 100–1000, 5 % 1000–5000.
fn price_cents(rng: &mut Rng) -> i64 {
    match rng.weighted(&[30, 45, 20, 5]) {
        0 => rng.range(49, 999),
        1 => rng.range(1_000, 9_999),
        2 => rng.range(10_000, 99_999),
        _ => rng.range(100_000, 499_999),
    }
}

/// Appends a SKU: `HW-04821`, `APP-102934-XL`, `BK-9780141036144` or `EL-7Q2K-0091`.
fn push_sku(s: &mut String, rng: &mut Rng) {
    let category = rng.pick(CATEGORIES);
    s.push_str(category);
    s.push('-');
    match rng.weighted(&[40, 25, 15, 20]) {
        0 => push_num(s, rng.below(100_000), 5),
        1 => {
            push_num(s, rng.below(1_000_000), 6);
            s.push('-');
            s.push_str(rng.pick(SIZES));
        }
        2 => {
            s.push_str("978");
            push_num(s, rng.below(10_000_000_000), 10);
        }
        _ => {
            push_random(s, rng, ALNUM_UPPER, 4);
            s.push('-');
            push_num(s, rng.below(10_000), 4);
        }
    }
}
