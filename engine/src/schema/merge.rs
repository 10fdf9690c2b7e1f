//! Merging writer schemas into one reader schema that each of them resolves to: how files
//! whose schema evolved (a Kafka topic's sink files, a table's partitions) are read as one.
//!
//! The merged schema is what Avro schema resolution needs to read every input, built from the
//! inputs alone:
//!
//! - record fields matched by name (or by an alias one side declares), in the first schema's
//!   order, then the fields only the second has; a field that one of the schemas lacks keeps
//!   the default a schema gives it, and otherwise becomes nullable with default `null` (files
//!   without it read it as null);
//! - numbers widened as Avro promotes them: `int` and `long` to `long`, `float` and `double`
//!   to `double`, an integer and a floating-point number to `double`; times and timestamps of
//!   one kind (time of day, UTC, local) in the finer of their units, which avrow's resolution
//!   scales the coarser values to;
//! - unions take the branches of both (`"null"` and `T` make `["null", T]`), enums the symbols
//!   of both, array items and map values merge recursively;
//! - named types match by full name, or by their unqualified name where a namespace changed
//!   (records of other names are other types, as in resolution).
//!
//! Anything else (a string and a number, two fixed sizes, two other logical types, two
//! decimals) is a [`MergeError`] naming the place: resolution would not convert those values, so reading
//! them as one needs a reader schema chosen by the user.
//!
//! The same rewriting of named types serves [`Schema::project_fields`]: a record schema cut to
//! some of its fields, each named type then defined where it is first used.

use super::{
    Enum, Field, Fixed, FullName, LogicalType, NamedDef, NamedType, Node, Primitive, Record,
    Schema, SortOrder,
};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::fmt;

/// Two schemas that cannot be merged into one reader schema (see [`Schema::merge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    place: String,
    reason: String,
}

impl MergeError {
    fn new(place: impl Into<String>, reason: impl Into<String>) -> Self {
        MergeError {
            place: place.into(),
            reason: reason.into(),
        }
    }

    /// Where the schemas disagree: `field "total" of record "shop.Order"`, `the root type`.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// How they disagree.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
}

impl std::error::Error for MergeError {}

impl Schema {
    /// A reader schema that both `self` and `other`, as writer schemas, resolve to, so that
    /// data written with either reads as one table (the rules are in this module's
    /// documentation). Merging a schema with itself gives an equal schema; merging is
    /// repeated for more than two (`a.merge(&b)?.merge(&c)`), and the order of the inputs
    /// decides only the order of fields, union branches and enum symbols.
    ///
    /// ```
    /// use avrow_engine::schema::Schema;
    /// let old = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"id","type":"int"}]}"#)?;
    /// let new = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"id","type":"long"},{"name":"tag","type":"string"}]}"#)?;
    /// let merged = old.merge(&new)?;
    /// assert_eq!(
    ///     merged.canonical_form(),
    ///     r#"{"name":"r","type":"record","fields":[{"name":"id","type":"long"},{"name":"tag","type":["null","string"]}]}"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A [`MergeError`] where the two schemas have types that no reader type reads both of.
    pub fn merge(&self, other: &Schema) -> Result<Schema, MergeError> {
        let renames = renames(self, other);
        let mut merger = Merger::default();
        for named in self.named_types() {
            merger.add(convert_named(self, named, &HashMap::new()))?;
        }
        // The second schema's new types first, so that merging the shared ones knows them all.
        let (shared, new): (Vec<_>, Vec<_>) = other
            .named_types()
            .iter()
            .map(|named| convert_named(other, named, &renames))
            .partition(|named| merger.by_name.contains_key(&named.name.full()));
        for named in new.into_iter().chain(shared) {
            merger.add(named)?;
        }
        let root = merger.merge_types(
            &convert(self, self.root(), &HashMap::new()),
            &convert(other, other.root(), &renames),
            &|| "the root type".to_string(),
        )?;
        let mut defined = vec![false; merger.named.len()];
        let json = merger.emit(&root, &mut defined);
        let text = json.to_string();
        Schema::parse(&text).map_err(|e| {
            MergeError::new(
                "the merged schema",
                format!("{e} (a bug in avrow's merging: please report it with both schemas)"),
            )
        })
    }
}

impl Schema {
    /// This record schema with only the fields named in `columns`, in that order: the
    /// record's name, namespace, doc and aliases kept, and the fields' types, defaults, docs
    /// and aliases (a named type defined in a dropped field is defined where it is now first
    /// used). What a writer records for a projection of a file it read. `None` when the root
    /// is not a record or a column names none of its fields.
    ///
    /// ```
    /// use avrow_engine::schema::Schema;
    /// let s = Schema::parse(r#"{"type":"record","name":"r","namespace":"n","fields":[
    ///     {"name":"a","type":{"type":"fixed","name":"F","size":2}},
    ///     {"name":"b","type":"F"},{"name":"c","type":"int"}]}"#)?;
    /// let p = s.project_fields(&["c", "b"]).unwrap();
    /// assert_eq!(
    ///     p.canonical_form(),
    ///     r#"{"name":"n.r","type":"record","fields":[{"name":"c","type":"int"},{"name":"b","type":{"name":"n.F","type":"fixed","size":2}}]}"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn project_fields(&self, columns: &[&str]) -> Option<Schema> {
        self.project_paths(columns)
    }

    /// [`Schema::project_fields`] for nested projections too: `paths` are dotted paths, as
    /// a reader's projection names them (`"b.y"`, `"lines.sku"`: through records, array
    /// items, map values and `["null", record]` unions), and a record reached by a path is
    /// cut to the fields its paths name, in their order, keeping its name and named types.
    /// `None` also where a named record would be cut in two ways (or where it is not a
    /// record).
    ///
    /// ```
    /// use avrow_engine::schema::Schema;
    /// let s = Schema::parse(r#"{"type":"record","name":"r","namespace":"n","fields":[
    ///     {"name":"a","type":"long"},
    ///     {"name":"b","type":{"type":"array","items":{"type":"record","name":"B","fields":[
    ///         {"name":"x","type":"int"},{"name":"y","type":"string"}]}}}]}"#)?;
    /// let p = s.project_paths(&["b.y"]).unwrap();
    /// assert_eq!(
    ///     p.canonical_form(),
    ///     r#"{"name":"n.r","type":"record","fields":[{"name":"b","type":{"type":"array","items":{"name":"n.B","type":"record","fields":[{"name":"y","type":"string"}]}}}]}"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn project_paths(&self, paths: &[&str]) -> Option<Schema> {
        let mut types = Merger::default();
        for named in self.named_types() {
            types
                .add(convert_named(self, named, &HashMap::new()))
                .ok()?;
        }
        let root = convert(self, self.root(), &HashMap::new());
        let Ty::Named(full) = &root else {
            return None;
        };
        let mut selection = Selection::default();
        for path in paths {
            selection.add(path.split('.'));
        }
        if selection.0.is_empty() {
            // No column: the record without fields (a selection without fields is a whole
            // type below the root).
            let index = *types.by_name.get(full)?;
            let MergedDef::Record { fields, .. } = &mut types.named[index].def else {
                return None;
            };
            fields.clear();
        }
        let root_index = *types.by_name.get(full)?;
        let mut cut = HashMap::new();
        types.cut(&root, &selection, &mut cut, root_index)?;
        let mut defined = vec![false; types.named.len()];
        Schema::parse(&types.emit(&root, &mut defined).to_string()).ok()
    }
}

/// The fields a projection keeps of a record, in order, each whole (no children) or cut to
/// its own selection ([`Schema::project_paths`]).
#[derive(Debug, Clone, Default, PartialEq)]
struct Selection(Vec<(String, Selection)>);

impl Selection {
    fn add<'a>(&mut self, mut path: impl Iterator<Item = &'a str>) {
        let Some(name) = path.next() else {
            return;
        };
        let at = match self.0.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None => {
                self.0.push((name.to_string(), Selection::default()));
                self.0.len() - 1
            }
        };
        self.0[at].1.add(path);
    }
}

impl Merger {
    /// Cut the record `ty` leads to (through arrays, maps and `["null", record]` unions) to
    /// `selection` (where it is empty: the whole type, and every record in it whole). `cut`:
    /// the selection each named record was cut to (`None`: whole), which every other use
    /// must repeat.
    fn cut(
        &mut self,
        ty: &Ty,
        selection: &Selection,
        cut: &mut HashMap<usize, Option<Selection>>,
        root: usize,
    ) -> Option<()> {
        if selection.0.is_empty() {
            return self.whole(ty, cut, root);
        }
        match ty {
            Ty::Array(items) | Ty::Map(items) => self.cut(items, selection, cut, root),
            Ty::Union(branches) => {
                let mut values = branches.iter().filter(|b| !is_null(b));
                match (values.next(), values.next()) {
                    (Some(value), None) => self.cut(value, selection, cut, root),
                    _ => None,
                }
            }
            Ty::Named(full) => {
                let index = *self.by_name.get(full)?;
                if let Some(before) = cut.get(&index) {
                    return (before.as_ref() == Some(selection)).then_some(());
                }
                cut.insert(index, Some(selection.clone()));
                let MergedDef::Record { fields, .. } = &self.named[index].def else {
                    return None;
                };
                let picked = selection
                    .0
                    .iter()
                    .map(|(name, _)| fields.iter().find(|f| f.name == *name).cloned())
                    .collect::<Option<Vec<_>>>()?;
                for (field, (_, sub)) in picked.iter().zip(&selection.0) {
                    self.cut(&field.ty, sub, cut, root)?;
                }
                let MergedDef::Record { fields, .. } = &mut self.named[index].def else {
                    return None;
                };
                *fields = picked;
                Some(())
            }
            Ty::Primitive(..) => None,
        }
    }

    /// [`Merger::cut`] of a type used whole: every named record in it must be whole
    /// wherever else it is used, but the root record (`root`), whose references to itself
    /// follow its cut.
    fn whole(
        &self,
        ty: &Ty,
        cut: &mut HashMap<usize, Option<Selection>>,
        root: usize,
    ) -> Option<()> {
        match ty {
            Ty::Primitive(..) => Some(()),
            Ty::Array(items) | Ty::Map(items) => self.whole(items, cut, root),
            Ty::Union(branches) => branches.iter().try_for_each(|b| self.whole(b, cut, root)),
            Ty::Named(full) => {
                let index = *self.by_name.get(full)?;
                if let Some(before) = cut.get(&index) {
                    return (before.is_none() || index == root).then_some(());
                }
                cut.insert(index, None);
                match &self.named[index].def {
                    MergedDef::Record { fields, .. } => {
                        fields.iter().try_for_each(|f| self.whole(&f.ty, cut, root))
                    }
                    MergedDef::Enum(_) | MergedDef::Fixed(_) => Some(()),
                }
            }
        }
    }
}

/// How `other`'s named types are called in the merged schema: a type whose namespace changed
/// (the same unqualified name and kind as exactly one type of `first`, which has no type of
/// its full name) takes the first's full name, as resolution matches named types by
/// unqualified name too. Types of other names are other types, as in resolution: a record
/// that was renamed is an error (its new schema should list the old name as an alias).
fn renames(first: &Schema, other: &Schema) -> HashMap<String, String> {
    let mut renames = HashMap::new();
    for named in other.named_types() {
        let full = named.name.full();
        if renames.contains_key(&full) || first.lookup(&full).is_some() {
            continue;
        }
        let mut candidates = first
            .named_types()
            .iter()
            .filter(|n| n.name.name() == named.name.name() && same_kind(&n.def, &named.def));
        if let (Some(only), None) = (candidates.next(), candidates.next()) {
            renames.insert(full, only.name.full());
        }
    }
    renames
}

fn same_kind(a: &NamedDef, b: &NamedDef) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// A type of the merged schema: named types by full name, so that the two schemas' tables
/// merge by name.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
    Primitive(Primitive, Option<LogicalType>),
    Array(Box<Ty>),
    Map(Box<Ty>),
    Union(Vec<Ty>),
    Named(String),
}

#[derive(Debug, Clone)]
struct MergedNamed {
    name: FullName,
    aliases: Vec<FullName>,
    doc: Option<String>,
    def: MergedDef,
}

#[derive(Debug, Clone)]
enum MergedDef {
    Record {
        fields: Vec<MergedField>,
        is_error: bool,
    },
    Enum(Enum),
    Fixed(Fixed),
}

#[derive(Debug, Clone)]
struct MergedField {
    name: String,
    ty: Ty,
    default: Option<Json>,
    order: SortOrder,
    aliases: Vec<String>,
    doc: Option<String>,
}

fn full_name(full: &str) -> FullName {
    match full.rsplit_once('.') {
        Some((ns, name)) => FullName::new(name.to_string(), Some(ns.to_string())),
        None => FullName::new(full.to_string(), None),
    }
}

fn renamed(full: String, renames: &HashMap<String, String>) -> String {
    renames.get(&full).cloned().unwrap_or(full)
}

fn convert(schema: &Schema, node: &Node, renames: &HashMap<String, String>) -> Ty {
    match node {
        Node::Primitive(p, l) => Ty::Primitive(*p, *l),
        Node::Array(items) => Ty::Array(Box::new(convert(schema, items, renames))),
        Node::Map(values) => Ty::Map(Box::new(convert(schema, values, renames))),
        Node::Union(branches) => Ty::Union(
            branches
                .iter()
                .map(|b| convert(schema, b, renames))
                .collect(),
        ),
        Node::Named(i) => Ty::Named(renamed(schema.named(*i).name.full(), renames)),
    }
}

fn convert_named(
    schema: &Schema,
    named: &NamedType,
    renames: &HashMap<String, String>,
) -> MergedNamed {
    let full = named.name.full();
    let mut aliases = named.aliases.clone();
    let name = match renames.get(&full) {
        Some(to) => {
            aliases.push(named.name.clone());
            full_name(to)
        }
        None => named.name.clone(),
    };
    let def = match &named.def {
        NamedDef::Record(Record { fields, is_error }) => MergedDef::Record {
            fields: fields
                .iter()
                .map(|f: &Field| MergedField {
                    name: f.name.clone(),
                    ty: convert(schema, &f.ty, renames),
                    default: f.default.clone(),
                    order: f.order,
                    aliases: f.aliases.clone(),
                    doc: f.doc.clone(),
                })
                .collect(),
            is_error: *is_error,
        },
        NamedDef::Enum(e) => MergedDef::Enum(e.clone()),
        NamedDef::Fixed(f) => MergedDef::Fixed(f.clone()),
    };
    MergedNamed {
        name,
        aliases,
        doc: named.doc.clone(),
        def,
    }
}

#[derive(Default)]
struct Merger {
    named: Vec<MergedNamed>,
    by_name: HashMap<String, usize>,
}

impl Merger {
    /// Add a named type, merging it into the one of the same full name if there is one.
    fn add(&mut self, named: MergedNamed) -> Result<(), MergeError> {
        let full = named.name.full();
        let Some(&index) = self.by_name.get(&full) else {
            self.by_name.insert(full, self.named.len());
            self.named.push(named);
            return Ok(());
        };
        let kind = |d: &MergedDef| match d {
            MergedDef::Record { .. } => "a record",
            MergedDef::Enum(_) => "an enum",
            MergedDef::Fixed(_) => "a fixed",
        };
        let place = || format!("type \"{full}\"");
        let existing = self.named[index].clone();
        let def = match (existing.def, named.def) {
            (
                MergedDef::Record {
                    fields: a,
                    is_error,
                },
                MergedDef::Record { fields: b, .. },
            ) => MergedDef::Record {
                fields: self.merge_fields(&full, a, b)?,
                is_error,
            },
            (MergedDef::Enum(a), MergedDef::Enum(b)) => {
                let mut symbols = a.symbols;
                for s in b.symbols {
                    if !symbols.contains(&s) {
                        symbols.push(s);
                    }
                }
                let default = a.default.or(b.default);
                MergedDef::Enum(Enum { symbols, default })
            }
            (MergedDef::Fixed(a), MergedDef::Fixed(b)) => {
                if a.size != b.size {
                    return Err(MergeError::new(
                        place(),
                        format!(
                            "fixed of {} bytes in one schema, {} in the other",
                            a.size, b.size
                        ),
                    ));
                }
                if a.logical != b.logical {
                    return Err(MergeError::new(
                        place(),
                        format!(
                            "{} in one schema, {} in the other",
                            logical_text(a.logical),
                            logical_text(b.logical)
                        ),
                    ));
                }
                MergedDef::Fixed(a)
            }
            (a, b) => {
                return Err(MergeError::new(
                    place(),
                    format!("{} in one schema, {} in the other", kind(&a), kind(&b)),
                ))
            }
        };
        let mut aliases = existing.aliases;
        for alias in named.aliases {
            if !aliases.contains(&alias) && alias != existing.name {
                aliases.push(alias);
            }
        }
        self.named[index] = MergedNamed {
            name: existing.name,
            aliases,
            doc: existing.doc.or(named.doc),
            def,
        };
        Ok(())
    }

    fn merge_fields(
        &self,
        record: &str,
        a: Vec<MergedField>,
        mut b: Vec<MergedField>,
    ) -> Result<Vec<MergedField>, MergeError> {
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let names: Vec<String> = a.iter().map(|f| f.name.clone()).collect();
        for f in a {
            // By name, else by an alias naming a field the first record does not have.
            let matched = b.iter().position(|g| g.name == f.name).or_else(|| {
                b.iter().position(|g| {
                    !names.contains(&g.name)
                        && (g.aliases.contains(&f.name) || f.aliases.contains(&g.name))
                })
            });
            let Some(k) = matched else {
                out.push(self.optional(f));
                continue;
            };
            let g = b.remove(k);
            let place = || format!("field \"{}\" of record \"{record}\"", f.name);
            let ty = self.merge_types(&f.ty, &g.ty, &place)?;
            // The side that declares the other's name as an alias renamed the field.
            let (name, mut aliases, other_name, other_aliases) = if g.aliases.contains(&f.name) {
                (g.name, g.aliases, f.name, f.aliases)
            } else {
                (f.name, f.aliases, g.name, g.aliases)
            };
            for alias in other_aliases.into_iter().chain([other_name]) {
                if alias != name && !aliases.contains(&alias) {
                    aliases.push(alias);
                }
            }
            let default = f
                .default
                .or(g.default)
                .filter(|d| self.default_fits(&ty, d));
            out.push(MergedField {
                name,
                ty,
                default,
                order: f.order,
                aliases,
                doc: f.doc.or(g.doc),
            });
        }
        out.extend(b.into_iter().map(|g| self.optional(g)));
        Ok(out)
    }

    /// A field that one of the schemas lacks: its own default if it has one that fits,
    /// otherwise nullable with default `null`.
    fn optional(&self, mut field: MergedField) -> MergedField {
        if field
            .default
            .as_ref()
            .is_some_and(|d| self.default_fits(&field.ty, d))
        {
            return field;
        }
        let null = Ty::Primitive(Primitive::Null, None);
        field.ty = match field.ty {
            Ty::Primitive(Primitive::Null, _) => null,
            Ty::Union(branches) => {
                let mut rest: Vec<Ty> = branches.into_iter().filter(|b| !is_null(b)).collect();
                rest.insert(0, null);
                Ty::Union(rest)
            }
            other => Ty::Union(vec![null, other]),
        };
        field.default = Some(Json::Null);
        field
    }

    /// Whether `value` is a valid default of `ty` (for a union, of its first branch: the rule
    /// of every Avro version, as a merged schema is read by older tools too).
    fn default_fits(&self, ty: &Ty, value: &Json) -> bool {
        match ty {
            Ty::Union(branches) => branches
                .first()
                .is_some_and(|b| self.default_fits(b, value)),
            Ty::Primitive(p, _) => match p {
                Primitive::Null => value.is_null(),
                Primitive::Boolean => value.is_boolean(),
                Primitive::Int => value.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
                Primitive::Long => value.as_i64().is_some(),
                Primitive::Float | Primitive::Double => value.is_number(),
                Primitive::Bytes | Primitive::String => value.is_string(),
            },
            Ty::Array(items) => value
                .as_array()
                .is_some_and(|v| v.iter().all(|x| self.default_fits(items, x))),
            Ty::Map(values) => value
                .as_object()
                .is_some_and(|m| m.values().all(|x| self.default_fits(values, x))),
            Ty::Named(name) => {
                let Some(&i) = self.by_name.get(name) else {
                    return false;
                };
                match &self.named[i].def {
                    MergedDef::Enum(e) => value
                        .as_str()
                        .is_some_and(|s| e.symbols.iter().any(|x| x == s)),
                    MergedDef::Fixed(f) => {
                        value.as_str().is_some_and(|s| s.chars().count() == f.size)
                    }
                    MergedDef::Record { fields, .. } => value.as_object().is_some_and(|m| {
                        fields.iter().all(|f| match m.get(&f.name) {
                            Some(v) => self.default_fits(&f.ty, v),
                            None => f.default.is_some(),
                        })
                    }),
                }
            }
        }
    }

    fn merge_types(&self, a: &Ty, b: &Ty, place: &dyn Fn() -> String) -> Result<Ty, MergeError> {
        if a == b {
            return Ok(a.clone());
        }
        match (a, b) {
            (Ty::Union(_), _) | (_, Ty::Union(_)) => self.merge_unions(a, b, place),
            _ if is_null(a) || is_null(b) => self.merge_unions(a, b, place),
            (Ty::Primitive(pa, la), Ty::Primitive(pb, lb)) => {
                merge_primitives((*pa, *la), (*pb, *lb)).ok_or_else(|| {
                    MergeError::new(
                        place(),
                        format!(
                            "{} in one schema, {} in the other",
                            describe(a),
                            describe(b)
                        ),
                    )
                })
            }
            (Ty::Array(x), Ty::Array(y)) => {
                Ok(Ty::Array(Box::new(self.merge_types(x, y, &|| {
                    format!("{} (array items)", place())
                })?)))
            }
            (Ty::Map(x), Ty::Map(y)) => {
                Ok(Ty::Map(Box::new(self.merge_types(x, y, &|| {
                    format!("{} (map values)", place())
                })?)))
            }
            _ => Err(MergeError::new(
                place(),
                format!(
                    "{} in one schema, {} in the other",
                    self.describe_named(a),
                    self.describe_named(b)
                ),
            )),
        }
    }

    /// The branches of both (a non-union counts as a union of one), each branch of `b` merged
    /// into the branch of `a` of its kind, or into a number `a`'s promotes to or from.
    fn merge_unions(&self, a: &Ty, b: &Ty, place: &dyn Fn() -> String) -> Result<Ty, MergeError> {
        let branches = |t: &Ty| match t {
            Ty::Union(bs) => bs.clone(),
            other => vec![other.clone()],
        };
        let mut out = branches(a);
        for branch in branches(b) {
            let place = || format!("{} (union branch {})", place(), describe(&branch));
            if let Some(k) = out.iter().position(|o| key(o) == key(&branch)) {
                out[k] = self.merge_types(&out[k], &branch, &place)?;
                continue;
            }
            if let Some(number) = plain_number(&branch) {
                let merged = |o: &Ty| {
                    let p = plain_number(o)?;
                    plain_number(&merge_primitives((p, None), (number, None))?)
                };
                // A branch that is already the widest of the two (`long` for an `int`).
                if out
                    .iter()
                    .any(|o| merged(o).is_some() && merged(o) == plain_number(o))
                {
                    continue;
                }
                // A narrower number widened to read both, where that makes no duplicate.
                let widened = out.iter().enumerate().find_map(|(k, o)| {
                    let wide = merged(o)?;
                    let clash = out
                        .iter()
                        .enumerate()
                        .any(|(j, x)| j != k && plain_number(x) == Some(wide));
                    (!clash).then_some((k, wide))
                });
                if let Some((k, wide)) = widened {
                    out[k] = Ty::Primitive(wide, None);
                    continue;
                }
                // A branch that reads it by Avro's promotion (`float` for a `long`).
                if out
                    .iter()
                    .any(|o| plain_number(o).is_some_and(|p| promotes(number, p)))
                {
                    continue;
                }
            }
            out.push(branch);
        }
        Ok(Ty::Union(out))
    }

    fn describe_named(&self, t: &Ty) -> String {
        match t {
            Ty::Named(name) => match self.by_name.get(name).map(|&i| &self.named[i].def) {
                Some(MergedDef::Record { .. }) => format!("record {name}"),
                Some(MergedDef::Enum(_)) => format!("enum {name}"),
                Some(MergedDef::Fixed(_)) => format!("fixed {name}"),
                None => name.clone(),
            },
            other => describe(other),
        }
    }

    /// The merged type as schema JSON, each named type defined where it is first used.
    fn emit(&self, ty: &Ty, defined: &mut Vec<bool>) -> Json {
        match ty {
            Ty::Primitive(p, None) => Json::String(p.name().to_string()),
            Ty::Primitive(p, Some(l)) => {
                let mut obj = Map::new();
                obj.insert("type".into(), Json::String(p.name().to_string()));
                logical_attributes(*l, &mut obj);
                Json::Object(obj)
            }
            Ty::Array(items) => json!({"type": "array", "items": self.emit(items, defined)}),
            Ty::Map(values) => json!({"type": "map", "values": self.emit(values, defined)}),
            Ty::Union(branches) => {
                Json::Array(branches.iter().map(|b| self.emit(b, defined)).collect())
            }
            Ty::Named(full) => {
                let Some(&i) = self.by_name.get(full) else {
                    return Json::String(full.clone());
                };
                if defined[i] {
                    return Json::String(full.clone());
                }
                defined[i] = true;
                let named = &self.named[i];
                let mut obj = Map::new();
                obj.insert("name".into(), Json::String(full.clone()));
                if named.name.namespace().is_none() {
                    // Not the enclosing type's namespace.
                    obj.insert("namespace".into(), Json::String(String::new()));
                }
                if !named.aliases.is_empty() {
                    obj.insert(
                        "aliases".into(),
                        named
                            .aliases
                            .iter()
                            .map(|a| Json::String(a.full()))
                            .collect(),
                    );
                }
                if let Some(doc) = &named.doc {
                    obj.insert("doc".into(), Json::String(doc.clone()));
                }
                match &named.def {
                    MergedDef::Record { fields, is_error } => {
                        let kind = if *is_error { "error" } else { "record" };
                        obj.insert("type".into(), Json::String(kind.into()));
                        let fields = fields
                            .iter()
                            .map(|f| {
                                let mut field = Map::new();
                                field.insert("name".into(), Json::String(f.name.clone()));
                                field.insert("type".into(), self.emit(&f.ty, defined));
                                if let Some(d) = &f.default {
                                    field.insert("default".into(), d.clone());
                                }
                                let order = match f.order {
                                    SortOrder::Ascending => None,
                                    SortOrder::Descending => Some("descending"),
                                    SortOrder::Ignore => Some("ignore"),
                                };
                                if let Some(order) = order {
                                    field.insert("order".into(), Json::String(order.into()));
                                }
                                if !f.aliases.is_empty() {
                                    field.insert("aliases".into(), json!(f.aliases));
                                }
                                if let Some(doc) = &f.doc {
                                    field.insert("doc".into(), Json::String(doc.clone()));
                                }
                                Json::Object(field)
                            })
                            .collect();
                        obj.insert("fields".into(), Json::Array(fields));
                    }
                    MergedDef::Enum(e) => {
                        obj.insert("type".into(), Json::String("enum".into()));
                        obj.insert("symbols".into(), json!(e.symbols));
                        if let Some(d) = e.default.as_ref().filter(|d| e.symbols.contains(d)) {
                            obj.insert("default".into(), Json::String(d.clone()));
                        }
                    }
                    MergedDef::Fixed(f) => {
                        obj.insert("type".into(), Json::String("fixed".into()));
                        obj.insert("size".into(), json!(f.size));
                        if let Some(l) = f.logical {
                            logical_attributes(l, &mut obj);
                        }
                    }
                }
                Json::Object(obj)
            }
        }
    }
}

fn is_null(t: &Ty) -> bool {
    matches!(t, Ty::Primitive(Primitive::Null, _))
}

/// What makes two union branches the same kind: a union holds one of each.
fn key(t: &Ty) -> String {
    match t {
        Ty::Primitive(p, _) => p.name().to_string(),
        Ty::Array(_) => "array".into(),
        Ty::Map(_) => "map".into(),
        Ty::Union(_) => "union".into(),
        Ty::Named(name) => name.clone(),
    }
}

fn describe(t: &Ty) -> String {
    match t {
        Ty::Primitive(p, None) => p.name().to_string(),
        Ty::Primitive(p, Some(l)) => format!("{} ({})", p.name(), logical_text(Some(*l))),
        Ty::Array(_) => "array".into(),
        Ty::Map(_) => "map".into(),
        Ty::Union(_) => "union".into(),
        Ty::Named(name) => name.clone(),
    }
}

/// A number without a logical type.
fn plain_number(t: &Ty) -> Option<Primitive> {
    match t {
        Ty::Primitive(
            p @ (Primitive::Int | Primitive::Long | Primitive::Float | Primitive::Double),
            None,
        ) => Some(*p),
        _ => None,
    }
}

/// Whether Avro resolution reads a writer's `w` as a reader's `r` (numbers only).
fn promotes(w: Primitive, r: Primitive) -> bool {
    use Primitive::*;
    w == r
        || matches!(
            (w, r),
            (Int, Long | Float | Double) | (Long, Float | Double) | (Float, Double)
        )
}

/// The primitive type reading both, if there is one: equal types with equal logical types,
/// times or timestamps of one kind in the finer unit, or plain numbers widened (`int`/`long` → `long`, `float`/`double` → `double`, an integer
/// and a float → `double`, never `float`, which would round large integers twice).
fn merge_primitives(
    (pa, la): (Primitive, Option<LogicalType>),
    (pb, lb): (Primitive, Option<LogicalType>),
) -> Option<Ty> {
    use Primitive::*;
    // Times or timestamps of one kind in two units: the finer (resolution scales the other).
    if let (Some((ka, ua)), Some((kb, ub))) = (
        la.and_then(|l| l.time_unit()),
        lb.and_then(|l| l.time_unit()),
    ) {
        if ka == kb {
            return Some(if ua >= ub {
                Ty::Primitive(pa, la)
            } else {
                Ty::Primitive(pb, lb)
            });
        }
    }
    if pa == pb {
        return (la == lb).then_some(Ty::Primitive(pa, la));
    }
    if la.is_some() || lb.is_some() {
        return None;
    }
    let merged = match (pa, pb) {
        (Int | Long, Int | Long) => Long,
        (Int | Long | Float | Double, Int | Long | Float | Double) => Double,
        _ => return None,
    };
    Some(Ty::Primitive(merged, None))
}

fn logical_text(l: Option<LogicalType>) -> String {
    match l {
        None => "no logical type".into(),
        Some(LogicalType::Decimal { precision, scale }) => format!("decimal({precision}, {scale})"),
        Some(other) => other.name().to_string(),
    }
}

fn logical_attributes(l: LogicalType, obj: &mut Map<String, Json>) {
    obj.insert("logicalType".into(), Json::String(l.name().into()));
    if let LogicalType::Decimal { precision, scale } = l {
        obj.insert("precision".into(), json!(precision));
        obj.insert("scale".into(), json!(scale));
    }
}

#[cfg(test)]
mod tests;
