//! Random Avro schemas ([`SchemaGen`]): every type, logical type and nesting, with the
//! oracle's [`Model`] of each.

use super::*;

pub(super) struct Named {
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

pub(super) const LEAF_LOGICAL: [&str; 12] = [
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
