//! Column builders that exist only under schema resolution (a reader schema that differs from
//! the writer's): reader fields filled from their defaults, numeric promotions, and unions whose
//! branches map to the reader's schema differently than one to one. Enum symbol remapping and
//! reordered record fields live in [`EnumCol`](super::EnumCol) and
//! [`StructCol`](super::StructCol). Without a reader schema none of this is in a plan.

use super::Column;
use crate::decode::cursor::Cursor;
use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::{Kernel, Scalar};
use std::cell::Cell;
use std::sync::Arc;

/// Most values a zero-byte encoding may expand into per call (a block of empty records whose
/// reader fields take defaults): counts of zero-size items are otherwise only capped at
/// `i32::MAX`, which would let a tiny hostile block claim gigabytes.
const MAX_ZERO_SIZE_FILL: usize = 1 << 22;

/// A reader field the writer's schema does not have: every record gets the field's default,
/// decoded from its Avro encoding (made once, when the plan is compiled).
#[derive(Debug, Clone)]
pub(crate) struct DefaultCol {
    bytes: Arc<[u8]>,
    pub(crate) column: Column,
}

impl DefaultCol {
    pub(crate) fn new(bytes: Vec<u8>, column: Column) -> Self {
        DefaultCol {
            bytes: bytes.into(),
            column,
        }
    }

    /// Decode the default once into a scratch copy: whether it reads as the column's type
    /// (checked when the plan is compiled, so that decoding it cannot fail later, but for one
    /// bound: a default list of large `fixed` values repeated row after row reaches the 2 GiB
    /// a batch's list items may take beyond their input, `TooLarge(BatchValues)`).
    pub(crate) fn check(&self) -> Result<(), DecodeError> {
        self.clone().decode(Scalar)
    }

    /// Append the default once; reads nothing from the record data.
    pub(crate) fn decode<K: Kernel>(&mut self, k: K) -> Result<(), DecodeError> {
        let failed = Cell::new(false);
        let mut c = Cursor::new(&self.bytes, 0, k, &failed);
        self.column.decode(&mut c)
    }
}

/// How a writer value is read into a reader column of another type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promotion {
    /// The writer's value is the reader column's own encoding (int into long, string into
    /// bytes and back, equal types).
    Same,
    /// A writer `int` or `long` (a varint) into a reader `float`.
    LongToFloat32,
    /// A writer `int` or `long` (a varint) into a reader `double`.
    LongToFloat64,
    /// A writer `float` into a reader `double`.
    Float32ToFloat64,
    /// A writer time or timestamp (an `int` or `long`) into a reader `long` time or
    /// timestamp of a finer unit, or a writer `date` into a reader timestamp: the value times
    /// this factor (1,000 or 1,000,000; a day in the reader's unit for a date).
    Scale(i64),
    /// A writer time or timestamp into a reader time or timestamp of a coarser unit: the value
    /// divided by this divisor, rounded down (toward the past, as a clock shows it).
    Coarsen(i64),
}

impl Promotion {
    /// The fewest bytes of the writer's encoding.
    pub(crate) fn min_size(self) -> Option<usize> {
        match self {
            Promotion::Same => None,
            Promotion::LongToFloat32
            | Promotion::LongToFloat64
            | Promotion::Scale(_)
            | Promotion::Coarsen(_) => Some(1),
            Promotion::Float32ToFloat64 => Some(4),
        }
    }
}

/// A writer value promoted to the reader's numeric type (`int`/`long` → `float`/`double`,
/// `float` → `double`), appended to a plain reader column.
#[derive(Debug, Clone)]
pub(crate) struct PromotedCol {
    pub(crate) promotion: Promotion,
    pub(crate) column: Column,
}

/// Read one writer value into `column` according to `promotion`.
#[inline]
pub(crate) fn decode_promoted<K: Kernel>(
    column: &mut Column,
    promotion: Promotion,
    c: &mut Cursor<'_, K>,
) -> Result<(), DecodeError> {
    match (promotion, column) {
        (Promotion::Same, column) => column.decode(c)?,
        (Promotion::LongToFloat32, Column::Float32(p)) => {
            let v = c.long()?;
            p.values.push(v as f32);
        }
        (Promotion::LongToFloat64, Column::Float64(p)) => {
            let v = c.long()?;
            p.values.push(v as f64);
        }
        (Promotion::Float32ToFloat64, Column::Float64(p)) => {
            let v = c.f32()?;
            p.values.push(f64::from(v));
        }
        (Promotion::Scale(factor), Column::Int64(p)) => {
            let at = c.pos;
            let value = c.long()?;
            let Some(scaled) = value.checked_mul(factor) else {
                return Err(DecodeError::new(
                    DecodeErrorKind::TimeOverflow { value, factor },
                    at,
                ));
            };
            p.values.push(scaled);
        }
        (Promotion::Coarsen(divisor), Column::Int64(p)) => {
            let value = c.long()?;
            p.values.push(value.div_euclid(divisor));
        }
        (promotion, column) => {
            return Err(DecodeError::new(
                DecodeErrorKind::Internal(format!(
                    "promotion {promotion:?} into a {} column",
                    column.kind_name()
                )),
                c.pos,
            ))
        }
    }
    Ok(())
}

/// Where one branch of the writer's union goes in the reader's column.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A null of the reader's nullable column.
    Null,
    /// The reader's column itself (a reader union's only match, or the value of a nullable).
    Value(Promotion),
    /// Branch `i` of the reader's (dense) union.
    Branch(i8, Promotion),
    /// Nothing in the reader's schema: data in this branch is an error.
    Unresolved(Arc<str>),
}

/// A union in the writer's or the reader's schema (or both) whose branches do not map one to
/// one: each writer branch has a [`Target`] in the reader's column `out`, which is a
/// [`Column::Nullable`], a [`Column::Union`] or any plain column.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedUnion {
    /// Whether the writer wrote a union (a branch index precedes each value); if not,
    /// `targets` has one entry.
    pub(crate) read_index: bool,
    pub(crate) targets: Box<[Target]>,
    /// The fewest bytes of the writer's encoding.
    pub(crate) min_size: usize,
    pub(crate) out: Column,
}

impl ResolvedUnion {
    pub(crate) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let index = if self.read_index {
            c.branch(self.targets.len())?
        } else {
            0
        };
        let target = &self.targets[index];
        match (target, &mut self.out) {
            (Target::Null, Column::Nullable(n)) => n.push_null(),
            (Target::Value(p), Column::Nullable(n)) => {
                n.push_valid();
                decode_promoted(&mut n.child, *p, c)?;
            }
            (Target::Value(p), out) => decode_promoted(out, *p, c)?,
            (Target::Branch(b, p), Column::Union(u)) => {
                let child = u.push_branch(*b);
                decode_promoted(child, *p, c)?;
            }
            (Target::Unresolved(branch), _) => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnresolvedUnionBranch {
                        index: index as i64,
                        branch: branch.to_string(),
                    },
                    start,
                ))
            }
            (target, out) => {
                return Err(DecodeError::new(
                    DecodeErrorKind::Internal(format!(
                        "union target {target:?} into a {} column",
                        out.kind_name()
                    )),
                    start,
                ))
            }
        }
        Ok(())
    }
}

/// Append `n` values of a zero-byte encoding to a column that materializes something for them
/// (defaults, resolved unions): decode `n` times from no data.
pub(crate) fn fill_zero_size(column: &mut Column, n: usize) -> Result<(), DecodeError> {
    if n > MAX_ZERO_SIZE_FILL {
        return Err(DecodeError::new(
            DecodeErrorKind::TooLarge(Limit::ZeroSizeFill {
                count: n,
                max: MAX_ZERO_SIZE_FILL,
            }),
            0,
        ));
    }
    column.reserve(n, super::Room::PLAIN);
    let failed = Cell::new(false);
    let mut c = Cursor::new(&[], 0, Scalar, &failed);
    for _ in 0..n {
        column.decode(&mut c)?;
    }
    Ok(())
}
