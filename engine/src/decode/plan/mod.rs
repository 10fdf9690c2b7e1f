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
mod projection;
mod record;
mod types;
mod union;

use crate::decode::column::resolve::Promotion;
use crate::decode::column::{Column, EnumCol, EnumRemap, ListCol, MapCol, StructCol, TooDeep};
use crate::decode::skip::Skip;
use crate::error::PlanError;
use crate::schema::{NamedDef, Node, Primitive, Schema};
use arrow_schema::{DataType, Field, Fields};
use projection::Proj;
use record::{root_record, Part};
use std::sync::Arc;
use types::{
    check_decimals, fixed, primitive, promoted, promotion, scaled, with_time_scale, Mapped,
};

/// Options that shape the decode plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Columns to decode: top-level field names or dotted paths through records, array items,
    /// map values and nullable unions (`"lines.sku"`). `None` decodes everything.
    pub projection: Option<Vec<String>>,
    /// How many times a recursive named type may nest inside itself before the mapping stops;
    /// data nested deeper is an error. At least 1 (0 reads as 1): every record is read once.
    pub max_recursion_depth: usize,
    /// Map `string`/`bytes` to `Utf8View`/`BinaryView` instead of `Utf8`/`Binary`.
    pub utf8_view: bool,
    /// Where `max_recursion_depth` levels of a recursive type exceed what a plan holds (a type
    /// that refers to itself twice doubles its columns at each level), the columns and nodes
    /// the type unrolled as deep as fits may take: [`DecodeOptions::DEFAULT_UNROLLED_COLUMNS`]
    /// by default, so that a tree read at the default depth stays a table a reader can use.
    /// Readers that are given a depth set it to `usize::MAX` (as many as a plan holds, 65,536),
    /// so that asking for more levels never gives fewer.
    pub max_unrolled_columns: usize,
}

impl DecodeOptions {
    /// The default of [`DecodeOptions::max_unrolled_columns`].
    pub const DEFAULT_UNROLLED_COLUMNS: usize = 1 << 12;
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            projection: None,
            max_recursion_depth: 16,
            utf8_view: false,
            max_unrolled_columns: Self::DEFAULT_UNROLLED_COLUMNS,
        }
    }
}

/// Largest plan (columns plus skip nodes) accepted; recursive types unrolled too deep exceed it.
/// A type that refers to itself twice (a tree with array and map children) doubles at every
/// level, so the cap, not the depth, bounds what a small schema in a hostile header costs to
/// compile: 2^16 nodes take milliseconds and a few MB, and real schemas stay far below.
const MAX_PLAN_NODES: usize = 1 << 16;
/// Deepest type nesting accepted.
const MAX_NESTING: usize = 512;

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
    /// The most nodes this compile may make ([`MAX_PLAN_NODES`], or less while fitting the
    /// recursion depth).
    budget: usize,
    /// How deep each named type of the writer's schema is unrolled (by index;
    /// `fallback_depth` where there is none).
    depths: &'a [usize],
    /// The depth of types `depths` does not give (the options' depth, or the shallowest of
    /// `depths`: types of the reader's schema compiled on their own).
    fallback_depth: usize,
    /// Build skips with the variants that check values (the streaming check's tree).
    strict: bool,
}

/// Compile the plan for data written with `writer`, read as `reader` (or as itself), its
/// recursive types unrolled `opts.max_recursion_depth` levels deep; where that many levels
/// exceed what a plan holds (a type that refers to itself twice, a tree with a nullable child
/// and an array of children, doubles at each level: 2^16 columns at the default depth; a list
/// unrolled a thousand times nests too deep), as deep as fits in
/// [`DecodeOptions::max_unrolled_columns`] columns and nodes (or, where not even that, in a whole plan), each type that still fits unrolled
/// deeper on its own (a linked list beside a tree keeps the full depth). Data nested deeper
/// than its type's depth is an error naming that depth.
pub(crate) fn compile(
    writer: &Schema,
    reader: Option<&Schema>,
    opts: &DecodeOptions,
) -> Result<Compiled, PlanError> {
    // Every record is read once, recursive or not: a depth of 0 (which would refuse every
    // nested record, recursive or not) reads as 1.
    let at_least_once;
    let opts = if opts.max_recursion_depth == 0 {
        at_least_once = DecodeOptions {
            max_recursion_depth: 1,
            ..opts.clone()
        };
        &at_least_once
    } else {
        opts
    };
    // A projected column has the type it has in the whole table: the depth is the one the
    // whole schema fits, not the (deeper) one the projection alone would.
    if opts.projection.is_some() && (recursive(writer) || reader.is_some_and(recursive)) {
        let whole = DecodeOptions {
            projection: None,
            ..opts.clone()
        };
        if let Some((depths, _)) = fitted(writer, reader, &whole) {
            return compile_at(writer, reader, opts, &depths, MAX_PLAN_NODES);
        }
    }
    match fitted(writer, reader, opts) {
        Some((_, compiled)) => compiled,
        None => compile_at(writer, reader, opts, &[], MAX_PLAN_NODES),
    }
}

/// The plan at `opts.max_recursion_depth` or, where too big, at the deepest that fits (and
/// the depth of each named type); `None` where nothing fits.
fn fitted(
    writer: &Schema,
    reader: Option<&Schema>,
    opts: &DecodeOptions,
) -> Option<(Vec<usize>, Result<Compiled, PlanError>)> {
    let first = compile_at(writer, reader, opts, &[], MAX_PLAN_NODES);
    if !too_big(&first) {
        return Some((Vec::new(), first));
    }
    let budget = opts.max_unrolled_columns.clamp(1, MAX_PLAN_NODES);
    fit(writer, reader, opts, budget)
        .or_else(|| (budget < MAX_PLAN_NODES).then(|| fit(writer, reader, opts, MAX_PLAN_NODES))?)
}

/// Whether a named type of `schema` contains itself (only then does the depth matter).
fn recursive(schema: &Schema) -> bool {
    recursive_types(schema).next().is_some()
}

/// The named types of `schema` that contain themselves.
fn recursive_types(schema: &Schema) -> impl Iterator<Item = usize> + '_ {
    fn reaches(schema: &Schema, node: &Node, target: usize, seen: &mut Vec<bool>) -> bool {
        match node {
            Node::Primitive(..) => false,
            Node::Array(inner) | Node::Map(inner) => reaches(schema, inner, target, seen),
            Node::Union(branches) => branches.iter().any(|b| reaches(schema, b, target, seen)),
            Node::Named(i) if *i == target => true,
            Node::Named(i) => {
                if std::mem::replace(&mut seen[*i], true) {
                    return false;
                }
                match &schema.named(*i).def {
                    NamedDef::Record(r) => r
                        .fields
                        .iter()
                        .any(|f| reaches(schema, &f.ty, target, seen)),
                    _ => false,
                }
            }
        }
    }
    (0..schema.named_types().len()).filter(move |&t| match &schema.named(t).def {
        NamedDef::Record(r) => {
            let mut seen = vec![false; schema.named_types().len()];
            r.fields
                .iter()
                .any(|f| reaches(schema, &f.ty, t, &mut seen))
        }
        _ => false,
    })
}

/// Recursive types [`fit`] tries to unroll deeper one by one, at most (each try is a compile).
const MAX_DEEPENED_TYPES: usize = 64;

fn too_big(compiled: &Result<Compiled, PlanError>) -> bool {
    matches!(
        compiled,
        Err(PlanError::TooManyNodes { .. } | PlanError::TooDeep { .. })
    )
}

/// The plan at the deepest recursion below `opts.max_recursion_depth` that fits in `budget`
/// nodes, found by bisection (a shallower unrolling never has more nodes, nor nests deeper),
/// then each recursive type unrolled to the full depth on its own where the plan still fits
/// (a type that refers to itself once takes a few columns a level, one that branches
/// doubles); the plan and each named type's depth, `None` if not even one level fits.
fn fit(
    writer: &Schema,
    reader: Option<&Schema>,
    opts: &DecodeOptions,
    budget: usize,
) -> Option<(Vec<usize>, Result<Compiled, PlanError>)> {
    let types = writer.named_types().len();
    let (mut fits, mut lo, mut hi) = (None, 1, opts.max_recursion_depth.saturating_sub(1));
    while lo <= hi {
        let depth = lo + (hi - lo) / 2;
        let depths = vec![depth; types];
        let compiled = compile_at(writer, reader, opts, &depths, budget);
        if too_big(&compiled) {
            hi = depth - 1;
        } else {
            fits = Some((depths, compiled));
            lo = depth + 1;
        }
    }
    let (mut depths, mut compiled) = fits?;
    for t in recursive_types(writer).take(MAX_DEEPENED_TYPES) {
        let mut deeper = depths.clone();
        deeper[t] = opts.max_recursion_depth;
        let tried = compile_at(writer, reader, opts, &deeper, budget);
        if !too_big(&tried) {
            (depths, compiled) = (deeper, tried);
        }
    }
    Some((depths, compiled))
}

/// [`compile`] with each named type unrolled `depths[type]` deep (`opts.max_recursion_depth`
/// past the end of `depths`), in at most `budget` nodes.
fn compile_at(
    writer: &Schema,
    reader: Option<&Schema>,
    opts: &DecodeOptions,
    depths: &[usize],
    budget: usize,
) -> Result<Compiled, PlanError> {
    let mut c = Compiler {
        w: writer,
        r: reader.unwrap_or(writer),
        opts,
        stack: Vec::new(),
        nodes: 0,
        budget,
        depths,
        fallback_depth: depths
            .iter()
            .copied()
            .min()
            .unwrap_or(opts.max_recursion_depth),
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
    c.budget = MAX_PLAN_NODES;
    c.stack.clear();
    c.strict = true;
    let record_skip = c.skip(c.w.root(), 0).ok();
    Ok(Compiled {
        root: body.into_struct(),
        fields,
        record_skip,
    })
}

impl Compiler<'_> {
    fn count_node(&mut self, depth: usize) -> Result<(), PlanError> {
        self.nodes += 1;
        if self.nodes > self.budget {
            return Err(PlanError::TooManyNodes {
                limit: self.budget,
                max_recursion_depth: self.opts.max_recursion_depth,
            });
        }
        if depth > MAX_NESTING {
            return Err(PlanError::TooDeep { limit: MAX_NESTING });
        }
        Ok(())
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
                Ok(match with_time_scale(promotion, *wl, *rl) {
                    Promotion::Same => primitive(*rp, *rl, view),
                    p @ (Promotion::Scale(_) | Promotion::Coarsen(_)) => {
                        scaled(p, primitive(*rp, *rl, view))
                    }
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
                        Column::TooDeep(TooDeep::new(&rn.name.full(), self.depth_of(wi))),
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

    /// How deep the writer's named type `index` is unrolled.
    fn depth_of(&self, index: usize) -> usize {
        self.depths
            .get(index)
            .copied()
            .unwrap_or(self.fallback_depth)
    }

    fn enter(&mut self, index: usize) -> bool {
        let depth = self.stack.iter().filter(|&&x| x == index).count();
        if depth >= self.depth_of(index) {
            return false;
        }
        self.stack.push(index);
        true
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
            Node::Union(branches) => Skip::union(
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
                            self.depth_of(*i),
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
            budget: self.budget,
            depths: &[],
            fallback_depth: self.fallback_depth,
            strict: false,
        };
        let mapped = sub.map(node, node, proj, path, depth);
        self.nodes = sub.nodes;
        mapped
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

    /// Named types of the same kind and full name.
    fn same_full_name(&self, w: &Node, r: &Node) -> bool {
        match (w, r) {
            (Node::Named(wi), Node::Named(ri)) => {
                let (w, r) = (self.w.named(*wi), self.r.named(*ri));
                std::mem::discriminant(&w.def) == std::mem::discriminant(&r.def) && w.name == r.name
            }
            _ => false,
        }
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
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn is_null(n: &Node) -> bool {
    matches!(n, Node::Primitive(Primitive::Null, _))
}
