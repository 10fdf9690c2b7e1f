//! Pairing an Arrow data type with the Avro type it is written as: the [`Plan`] tree, built
//! and checked once per writer. What cannot be paired is a [`PlanError`] naming the column
//! path; what depends on the values (ranges, symbols, precision) is checked as they are
//! written (`write.rs`).

use crate::error::PlanError;
use crate::schema::{LogicalType, NamedDef, Node, Primitive, Schema};
use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit, UnionMode};
use std::collections::HashMap;
use std::sync::Arc;

/// How an integer column's values become the Avro `int` or `long` written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// As they are.
    One,
    /// Multiplied (seconds → milliseconds): overflow is an error.
    Mul(i64),
    /// Divided, which must be exact (Date64's milliseconds → days).
    Div(i64),
}

/// What a column of strings or bytes is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bin {
    Utf8,
    LargeUtf8,
    Utf8View,
    Binary,
    LargeBinary,
    BinaryView,
}

impl Bin {
    fn of(t: &DataType) -> Option<Bin> {
        Some(match t {
            DataType::Utf8 => Bin::Utf8,
            DataType::LargeUtf8 => Bin::LargeUtf8,
            DataType::Utf8View => Bin::Utf8View,
            DataType::Binary => Bin::Binary,
            DataType::LargeBinary => Bin::LargeBinary,
            DataType::BinaryView => Bin::BinaryView,
            _ => return None,
        })
    }

    fn is_text(self) -> bool {
        matches!(self, Bin::Utf8 | Bin::LargeUtf8 | Bin::Utf8View)
    }
}

/// How one Arrow value is written. Built by [`Builder::field`].
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Avro `null` (nothing written).
    Null,
    /// A `Null` column of array items or map values whose Avro type is not `null`: there
    /// must be no item (each one is a null the Avro type cannot hold).
    Absent,
    Boolean,
    /// An integer column as `int` (`int32`: values checked to fit) or `long`.
    Int {
        scale: Scale,
        int32: bool,
    },
    /// A time of day as `time-millis` (`int32`) or `time-micros`: an [`Plan::Int`] whose
    /// scaled values must lie in `0..day` (a reader refuses others: a time outside a day).
    Time {
        scale: Scale,
        int32: bool,
        day: i64,
    },
    /// Float16/Float32/Float64 as `float` (`double: false`) or `double`.
    Float {
        double: bool,
    },
    /// Strings or bytes as `string` (text checked where the column is binary) or `bytes`.
    Bytes {
        bin: Bin,
        check_utf8: bool,
    },
    /// A dictionary of strings as `string`, `bytes` or (with `symbols`) an `enum`.
    Dictionary {
        value: Box<Plan>,
    },
    /// Strings as an enum symbol index.
    Enum {
        bin: Bin,
        symbols: Arc<HashMap<String, u32>>,
    },
    /// FixedSizeBinary of the fixed type's size as `fixed`.
    Fixed,
    /// FixedSizeBinary(16) as a `uuid` string (8-4-4-4-12 hexadecimal).
    UuidString,
    /// Strings as a `uuid` string: each checked to be one (8-4-4-4-12 hexadecimal digits), as
    /// readers check it.
    UuidText {
        bin: Bin,
    },
    /// A decimal column as `bytes` (minimal two's complement) or `fixed(size)` (sign-extended).
    Decimal {
        precision: u8,
        fixed: Option<usize>,
    },
    /// An interval column as `duration` (fixed 12: months, days, milliseconds).
    Duration {
        unit: IntervalUnit,
    },
    /// A struct (or the batch) as a record: for each Avro field in order, the Arrow child
    /// index and its plan.
    Record {
        fields: Vec<(usize, Arc<str>, Plan)>,
    },
    /// A list as an array.
    Array {
        item: Box<Plan>,
    },
    /// A map as a map (keys are strings).
    Map {
        key: Bin,
        value: Box<Plan>,
    },
    /// A column written as one branch of an Avro union, and the null branch where it is null
    /// (`null: None`: the column must have no nulls).
    Branch {
        index: u32,
        null: Option<u32>,
        value: Box<Plan>,
    },
    /// An Arrow union as an Avro union: for each Arrow type id, the branch and its plan.
    Union {
        dense: bool,
        /// Indexed by type id (0..=127).
        branches: Vec<Option<(u32, Plan)>>,
        /// The Avro union's null branch, written for a null in the selected child.
        null: Option<u32>,
    },
}

/// The builder's context: the Avro schema and the column path, for errors.
pub(crate) struct Builder<'a> {
    pub(crate) schema: &'a Schema,
    /// Named types being expanded on the current path, to refuse endless recursion (an Arrow
    /// type is finite, so this only guards a malformed pairing).
    depth: usize,
}

const MAX_DEPTH: usize = 256;

impl<'a> Builder<'a> {
    pub(crate) fn new(schema: &'a Schema) -> Self {
        Builder { schema, depth: 0 }
    }

    fn fail(path: &str, what: impl Into<String>) -> PlanError {
        PlanError::Unwritable {
            path: path.to_string(),
            reason: what.into(),
        }
    }

    fn describe(&self, node: &Node) -> String {
        match node {
            Node::Primitive(p, Some(l)) => format!("{} ({l:?})", p.name()),
            Node::Primitive(p, None) => p.name().to_string(),
            Node::Array(_) => "array".into(),
            Node::Map(_) => "map".into(),
            Node::Union(_) => "union".into(),
            Node::Named(i) => {
                let n = self.schema.named(*i);
                let kind = match &n.def {
                    NamedDef::Record(_) => "record",
                    NamedDef::Enum(_) => "enum",
                    NamedDef::Fixed(_) => "fixed",
                };
                format!("{kind} {}", n.name)
            }
        }
    }

    /// The plan for an Arrow field written as `node`, at `path`.
    pub(crate) fn field(
        &mut self,
        field: &Field,
        node: &Node,
        path: &str,
    ) -> Result<Plan, PlanError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Self::fail(path, "types nested too deeply"));
        }
        let plan = self.value(field.data_type(), field.is_nullable(), node, path);
        self.depth -= 1;
        plan
    }

    fn value(
        &mut self,
        t: &DataType,
        nullable: bool,
        node: &Node,
        path: &str,
    ) -> Result<Plan, PlanError> {
        // Nulls in a column written as a type without a null branch are refused when
        // written: a nullable Arrow field may hold none.
        if let Node::Union(branches) = node {
            return self.union(t, nullable, branches, path);
        }
        self.plain(t, node, path)
    }

    fn union(
        &mut self,
        t: &DataType,
        _nullable: bool,
        branches: &[Node],
        path: &str,
    ) -> Result<Plan, PlanError> {
        let null = branches
            .iter()
            .position(|b| matches!(b, Node::Primitive(Primitive::Null, _)))
            .map(|i| i as u32);
        if let DataType::Union(fields, mode) = t {
            let mut table: Vec<Option<(u32, Plan)>> = vec![None; 128];
            let mut used = vec![false; branches.len()];
            // Where the derived schema puts the children that are not `Null`: in order, after
            // a leading `null` branch.
            let mut derived = usize::from(null == Some(0));
            for (type_id, f) in fields.iter() {
                // The named type the child is named for (avrow names a union's children by
                // their types' full names: records of the same fields must not take each
                // other's branches), else the branch of the child's own Avro type (`long`
                // for Int64: a looser fit such as `int` must not take it), else where the
                // derived schema puts it, else the branch of the same index as its type id
                // (a union avrow read: type id = branch index), else the first branch the
                // child fits.
                let named = |full: bool| {
                    (0..branches.len()).find(|&i| match &branches[i] {
                        Node::Named(n) => {
                            let name = &self.schema.named(*n).name;
                            if full {
                                &name.full() == f.name()
                            } else {
                                name.name() == f.name()
                            }
                        }
                        _ => false,
                    })
                };
                // A full name first: `A` must not take `x.A`'s branch when `A` is there too.
                let by_name = named(true).or_else(|| named(false));
                let natural =
                    (0..branches.len()).find(|&i| self.natural(f.data_type(), &branches[i]));
                let position = if matches!(f.data_type(), DataType::Null) {
                    None
                } else {
                    derived += 1;
                    Some(derived - 1)
                };
                let by_id = usize::try_from(type_id).ok();
                let candidates = by_name
                    .into_iter()
                    .chain(natural)
                    .chain(position)
                    .chain(by_id)
                    .chain(0..branches.len())
                    .filter(|&i| i < branches.len() && !used[i]);
                let mut found = None;
                for i in candidates {
                    if let Ok(p) =
                        self.plain(f.data_type(), &branches[i], &format!("{path}.{}", f.name()))
                    {
                        found = Some((i, p));
                        break;
                    }
                }
                let Some((i, p)) = found else {
                    return Err(Self::fail(
                        path,
                        format!(
                            "union child {} ({}) matches no branch of the Avro union",
                            f.name(),
                            f.data_type()
                        ),
                    ));
                };
                used[i] = true;
                table[type_id as u8 as usize & 127] = Some((i as u32, p));
            }
            return Ok(Plan::Union {
                dense: *mode == UnionMode::Dense,
                branches: table,
                null,
            });
        }
        if matches!(t, DataType::Null) {
            // Every value is the union's `null` branch: its index, then nothing.
            return match null {
                Some(index) => Ok(Plan::Branch {
                    index,
                    null,
                    value: Box::new(Plan::Null),
                }),
                None => Err(Self::fail(path, "a Null column needs a union with null")),
            };
        }
        // A plain column: the branch of its own Avro type (the one a derived schema gives it:
        // strings as `string` in `["bytes", "string"]`, Int64 as `long` in `["int", "long"]`),
        // else the first non-null branch it fits.
        let natural = match t {
            // A dictionary: the branch of its values' type, else an enum (as avrow reads
            // enums).
            DataType::Dictionary(_, value) => branches
                .iter()
                .position(|b| self.natural(value, b))
                .or_else(|| {
                    branches.iter().position(|b| {
                        matches!(b, Node::Named(i)
                            if matches!(self.schema.named(*i).def, NamedDef::Enum(_)))
                    })
                }),
            _ => branches.iter().position(|b| self.natural(t, b)),
        };
        let order = natural.into_iter().chain(0..branches.len());
        for i in order {
            let b = &branches[i];
            if matches!(b, Node::Primitive(Primitive::Null, _)) {
                continue;
            }
            if let Ok(value) = self.plain(t, b, path) {
                return Ok(Plan::Branch {
                    index: i as u32,
                    null,
                    value: Box::new(value),
                });
            }
        }
        Err(Self::fail(
            path,
            format!("{t} matches no branch of the Avro union"),
        ))
    }

    /// Whether `node` is the Avro type a column of `t` is written as when nothing says
    /// otherwise (as `derive` gives it): its branch of choice in a union.
    fn natural(&self, t: &DataType, node: &Node) -> bool {
        use DataType as D;
        let want = match t {
            D::Boolean => Primitive::Boolean,
            D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => Primitive::Int,
            D::Int64 | D::UInt32 | D::UInt64 => Primitive::Long,
            D::Float16 | D::Float32 => Primitive::Float,
            D::Float64 => Primitive::Double,
            D::Utf8 | D::LargeUtf8 | D::Utf8View => Primitive::String,
            D::Binary | D::LargeBinary | D::BinaryView => Primitive::Bytes,
            _ => return false,
        };
        matches!(node, Node::Primitive(p, None) if *p == want)
    }

    /// The plan for a non-union Avro type.
    fn plain(&mut self, t: &DataType, node: &Node, path: &str) -> Result<Plan, PlanError> {
        let mismatch = || {
            Self::fail(
                path,
                format!(
                    "Arrow {t} cannot be written as Avro {}",
                    self.describe(node)
                ),
            )
        };
        if let DataType::Dictionary(key, value) = t {
            if !key.is_dictionary_key_type() {
                return Err(mismatch());
            }
            if let Node::Named(i) = node {
                if let NamedDef::Enum(e) = &self.schema.named(*i).def {
                    let bin = Bin::of(value)
                        .filter(|b| b.is_text())
                        .ok_or_else(mismatch)?;
                    return Ok(Plan::Dictionary {
                        value: Box::new(Plan::Enum {
                            bin,
                            symbols: symbols(&e.symbols),
                        }),
                    });
                }
            }
            let value = self.plain(value, node, path)?;
            return Ok(Plan::Dictionary {
                value: Box::new(value),
            });
        }
        match node {
            Node::Union(branches) => self.union(t, true, branches, path),
            Node::Primitive(p, logical) => {
                self.primitive(t, *p, *logical, path).ok_or_else(mismatch)
            }
            Node::Array(item) => match t {
                DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                    let item = self.items(f, item, &format!("{path}[]"))?;
                    Ok(Plan::Array {
                        item: Box::new(item),
                    })
                }
                _ => Err(mismatch()),
            },
            Node::Map(value) => match t {
                DataType::Map(entries, _) => {
                    let DataType::Struct(kv) = entries.data_type() else {
                        return Err(mismatch());
                    };
                    if kv.len() != 2 {
                        return Err(mismatch());
                    }
                    let key = Bin::of(kv[0].data_type())
                        .filter(|b| b.is_text())
                        .ok_or_else(|| Self::fail(path, "map keys must be strings"))?;
                    let value = self.items(&kv[1], value, &format!("{path}{{}}"))?;
                    Ok(Plan::Map {
                        key,
                        value: Box::new(value),
                    })
                }
                _ => Err(mismatch()),
            },
            Node::Named(i) => {
                let named = self.schema.named(*i);
                match &named.def {
                    NamedDef::Record(r) => {
                        let DataType::Struct(children) = t else {
                            return Err(mismatch());
                        };
                        let mut fields = Vec::with_capacity(r.fields.len());
                        for rf in &r.fields {
                            let at = if path.is_empty() {
                                rf.name.clone()
                            } else {
                                format!("{path}.{}", rf.name)
                            };
                            let Some((ci, child)) = children.find(&rf.name) else {
                                return Err(Self::fail(
                                    &at,
                                    "the Avro record has this field, the Arrow struct does not",
                                ));
                            };
                            let plan = self.field(child, &rf.ty, &at)?;
                            fields.push((ci, Arc::from(rf.name.as_str()), plan));
                        }
                        if children.len() > r.fields.len() {
                            let extra = children
                                .iter()
                                .find(|c| !r.fields.iter().any(|f| f.name == *c.name()))
                                .map(|c| c.name().clone())
                                .unwrap_or_default();
                            return Err(Self::fail(
                                path,
                                format!("the Arrow struct has a field {extra:?} the Avro record does not"),
                            ));
                        }
                        Ok(Plan::Record { fields })
                    }
                    NamedDef::Enum(e) => match Bin::of(t) {
                        Some(bin) if bin.is_text() => Ok(Plan::Enum {
                            bin,
                            symbols: symbols(&e.symbols),
                        }),
                        _ => Err(mismatch()),
                    },
                    NamedDef::Fixed(f) => self.fixed(t, f.size, f.logical).ok_or_else(mismatch),
                }
            }
        }
    }

    /// The plan of an array's items or a map's values. A `Null` column there whose Avro type
    /// has no null is [`Plan::Absent`]: the items of the innermost level a reader unrolled a
    /// recursive type to (a tree's children at the depth limit, always empty), so that such a
    /// table is written with the recursive schema it was read with.
    fn items(&mut self, f: &Field, node: &Node, path: &str) -> Result<Plan, PlanError> {
        let plan = self.field(f, node, path);
        match plan {
            Err(_) if matches!(f.data_type(), DataType::Null) => Ok(Plan::Absent),
            plan => plan,
        }
    }

    fn fixed(&self, t: &DataType, size: usize, logical: Option<LogicalType>) -> Option<Plan> {
        match (t, logical) {
            // Values are checked against the Avro precision as they are written.
            (
                DataType::Decimal32(_, s)
                | DataType::Decimal64(_, s)
                | DataType::Decimal128(_, s)
                | DataType::Decimal256(_, s),
                Some(LogicalType::Decimal { precision, scale }),
            ) if *s as i64 == scale as i64 => Some(Plan::Decimal {
                precision: precision.min(255) as u8,
                fixed: Some(size),
            }),
            (DataType::Interval(unit), Some(LogicalType::Duration)) if size == 12 => {
                Some(Plan::Duration { unit: *unit })
            }
            (DataType::FixedSizeBinary(n), _) if *n as usize == size => Some(Plan::Fixed),
            _ => None,
        }
    }

    fn primitive(
        &self,
        t: &DataType,
        p: Primitive,
        logical: Option<LogicalType>,
        _path: &str,
    ) -> Option<Plan> {
        use DataType as D;
        use LogicalType as L;
        let int = |int32: bool, scale: Scale| Some(Plan::Int { scale, int32 });
        let time = |int32: bool, scale: Scale, day: i64| Some(Plan::Time { scale, int32, day });
        match (p, logical) {
            (Primitive::Null, _) => matches!(t, D::Null).then_some(Plan::Null),
            (Primitive::Boolean, _) => matches!(t, D::Boolean).then_some(Plan::Boolean),
            (Primitive::Int, Some(L::Date)) => match t {
                D::Date32 => int(true, Scale::One),
                D::Date64 => int(true, Scale::Div(86_400_000)),
                _ => None,
            },
            (Primitive::Int, Some(L::TimeMillis)) => match t {
                D::Time32(TimeUnit::Millisecond) => time(true, Scale::One, 86_400_000),
                D::Time32(TimeUnit::Second) => time(true, Scale::Mul(1000), 86_400_000),
                _ => None,
            },
            (Primitive::Long, Some(L::TimeMicros)) => match t {
                D::Time64(TimeUnit::Microsecond) => time(false, Scale::One, 86_400_000_000),
                _ => None,
            },
            (
                Primitive::Long,
                Some(
                    l @ (L::TimestampMillis
                    | L::TimestampMicros
                    | L::TimestampNanos
                    | L::LocalTimestampMillis
                    | L::LocalTimestampMicros
                    | L::LocalTimestampNanos),
                ),
            ) => {
                let D::Timestamp(unit, tz) = t else {
                    return None;
                };
                let local = matches!(
                    l,
                    L::LocalTimestampMillis | L::LocalTimestampMicros | L::LocalTimestampNanos
                );
                if local == tz.is_some() {
                    return None;
                }
                let want = match l {
                    L::TimestampMillis | L::LocalTimestampMillis => TimeUnit::Millisecond,
                    L::TimestampMicros | L::LocalTimestampMicros => TimeUnit::Microsecond,
                    _ => TimeUnit::Nanosecond,
                };
                let scale = match (unit, want) {
                    (a, b) if *a == b => Scale::One,
                    (TimeUnit::Second, TimeUnit::Millisecond) => Scale::Mul(1000),
                    _ => return None,
                };
                int(false, scale)
            }
            (Primitive::Int, _) => match t {
                D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => int(true, Scale::One),
                D::Int64 | D::UInt32 | D::UInt64 => int(true, Scale::One),
                _ => None,
            },
            (Primitive::Long, _) => match t {
                D::Int8
                | D::Int16
                | D::Int32
                | D::Int64
                | D::UInt8
                | D::UInt16
                | D::UInt32
                | D::UInt64 => int(false, Scale::One),
                D::Time64(TimeUnit::Nanosecond) | D::Duration(_) => int(false, Scale::One),
                _ => None,
            },
            (Primitive::Float, _) => match t {
                D::Float16 | D::Float32 => Some(Plan::Float { double: false }),
                _ => None,
            },
            (Primitive::Double, _) => match t {
                D::Float16 | D::Float32 | D::Float64 => Some(Plan::Float { double: true }),
                _ => None,
            },
            (Primitive::String, Some(L::Uuid)) => match t {
                D::FixedSizeBinary(16) => Some(Plan::UuidString),
                _ => Bin::of(t)
                    .filter(|b| b.is_text())
                    .map(|bin| Plan::UuidText { bin }),
            },
            (Primitive::Bytes, Some(L::Decimal { precision, scale })) => match t {
                D::Decimal32(_, s)
                | D::Decimal64(_, s)
                | D::Decimal128(_, s)
                | D::Decimal256(_, s)
                    if *s as i64 == scale as i64 =>
                {
                    Some(Plan::Decimal {
                        precision: precision.min(255) as u8,
                        fixed: None,
                    })
                }
                _ => None,
            },
            (Primitive::String, _) => Bin::of(t).map(|bin| Plan::Bytes {
                bin,
                check_utf8: !bin.is_text(),
            }),
            (Primitive::Bytes, _) => Bin::of(t).map(|bin| Plan::Bytes {
                bin,
                check_utf8: false,
            }),
        }
    }
}

fn symbols(symbols: &[String]) -> Arc<HashMap<String, u32>> {
    Arc::new(
        symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect(),
    )
}
