//! Leaf types: the Arrow type and empty column of each primitive, logical type, fixed and
//! decimal, and the numeric promotions of schema resolution.

use crate::decode::column::resolve::{PromotedCol, Promotion};
use crate::decode::column::{
    BytesCol, BytesKind, Column, DecimalCol, DecimalSource, FixedCol, Prim,
};
use crate::error::PlanError;
use crate::schema::{LogicalType, Primitive};
use arrow_schema::extension::Uuid;
use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit};
use std::sync::Arc;

pub(super) struct Mapped {
    pub(super) column: Column,
    pub(super) data_type: DataType,
    pub(super) nullable: bool,
    pub(super) uuid: bool,
}

impl Mapped {
    pub(super) fn new(column: Column, data_type: DataType) -> Self {
        Mapped {
            column,
            data_type,
            nullable: false,
            uuid: false,
        }
    }

    pub(super) fn field(&self, name: &str) -> Field {
        let f = Field::new(name, self.data_type.clone(), self.nullable);
        if self.uuid {
            f.with_extension_type(Uuid)
        } else {
            f
        }
    }
}

/// How a writer primitive is read as a reader primitive, if it can be (the specification's
/// promotions: int → long, float, double; long → float, double; float → double; string ↔
/// bytes).
pub(super) fn promotion(w: Primitive, r: Primitive) -> Option<Promotion> {
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

/// How a writer primitive with logical type `wl` is read as a reader primitive with `rl`
/// whose plain types read each other as `plain` ([`promotion`]): as `plain` says, except a
/// time or timestamp read in another unit of the same kind (time, UTC timestamp, local
/// timestamp), whose values are converted to it: multiplied into a finer unit, divided
/// (rounding down) into a coarser one; and a `date` read as a timestamp, which becomes the
/// start of its day (days times the unit's day). (The specification resolves the underlying
/// types only, which would read milliseconds as microseconds, 1,000 times off, and 18,262 days
/// as 18.262 seconds.)
pub(super) fn with_time_scale(
    plain: Promotion,
    wl: Option<LogicalType>,
    rl: Option<LogicalType>,
) -> Promotion {
    let unit = |l: Option<LogicalType>| l?.time_unit();
    match (plain, unit(wl), unit(rl)) {
        (Promotion::Same, None, Some((rk, ru))) if wl == Some(LogicalType::Date) && rk != 0 => {
            Promotion::Scale(86_400 * 10i64.pow(ru))
        }
        (Promotion::Same, Some((wk, wu)), Some((rk, ru))) if wk == rk && ru > wu => {
            Promotion::Scale(10i64.pow(ru - wu))
        }
        (Promotion::Same | Promotion::Coarsen(_), Some((wk, wu)), Some((rk, ru)))
            if wk == rk && ru < wu =>
        {
            Promotion::Coarsen(10i64.pow(wu - ru))
        }
        (plain, ..) => plain,
    }
}

/// The reader's column of `reader`, fed by a writer value converted by `promotion`.
pub(super) fn scaled(promotion: Promotion, reader: Mapped) -> Mapped {
    Mapped::new(
        Column::Promoted(Box::new(PromotedCol {
            promotion,
            column: reader.column,
        })),
        reader.data_type,
    )
}

pub(super) fn promoted(promotion: Promotion, data_type: DataType) -> Mapped {
    let column = match data_type {
        DataType::Float32 => Column::Float32(Prim::new(DataType::Float32)),
        _ => Column::Float64(Prim::new(DataType::Float64)),
    };
    Mapped::new(
        Column::Promoted(Box::new(PromotedCol { promotion, column })),
        data_type,
    )
}

/// Two decimals read one as the other must agree on precision and scale (the specification's
/// rule; a value would otherwise change its meaning).
pub(super) fn check_decimals(
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

pub(super) fn fixed(size: usize, logical: Option<LogicalType>) -> Mapped {
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

pub(super) fn decimal(source: DecimalSource, precision: usize, scale: usize) -> Mapped {
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

pub(super) fn primitive(p: Primitive, logical: Option<LogicalType>, view: bool) -> Mapped {
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
