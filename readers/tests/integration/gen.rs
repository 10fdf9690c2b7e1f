//! Seeded, reproducible generators: random Avro schemas, random values for them, and container
//! files written by apache-avro's Writer with many blocks (some of one record, some empty).

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

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

struct Named {
    full: String,
    /// Namespace the type lives in (to decide whether a short reference resolves).
    ns: String,
    /// The short name.
    short: String,
    /// What a union needs to keep branches distinct.
    key: String,
}

/// Builds a random schema JSON. Every named type is defined once and may be referenced later
/// (by full name or, inside the same namespace, by short name).
pub struct SchemaGen<'r> {
    rng: &'r mut Rng,
    named: Vec<Named>,
    counter: usize,
    budget: isize,
}

const LEAF_LOGICAL: [&str; 12] = [
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "timestamp-nanos",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "local-timestamp-nanos",
    "uuid-string",
    "decimal-bytes",
    "duration",
];

impl<'r> SchemaGen<'r> {
    pub fn new(rng: &'r mut Rng) -> Self {
        SchemaGen {
            rng,
            named: Vec::new(),
            counter: 0,
            budget: 60,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    /// Name and namespace attributes for a new named type inside namespace `ns`: returns
    /// (json attributes, full name, the type's namespace, short name).
    fn name_attrs(
        &mut self,
        prefix: &str,
        ns: &str,
    ) -> (serde_json::Map<String, Json>, String, String, String) {
        let short = self.fresh(prefix);
        let mut m = serde_json::Map::new();
        let (full, tns) = match self.rng.below(4) {
            // inherit the enclosing namespace
            0 | 1 => {
                m.insert("name".into(), json!(short));
                if ns.is_empty() {
                    (short.clone(), String::new())
                } else {
                    (format!("{ns}.{short}"), ns.to_string())
                }
            }
            // explicit namespace attribute
            2 => {
                let nns = self
                    .rng
                    .pick(&["ns1", "org.example", "a.b.c", ""])
                    .to_string();
                m.insert("name".into(), json!(short));
                m.insert("namespace".into(), json!(nns));
                if nns.is_empty() {
                    (short.clone(), String::new())
                } else {
                    (format!("{nns}.{short}"), nns)
                }
            }
            // dotted full name (ignores any namespace attribute, which we also add to check)
            _ => {
                let nns = self.rng.pick(&["x", "x.y", "com.acme"]).to_string();
                let full = format!("{nns}.{short}");
                m.insert("name".into(), json!(full));
                if self.rng.one_in(2) {
                    m.insert("namespace".into(), json!("ignored.ns"));
                }
                (full, nns)
            }
        };
        (m, full, tns, short)
    }

    fn reference(&mut self, ns: &str, filter: impl Fn(&Named) -> bool) -> Option<(Json, String)> {
        let candidates: Vec<usize> = (0..self.named.len())
            .filter(|&i| filter(&self.named[i]))
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let n = &self.named[*self.rng.pick(&candidates)];
        let by_short = n.ns == ns && self.rng.one_in(2);
        let name = if by_short {
            n.short.clone()
        } else {
            n.full.clone()
        };
        // A short name would resolve against `ns`; only use it when it means the same type, and
        // when a type of that short name does not exist in the null namespace too.
        Some((json!(name), n.key.clone()))
    }

    /// A random type. `ns` is the enclosing namespace. Returns (json, union distinctness key).
    pub fn gen(&mut self, depth: usize, ns: &str, in_union: bool) -> (Json, String) {
        self.budget -= 1;
        let leaf_only = depth == 0 || self.budget <= 0;
        let choice = if leaf_only {
            self.rng.below(40)
        } else {
            self.rng.below(64)
        };
        match choice {
            0..=13 => {
                let p = *self.rng.pick(&[
                    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
                    "boolean", "int", "long", "double", "string", "string",
                ]);
                let key = p.to_string();
                if self.rng.one_in(5) {
                    (json!({ "type": p }), key)
                } else {
                    (json!(p), key)
                }
            }
            14..=27 => self.logical(ns),
            28..=31 => {
                // enum
                let (mut m, full, tns, short) = self.name_attrs("E", ns);
                let n = self.rng.range(1, 5);
                let symbols: Vec<String> =
                    (0..n).map(|i| format!("S{i}_{}", self.counter)).collect();
                m.insert("type".into(), json!("enum"));
                m.insert("symbols".into(), json!(symbols));
                if self.rng.one_in(3) {
                    m.insert("default".into(), json!(symbols[0]));
                }
                self.named.push(Named {
                    full: full.clone(),
                    ns: tns,
                    short,
                    key: full.clone(),
                });
                (Json::Object(m), full)
            }
            32..=35 => {
                let (mut m, full, tns, short) = self.name_attrs("F", ns);
                let size = self.rng.range(1, 20);
                m.insert("type".into(), json!("fixed"));
                m.insert("size".into(), json!(size));
                self.named.push(Named {
                    full: full.clone(),
                    ns: tns,
                    short,
                    key: full.clone(),
                });
                (Json::Object(m), full)
            }
            36..=39 => match self.reference(ns, |n| n.ns == ns || !n.ns.is_empty()) {
                Some(r) => r,
                None => (json!("long"), "long".into()),
            },
            40..=46 => self.record(depth, ns),
            47..=51 => {
                let (items, _) = self.gen(depth - 1, ns, false);
                (json!({ "type": "array", "items": items }), "array".into())
            }
            52..=55 => {
                let (values, _) = self.gen(depth - 1, ns, false);
                (json!({ "type": "map", "values": values }), "map".into())
            }
            _ => {
                if in_union {
                    return self.gen(depth - 1, ns, true);
                }
                self.union(depth, ns)
            }
        }
    }

    fn union(&mut self, depth: usize, ns: &str) -> (Json, String) {
        if self.rng.one_in(2) {
            // ["null", T] or [T, "null"]
            let (t, key) = self.gen_non_null(depth - 1, ns);
            let u = if self.rng.one_in(2) {
                json!(["null", t])
            } else {
                json!([t, "null"])
            };
            let _ = key;
            return (u, "union".into());
        }
        let n = self.rng.range(2, 4);
        let mut keys: Vec<String> = Vec::new();
        let mut branches = Vec::new();
        let mut tries = 0;
        while branches.len() < n && tries < 20 {
            tries += 1;
            let (b, key) = self.gen(depth - 1, ns, true);
            if key == "union" || keys.contains(&key) {
                continue;
            }
            keys.push(key);
            branches.push(b);
        }
        if branches.len() < 2 {
            for p in ["int", "string", "null"] {
                if !keys.contains(&p.to_string()) && branches.len() < 2 {
                    keys.push(p.into());
                    branches.push(json!(p));
                }
            }
        }
        (Json::Array(branches), "union".into())
    }

    fn gen_non_null(&mut self, depth: usize, ns: &str) -> (Json, String) {
        for _ in 0..20 {
            let (t, key) = self.gen(depth, ns, true);
            if key != "null" && key != "union" {
                return (t, key);
            }
        }
        (json!("string"), "string".into())
    }

    fn logical(&mut self, ns: &str) -> (Json, String) {
        let l = *self.rng.pick(&LEAF_LOGICAL);
        match l {
            "date" | "time-millis" => (json!({ "type": "int", "logicalType": l }), "int".into()),
            "uuid-string" => (
                json!({ "type": "string", "logicalType": "uuid" }),
                "string".into(),
            ),
            "decimal-bytes" => {
                // Sometimes above 38 digits (Decimal256).
                let p = if self.rng.one_in(3) {
                    self.rng.range(39, 76)
                } else {
                    self.rng.range(1, 38)
                };
                let s = self.rng.range(0, p);
                (
                    json!({ "type": "bytes", "logicalType": "decimal", "precision": p, "scale": s }),
                    "bytes".into(),
                )
            }
            "duration" => {
                let (mut m, full, tns, short) = self.name_attrs("Dur", ns);
                m.insert("type".into(), json!("fixed"));
                m.insert("size".into(), json!(12));
                m.insert("logicalType".into(), json!("duration"));
                self.named.push(Named {
                    full: full.clone(),
                    ns: tns,
                    short,
                    key: full.clone(),
                });
                (Json::Object(m), full)
            }
            _ => {
                // long-based; sometimes the fixed-backed logical types instead
                match self.rng.below(6) {
                    0 => {
                        let (mut m, full, tns, short) = self.name_attrs("Dec", ns);
                        let size = self.rng.range(1, 32);
                        let maxp = max_precision_for_fixed(size).min(76);
                        let p = self.rng.range(1, maxp);
                        let s = self.rng.range(0, p);
                        m.insert("type".into(), json!("fixed"));
                        m.insert("size".into(), json!(size));
                        m.insert("logicalType".into(), json!("decimal"));
                        m.insert("precision".into(), json!(p));
                        m.insert("scale".into(), json!(s));
                        self.named.push(Named {
                            full: full.clone(),
                            ns: tns,
                            short,
                            key: full.clone(),
                        });
                        (Json::Object(m), full)
                    }
                    1 => {
                        let (mut m, full, tns, short) = self.name_attrs("U", ns);
                        m.insert("type".into(), json!("fixed"));
                        m.insert("size".into(), json!(16));
                        m.insert("logicalType".into(), json!("uuid"));
                        self.named.push(Named {
                            full: full.clone(),
                            ns: tns,
                            short,
                            key: full.clone(),
                        });
                        (Json::Object(m), full)
                    }
                    _ => (json!({ "type": "long", "logicalType": l }), "long".into()),
                }
            }
        }
    }

    fn record(&mut self, depth: usize, ns: &str) -> (Json, String) {
        let (mut m, full, tns, short) = self.name_attrs("R", ns);
        // Empty records are legal Avro; keep them rare.
        let n = if self.rng.one_in(25) {
            0
        } else {
            self.rng.range(1, 5)
        };
        let mut fields = Vec::new();
        for i in 0..n {
            let (t, _) = self.gen(depth - 1, &tns, false);
            let mut f = serde_json::Map::new();
            f.insert("name".into(), json!(format!("f{i}")));
            f.insert("type".into(), t);
            if self.rng.one_in(6) {
                f.insert("doc".into(), json!("a field"));
            }
            fields.push(Json::Object(f));
        }
        // ("error" is tested in schemas.rs: apache-avro cannot write it.)
        m.insert("type".into(), json!("record"));
        m.insert("fields".into(), Json::Array(fields));
        // Registered after its fields: a reference to it from inside would be recursive, which
        // the dedicated recursion tests cover.
        self.named.push(Named {
            full: full.clone(),
            ns: tns,
            short,
            key: full.clone(),
        });
        (Json::Object(m), full)
    }

    /// A top-level schema: usually a record with 1..=8 fields, sometimes another type.
    pub fn root(&mut self) -> Json {
        if self.rng.one_in(10) {
            let (t, _) = self.gen(3, "", false);
            return t;
        }
        let mut m = serde_json::Map::new();
        m.insert("type".into(), json!("record"));
        m.insert("name".into(), json!("Root"));
        if self.rng.one_in(2) {
            m.insert("namespace".into(), json!("test.root"));
        }
        let ns = if m.contains_key("namespace") {
            "test.root"
        } else {
            ""
        };
        let n = self.rng.range(1, 8);
        let mut fields = Vec::new();
        for i in 0..n {
            let (t, _) = self.gen(4, ns, false);
            fields.push(json!({ "name": format!("c{i}"), "type": t }));
        }
        m.insert("fields".into(), Json::Array(fields));
        Json::Object(m)
    }
}

/// A random schema for `seed`, parsed by both apache-avro and our model.
pub fn random_schema(rng: &mut Rng) -> (Json, Schema, Model) {
    loop {
        let json = SchemaGen::new(rng).root();
        let model = match Model::parse(&json) {
            Ok(m) => m,
            Err(_) => continue,
        };
        let schema = match Schema::parse(&json) {
            Ok(s) => s,
            Err(e) => panic!("apache-avro rejects generated schema {json}: {e}"),
        };
        // apache-avro 0.22 resolves a short name under an explicit `"namespace": ""` against
        // the outer namespace (against the spec), so it cannot write such schemas; they are
        // covered by schemas::explicit_null_namespace_inside_a_namespace instead.
        if apache_avro::schema::ResolvedSchema::try_from(&schema).is_err() {
            continue;
        }
        return (json, schema, model);
    }
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const STRINGS: [&str; 10] = [
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

fn random_string(rng: &mut Rng) -> String {
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
fn varint_edge(rng: &mut Rng, max_k: usize) -> i64 {
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

fn random_i32(rng: &mut Rng) -> i32 {
    match rng.below(9) {
        8 => varint_edge(rng, 5).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        0 => *rng.pick(&[i32::MIN, i32::MAX, 0, -1, 1, 63, 64, -64, -65, 8191, 8192]),
        1 => rng.next_u64() as i32,
        2 => (rng.next_u64() as i32) >> rng.below(32),
        _ => rng.range(0, 200) as i32 - 100,
    }
}

fn random_i64(rng: &mut Rng) -> i64 {
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

fn random_f64(rng: &mut Rng) -> f64 {
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

fn random_f32(rng: &mut Rng) -> f32 {
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

fn pow10(p: usize) -> i256 {
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
        S::TimeMillis => Value::TimeMillis(if rng.one_in(4) {
            random_i32(rng)
        } else {
            rng.below(86_400_000) as i32
        }),
        S::TimeMicros => Value::TimeMicros(if rng.one_in(4) {
            random_i64(rng)
        } else {
            rng.below(86_400_000_000) as i64
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

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// Every codec apache-avro can write (fast compression levels: the tests write many blocks).
pub fn all_codecs() -> Vec<Codec> {
    vec![
        Codec::Null,
        Codec::Deflate(apache_avro::DeflateSettings::default()),
        Codec::Snappy,
        Codec::Zstandard(apache_avro::ZstandardSettings::new(1)),
        Codec::Bzip2(apache_avro::Bzip2Settings::new(1)),
        Codec::Xz(apache_avro::XzSettings::new(0)),
    ]
}

pub fn codec_name(c: Codec) -> &'static str {
    c.into()
}

/// Write `values` with apache-avro's Writer, flushing at random points so that the file has
/// many blocks (often of a single record), with a small block size, and sometimes with arrays
/// and maps written in several blocks carrying byte sizes.
pub fn write_file(rng: &mut Rng, schema: &Schema, values: &[Value], codec: Codec) -> Vec<u8> {
    let block_size = *rng.pick(&[64usize, 256, 1024, 16000]);
    let map_array = if rng.one_in(3) {
        Some(rng.range(1, 64))
    } else {
        None
    };
    let mut w = apache_avro::Writer::builder()
        .schema(schema)
        .writer(Vec::new())
        .codec(codec)
        .block_size(block_size)
        .maybe_map_array_target_block_size(map_array)
        .build()
        .expect("writer");
    if rng.one_in(3) {
        w.add_user_metadata("user.key".into(), b"\xff\x00 not utf-8")
            .expect("metadata");
    }
    // xz and bzip2 cost milliseconds per block: fewer one-record blocks for them.
    let slow = matches!(codec, Codec::Xz(_) | Codec::Bzip2(_));
    let flush_one_in = if slow {
        *rng.pick(&[4usize, 1000])
    } else {
        *rng.pick(&[1usize, 2, 5, 1000])
    };
    for v in values {
        w.append_value_ref(v)
            .unwrap_or_else(|e| panic!("apache-avro cannot write {v:?}: {e}"));
        if rng.one_in(flush_one_in) {
            w.flush().expect("flush");
        }
    }
    w.into_inner().expect("into_inner")
}

/// Insert blocks of zero records (each holding the codec's encoding of no bytes) at random
/// block boundaries, including before the first and after the last block. apache-avro's reader
/// stops at such a block, so the oracle must be read from the file before this.
pub fn inject_empty_blocks(rng: &mut Rng, file: &[u8], codec: Codec, how_many: usize) -> Vec<u8> {
    let c = Container::parse(file).expect("own file parses");
    let mut empty = Vec::new();
    codec.compress(&mut empty).expect("compress empty");
    let mut block = Vec::new();
    write_long(&mut block, 0);
    write_long(&mut block, empty.len() as i64);
    block.extend_from_slice(&empty);
    block.extend_from_slice(&c.sync);
    let boundaries: Vec<usize> = std::iter::once(c.header_len)
        .chain(c.blocks.iter().map(|b| b.end))
        .collect();
    let mut at: Vec<usize> = (0..how_many).map(|_| *rng.pick(&boundaries)).collect();
    at.sort_unstable();
    let mut out = Vec::with_capacity(file.len() + how_many * block.len());
    let mut prev = 0;
    for p in at {
        out.extend_from_slice(&file[prev..p]);
        out.extend_from_slice(&block);
        prev = p;
    }
    out.extend_from_slice(&file[prev..]);
    out
}

/// Append a zigzag varint.
pub fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
}

/// A full random case: schema and rows.
pub struct Case {
    pub json: Json,
    pub schema: Schema,
    pub model: Model,
    pub values: Vec<Value>,
}

pub fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let (json, schema, model) = random_schema(&mut rng);
    let rows = match rng.below(10) {
        0 => 0,
        1 => 1,
        2 => rng.range(100, 400),
        _ => rng.range(2, 60),
    };
    let values = (0..rows)
        .map(|_| random_value(&mut rng, &model, &model.root, 3))
        .collect();
    Case {
        json,
        schema,
        model,
        values,
    }
}

/// The same file with another writer schema in its header (same wire encoding assumed): used to
/// test schema features apache-avro cannot write (e.g. `error`, odd logical types).
pub fn rewrite_schema(file: &[u8], schema: &str) -> Vec<u8> {
    let c = Container::parse(file).expect("own file parses");
    let mut out = b"Obj\x01".to_vec();
    let mut meta = c.metadata.clone();
    meta.insert("avro.schema".into(), schema.as_bytes().to_vec());
    write_long(&mut out, meta.len() as i64);
    for (k, v) in &meta {
        write_long(&mut out, k.len() as i64);
        out.extend_from_slice(k.as_bytes());
        write_long(&mut out, v.len() as i64);
        out.extend_from_slice(v);
    }
    write_long(&mut out, 0);
    out.extend_from_slice(&c.sync);
    out.extend_from_slice(&file[c.header_len..]);
    out
}
