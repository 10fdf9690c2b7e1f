//! Records: their fields matched writer to reader (by name or alias), skipped, defaulted or
//! reordered, and the root record of a schema.

use super::default::encode_default;
use super::projection::Proj;
use super::{join, Compiler};
use crate::decode::column::resolve::DefaultCol;
use crate::decode::column::{Column, StructCol};
use crate::decode::skip::Skip;
use crate::error::PlanError;
use crate::schema::{Field as RecordField, NamedDef, Node, Record, Schema};
use arrow_schema::{Field, Fields};
use serde_json::Value as Json;
use std::sync::Arc;

/// A record field as the compiler sees it (the root of a non-record schema is one field,
/// `value`).
#[derive(Clone, Copy)]
pub(super) struct Part<'a> {
    pub(super) name: &'a str,
    pub(super) ty: &'a Node,
    pub(super) aliases: &'a [String],
    pub(super) default: Option<&'a Json>,
}

impl<'a> Part<'a> {
    pub(super) fn of(field: &'a RecordField) -> Self {
        Part {
            name: &field.name,
            ty: &field.ty,
            aliases: &field.aliases,
            default: field.default.as_ref(),
        }
    }

    pub(super) fn value(ty: &'a Node) -> Self {
        Part {
            name: "value",
            ty,
            aliases: &[],
            default: None,
        }
    }
}

/// The compiled fields of one record.
pub(super) struct Body {
    pub(super) columns: Vec<Column>,
    pub(super) names: Vec<Arc<str>>,
    pub(super) fields: Fields,
    pub(super) order: Option<Vec<usize>>,
}

impl Body {
    pub(super) fn into_struct(self) -> StructCol {
        let s = StructCol::new(self.columns, self.names, self.fields);
        match self.order {
            Some(order) => s.with_order(order),
            None => s,
        }
    }
}

/// The record at the root of `schema`, if the root is a record.
pub(super) fn root_record(schema: &Schema) -> Option<(usize, &Record)> {
    match schema.root() {
        Node::Named(i) => match &schema.named(*i).def {
            NamedDef::Record(r) => Some((*i, r)),
            _ => None,
        },
        _ => None,
    }
}

impl Compiler<'_> {
    /// The columns of a record: the writer's fields in the writer's order (decoded, or skipped
    /// when the reader does not want them), then the reader's fields that the writer lacks
    /// (filled with defaults); the output is in the reader's order.
    pub(super) fn record_body(
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
}
