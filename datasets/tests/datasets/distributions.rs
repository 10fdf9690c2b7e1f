//! Value distributions, checked on records decoded by apache-avro: varint lengths, null rates,
//! string shapes, and internal consistency.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use apache_avro::types::Value;
use avrow_datasets::Shape;

use crate::{array, field, fields, long, nullable, rows_of, string, varint_len};

/// Fraction of `items` satisfying `pred`.
fn fraction<T>(items: &[T], pred: impl Fn(&T) -> bool) -> f64 {
    items.iter().filter(|x| pred(x)).count() as f64 / items.len() as f64
}

/// Histogram of varint lengths.
fn lengths(values: impl IntoIterator<Item = i64>) -> BTreeMap<u32, usize> {
    let mut h = BTreeMap::new();
    for v in values {
        *h.entry(varint_len(v)).or_default() += 1;
    }
    h
}

fn keys(h: &BTreeMap<u32, usize>) -> Vec<u32> {
    h.keys().copied().collect()
}

fn share(h: &BTreeMap<u32, usize>, len: u32) -> f64 {
    let total: usize = h.values().sum();
    *h.get(&len).unwrap_or(&0) as f64 / total as f64
}

#[test]
fn order_distributions() {
    let rows = rows_of(Shape::Order, 4000);

    let ids = lengths(rows.iter().map(|r| long(field(r, "id"))));
    assert_eq!(keys(&ids), [3, 4, 5], "id lengths {ids:?}");
    assert!((0.25..0.35).contains(&share(&ids, 3)), "{ids:?}");
    assert!((0.45..0.55).contains(&share(&ids, 4)), "{ids:?}");

    let counters = lengths(rows.iter().flat_map(|r| {
        let c = array(field(r, "counters"));
        assert_eq!(c.len(), 64);
        c.iter().map(long)
    }));
    assert_eq!(keys(&counters), [3, 4, 5], "counter lengths {counters:?}");
    assert!((0.40..0.50).contains(&share(&counters, 3)), "{counters:?}");

    let mut customer_lengths = BTreeSet::new();
    let mut sku_lengths = BTreeSet::new();
    for r in &rows {
        let lines = array(field(r, "lines"));
        assert_eq!(lines.len(), 10);
        let mut cents = 0i64;
        let mut items = 0i64;
        for line in lines {
            let q = long(field(line, "quantity"));
            assert!((1..=5).contains(&q));
            let Value::Double(price) = field(line, "unit_price") else {
                panic!("unit_price")
            };
            assert!(*price > 0.0);
            cents += q * (price * 100.0).round() as i64;
            items += q;
            let sku = string(field(line, "sku"));
            assert!(sku.contains('-') && sku.is_ascii(), "{sku}");
            sku_lengths.insert(sku.len());
        }
        let item_count = long(field(r, "item_count"));
        assert_eq!(item_count, items);
        assert_eq!(varint_len(item_count), 1);
        if cents < 5_000 {
            cents += 499;
        }
        let Value::Double(total) = field(r, "total") else {
            panic!("total")
        };
        assert!(
            (total * 100.0 - cents as f64).abs() < 0.5,
            "{total} vs {cents}"
        );
        customer_lengths.insert(string(field(r, "customer")).len());

        let Value::Map(attrs) = field(r, "attributes") else {
            panic!("attributes")
        };
        let mut k: Vec<&str> = attrs.keys().map(String::as_str).collect();
        k.sort_unstable();
        assert_eq!(k, ["channel", "region"]);
    }
    assert!(customer_lengths.len() >= 10, "{customer_lengths:?}");
    assert!(sku_lengths.len() >= 4, "{sku_lengths:?}");

    let null_notes = fraction(&rows, |r| nullable(field(r, "note")).is_none());
    assert!(
        (0.15..0.35).contains(&null_notes),
        "null notes {null_notes}"
    );
    let paid = fraction(&rows, |r| field(r, "paid") == &Value::Boolean(true));
    assert!((0.8..0.95).contains(&paid), "paid {paid}");
}

#[test]
fn wide_distributions() {
    let rows = rows_of(Shape::Wide, 3000);
    assert_eq!(fields(&rows[0]).len(), 100);
    for g in 0..10 {
        let name = |k: usize| format!("f{:03}", 10 * g + k);
        let col = |k: usize| rows.iter().map(move |r| field(r, &name(k)));

        let longs = lengths(col(0).map(long));
        assert_eq!(keys(&longs), [1, 2, 3, 4, 5], "{} {longs:?}", name(0));
        let ints = lengths(col(1).map(long));
        assert_eq!(keys(&ints), [1, 2, 3], "{} {ints:?}", name(1));
        assert!(col(2).all(|v| matches!(v, Value::Double(_))));
        assert!(col(3).all(|v| matches!(v, Value::Float(_))));
        let trues = col(4).filter(|v| **v == Value::Boolean(true)).count();
        assert!(trues > 0 && trues < rows.len());
        let strings: BTreeSet<usize> = col(5).map(|v| string(v).len()).collect();
        assert!(strings.len() >= 8, "{} lengths {strings:?}", name(5));

        for k in [6, 7] {
            let nulls = col(k).filter(|v| nullable(v).is_none()).count() as f64;
            let rate = nulls / rows.len() as f64;
            assert!((0.07..0.33).contains(&rate), "{} null rate {rate}", name(k));
        }
        let non_null_longs = lengths(col(6).filter_map(nullable).map(long));
        assert!(non_null_longs.len() >= 4, "{non_null_longs:?}");

        let ts = lengths(col(8).map(|v| {
            assert!(matches!(v, Value::TimestampMillis(_)), "{v:?}");
            long(v)
        }));
        assert_eq!(keys(&ts), [6, 7], "{} {ts:?}", name(8));
        assert!(share(&ts, 7) < 0.2);

        let dates: Vec<i64> = col(9)
            .map(|v| {
                assert!(matches!(v, Value::Date(_)), "{v:?}");
                long(v)
            })
            .collect();
        if g % 2 == 0 {
            assert_eq!(keys(&lengths(dates)), [3, 4], "{}", name(9));
        } else {
            assert!(
                dates.iter().any(|&d| d < 0),
                "{}: birth dates before 1970",
                name(9)
            );
            assert!(dates.iter().all(|&d| (-10_957..=13_513).contains(&d)));
        }
    }
}

#[test]
fn telemetry_distributions() {
    let rows = rows_of(Shape::Telemetry, 6000);

    let ts: Vec<i64> = rows
        .iter()
        .map(|r| {
            let v = field(r, "ts");
            assert!(matches!(v, Value::TimestampMicros(_)), "{v:?}");
            long(v)
        })
        .collect();
    assert_eq!(keys(&lengths(ts.iter().copied())), [8]);
    // 2025, microseconds.
    assert!(ts
        .iter()
        .all(|&t| (1_735_689_600_000_000..1_767_225_600_000_000).contains(&t)));

    let devices = lengths(rows.iter().map(|r| long(field(r, "device_id"))));
    assert_eq!(keys(&devices), [3, 4, 5], "{devices:?}");

    // seq counts up by one per device.
    let mut last_seq: HashMap<i64, i64> = HashMap::new();
    for r in &rows {
        let dev = long(field(r, "device_id"));
        let seq = long(field(r, "seq"));
        if let Some(prev) = last_seq.insert(dev, seq) {
            assert_eq!(seq, prev + 1, "device {dev}");
        }
    }

    let mut status = [0usize; 4];
    for r in &rows {
        let Value::Enum(i, sym) = field(r, "status") else {
            panic!("status")
        };
        assert_eq!(sym, ["OK", "WARN", "FAIL", "OFFLINE"][*i as usize]);
        status[*i as usize] += 1;
    }
    let ok = status[0] as f64 / rows.len() as f64;
    assert!((0.85..0.95).contains(&ok), "{status:?}");
    assert!(status.iter().all(|&n| n > 0), "{status:?}");

    let null_humidity = fraction(&rows, |r| nullable(field(r, "humidity")).is_none());
    assert!((0.10..0.30).contains(&null_humidity), "{null_humidity}");

    let battery = lengths(rows.iter().map(|r| long(field(r, "battery_mv"))));
    assert_eq!(keys(&battery), [2], "{battery:?}");

    for r in &rows {
        let fw = string(field(r, "firmware"));
        let core = fw.split('-').next().unwrap();
        let parts: Vec<&str> = core.split('.').collect();
        assert_eq!(parts.len(), 3, "{fw}");
        assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "{fw}");
        assert_eq!(array(field(r, "samples")).len(), 16);
        let Value::Float(t) = field(r, "temperature") else {
            panic!("temperature")
        };
        assert!((5.0..45.0).contains(t), "{t}");
    }
}

#[test]
fn counters_distributions() {
    let rows = rows_of(Shape::Counters, 2000);
    let mut values = Vec::new();
    for r in &rows {
        let v = array(field(r, "values"));
        assert_eq!(v.len(), 256);
        values.extend(v.iter().map(long));
        let window = long(field(r, "window"));
        assert_eq!(window % 60, 0);
        assert_eq!(varint_len(window), 5);
        let host = long(field(r, "host"));
        assert!((1..=6000).contains(&host));
    }
    let h = lengths(values.iter().copied());
    assert_eq!(keys(&h), [1, 3], "{h:?}");
    assert!((0.4..0.6).contains(&share(&h, 1)), "{h:?}");

    // Within a row, 1- and 3-byte values alternate irregularly (not in long runs).
    let row: Vec<u32> = array(field(&rows[0], "values"))
        .iter()
        .map(|v| varint_len(long(v)))
        .collect();
    let switches = row.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches > 60, "{switches} switches");
}
