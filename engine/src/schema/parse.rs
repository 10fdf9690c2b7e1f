//! Schema JSON → [`Node`] tree with a named-type table, validating as it goes.

use super::{
    Enum, Field, Fixed, FullName, LogicalType, NamedDef, NamedType, Node, PathSegment, Primitive,
    Record, SchemaError, SchemaErrorKind, SortOrder,
};
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// The root and named types of `json`; with `drop_bad_defaults`, a default that does not match
/// its field's type is removed instead of an error ([`super::Schema::parse_writer`]).
/// Values visited checking a schema's defaults, at most (a real schema's take hundreds).
const DEFAULT_CHECK_WORK: usize = 1 << 18;

pub(super) fn parse(
    json: &Json,
    drop_bad_defaults: bool,
) -> Result<(Node, Vec<NamedType>), SchemaError> {
    let mut parser = Parser::default();
    let root = parser.node(json, None)?;
    // Every named type referenced is defined before use (forward references are rejected when
    // they are met), so the table is complete. Validate defaults now that all types are known.
    if drop_bad_defaults {
        parser.drop_bad_defaults();
    }
    parser.validate_defaults()?;
    Ok((root, parser.named))
}

#[derive(Default)]
struct Parser {
    named: Vec<NamedType>,
    by_name: HashMap<String, usize>,
}

fn err<T>(kind: SchemaErrorKind, message: impl Into<String>) -> Result<T, SchemaError> {
    Err(SchemaError::new(kind, message))
}

/// `[A-Za-z_][A-Za-z0-9_]*`
fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_valid_namespace(ns: &str) -> bool {
    ns.is_empty() || ns.split('.').all(is_valid_name)
}

fn get_str<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    ctx: &str,
) -> Result<Option<&'a str>, SchemaError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(other) => err(
            SchemaErrorKind::Malformed,
            format!("{ctx}: \"{key}\" must be a string, found {other}"),
        ),
    }
}

impl Parser {
    /// Resolve a (possibly relative) full name in the enclosing namespace.
    fn make_name(
        &self,
        obj: &Map<String, Json>,
        enclosing_ns: Option<&str>,
        what: &str,
    ) -> Result<FullName, SchemaError> {
        let Some(raw) = get_str(obj, "name", what)? else {
            return err(
                SchemaErrorKind::Malformed,
                format!("{what} has no \"name\""),
            );
        };
        let full = if let Some((ns, name)) = raw.rsplit_once('.') {
            FullName::new(name.to_string(), Some(ns.to_string()))
        } else {
            let ns = match get_str(obj, "namespace", raw)? {
                Some(ns) => Some(ns.to_string()),
                None => enclosing_ns.map(str::to_string),
            };
            FullName::new(raw.to_string(), ns)
        };
        if !is_valid_name(full.name()) {
            return err(
                SchemaErrorKind::InvalidName,
                format!("invalid name \"{raw}\" ({what})"),
            );
        }
        if let Some(ns) = full.namespace() {
            if !is_valid_namespace(ns) {
                return err(
                    SchemaErrorKind::InvalidName,
                    format!("invalid namespace \"{ns}\" of {what} \"{raw}\""),
                );
            }
        }
        if full.namespace().is_none() && Primitive::from_name(full.name()).is_some() {
            return err(
                SchemaErrorKind::InvalidName,
                format!("a named type may not be called \"{}\"", full.name()),
            );
        }
        Ok(full)
    }

    fn aliases(
        &self,
        obj: &Map<String, Json>,
        ns: Option<&str>,
        owner: &str,
    ) -> Result<Vec<FullName>, SchemaError> {
        let Some(value) = obj.get("aliases") else {
            return Ok(Vec::new());
        };
        let Json::Array(items) = value else {
            return err(
                SchemaErrorKind::Malformed,
                format!("aliases of \"{owner}\" must be an array of strings"),
            );
        };
        items
            .iter()
            .map(|item| {
                let Json::String(alias) = item else {
                    return err(
                        SchemaErrorKind::Malformed,
                        format!("aliases of \"{owner}\" must be strings"),
                    );
                };
                let name = match alias.rsplit_once('.') {
                    Some((ans, n)) => FullName::new(n.to_string(), Some(ans.to_string())),
                    None => FullName::new(alias.clone(), ns.map(str::to_string)),
                };
                if !is_valid_name(name.name()) || !name.namespace().is_none_or(is_valid_namespace) {
                    return err(
                        SchemaErrorKind::InvalidName,
                        format!("invalid alias \"{alias}\" of \"{owner}\""),
                    );
                }
                Ok(name)
            })
            .collect()
    }

    fn register(&mut self, ty: NamedType) -> Result<usize, SchemaError> {
        let full = ty.name.full();
        if self.by_name.contains_key(&full) {
            return err(
                SchemaErrorKind::DuplicateName,
                format!("the name \"{full}\" is defined twice"),
            );
        }
        let index = self.named.len();
        self.named.push(ty);
        self.by_name.insert(full, index);
        Ok(index)
    }

    fn resolve_reference(&self, name: &str, ns: Option<&str>) -> Result<Node, SchemaError> {
        if let Some(p) = Primitive::from_name(name) {
            return Ok(Node::Primitive(p, None));
        }
        if !name.contains('.') {
            if let Some(ns) = ns.filter(|ns| !ns.is_empty()) {
                if let Some(&i) = self.by_name.get(&format!("{ns}.{name}")) {
                    return Ok(Node::Named(i));
                }
            }
        }
        match self.by_name.get(name) {
            Some(&i) => Ok(Node::Named(i)),
            None => err(
                SchemaErrorKind::UnknownType,
                format!("unknown type \"{name}\" (not a primitive and not defined earlier)"),
            ),
        }
    }

    fn node(&mut self, json: &Json, ns: Option<&str>) -> Result<Node, SchemaError> {
        match json {
            Json::String(name) => self.resolve_reference(name, ns),
            Json::Array(branches) => self.union(branches, ns),
            Json::Object(obj) => self.object(obj, ns),
            other => err(
                SchemaErrorKind::Malformed,
                format!("a type must be a string, array or object, found {other}"),
            ),
        }
    }

    fn union(&mut self, branches: &[Json], ns: Option<&str>) -> Result<Node, SchemaError> {
        let mut nodes = Vec::with_capacity(branches.len());
        let mut seen: Vec<String> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let node = self
                .node(branch, ns)
                .map_err(|e| e.at(PathSegment::Index(i)))?;
            let key = match &node {
                Node::Union(_) => {
                    return err(
                        SchemaErrorKind::Malformed,
                        "a union may not directly contain another union",
                    )
                }
                Node::Primitive(p, _) => p.name().to_string(),
                Node::Array(_) => "array".to_string(),
                Node::Map(_) => "map".to_string(),
                Node::Named(i) => self.named[*i].name.full(),
            };
            if seen.contains(&key) {
                return err(
                    SchemaErrorKind::DuplicateName,
                    format!("a union contains the type \"{key}\" twice"),
                );
            }
            seen.push(key);
            nodes.push(node);
        }
        Ok(Node::Union(nodes))
    }

    fn object(&mut self, obj: &Map<String, Json>, ns: Option<&str>) -> Result<Node, SchemaError> {
        let ty = match obj.get("type") {
            Some(Json::String(t)) => t.as_str(),
            // `{"type": {...}}` / `{"type": [...]}`: a wrapped type.
            Some(inner @ (Json::Object(_) | Json::Array(_))) => {
                return self
                    .node(inner, ns)
                    .map_err(|e| e.at(PathSegment::key("type")))
            }
            Some(other) => {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("\"type\" must be a string, array or object, found {other}"),
                )
            }
            None => {
                return err(
                    SchemaErrorKind::Malformed,
                    format!(
                        "a type object has no \"type\": {}",
                        Json::Object(obj.clone())
                    ),
                )
            }
        };
        match ty {
            "record" | "error" => self.record(obj, ns, ty == "error"),
            "enum" => self.enumeration(obj, ns),
            "fixed" => self.fixed(obj, ns),
            "array" => {
                let Some(items) = obj.get("items") else {
                    return err(SchemaErrorKind::Malformed, "an array type has no \"items\"");
                };
                let items = self
                    .node(items, ns)
                    .map_err(|e| e.at(PathSegment::key("items")))?;
                Ok(Node::Array(Box::new(items)))
            }
            "map" => {
                let Some(values) = obj.get("values") else {
                    return err(SchemaErrorKind::Malformed, "a map type has no \"values\"");
                };
                let values = self
                    .node(values, ns)
                    .map_err(|e| e.at(PathSegment::key("values")))?;
                Ok(Node::Map(Box::new(values)))
            }
            name => match Primitive::from_name(name) {
                Some(p) => Ok(Node::Primitive(p, primitive_logical(p, obj))),
                None => self.resolve_reference(name, ns),
            },
        }
    }

    fn record(
        &mut self,
        obj: &Map<String, Json>,
        ns: Option<&str>,
        is_error: bool,
    ) -> Result<Node, SchemaError> {
        let name = self.make_name(obj, ns, "record")?;
        let aliases = self.aliases(obj, name.namespace(), &name.full())?;
        let doc = get_str(obj, "doc", &name.full())?.map(str::to_string);
        let Some(Json::Array(fields_json)) = obj.get("fields") else {
            return err(
                SchemaErrorKind::Malformed,
                format!("record \"{name}\" has no \"fields\" array"),
            );
        };
        let index = self.register(NamedType {
            name: name.clone(),
            aliases,
            doc,
            def: NamedDef::Record(Record {
                fields: Vec::new(),
                is_error,
            }),
        })?;
        let inner_ns = name.namespace().map(str::to_string);
        let mut fields: Vec<Field> = Vec::with_capacity(fields_json.len());
        for (i, field_json) in fields_json.iter().enumerate() {
            let field = self
                .field(field_json, &name, inner_ns.as_deref(), &fields)
                .map_err(|e| e.at(PathSegment::Index(i)).at(PathSegment::key("fields")))?;
            fields.push(field);
        }
        if let NamedDef::Record(r) = &mut self.named[index].def {
            r.fields = fields;
        }
        Ok(Node::Named(index))
    }

    /// One field of record `name` (`fields`: the ones before it).
    fn field(
        &mut self,
        field_json: &Json,
        name: &FullName,
        inner_ns: Option<&str>,
        fields: &[Field],
    ) -> Result<Field, SchemaError> {
        {
            let Json::Object(f) = field_json else {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("a field of record \"{name}\" is not an object"),
                );
            };
            let Some(fname) = get_str(f, "name", &name.full())? else {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("a field of record \"{name}\" has no \"name\""),
                );
            };
            if !is_valid_name(fname) {
                return err(
                    SchemaErrorKind::InvalidName,
                    format!("invalid field name \"{fname}\" in record \"{name}\""),
                );
            }
            if fields.iter().any(|x| x.name == fname) {
                return err(
                    SchemaErrorKind::DuplicateName,
                    format!("record \"{name}\" has two fields named \"{fname}\""),
                );
            }
            let Some(type_json) = f.get("type") else {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("field \"{name}.{fname}\" has no \"type\""),
                );
            };
            let ty = self
                .node(type_json, inner_ns)
                .map_err(|e| e.at(PathSegment::key("type")))?;
            let order = match f.get("order") {
                None => SortOrder::Ascending,
                Some(Json::String(o)) if o == "ascending" => SortOrder::Ascending,
                Some(Json::String(o)) if o == "descending" => SortOrder::Descending,
                Some(Json::String(o)) if o == "ignore" => SortOrder::Ignore,
                Some(other) => {
                    return err(
                        SchemaErrorKind::Malformed,
                        format!("field \"{name}.{fname}\" has an invalid order {other}"),
                    )
                }
            };
            let aliases = match f.get("aliases") {
                None => Vec::new(),
                Some(Json::Array(a)) => a
                    .iter()
                    .map(|x| match x {
                        Json::String(s) if is_valid_name(s) => Ok(s.clone()),
                        other => err(
                            SchemaErrorKind::InvalidName,
                            format!("invalid alias {other} of field \"{name}.{fname}\""),
                        ),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return err(
                        SchemaErrorKind::Malformed,
                        format!(
                            "aliases of field \"{name}.{fname}\" must be an array, found {other}"
                        ),
                    )
                }
            };
            Ok(Field {
                name: fname.to_string(),
                ty,
                default: f.get("default").cloned(),
                order,
                aliases,
                doc: get_str(f, "doc", fname)?.map(str::to_string),
            })
        }
    }

    fn enumeration(
        &mut self,
        obj: &Map<String, Json>,
        ns: Option<&str>,
    ) -> Result<Node, SchemaError> {
        let name = self.make_name(obj, ns, "enum")?;
        let aliases = self.aliases(obj, name.namespace(), &name.full())?;
        let Some(Json::Array(symbols_json)) = obj.get("symbols") else {
            return err(
                SchemaErrorKind::Malformed,
                format!("enum \"{name}\" has no \"symbols\" array"),
            );
        };
        let mut symbols: Vec<String> = Vec::with_capacity(symbols_json.len());
        for s in symbols_json {
            let Json::String(s) = s else {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("enum \"{name}\" has a symbol that is not a string: {s}"),
                );
            };
            if !is_valid_name(s) {
                return err(
                    SchemaErrorKind::InvalidName,
                    format!("enum \"{name}\" has an invalid symbol \"{s}\""),
                );
            }
            if symbols.contains(s) {
                return err(
                    SchemaErrorKind::DuplicateName,
                    format!("enum \"{name}\" has the symbol \"{s}\" twice"),
                );
            }
            symbols.push(s.clone());
        }
        let default = match obj.get("default") {
            None => None,
            Some(Json::String(d)) if symbols.contains(d) => Some(d.clone()),
            Some(other) => {
                return err(
                    SchemaErrorKind::InvalidDefault,
                    format!("enum \"{name}\" has a default {other} that is not one of its symbols"),
                )
            }
        };
        let doc = get_str(obj, "doc", &name.full())?.map(str::to_string);
        let index = self.register(NamedType {
            name,
            aliases,
            doc,
            def: NamedDef::Enum(Enum { symbols, default }),
        })?;
        Ok(Node::Named(index))
    }

    fn fixed(&mut self, obj: &Map<String, Json>, ns: Option<&str>) -> Result<Node, SchemaError> {
        let name = self.make_name(obj, ns, "fixed")?;
        let aliases = self.aliases(obj, name.namespace(), &name.full())?;
        let size = match obj.get("size").and_then(Json::as_u64) {
            Some(s) if s <= i32::MAX as u64 => s as usize,
            Some(s) => {
                return err(
                    SchemaErrorKind::Malformed,
                    format!(
                        "fixed \"{name}\" has a size of {s} bytes: at most 2^31 - 1 are supported"
                    ),
                )
            }
            None => {
                return err(
                    SchemaErrorKind::Malformed,
                    format!("fixed \"{name}\" needs a non-negative integer \"size\""),
                )
            }
        };
        let logical = fixed_logical(size, obj);
        let doc = get_str(obj, "doc", &name.full())?.map(str::to_string);
        let index = self.register(NamedType {
            name,
            aliases,
            doc,
            def: NamedDef::Fixed(Fixed { size, logical }),
        })?;
        Ok(Node::Named(index))
    }

    /// Remove every field default that does not match its field's type.
    fn drop_bad_defaults(&mut self) {
        // Until none is dropped: a record default can be valid only through a field default
        // dropped in the same pass.
        // (One budget for every pass: once spent, every default left is dropped.)
        let mut work = DEFAULT_CHECK_WORK;
        while self.drop_bad_defaults_once(&mut work) {}
    }

    /// One pass of [`Parser::drop_bad_defaults`]; whether it dropped any.
    fn drop_bad_defaults_once(&mut self, work: &mut usize) -> bool {
        let mut bad = Vec::new();
        for (t, ty) in self.named.iter().enumerate() {
            if let NamedDef::Record(r) = &ty.def {
                for (i, f) in r.fields.iter().enumerate() {
                    if let Some(d) = &f.default {
                        if self.check_default(&f.ty, d, 0, work).is_err() {
                            bad.push((t, i));
                        }
                    }
                }
            }
        }
        let dropped = !bad.is_empty();
        for (t, i) in bad {
            if let NamedDef::Record(r) = &mut self.named[t].def {
                r.fields[i].default = None;
            }
        }
        dropped
    }

    fn validate_defaults(&self) -> Result<(), SchemaError> {
        let mut work = DEFAULT_CHECK_WORK;
        for ty in &self.named {
            if let NamedDef::Record(r) = &ty.def {
                for f in &r.fields {
                    if let Some(d) = &f.default {
                        self.check_default(&f.ty, d, 0, &mut work).map_err(|why| {
                            SchemaError::new(
                                SchemaErrorKind::InvalidDefault,
                                format!(
                                    "the default of field \"{}.{}\" does not match its type: {why}",
                                    ty.name, f.name
                                ),
                            )
                        })?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether `value` is a valid default of `node`; `work` bounds the values visited over
    /// all the schema's defaults (a union tries each branch, so a hostile default of unions of
    /// records nested in records costs branches^depth visits without it).
    fn check_default(
        &self,
        node: &Node,
        value: &Json,
        depth: usize,
        work: &mut usize,
    ) -> Result<(), String> {
        *work = work
            .checked_sub(1)
            .ok_or_else(|| "the schema's defaults take too long to check".to_string())?;
        if depth > 64 {
            return Err("default value nested too deeply".to_string());
        }
        let mismatch = || Err(format!("{value} is not a valid value of this type"));
        match node {
            Node::Primitive(p, _) => {
                let ok = match p {
                    Primitive::Null => value.is_null(),
                    Primitive::Boolean => value.is_boolean(),
                    Primitive::Int => value.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
                    Primitive::Long => value.is_i64(),
                    Primitive::Float | Primitive::Double => {
                        value.is_number()
                            || matches!(value.as_str(), Some("NaN" | "Infinity" | "-Infinity"))
                    }
                    Primitive::Bytes => value
                        .as_str()
                        .is_some_and(|s| s.chars().all(|c| (c as u32) < 256)),
                    Primitive::String => value.is_string(),
                };
                if ok {
                    Ok(())
                } else {
                    mismatch()
                }
            }
            Node::Array(items) => match value {
                Json::Array(a) => a
                    .iter()
                    .try_for_each(|v| self.check_default(items, v, depth + 1, work)),
                _ => mismatch(),
            },
            Node::Map(values) => match value {
                Json::Object(m) => m
                    .values()
                    .try_for_each(|v| self.check_default(values, v, depth + 1, work)),
                _ => mismatch(),
            },
            // The spec (1.12): a union's default matches one of its branches (before 1.12,
            // the first; Java and fastavro take any): the first branch that takes it.
            Node::Union(branches) => {
                let mut first_error = None;
                for branch in branches {
                    match self.check_default(branch, value, depth + 1, work) {
                        Ok(()) => return Ok(()),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Err(first_error.unwrap_or_else(|| "an empty union has no values".to_string()))
            }
            Node::Named(i) => match &self.named[*i].def {
                NamedDef::Enum(e) => match value.as_str() {
                    Some(s) if e.symbols.iter().any(|x| x == s) => Ok(()),
                    _ => mismatch(),
                },
                NamedDef::Fixed(f) => match value.as_str() {
                    Some(s)
                        if s.chars().all(|c| (c as u32) < 256) && s.chars().count() == f.size =>
                    {
                        Ok(())
                    }
                    _ => mismatch(),
                },
                NamedDef::Record(r) => {
                    let Json::Object(m) = value else {
                        return mismatch();
                    };
                    for field in &r.fields {
                        match m.get(&field.name) {
                            Some(v) => self.check_default(&field.ty, v, depth + 1, work)?,
                            None if field.default.is_some() => {}
                            None => {
                                return Err(format!(
                                    "{value} has no value for field \"{}\"",
                                    field.name
                                ))
                            }
                        }
                    }
                    Ok(())
                }
            },
        }
    }
}

fn logical_name(obj: &Map<String, Json>) -> Option<&str> {
    obj.get("logicalType").and_then(Json::as_str)
}

/// Decimal precision/scale from the annotations; `None` if invalid (then the logical type is
/// ignored, as the specification requires).
fn decimal(obj: &Map<String, Json>, max_precision: Option<usize>) -> Option<LogicalType> {
    let precision = obj.get("precision")?.as_u64()?;
    let scale = match obj.get("scale") {
        None => 0,
        Some(s) => s.as_u64()?,
    };
    if precision == 0 || scale > precision {
        return None;
    }
    if max_precision.is_some_and(|max| precision as usize > max) {
        return None;
    }
    Some(LogicalType::Decimal {
        precision: usize::try_from(precision).ok()?,
        scale: usize::try_from(scale).ok()?,
    })
}

fn primitive_logical(p: Primitive, obj: &Map<String, Json>) -> Option<LogicalType> {
    let name = logical_name(obj)?;
    match (p, name) {
        (Primitive::Bytes, "decimal") => decimal(obj, None),
        (Primitive::String, "uuid") => Some(LogicalType::Uuid),
        (Primitive::Int, "date") => Some(LogicalType::Date),
        (Primitive::Int, "time-millis") => Some(LogicalType::TimeMillis),
        (Primitive::Long, "time-micros") => Some(LogicalType::TimeMicros),
        (Primitive::Long, "timestamp-millis") => Some(LogicalType::TimestampMillis),
        (Primitive::Long, "timestamp-micros") => Some(LogicalType::TimestampMicros),
        (Primitive::Long, "timestamp-nanos") => Some(LogicalType::TimestampNanos),
        (Primitive::Long, "local-timestamp-millis") => Some(LogicalType::LocalTimestampMillis),
        (Primitive::Long, "local-timestamp-micros") => Some(LogicalType::LocalTimestampMicros),
        (Primitive::Long, "local-timestamp-nanos") => Some(LogicalType::LocalTimestampNanos),
        _ => None,
    }
}

/// The largest decimal precision a two's-complement integer of `size` bytes can hold:
/// floor(log10(2^(8·size − 1) − 1)).
pub(crate) fn max_fixed_precision(size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    // log10(2) * (8 * size - 1), floored; exact enough for every size (checked in tests).
    (((8 * size - 1) as f64) * std::f64::consts::LOG10_2).floor() as usize
}

fn fixed_logical(size: usize, obj: &Map<String, Json>) -> Option<LogicalType> {
    match logical_name(obj)? {
        "decimal" => decimal(obj, Some(max_fixed_precision(size))),
        "uuid" if size == 16 => Some(LogicalType::Uuid),
        "duration" if size == 12 => Some(LogicalType::Duration),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Schema;
    use super::*;

    fn bad(json: &str, needle: &str) {
        let e = Schema::parse(json).unwrap_err();
        assert!(
            e.message().contains(needle),
            "{json}: {e} should mention {needle}"
        );
    }

    #[test]
    fn rejects_invalid_schemas() {
        bad(
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":"int"},{"name":"x","type":"int"}]}"#,
            "two fields named",
        );
        bad(
            r#"{"type":"record","name":"1a","fields":[]}"#,
            "invalid name",
        );
        bad(r#"["int","int"]"#, "twice");
        bad(r#"["int",["string"]]"#, "another union");
        bad(
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":"b"}]}"#,
            "unknown type",
        );
        bad(
            r#"["null",{"type":"int","logicalType":"date"},"int"]"#,
            "twice",
        );
        bad(
            r#"[{"type":"fixed","name":"f","size":1},{"type":"fixed","name":"f","size":2}]"#,
            "defined twice",
        );
        bad(r#"{"type":"enum","name":"e","symbols":["A","A"]}"#, "twice");
        bad(
            r#"{"type":"enum","name":"e","symbols":["A"],"default":"B"}"#,
            "default",
        );
        bad(
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":"int","default":"s"}]}"#,
            "default",
        );
        // A union's default matches one of its branches (any, since Avro 1.12).
        bad(
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":["null","int"],"default":"s"}]}"#,
            "default",
        );
        // A default whose check would try two branches at each of 40 levels: refused quickly.
        let mut default = r#""bad""#.to_string();
        for _ in 0..40 {
            default = format!(r#"{{"u":{default}}}"#);
        }
        let hostile = format!(
            r#"{{"type":"record","name":"R","fields":[{{"name":"f","default":{default},"type":[
            {{"type":"record","name":"A","fields":[
                {{"name":"u","type":["null","A",{{"type":"map","values":"A"}}]}},
                {{"name":"a","type":"int"}}]}},"int"]}}]}}"#
        );
        let start = std::time::Instant::now();
        assert!(Schema::parse(&hostile).is_err());
        assert!(Schema::parse_writer(&hostile).is_ok());
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        for ok in [
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":["null","int"],"default":1}]}"#,
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":{"type":"array","items":["null","string"]},"default":[null,"s"]}]}"#,
        ] {
            Schema::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        bad(
            r#"{"type":"fixed","name":"int","size":1}"#,
            "may not be called",
        );
        bad(r#"{"type":"array"}"#, "items");
        bad(
            r#"{"type":"record","name":"a","fields":[{"name":"x","type":"int","order":"up"}]}"#,
            "order",
        );
        bad("{", "JSON");
    }

    #[test]
    fn resolves_names_in_namespaces() {
        let s = Schema::parse(
            r#"{"type":"record","name":"r","namespace":"a.b","fields":[
                {"name":"f","type":{"type":"fixed","name":"F","size":2}},
                {"name":"g","type":"F"},
                {"name":"h","type":"a.b.F"},
                {"name":"i","type":{"type":"enum","name":"E","namespace":"","symbols":["X"]}},
                {"name":"j","type":"E"},
                {"name":"k","type":{"type":"record","name":"c.Inner","fields":[{"name":"z","type":"Inner"}]}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(s.named(0).name.full(), "a.b.r");
        assert_eq!(s.named(1).name.full(), "a.b.F");
        assert_eq!(s.named(2).name.full(), "E");
        assert_eq!(s.named(3).name.full(), "c.Inner");
        let NamedDef::Record(r) = &s.named(0).def else {
            panic!()
        };
        assert_eq!(r.fields[1].ty, Node::Named(1));
        assert_eq!(r.fields[2].ty, Node::Named(1));
        assert_eq!(r.fields[4].ty, Node::Named(2));
        let NamedDef::Record(inner) = &s.named(3).def else {
            panic!()
        };
        assert_eq!(inner.fields[0].ty, Node::Named(3));
    }

    #[test]
    fn logical_types_fall_back_when_invalid() {
        let p = |j: &str| Schema::parse(j).unwrap().root().clone();
        assert_eq!(
            p(r#"{"type":"int","logicalType":"date"}"#),
            Node::Primitive(Primitive::Int, Some(LogicalType::Date))
        );
        assert_eq!(
            p(r#"{"type":"long","logicalType":"date"}"#),
            Node::Primitive(Primitive::Long, None)
        );
        assert_eq!(
            p(r#"{"type":"bytes","logicalType":"decimal","precision":4,"scale":5}"#),
            Node::Primitive(Primitive::Bytes, None)
        );
        assert_eq!(
            p(r#"{"type":"bytes","logicalType":"decimal","precision":4}"#),
            Node::Primitive(
                Primitive::Bytes,
                Some(LogicalType::Decimal {
                    precision: 4,
                    scale: 0
                })
            )
        );
        assert_eq!(
            p(r#"{"type":"string","logicalType":"what"}"#),
            Node::Primitive(Primitive::String, None)
        );
        let s = Schema::parse(
            r#"{"type":"fixed","name":"f","size":2,"logicalType":"decimal","precision":5}"#,
        )
        .unwrap();
        let NamedDef::Fixed(f) = &s.named(0).def else {
            panic!()
        };
        assert_eq!(f.logical, None, "fixed(2) holds at most 4 digits");
    }

    #[test]
    fn fixed_precision_limits() {
        assert_eq!(max_fixed_precision(1), 2);
        assert_eq!(max_fixed_precision(2), 4);
        assert_eq!(max_fixed_precision(4), 9);
        assert_eq!(max_fixed_precision(8), 18);
        assert_eq!(max_fixed_precision(16), 38);
        assert_eq!(max_fixed_precision(32), 76);
    }
}
