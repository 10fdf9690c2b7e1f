//! Unions: nullable pairs, dense Arrow unions, and the resolution of writer branches to reader
//! branches.

use super::projection::Proj;
use super::types::{check_decimals, promotion, with_time_scale, Mapped};
use super::{is_null, Compiler};
use crate::decode::column::resolve::{Promotion, ResolvedUnion, Target};
use crate::decode::column::{Column, NullableCol, UnionCol};
use crate::error::PlanError;
use crate::schema::{Node, Primitive};
use arrow_schema::{DataType, UnionFields};

/// `Some((null branch, value branch))` for a two-branch union with one `null`.
pub(super) fn nullable_shape<N: std::borrow::Borrow<Node>>(
    branches: &[N],
) -> Option<(usize, usize)> {
    let is_null = |n: &N| matches!(n.borrow(), Node::Primitive(Primitive::Null, _));
    match branches {
        [a, b] if is_null(a) && !is_null(b) => Some((0, 1)),
        [a, b] if !is_null(a) && is_null(b) => Some((1, 0)),
        _ => None,
    }
}

impl Compiler<'_> {
    /// The reader's union branch for a writer value of type `w`: for a named type the branch
    /// of its full name, else the first of the same kind (a named type matching by short name
    /// or alias), else the first that a promotion reaches. (By full name first: a union may
    /// hold `a.X` and `b.X`, each its own branch, as Java's resolver picks them.)
    pub(super) fn pick_branch<N: std::borrow::Borrow<Node>>(
        &self,
        w: &Node,
        branches: &[N],
    ) -> Option<usize> {
        branches
            .iter()
            .position(|r| self.same_full_name(w, r.borrow()))
            .or_else(|| branches.iter().position(|r| self.same_kind(w, r.borrow())))
            .or_else(|| {
                let Node::Primitive(wp, _) = w else {
                    return None;
                };
                branches.iter().position(|r| {
                    matches!(r.borrow(), Node::Primitive(rp, _) if promotion(*wp, *rp).is_some())
                })
            })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn union_to_union(
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
    pub(super) fn dense_union<'n>(
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
            .map_err(|e| PlanError::Internal(format!("union at {path}: {e}")))?;
        let mut m = Mapped::new(
            Column::Union(Box::new(UnionCol::new(children, union_fields.clone()))),
            DataType::Union(union_fields, arrow_schema::UnionMode::Dense),
        );
        m.nullable = readers.into_iter().any(is_null);
        Ok(m)
    }

    /// A writer value that is not a union, read as a reader union.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn single_to_union(
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
    pub(super) fn resolved_union(
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
                            return Err(PlanError::AmbiguousBranch {
                                path: path.to_string(),
                                branch: Self::describe(self.r, readers[j]),
                            });
                        };
                        check_decimals(*wl, *rl, path)?;
                        let plain = promotion(*wp, *rp)
                            .ok_or_else(|| self.mismatch(path, writers[i], readers[j]))?;
                        promotions[i] = with_time_scale(plain, *wl, *rl);
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
    pub(super) fn branch_name(&self, node: &Node) -> String {
        match node {
            Node::Primitive(p, _) => p.name().to_string(),
            Node::Array(_) => "array".to_string(),
            Node::Map(_) => "map".to_string(),
            Node::Union(_) => "union".to_string(),
            Node::Named(i) => self.r.named(*i).name.full(),
        }
    }
}

pub(super) fn check_union_size(branches: usize, path: &str) -> Result<(), PlanError> {
    if branches > 127 {
        return Err(PlanError::TooManyBranches {
            path: path.to_string(),
            branches,
        });
    }
    Ok(())
}
