//! The oracle's schema model: an independent, spec-driven parse of an Avro schema (with its own
//! name resolution), from which the Arrow type of each column is derived.

use super::*;

/// Timestamp precision of a `timestamp-*` / `local-timestamp-*` logical type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsUnit {
    Millis,
    Micros,
    Nanos,
}

/// One node of an Avro schema, as the specification (1.12) defines it.
#[derive(Clone, Debug)]
pub enum S {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed {
        name: String,
        size: usize,
    },
    Enum {
        name: String,
        symbols: Vec<String>,
    },
    Array(Box<S>),
    Map(Box<S>),
    Record {
        name: String,
        fields: Vec<(String, S)>,
    },
    Union(Vec<S>),
    /// `fixed` is the fixed type's (full name, size) when the decimal is on a fixed.
    Decimal {
        precision: usize,
        scale: usize,
        fixed: Option<(String, usize)>,
    },
    /// `fixed` is the fixed type's full name when the uuid is on a fixed(16).
    Uuid {
        fixed: Option<String>,
    },
    Date,
    TimeMillis,
    TimeMicros,
    Timestamp {
        unit: TsUnit,
        local: bool,
    },
    Duration {
        name: String,
    },
    /// A reference (by full name) to a named type defined earlier.
    Ref(String),
}

/// A parsed schema: its root and every named type by full name.
#[derive(Clone, Debug)]
pub struct Model {
    pub root: S,
    pub named: HashMap<String, S>,
    pub json: Json,
}

pub(super) struct Parser {
    named: HashMap<String, S>,
    declared: HashSet<String>,
}

pub(super) fn split_name(name: &str, ns_attr: Option<&str>, enclosing: &str) -> (String, String) {
    // (full name, namespace of the type)
    if let Some(pos) = name.rfind('.') {
        (name.to_string(), name[..pos].to_string())
    } else {
        let ns = ns_attr.unwrap_or(enclosing).to_string();
        if ns.is_empty() {
            (name.to_string(), ns)
        } else {
            (format!("{ns}.{name}"), ns)
        }
    }
}

impl Parser {
    fn lookup(&self, name: &str, ns: &str) -> Result<String, String> {
        if name.contains('.') {
            if self.declared.contains(name) {
                return Ok(name.to_string());
            }
        } else {
            if !ns.is_empty() {
                let full = format!("{ns}.{name}");
                if self.declared.contains(&full) {
                    return Ok(full);
                }
            }
            if self.declared.contains(name) {
                return Ok(name.to_string());
            }
        }
        Err(format!("undefined name {name:?} (namespace {ns:?})"))
    }

    fn declare(&mut self, full: &str) -> Result<(), String> {
        if !self.declared.insert(full.to_string()) {
            return Err(format!("duplicate name {full}"));
        }
        Ok(())
    }

    fn primitive(name: &str) -> Option<S> {
        Some(match name {
            "null" => S::Null,
            "boolean" => S::Boolean,
            "int" => S::Int,
            "long" => S::Long,
            "float" => S::Float,
            "double" => S::Double,
            "bytes" => S::Bytes,
            "string" => S::String,
            _ => return None,
        })
    }

    fn parse(&mut self, j: &Json, ns: &str) -> Result<S, String> {
        match j {
            Json::String(name) => {
                if let Some(p) = Self::primitive(name) {
                    return Ok(p);
                }
                Ok(S::Ref(self.lookup(name, ns)?))
            }
            Json::Array(branches) => Ok(S::Union(
                branches
                    .iter()
                    .map(|b| self.parse(b, ns))
                    .collect::<Result<_, _>>()?,
            )),
            Json::Object(o) => {
                let ty = o.get("type").ok_or("object schema without type")?;
                let ty = match ty {
                    Json::String(t) => t.as_str(),
                    other => return self.parse(other, ns),
                };
                let logical = o.get("logicalType").and_then(Json::as_str);
                match ty {
                    "record" | "error" => {
                        let name = o["name"].as_str().ok_or("record without name")?;
                        let (full, rns) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let mut fields = Vec::new();
                        for f in o["fields"].as_array().ok_or("record without fields")? {
                            let fname = f["name"].as_str().ok_or("field without name")?;
                            fields.push((fname.to_string(), self.parse(&f["type"], &rns)?));
                        }
                        let s = S::Record {
                            name: full.clone(),
                            fields,
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "enum" => {
                        let name = o["name"].as_str().ok_or("enum without name")?;
                        let (full, _) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let symbols = o["symbols"]
                            .as_array()
                            .ok_or("enum without symbols")?
                            .iter()
                            .map(|s| s.as_str().unwrap_or_default().to_string())
                            .collect();
                        let s = S::Enum {
                            name: full.clone(),
                            symbols,
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "fixed" => {
                        let name = o["name"].as_str().ok_or("fixed without name")?;
                        let (full, _) =
                            split_name(name, o.get("namespace").and_then(Json::as_str), ns);
                        self.declare(&full)?;
                        let size = o["size"].as_u64().ok_or("fixed without size")? as usize;
                        let s = match logical {
                            Some("decimal") if valid_decimal(o, Some(size)) => S::Decimal {
                                precision: o["precision"].as_u64().unwrap() as usize,
                                scale: o.get("scale").and_then(Json::as_u64).unwrap_or(0) as usize,
                                fixed: Some((full.clone(), size)),
                            },
                            Some("uuid") if size == 16 => S::Uuid {
                                fixed: Some(full.clone()),
                            },
                            Some("duration") if size == 12 => S::Duration { name: full.clone() },
                            _ => S::Fixed {
                                name: full.clone(),
                                size,
                            },
                        };
                        self.named.insert(full, s.clone());
                        Ok(s)
                    }
                    "array" => Ok(S::Array(Box::new(self.parse(&o["items"], ns)?))),
                    "map" => Ok(S::Map(Box::new(self.parse(&o["values"], ns)?))),
                    prim => {
                        let base = match Self::primitive(prim) {
                            Some(p) => p,
                            None => return Ok(S::Ref(self.lookup(prim, ns)?)),
                        };
                        Ok(match (logical, &base) {
                            (Some("decimal"), S::Bytes) if valid_decimal(o, None) => S::Decimal {
                                precision: o["precision"].as_u64().unwrap() as usize,
                                scale: o.get("scale").and_then(Json::as_u64).unwrap_or(0) as usize,
                                fixed: None,
                            },
                            (Some("uuid"), S::String) => S::Uuid { fixed: None },
                            (Some("date"), S::Int) => S::Date,
                            (Some("time-millis"), S::Int) => S::TimeMillis,
                            (Some("time-micros"), S::Long) => S::TimeMicros,
                            (Some(l), S::Long) if ts_kind(l).is_some() => {
                                let (unit, local) = ts_kind(l).unwrap();
                                S::Timestamp { unit, local }
                            }
                            _ => base,
                        })
                    }
                }
            }
            other => Err(format!("not a schema: {other}")),
        }
    }
}

pub(super) fn ts_kind(l: &str) -> Option<(TsUnit, bool)> {
    Some(match l {
        "timestamp-millis" => (TsUnit::Millis, false),
        "timestamp-micros" => (TsUnit::Micros, false),
        "timestamp-nanos" => (TsUnit::Nanos, false),
        "local-timestamp-millis" => (TsUnit::Millis, true),
        "local-timestamp-micros" => (TsUnit::Micros, true),
        "local-timestamp-nanos" => (TsUnit::Nanos, true),
        _ => return None,
    })
}

/// The largest decimal precision a fixed of `size` bytes can hold.
pub fn max_precision_for_fixed(size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    // floor(log10(2^(8*size - 1) - 1))
    ((8 * size - 1) as f64 * 2f64.log10()).floor() as usize
}

pub(super) fn valid_decimal(o: &serde_json::Map<String, Json>, fixed_size: Option<usize>) -> bool {
    let Some(p) = o.get("precision").and_then(Json::as_u64) else {
        return false;
    };
    let s = match o.get("scale") {
        None => 0,
        Some(s) => match s.as_u64() {
            Some(s) => s,
            None => return false,
        },
    };
    if p == 0 || s > p {
        return false;
    }
    match fixed_size {
        Some(n) => (p as usize) <= max_precision_for_fixed(n),
        None => true,
    }
}

impl Model {
    pub fn parse(json: &Json) -> Result<Model, String> {
        let mut p = Parser {
            named: HashMap::new(),
            declared: HashSet::new(),
        };
        let root = p.parse(json, "")?;
        Ok(Model {
            root,
            named: p.named,
            json: json.clone(),
        })
    }

    pub fn parse_str(s: &str) -> Result<Model, String> {
        let json: Json = serde_json::from_str(s).map_err(|e| e.to_string())?;
        Self::parse(&json)
    }

    /// Follow a reference to its definition.
    pub fn resolve<'a>(&'a self, s: &'a S) -> &'a S {
        match s {
            S::Ref(name) => &self.named[name],
            other => other,
        }
    }

    /// `Some((inner, null_index))` for `["null", T]` / `[T, "null"]`.
    pub fn optional<'a>(&'a self, s: &'a S) -> Option<(&'a S, usize)> {
        if let S::Union(b) = self.resolve(s) {
            if b.len() == 2 {
                match (self.resolve(&b[0]), self.resolve(&b[1])) {
                    (S::Null, S::Null) => None,
                    (S::Null, _) => Some((&b[1], 0)),
                    (_, S::Null) => Some((&b[0], 1)),
                    _ => None,
                }
            } else {
                None
            }
        } else {
            None
        }
    }

    /// The batch columns: the top-level record's fields, or one column `value`.
    pub fn columns(&self) -> Vec<(String, S)> {
        match self.resolve(&self.root) {
            S::Record { fields, .. } => fields.clone(),
            _ => vec![("value".to_string(), self.root.clone())],
        }
    }

    pub fn is_record_root(&self) -> bool {
        matches!(self.resolve(&self.root), S::Record { .. })
    }
}
