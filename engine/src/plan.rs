//! Compiling an Avro schema into a decode plan: the Arrow schema (the Avro → Arrow mapping), and
//! a tree of empty column builders that every decoder clones. Projection and the unrolling of
//! recursive types happen here, once, so decoding never looks at the schema again.

use crate::decode::column::{
    BytesCol, BytesKind, Column, DecimalCol, DecimalSource, EnumCol, FixedCol, ListCol, MapCol,
    NullableCol, Prim, StructCol, TooDeep, UnionCol,
};
use crate::decode::skip::Skip;
use crate::error::PlanError;
use crate::schema::{LogicalType, NamedDef, Node, Primitive, Schema};
use arrow_schema::extension::Uuid;
use arrow_schema::{DataType, Field, Fields, IntervalUnit, TimeUnit, UnionFields};
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

/// The metadata key under which the writer schema is kept in the Arrow schema.
pub const AVRO_SCHEMA_KEY: &str = "avro.schema";

/// Largest plan (columns plus skip nodes) accepted; recursive types unrolled too deep exceed it.
const MAX_PLAN_NODES: usize = 1 << 20;
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
}

struct Compiler<'a> {
    schema: &'a Schema,
    opts: &'a DecodeOptions,
    /// Named types being expanded on the current path (for recursion).
    stack: Vec<usize>,
    nodes: usize,
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

pub(crate) fn compile(schema: &Schema, opts: &DecodeOptions) -> Result<Compiled, PlanError> {
    let mut c = Compiler {
        schema,
        opts,
        stack: Vec::new(),
        nodes: 0,
    };
    let proj = opts.projection.as_deref().map(Proj::from_paths);
    let root = schema.root();
    let (columns, names, fields) = match root {
        Node::Named(i) if matches!(schema.named(*i).def, NamedDef::Record(_)) => {
            c.stack.push(*i);
            let NamedDef::Record(r) = &schema.named(*i).def else {
                unreachable!()
            };
            let parts: Vec<(&str, &Node)> =
                r.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect();
            c.record_fields(&parts, proj.as_ref(), "", 0)?
        }
        other => c.record_fields(&[("value", other)], proj.as_ref(), "", 0)?,
    };
    Ok(Compiled {
        root: StructCol::new(columns, names, fields.clone()),
        fields,
    })
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

    #[allow(clippy::type_complexity)]
    fn record_fields(
        &mut self,
        parts: &[(&str, &Node)],
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<(Vec<Column>, Vec<Arc<str>>, Fields), PlanError> {
        let proj = proj.filter(|p| !p.is_everything());
        if let Some(p) = proj {
            for name in p.children.keys() {
                if !parts.iter().any(|(n, _)| n == name) {
                    return Err(PlanError::UnknownField {
                        path: join(path, name),
                        hint: String::new(),
                    });
                }
            }
        }
        let mut columns = Vec::with_capacity(parts.len());
        let mut names = Vec::with_capacity(parts.len());
        let mut fields = Vec::with_capacity(parts.len());
        for (name, ty) in parts {
            names.push(Arc::<str>::from(*name));
            let child_proj = match proj.map(|p| p.child(name)) {
                None => None,
                Some(Some(child)) => child,
                Some(None) => {
                    columns.push(Column::Skip(self.skip(ty, depth + 1)?));
                    continue;
                }
            };
            let mapped = self.map(ty, child_proj.as_ref(), &join(path, name), depth + 1)?;
            fields.push(mapped.field(name));
            columns.push(mapped.column);
        }
        Ok((columns, names, Fields::from(fields)))
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

    fn map(
        &mut self,
        node: &Node,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        self.count_node(depth)?;
        let view = self.opts.utf8_view;
        match node {
            Node::Primitive(p, logical) => {
                self.no_subfields(proj, path, p.name())?;
                Ok(primitive(*p, *logical, view))
            }
            Node::Array(items) => {
                let item = self.map(items, proj, path, depth + 1)?;
                let field = Arc::new(item.field("item"));
                Ok(Mapped::new(
                    Column::List(Box::new(ListCol::new(item.column, field.clone()))),
                    DataType::List(field),
                ))
            }
            Node::Map(values) => {
                let value = self.map(values, proj, path, depth + 1)?;
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
            Node::Union(branches) => self.union(branches, proj, path, depth),
            Node::Named(i) => self.named(*i, proj, path, depth),
        }
    }

    fn union(
        &mut self,
        branches: &[Node],
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let is_null = |n: &Node| matches!(n, Node::Primitive(Primitive::Null, _));
        if let [a, b] = branches {
            if is_null(a) != is_null(b) {
                let (null_index, value) = if is_null(a) { (0, b) } else { (1, a) };
                let mut inner = self.map(value, proj, path, depth + 1)?;
                inner.column =
                    Column::Nullable(Box::new(NullableCol::new(null_index, inner.column)));
                inner.nullable = true;
                return Ok(inner);
            }
        }
        if proj.is_some_and(|p| !p.children.is_empty()) {
            return Err(PlanError::UnknownField {
                path: path.to_string(),
                hint: " (projection into the branches of a union is not supported; select the whole field)".into(),
            });
        }
        if branches.len() > 127 {
            return Err(PlanError::Unsupported(format!(
                "union at {path} has {} branches; Arrow unions hold at most 127",
                branches.len()
            )));
        }
        let mut children = Vec::with_capacity(branches.len());
        let mut fields = Vec::with_capacity(branches.len());
        for b in branches {
            let mapped = self.map(b, None, path, depth + 1)?;
            fields.push(mapped.field(&self.branch_name(b)));
            children.push(mapped.column);
        }
        let union_fields = UnionFields::try_new(0..branches.len() as i8, fields)
            .map_err(|e| PlanError::Unsupported(format!("union at {path}: {e}")))?;
        let mut m = Mapped::new(
            Column::Union(Box::new(UnionCol::new(children, union_fields.clone()))),
            DataType::Union(union_fields, arrow_schema::UnionMode::Dense),
        );
        m.nullable = branches.iter().any(is_null);
        Ok(m)
    }

    fn branch_name(&self, node: &Node) -> String {
        match node {
            Node::Primitive(p, _) => p.name().to_string(),
            Node::Array(_) => "array".to_string(),
            Node::Map(_) => "map".to_string(),
            Node::Union(_) => "union".to_string(),
            Node::Named(i) => self.schema.named(*i).name.full(),
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

    fn named(
        &mut self,
        index: usize,
        proj: Option<&Proj>,
        path: &str,
        depth: usize,
    ) -> Result<Mapped, PlanError> {
        let named = self.schema.named(index);
        match &named.def {
            NamedDef::Record(r) => {
                if !self.enter(index) {
                    let mut m = Mapped::new(
                        Column::TooDeep(TooDeep::new(
                            &named.name.full(),
                            self.opts.max_recursion_depth,
                        )),
                        DataType::Null,
                    );
                    m.nullable = true;
                    return Ok(m);
                }
                let parts: Vec<(&str, &Node)> =
                    r.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect();
                let result = self.record_fields(&parts, proj, path, depth);
                self.stack.pop();
                let (columns, names, fields) = result?;
                Ok(Mapped::new(
                    Column::Struct(StructCol::new(columns, names, fields.clone())),
                    DataType::Struct(fields),
                ))
            }
            NamedDef::Enum(e) => {
                self.no_subfields(proj, path, "an enum")?;
                Ok(Mapped::new(
                    Column::Enum(EnumCol::new(&e.symbols)),
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                ))
            }
            NamedDef::Fixed(f) => {
                self.no_subfields(proj, path, "a fixed")?;
                let size = f.size;
                Ok(match f.logical {
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
                })
            }
        }
    }

    /// How to skip a projected-away value of `node`.
    fn skip(&mut self, node: &Node, depth: usize) -> Result<Skip, PlanError> {
        self.count_node(depth)?;
        Ok(match node {
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
            Node::Named(i) => match &self.schema.named(*i).def {
                NamedDef::Enum(_) => Skip::Varint,
                NamedDef::Fixed(f) => Skip::Bytes(f.size),
                NamedDef::Record(r) => {
                    if !self.enter(*i) {
                        return Ok(Skip::TooDeep(
                            self.schema.named(*i).name.full().into(),
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
