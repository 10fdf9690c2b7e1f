//! Compiling an Avro schema into a decode plan: the Arrow schema (the Avro → Arrow mapping), and
//! a tree of empty column builders that every decoder clones. Projection, schema resolution
//! (a reader schema other than the writer's) and the unrolling of recursive types happen here,
//! once, so decoding never looks at a schema again.
//!
//! Resolution follows the Avro specification: record fields matched by name or reader alias
//! (writer-only fields skipped, reader-only fields filled from their defaults, output in the
//! reader's order), named types matched by name or alias, numeric promotions, `string` ↔
//! `bytes`, enum symbols remapped (unknown symbols take the reader's default or fail when
//! read), and unions resolved branch by branch (a writer branch with no match fails when read).

mod default;

use crate::decode::column::{
    BytesCol, BytesKind, Column, DecimalCol, DecimalSource, EnumCol, EnumRemap, FixedCol, ListCol,
    MapCol, NullableCol, Prim, StructCol, TooDeep, UnionCol,
};
use crate::decode::resolve::{DefaultCol, PromotedCol, Promotion, ResolvedUnion, Target};
use crate::decode::skip::Skip;
use crate::error::PlanError;
use crate::schema::{Field as RecordField, LogicalType, NamedDef, Node, Primitive, Record, Schema};
use arrow_schema::extension::Uuid;
use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit, UnionFields};
use default::encode_default;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Options that shape the decode plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Columns to decode: top-level field names or dotted paths through records, array items,
    /// map values and nullable unions (`"lines.sku"`). `None` decodes everything.
    pub projection: Option<Vec<String>>,
    /// How many times a recursive named type may nest inside itself before the mapping stops;
    /// data nested deeper is an error.
    pub max_recursion_depth: usize,
    /// Map `string`/`bytes` to `Utf8View`/`BinaryView` instead of `Utf8`/`Binary`.
    pub utf8_view: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            projection: None,
            max_recursion_depth: 16,
            utf8_view: false,
        }
    }
}

/// The metadata key under which the Avro schema of the batches is kept in the Arrow schema (the
/// writer's schema, or the reader's when one resolves it).
pub const AVRO_SCHEMA_KEY: &str = "avro.schema";

/// Largest plan (columns plus skip nodes) accepted; recursive types unrolled too deep exceed it.
/// A type that refers to itself twice (a tree with array and map children) doubles at every
/// level, so the cap, not the depth, bounds what a small schema in a hostile header costs to
/// compile: 2^16 nodes take milliseconds and a few MB, and real schemas stay far below.
const MAX_PLAN_NODES: usize = 1 << 16;
/// Deepest type nesting accepted.
const MAX_NESTING: usize = 512;

/// A projection tree. `whole` selects the whole subtree; `children` are the named sub-paths,
/// kept even under a whole selection so that every given path is checked against the schema.
#[derive(Debug, Clone, Default)]
struct Proj {
    whole: bool,
    children: BTreeMap<String, Proj>,
}

impl Proj {
    fn from_paths(paths: &[String]) -> Proj {
        let mut root = Proj::default();
        for path in paths {
            let mut node = &mut root;
            for part in path.split('.') {
                node = node.children.entry(part.to_string()).or_default();
            }
            node.whole = true;
        }
        root
    }

    /// The projection of child `name`: `None` means "everything" (no sub-paths to check).
    fn child(&self, name: &str) -> Option<Option<Proj>> {
        match self.children.get(name) {
            Some(c) => Some(Some(Proj {
                whole: c.whole || self.whole,
                children: c.children.clone(),
            })),
            None if self.whole => Some(None),
            None => None,
        }
    }

    /// A selection with no sub-paths selects the whole subtree.
    fn is_everything(&self) -> bool {
        self.whole && self.children.is_empty()
    }
}

pub(crate) struct Compiled {
    pub(crate) root: StructCol,
    pub(crate) fields: Fields,
    /// How to skip one whole record of the writer's schema, for checking a block whose data
    /// arrives in pieces (`decode/stream.rs`). `None` where the unrolled schema is too large.
    pub(crate) record_skip: Option<Skip>,
}

/// Compiles a (writer, reader) pair of schemas. Without a reader schema both are the writer's,
/// and every pair is a node with itself, which resolves to the plain mapping.
struct Compiler<'a> {
    /// The writer's schema: how the data is encoded.
    w: &'a Schema,
    /// The reader's schema: what the batches hold.
    r: &'a Schema,
    opts: &'a DecodeOptions,
    /// Named types (of the writer's schema) being expanded on the current path (for recursion).
    stack: Vec<usize>,
    nodes: usize,
    /// Build skips with the variants that check values (the streaming check's tree).
    strict: bool,
}

struct Mapped {
    column: Column,
    data_type: DataType,
    nullable: bool,
    uuid: bool,
}

impl Mapped {
    fn new(column: Column, data_type: DataType) -> Self {
        Mapped {
            column,
            data_type,
            nullable: false,
            uuid: false,
        }
    }

    fn field(&self, name: &str) -> Field {
        let f = Field::new(name, self.data_type.clone(), self.nullable);
        if self.uuid {
            f.with_extension_type(Uuid)
        } else {
            f
        }
    }
}

/// A record field as the compiler sees it (the root of a non-record schema is one field,
/// `value`).
#[derive(Clone, Copy)]
struct Part<'a> {
    name: &'a str,
    ty: &'a Node,
    aliases: &'a [String],
    default: Option<&'a Json>,
}

impl<'a> Part<'a> {
    fn of(field: &'a RecordField) -> Self {
        Part {
            name: &field.name,
            ty: &field.ty,
            aliases: &field.aliases,
            default: field.default.as_ref(),
        }
    }

    fn value(ty: &'a Node) -> Self {
        Part {
            name: "value",
            ty,
            aliases: &[],
            default: None,
        }
    }
}

/// The compiled fields of one record.
struct Body {
    columns: Vec<Column>,
    names: Vec<Arc<str>>,
    fields: Fields,
    order: Option<Vec<usize>>,
}

impl Body {
    fn into_struct(self) -> StructCol {
        let s = StructCol::new(self.columns, self.names, self.fields);
        match self.order {
            Some(order) => s.with_order(order),
            None => s,
        }
    }
}

/// The record at the root of `schema`, if the root is a record.
fn root_record(schema: &Schema) -> Option<(usize, &Record)> {
    match schema.root() {
        Node::Named(i) => match &schema.named(*i).def {
            NamedDef::Record(r) => Some((*i, r)),
            _ => None,
        },
        _ => None,
    }
}

/// Compile the plan for data written with `writer`, read as `reader` (or as itself).
pub(crate) fn compile(
    writer: &Schema,
    reader: Option<&Schema>,
    opts: &DecodeOptions,
) -> Result<Compiled, PlanError> {
    let mut c = Compiler {
        w: writer,
        r: reader.unwrap_or(writer),
        opts,
        stack: Vec::new(),
        nodes: 0,
        strict: false,
    };
    let proj = opts.projection.as_deref().map(Proj::from_paths);
    // The names of the top-level records are not compared: they carry no data, and tools
    // disagree about them (Spark writes `topLevelRecord`).
    let body = match (root_record(c.w), root_record(c.r)) {
        (Some((wi, wr)), Some((_, rr))) => {
            c.stack.push(wi);
            let wparts: Vec<Part> = wr.fields.iter().map(Part::of).collect();
            let rparts: Vec<Part> = rr.fields.iter().map(Part::of).collect();
            c.record_body(&wparts, &rparts, proj.as_ref(), "", 0)?
        }
        _ => c.record_body(
            &[Part::value(c.w.root())],
            &[Part::value(c.r.root())],
            proj.as_ref(),
            "",
            0,
        )?,
    };
    let fields = body.fields.clone();
    // A separate node budget: the skip of the whole writer record must not make a schema
    // that compiles fail.
    c.nodes = 0;
    c.stack.clear();
    c.strict = true;
    let record_skip = c.skip(c.w.root(), 0).ok();
    Ok(Compiled {
        root: body.into_struct(),
        fields,
        record_skip,
    })
}

/// How a writer primitive is read as a reader primitive, if it can be (the specification's
/// promotions: int → long, float, double; long → float, double; float → double; string ↔
/// bytes).
fn promotion(w: Primitive, r: Primitive) -> Option<Promotion> {
    use Primitive::*;
    Some(match (w, r) {
        _ if w == r => Promotion::Same,
        (Int, Long) | (String, Bytes) | (Bytes, String) => Promotion::Same,
        (Int | Long, Float) => Promotion::LongToFloat32,
        (Int | Long, Double) => Promotion::LongToFloat64,
        (Float, Double) => Promotion::Float32ToFloat64,
        _ => return None,
    })
}

/// `Some((null branch, value branch))` for a two-branch union with one `null`.
fn nullable_shape<N: std::borrow::Borrow<Node>>(branches: &[N]) -> Option<(usize, usize)> {
    let is_null = |n: &N| matches!(n.borrow(), Node::Primitive(Primitive::Null, _));
    match branches {
        [a, b] if is_null(a) && !is_null(b) => Some((0, 1)),
        [a, b] if !is_null(a) && is_null(b) => Some((1, 0)),
        _ => None,
    }
}

fn is_null(n: &Node) -> bool {
    matches!(n, Node::Primitive(Primitive::Null, _))
}

impl Compiler<'_> {
    fn count_node(&mut self, depth: usize) -> Result<(), PlanError> {
        self.nodes += 1;
        if self.nodes > MAX_PLAN_NODES {
            return Err(PlanError::Unsupported(format!(
                "the schema expands to more than {MAX_PLAN_NODES} columns and nodes (recursive types are \
                 unrolled {} levels deep; lower max_recursion_depth or project fewer columns)",
                self.opts.max_recursion_depth
            )));
        }
        if depth > MAX_NESTING {
            return Err(PlanError::Unsupported(format!(
                "types nested more than {MAX_NESTING} levels deep"
            )));
        }
        Ok(())
    }

    /// The columns of a record: the writer's fields in the writer's order (decoded, or skipped
    /// when the reader does not want them), then the reader's fields that the writer lacks
    /// (filled with defaults); the output is in the reader's order.
    fn record_body(
        &mut self,
        wparts: &[Part],
        rparts: &[Part],
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Body, PlanError> {
        let proj = proj.filter(|p| !p.is_everything());
        if let Some(p) = proj {
            for name in p.children.keys() {
                if !rparts.iter().any(|f| f.name == name) {
                    return Err(PlanError::UnknownField {
                        path: join(path, name),
                        hint: String::new(),
                    });
                }
            }
        }
        // `None`: not selected; `Some(p)`: selected, with the sub-projection `p`.
        let select = |name: &str| -> Option<Option<Proj>> {
            match proj {
                None => Some(None),
                Some(p) => p.child(name),
            }
        };
        // Each reader field's writer field: by name first (for every field), then by one of
        // the reader field's aliases among the writer fields left.
        let mut writer_of: Vec<Option<usize>> = vec![None; rparts.len()];
        let mut reader_of: Vec<Option<usize>> = vec![None; wparts.len()];
        for by_alias in [false, true] {
            for (j, rf) in rparts.iter().enumerate() {
                if writer_of[j].is_some() {
                    continue;
                }
                let found = wparts.iter().enumerate().position(|(i, wf)| {
                    reader_of[i].is_none()
                        && if by_alias {
                            rf.aliases.iter().any(|a| a == wf.name)
                        } else {
                            wf.name == rf.name
                        }
                });
                if let Some(i) = found {
                    writer_of[j] = Some(i);
                    reader_of[i] = Some(j);
                }
            }
        }
        let mut columns = Vec::with_capacity(wparts.len());
        let mut names = Vec::with_capacity(wparts.len());
        // Per reader field: its Arrow field and its column's index.
        let mut placed: Vec<Option<(Field, usize)>> = vec![None; rparts.len()];
        for (i, wf) in wparts.iter().enumerate() {
            let wanted = reader_of[i].and_then(|j| select(rparts[j].name).map(|p| (j, p)));
            match wanted {
                Some((j, child_proj)) => {
                    let rf = rparts[j];
                    let mapped = self.map(
                        wf.ty,
                        rf.ty,
                        child_proj.as_ref(),
                        &join(path, rf.name),
                        depth + 1,
                    )?;
                    placed[j] = Some((mapped.field(rf.name), columns.len()));
                    columns.push(mapped.column);
                    names.push(Arc::<str>::from(rf.name));
                }
                None => {
                    let skip = self.skip(wf.ty, depth + 1)?;
                    let name = Arc::<str>::from(wf.name);
                    // Consecutive skipped fields become one column (one dispatch per record).
                    match (columns.last_mut(), names.last()) {
                        (Some(Column::Skip(prev)), Some(first)) => {
                            let run = std::mem::replace(prev, Skip::Bytes(0));
                            *prev = run.then_field(first, name, skip);
                        }
                        _ => {
                            columns.push(Column::Skip(skip));
                            names.push(name);
                        }
                    }
                }
            }
        }
        for (j, rf) in rparts.iter().enumerate() {
            if writer_of[j].is_some() {
                continue;
            }
            let Some(child_proj) = select(rf.name) else {
                continue;
            };
            let field_path = join(path, rf.name);
            let incompatible = |reason: String| PlanError::Incompatible {
                path: field_path.clone(),
                reason,
            };
            let Some(default) = rf.default else {
                return Err(incompatible(
                    "the field is not in the writer's schema and has no default".into(),
                ));
            };
            let mapped = self.native(rf.ty, child_proj.as_ref(), &field_path, depth + 1)?;
            let bytes = encode_default(self.r, rf.ty, default)
                .map_err(|e| incompatible(format!("invalid default: {e}")))?;
            let field = mapped.field(rf.name);
            let column = DefaultCol::new(bytes, mapped.column);
            column.check().map_err(|e| {
                incompatible(format!(
                    "the default cannot be read as the field's type: {e}"
                ))
            })?;
            placed[j] = Some((field, columns.len()));
            columns.push(Column::Default(Box::new(column)));
            names.push(Arc::<str>::from(rf.name));
        }
        let order: Vec<usize> = placed.iter().flatten().map(|(_, i)| *i).collect();
        let natural = (0..columns.len()).filter(|&i| !matches!(columns[i], Column::Skip(_)));
        let order = if order.iter().copied().eq(natural) {
            None
        } else {
            Some(order)
        };
        let fields = Fields::from(
            placed
                .into_iter()
                .flatten()
                .map(|(f, _)| f)
                .collect::<Vec<_>>(),
        );
        Ok(Body {
            columns,
            names,
            fields,
            order,
        })
    }

    /// Compile a node of the reader's schema on its own (a default, or a union branch no writer
    /// branch maps to).
    fn native(
        &mut self,
        node: &Node,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let mut sub = Compiler {
            w: self.r,
            r: self.r,
            opts: self.opts,
            stack: Vec::new(),
            nodes: self.nodes,
            strict: false,
        };
        let mapped = sub.map(node, node, proj, path, depth);
        self.nodes = sub.nodes;
        mapped
    }

    fn no_subfields(&self, proj: Option<&Proj>, path: &str, what: &str) -> Result<(), PlanError> {
        match proj.and_then(|p| p.children.keys().next()) {
            Some(sub) => Err(PlanError::UnknownField {
                path: join(path, sub),
                hint: format!(" ({path} is {what}, which has no fields)"),
            }),
            None => Ok(()),
        }
    }

    fn no_branch_projection(&self, proj: Option<&Proj>, path: &str) -> Result<(), PlanError> {
        if proj.is_some_and(|p| !p.children.is_empty()) {
            return Err(PlanError::UnknownField {
                path: path.to_string(),
                hint: " (projection into the branches of a union is not supported; select the whole field)".into(),
            });
        }
        Ok(())
    }

    /// A description of a node for messages: `int`, `array`, `record a.b`, ...
    fn describe(schema: &Schema, node: &Node) -> String {
        match node {
            Node::Primitive(p, _) => p.name().to_string(),
            Node::Array(_) => "array".to_string(),
            Node::Map(_) => "map".to_string(),
            Node::Union(_) => "union".to_string(),
            Node::Named(i) => {
                let n = schema.named(*i);
                let kind = match n.def {
                    NamedDef::Record(_) => "record",
                    NamedDef::Enum(_) => "enum",
                    NamedDef::Fixed(_) => "fixed",
                };
                format!("{kind} {}", n.name)
            }
        }
    }

    fn mismatch(&self, path: &str, w: &Node, r: &Node) -> PlanError {
        PlanError::Incompatible {
            path: path.to_string(),
            reason: format!(
                "the writer's {} cannot be read as the reader's {}",
                Self::describe(self.w, w),
                Self::describe(self.r, r)
            ),
        }
    }

    /// Whether the reader's named type `ri` reads the writer's `wi`: the same full or
    /// unqualified name, or a reader alias naming the writer's type.
    fn names_match(&self, wi: usize, ri: usize) -> bool {
        let (w, r) = (&self.w.named(wi).name, self.r.named(ri));
        r.name == *w
            || r.name.name() == w.name()
            || r.aliases.iter().any(|a| a == w || a.name() == w.name())
    }

    /// The same kind of type (and name, for named types): the first choice for a union branch.
    fn same_kind(&self, w: &Node, r: &Node) -> bool {
        match (w, r) {
            (Node::Primitive(a, _), Node::Primitive(b, _)) => a == b,
            (Node::Array(_), Node::Array(_)) | (Node::Map(_), Node::Map(_)) => true,
            (Node::Named(wi), Node::Named(ri)) => {
                std::mem::discriminant(&self.w.named(*wi).def)
                    == std::mem::discriminant(&self.r.named(*ri).def)
                    && self.names_match(*wi, *ri)
            }
            _ => false,
        }
    }

    /// The reader's union branch for a writer value of type `w`: the first of the same kind,
    /// else the first that a promotion reaches.
    fn pick_branch<N: std::borrow::Borrow<Node>>(&self, w: &Node, branches: &[N]) -> Option<usize> {
        branches
            .iter()
            .position(|r| self.same_kind(w, r.borrow()))
            .or_else(|| {
                let Node::Primitive(wp, _) = w else {
                    return None;
                };
                branches.iter().position(|r| {
                    matches!(r.borrow(), Node::Primitive(rp, _) if promotion(*wp, *rp).is_some())
                })
            })
    }

    fn map(
        &mut self,
        w: &Node,
        r: &Node,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        self.count_node(depth)?;
        let view = self.opts.utf8_view;
        match (w, r) {
            (Node::Union(wb), Node::Union(rb)) => {
                self.union_to_union(w, wb, r, rb, proj, path, depth)
            }
            (Node::Union(_), _) => self.resolved_union(w, r, proj, path, depth),
            (_, Node::Union(rb)) => self.single_to_union(w, r, rb, proj, path, depth),
            (Node::Primitive(wp, wl), Node::Primitive(rp, rl)) => {
                self.no_subfields(proj, path, rp.name())?;
                let Some(promotion) = promotion(*wp, *rp) else {
                    return Err(self.mismatch(path, w, r));
                };
                check_decimals(*wl, *rl, path)?;
                Ok(match promotion {
                    Promotion::Same => primitive(*rp, *rl, view),
                    Promotion::LongToFloat32 => promoted(promotion, DataType::Float32),
                    Promotion::LongToFloat64 | Promotion::Float32ToFloat64 => {
                        promoted(promotion, DataType::Float64)
                    }
                })
            }
            (Node::Array(wi), Node::Array(ri)) => {
                let item = self.map(wi, ri, proj, path, depth + 1)?;
                let field = Arc::new(item.field("item"));
                Ok(Mapped::new(
                    Column::List(Box::new(ListCol::new(item.column, field.clone()))),
                    DataType::List(field),
                ))
            }
            (Node::Map(wv), Node::Map(rv)) => {
                let value = self.map(wv, rv, proj, path, depth + 1)?;
                let key_type = if view {
                    DataType::Utf8View
                } else {
                    DataType::Utf8
                };
                let entries = Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", key_type, false),
                        value.field("value"),
                    ])),
                    false,
                ));
                Ok(Mapped::new(
                    Column::Map(Box::new(MapCol::new(value.column, entries.clone(), view))),
                    DataType::Map(entries, false),
                ))
            }
            (Node::Named(wi), Node::Named(ri)) => self.named(*wi, *ri, w, r, proj, path, depth),
            _ => Err(self.mismatch(path, w, r)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn union_to_union(
        &mut self,
        w: &Node,
        wb: &[Node],
        r: &Node,
        rb: &[Node],
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        // The common case, `["null", T]` both sides: a nullable column.
        if let (Some((w_null, w_value)), Some((_, r_value))) =
            (nullable_shape(wb), nullable_shape(rb))
        {
            if self
                .pick_branch(&wb[w_value], &rb[r_value..=r_value])
                .is_some()
            {
                let mut inner = self.map(&wb[w_value], &rb[r_value], proj, path, depth + 1)?;
                inner.column =
                    Column::Nullable(Box::new(NullableCol::new(w_null as i64, inner.column)));
                inner.nullable = true;
                return Ok(inner);
            }
        }
        let one_to_one = wb.len() == rb.len()
            && wb
                .iter()
                .enumerate()
                .all(|(i, b)| self.pick_branch(b, rb) == Some(i));
        if !one_to_one {
            return self.resolved_union(w, r, proj, path, depth);
        }
        self.no_branch_projection(proj, path)?;
        check_union_size(rb.len(), path)?;
        let branches = wb
            .iter()
            .zip(rb)
            .map(|(wn, rn)| self.map(wn, rn, None, path, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        self.dense_union(rb.iter(), branches, path)
    }

    /// A dense Arrow union of the reader's branches `readers`, from their mapped columns.
    fn dense_union<'n>(
        &self,
        readers: impl Iterator<Item = &'n Node> + Clone,
        branches: Vec<Mapped>,
        path: &str,
    ) -> Result<Mapped, PlanError> {
        let mut children = Vec::with_capacity(branches.len());
        let mut fields = Vec::with_capacity(branches.len());
        for (rn, mapped) in readers.clone().zip(branches) {
            fields.push(mapped.field(&self.branch_name(rn)));
            children.push(mapped.column);
        }
        let union_fields = UnionFields::try_new(0..children.len() as i8, fields)
            .map_err(|e| PlanError::Unsupported(format!("union at {path}: {e}")))?;
        let mut m = Mapped::new(
            Column::Union(Box::new(UnionCol::new(children, union_fields.clone()))),
            DataType::Union(union_fields, arrow_schema::UnionMode::Dense),
        );
        m.nullable = readers.into_iter().any(is_null);
        Ok(m)
    }

    /// A writer value that is not a union, read as a reader union.
    #[allow(clippy::too_many_arguments)]
    fn single_to_union(
        &mut self,
        w: &Node,
        r: &Node,
        rb: &[Node],
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let Some(j) = self.pick_branch(w, rb) else {
            return Err(self.mismatch(path, w, r));
        };
        if let Some((null_j, _)) = nullable_shape(rb) {
            if j != null_j {
                // Never null: the value's column, marked nullable.
                let mut mapped = self.map(w, &rb[j], proj, path, depth + 1)?;
                mapped.nullable = true;
                return Ok(mapped);
            }
        }
        self.resolved_union(w, r, proj, path, depth)
    }

    /// The general case: each writer branch (or the single writer type) mapped to a branch of
    /// the reader's union (or to the reader's single type), with promotions where several
    /// writer branches share a reader branch.
    fn resolved_union(
        &mut self,
        w: &Node,
        r: &Node,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let (writers, read_index): (Vec<&Node>, bool) = match w {
            Node::Union(b) => (b.iter().collect(), true),
            other => (vec![other], false),
        };
        let (readers, r_union): (Vec<&Node>, bool) = match r {
            Node::Union(b) => (b.iter().collect(), true),
            other => (vec![other], false),
        };
        let nullable = if r_union {
            nullable_shape(&readers)
        } else {
            None
        };
        let general = r_union && nullable.is_none();
        if general {
            self.no_branch_projection(proj, path)?;
            check_union_size(readers.len(), path)?;
        }
        let targets: Vec<Option<usize>> = writers
            .iter()
            .map(|wn| self.pick_branch(wn, &readers))
            .collect();
        // The reader branches that get a column: all of a union's, else the value's.
        let built: Vec<usize> = match nullable {
            Some((_, value)) => vec![value],
            None => (0..readers.len()).collect(),
        };
        let mut promotions = vec![Promotion::Same; writers.len()];
        let mut columns: Vec<Option<Mapped>> = (0..readers.len()).map(|_| None).collect();
        for j in built {
            let from: Vec<usize> = (0..writers.len())
                .filter(|&i| targets[i] == Some(j))
                .collect();
            let branch_proj = if general { None } else { proj };
            let mapped = match from.as_slice() {
                [] => self.native(readers[j], branch_proj, path, depth + 1)?,
                [i] => self.map(writers[*i], readers[j], branch_proj, path, depth + 1)?,
                several => {
                    // Several writer branches into one reader branch: only primitives, each
                    // read with its promotion into the reader's plain column.
                    for &i in several {
                        // (A writer branch reaches a primitive reader branch only as a
                        // primitive: see `pick_branch`.)
                        let (Node::Primitive(wp, wl), Node::Primitive(rp, rl)) =
                            (writers[i], readers[j])
                        else {
                            return Err(PlanError::Unsupported(format!(
                                "union at {path}: several writer branches resolve to the reader's {} branch",
                                Self::describe(self.r, readers[j])
                            )));
                        };
                        check_decimals(*wl, *rl, path)?;
                        promotions[i] = promotion(*wp, *rp)
                            .ok_or_else(|| self.mismatch(path, writers[i], readers[j]))?;
                    }
                    self.native(readers[j], branch_proj, path, depth + 1)?
                }
            };
            columns[j] = Some(mapped);
        }
        let targets: Box<[Target]> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| match (t, nullable) {
                (None, _) => Target::Unresolved(Self::describe(self.w, writers[i]).into()),
                (Some(j), Some((null_j, _))) if *j == null_j => Target::Null,
                (Some(_), _) if !general => Target::Value(promotions[i]),
                (Some(j), _) => Target::Branch(*j as i8, promotions[i]),
            })
            .collect();
        let min_size = if read_index {
            1
        } else {
            self.skip(w, depth + 1)?.min_size()
        };
        let resolved = |out: Column| {
            Column::Resolved(Box::new(ResolvedUnion {
                read_index,
                targets,
                min_size,
                out,
            }))
        };
        if let Some((null_j, value)) = nullable {
            let mut inner = columns[value].take().expect("the value branch was built");
            inner.column = resolved(Column::Nullable(Box::new(NullableCol::new(
                null_j as i64,
                inner.column,
            ))));
            inner.nullable = true;
            return Ok(inner);
        }
        if !r_union {
            let mut inner = columns[0].take().expect("the single branch was built");
            inner.column = resolved(inner.column);
            return Ok(inner);
        }
        let branches = columns
            .into_iter()
            .map(|m| m.expect("every branch was built"))
            .collect();
        let mut m = self.dense_union(readers.iter().copied(), branches, path)?;
        m.column = resolved(m.column);
        Ok(m)
    }

    /// The Arrow field name of a reader union branch.
    fn branch_name(&self, node: &Node) -> String {
        match node {
            Node::Primitive(p, _) => p.name().to_string(),
            Node::Array(_) => "array".to_string(),
            Node::Map(_) => "map".to_string(),
            Node::Union(_) => "union".to_string(),
            Node::Named(i) => self.r.named(*i).name.full(),
        }
    }

    fn enter(&mut self, index: usize) -> bool {
        let depth = self.stack.iter().filter(|&&x| x == index).count();
        if depth >= self.opts.max_recursion_depth {
            return false;
        }
        self.stack.push(index);
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn named(
        &mut self,
        wi: usize,
        ri: usize,
        w: &Node,
        r: &Node,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let (wn, rn) = (self.w.named(wi), self.r.named(ri));
        let same_kind = std::mem::discriminant(&wn.def) == std::mem::discriminant(&rn.def);
        if !same_kind || !self.names_match(wi, ri) {
            return Err(self.mismatch(path, w, r));
        }
        match (&wn.def, &rn.def) {
            (NamedDef::Record(wr), NamedDef::Record(rr)) => {
                if !self.enter(wi) {
                    let mut m = Mapped::new(
                        Column::TooDeep(TooDeep::new(
                            &rn.name.full(),
                            self.opts.max_recursion_depth,
                        )),
                        DataType::Null,
                    );
                    m.nullable = true;
                    return Ok(m);
                }
                let wparts: Vec<Part> = wr.fields.iter().map(Part::of).collect();
                let rparts: Vec<Part> = rr.fields.iter().map(Part::of).collect();
                let result = self.record_body(&wparts, &rparts, proj, path, depth);
                self.stack.pop();
                let body = result?;
                let data_type = DataType::Struct(body.fields.clone());
                Ok(Mapped::new(Column::Struct(body.into_struct()), data_type))
            }
            (NamedDef::Enum(we), NamedDef::Enum(re)) => {
                self.no_subfields(proj, path, "an enum")?;
                let mut column = EnumCol::new(&re.symbols);
                if we.symbols != re.symbols {
                    let fallback = re
                        .default
                        .as_ref()
                        .and_then(|d| re.symbols.iter().position(|s| s == d));
                    let keys = we
                        .symbols
                        .iter()
                        .map(|s| {
                            re.symbols
                                .iter()
                                .position(|x| x == s)
                                .or(fallback)
                                .map_or(-1, |k| k as i32)
                        })
                        .collect();
                    column = column.with_remap(EnumRemap {
                        keys,
                        writer_symbols: we.symbols.clone().into(),
                    });
                }
                Ok(Mapped::new(
                    Column::Enum(column),
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                ))
            }
            (NamedDef::Fixed(wf), NamedDef::Fixed(rf)) => {
                self.no_subfields(proj, path, "a fixed")?;
                if wf.size != rf.size {
                    return Err(PlanError::Incompatible {
                        path: path.to_string(),
                        reason: format!(
                            "fixed {} has {} bytes in the writer's schema and {} in the reader's",
                            rn.name, wf.size, rf.size
                        ),
                    });
                }
                check_decimals(wf.logical, rf.logical, path)?;
                Ok(fixed(rf.size, rf.logical))
            }
            _ => Err(self.mismatch(path, w, r)),
        }
    }

    /// How to skip a projected-away value of the writer's `node`.
    fn skip(&mut self, node: &Node, depth: usize) -> Result<Skip, PlanError> {
        self.count_node(depth)?;
        Ok(match node {
            Node::Primitive(p, _) if self.strict && *p == Primitive::Boolean => Skip::Boolean,
            Node::Primitive(p, _) if self.strict && *p == Primitive::Int => Skip::Int,
            Node::Primitive(p, _) if self.strict && *p == Primitive::String => Skip::Str,
            Node::Primitive(p, _) => match p {
                Primitive::Null => Skip::Bytes(0),
                Primitive::Boolean => Skip::Bytes(1),
                Primitive::Int | Primitive::Long => Skip::Varint,
                Primitive::Float => Skip::Bytes(4),
                Primitive::Double => Skip::Bytes(8),
                Primitive::Bytes | Primitive::String => Skip::Sized,
            },
            Node::Array(items) => Skip::Array(Box::new(self.skip(items, depth + 1)?)),
            Node::Map(values) => Skip::Map(Box::new(self.skip(values, depth + 1)?)),
            Node::Union(branches) => Skip::Union(
                branches
                    .iter()
                    .map(|b| self.skip(b, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Named(i) => match &self.w.named(*i).def {
                NamedDef::Enum(e) if self.strict => Skip::Enum(e.symbols.len()),
                NamedDef::Enum(_) => Skip::Varint,
                NamedDef::Fixed(f) => Skip::Bytes(f.size),
                NamedDef::Record(r) => {
                    if !self.enter(*i) {
                        return Ok(Skip::TooDeep(
                            self.w.named(*i).name.full().into(),
                            self.opts.max_recursion_depth,
                        ));
                    }
                    let parts: Result<Vec<Skip>, PlanError> = r
                        .fields
                        .iter()
                        .map(|f| self.skip(&f.ty, depth + 1))
                        .collect();
                    self.stack.pop();
                    Skip::record(parts?)
                }
            },
        })
    }
}

fn check_union_size(branches: usize, path: &str) -> Result<(), PlanError> {
    if branches > 127 {
        return Err(PlanError::Unsupported(format!(
            "union at {path} has {branches} branches; Arrow unions hold at most 127"
        )));
    }
    Ok(())
}

/// Two decimals read one as the other must agree on precision and scale (the specification's
/// rule; a value would otherwise change its meaning).
fn check_decimals(
    w: Option<LogicalType>,
    r: Option<LogicalType>,
    path: &str,
) -> Result<(), PlanError> {
    match (w, r) {
        (
            Some(LogicalType::Decimal {
                precision: wp,
                scale: ws,
            }),
            Some(LogicalType::Decimal {
                precision: rp,
                scale: rs,
            }),
        ) if (wp, ws) != (rp, rs) => Err(PlanError::Incompatible {
            path: path.to_string(),
            reason: format!(
                "decimal({wp}, {ws}) in the writer's schema, decimal({rp}, {rs}) in the reader's: \
                 precision and scale must match"
            ),
        }),
        _ => Ok(()),
    }
}

fn promoted(promotion: Promotion, data_type: DataType) -> Mapped {
    let column = match data_type {
        DataType::Float32 => Column::Float32(Prim::new(DataType::Float32)),
        _ => Column::Float64(Prim::new(DataType::Float64)),
    };
    Mapped::new(
        Column::Promoted(Box::new(PromotedCol { promotion, column })),
        data_type,
    )
}

fn fixed(size: usize, logical: Option<LogicalType>) -> Mapped {
    match logical {
        Some(LogicalType::Decimal { precision, scale }) if precision <= 76 => {
            decimal(DecimalSource::Fixed(size), precision, scale)
        }
        Some(LogicalType::Uuid) => {
            let mut m = Mapped::new(
                Column::Fixed(FixedCol::new(16, DataType::FixedSizeBinary(16))),
                DataType::FixedSizeBinary(16),
            );
            m.uuid = true;
            m
        }
        Some(LogicalType::Duration) => Mapped::new(
            Column::Duration(Vec::new()),
            DataType::Interval(IntervalUnit::MonthDayNano),
        ),
        _ => {
            let dt = DataType::FixedSizeBinary(size as i32);
            Mapped::new(Column::Fixed(FixedCol::new(size, dt.clone())), dt)
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn decimal(source: DecimalSource, precision: usize, scale: usize) -> Mapped {
    // The schema parser guarantees 0 < precision and scale <= precision; the caller checked
    // precision <= 76 (Arrow's Decimal256 limit).
    let (p, s) = (precision as u8, scale as i8);
    let dt = if precision <= 38 {
        DataType::Decimal128(p, s)
    } else {
        DataType::Decimal256(p, s)
    };
    Mapped::new(Column::Decimal(DecimalCol::new(source, p, s)), dt)
}

fn primitive(p: Primitive, logical: Option<LogicalType>, view: bool) -> Mapped {
    let utc = || Some(Arc::<str>::from("+00:00"));
    let long = |dt: DataType| Mapped::new(Column::Int64(Prim::new(dt.clone())), dt);
    let int = |dt: DataType| Mapped::new(Column::Int32(Prim::new(dt.clone())), dt);
    match (p, logical) {
        (Primitive::Null, _) => {
            let mut m = Mapped::new(Column::Null(0), DataType::Null);
            m.nullable = true;
            m
        }
        (Primitive::Boolean, _) => {
            Mapped::new(Column::Boolean(Default::default()), DataType::Boolean)
        }
        (Primitive::Int, Some(LogicalType::Date)) => int(DataType::Date32),
        (Primitive::Int, Some(LogicalType::TimeMillis)) => {
            int(DataType::Time32(TimeUnit::Millisecond))
        }
        (Primitive::Int, _) => int(DataType::Int32),
        (Primitive::Long, Some(LogicalType::TimeMicros)) => {
            long(DataType::Time64(TimeUnit::Microsecond))
        }
        (Primitive::Long, Some(LogicalType::TimestampMillis)) => {
            long(DataType::Timestamp(TimeUnit::Millisecond, utc()))
        }
        (Primitive::Long, Some(LogicalType::TimestampMicros)) => {
            long(DataType::Timestamp(TimeUnit::Microsecond, utc()))
        }
        (Primitive::Long, Some(LogicalType::TimestampNanos)) => {
            long(DataType::Timestamp(TimeUnit::Nanosecond, utc()))
        }
        (Primitive::Long, Some(LogicalType::LocalTimestampMillis)) => {
            long(DataType::Timestamp(TimeUnit::Millisecond, None))
        }
        (Primitive::Long, Some(LogicalType::LocalTimestampMicros)) => {
            long(DataType::Timestamp(TimeUnit::Microsecond, None))
        }
        (Primitive::Long, Some(LogicalType::LocalTimestampNanos)) => {
            long(DataType::Timestamp(TimeUnit::Nanosecond, None))
        }
        (Primitive::Long, _) => long(DataType::Int64),
        (Primitive::Float, _) => Mapped::new(
            Column::Float32(Prim::new(DataType::Float32)),
            DataType::Float32,
        ),
        (Primitive::Double, _) => Mapped::new(
            Column::Float64(Prim::new(DataType::Float64)),
            DataType::Float64,
        ),
        (Primitive::Bytes, Some(LogicalType::Decimal { precision, scale })) if precision <= 76 => {
            decimal(DecimalSource::Bytes, precision, scale)
        }
        (Primitive::Bytes, _) => Mapped::new(
            Column::Bytes(BytesCol::new(BytesKind::Binary, view)),
            if view {
                DataType::BinaryView
            } else {
                DataType::Binary
            },
        ),
        (Primitive::String, Some(LogicalType::Uuid)) => {
            let mut m = Mapped::new(
                Column::UuidString(FixedCol::new(16, DataType::FixedSizeBinary(16))),
                DataType::FixedSizeBinary(16),
            );
            m.uuid = true;
            m
        }
        (Primitive::String, _) => Mapped::new(
            Column::Bytes(BytesCol::new(BytesKind::Utf8, view)),
            if view {
                DataType::Utf8View
            } else {
                DataType::Utf8
            },
        ),
    }
}
