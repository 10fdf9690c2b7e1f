//! Struct columns in SQL. Nested projection: which fields of a struct column a scan's
//! projection reads. A column used only through `get_field` chains (`s['a']['b']`, `s.a.b` in
//! SQL) is read as avrow's dotted paths (`s.a.b`), so the reader decodes only those fields;
//! the batch adapter gives the pruned struct the table's type back (the fields not read are
//! null, and nothing reads them). And a null struct's fields are null in the scan's batches
//! ([`with_struct_nulls`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, StructArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_plan::PhysicalExpr;

/// How a projection uses one top-level column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Use {
    /// As a whole.
    Whole,
    /// Only through these field paths (each non-empty, through structs only).
    Fields(Vec<Vec<String>>),
}

/// The table's type `table` of a column that a query uses only through `paths` (the field
/// names below the column, `["a", "b"]` for `s.a.b`): a struct keeps the fields on a path, in
/// the table's order, each cut the same way below, and whole where a path ends. The batch
/// adapter casts each file's read (cut to those paths where the file has them, else whole)
/// to it by name, so a file's narrower types (an `int` where another file has `long`) and
/// missing fields come out as the plan's `get_field` expects.
pub(crate) fn pruned_to(table: &DataType, paths: &[Vec<&str>]) -> DataType {
    if paths.iter().any(Vec::is_empty) {
        return table.clone();
    }
    match table {
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .filter_map(|f| {
                    let below: Vec<Vec<&str>> = paths
                        .iter()
                        .filter(|p| p[0] == f.name().as_str())
                        .map(|p| p[1..].to_vec())
                        .collect();
                    (!below.is_empty()).then(|| {
                        Arc::new(
                            f.as_ref()
                                .clone()
                                .with_data_type(pruned_to(f.data_type(), &below)),
                        )
                    })
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `read` with each map whose entries type differs from the table's (map values that are
/// records of another writer schema: a field added, an `int` now `long`) given the table's
/// entries type, and the same for maps inside structs and lists; `None` where there is none.
/// DataFusion's batch adapter casts structs by name through lists but not through maps
/// ("Cannot cast column 'm'"): [`cast_maps`] casts those maps' entries first.
pub(crate) fn maps_as_table(read: &Schema, table: &Schema) -> Option<Arc<Schema>> {
    let mut changed = false;
    let fields: Vec<_> = read
        .fields()
        .iter()
        .map(|r| match table.field_with_name(r.name()) {
            Ok(t) => match map_entries_as(r.data_type(), t.data_type()) {
                Some(dt) => {
                    changed = true;
                    Arc::new(r.as_ref().clone().with_data_type(dt))
                }
                None => Arc::clone(r),
            },
            Err(_) => Arc::clone(r),
        })
        .collect();
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, read.metadata().clone())))
}

/// [`maps_as_table`] for one type: `read`'s shape, its maps' entries of `table`'s type.
fn map_entries_as(read: &DataType, table: &DataType) -> Option<DataType> {
    match (read, table) {
        (DataType::Map(r, sorted), DataType::Map(t, _)) => {
            (r.data_type() != t.data_type()).then(|| DataType::Map(Arc::clone(t), *sorted))
        }
        (DataType::Struct(rs), DataType::Struct(ts)) => {
            let mut changed = false;
            let fields: Vec<_> = rs
                .iter()
                .map(|r| {
                    let t = ts.iter().find(|t| t.name() == r.name());
                    match t.and_then(|t| map_entries_as(r.data_type(), t.data_type())) {
                        Some(dt) => {
                            changed = true;
                            Arc::new(r.as_ref().clone().with_data_type(dt))
                        }
                        None => Arc::clone(r),
                    }
                })
                .collect();
            changed.then(|| DataType::Struct(fields.into()))
        }
        (DataType::List(r), DataType::List(t)) => map_entries_as(r.data_type(), t.data_type())
            .map(|dt| DataType::List(Arc::new(r.as_ref().clone().with_data_type(dt)))),
        (DataType::LargeList(r), DataType::LargeList(t)) => {
            map_entries_as(r.data_type(), t.data_type())
                .map(|dt| DataType::LargeList(Arc::new(r.as_ref().clone().with_data_type(dt))))
        }
        _ => None,
    }
}

/// `batch` with the columns of `schema` ([`maps_as_table`]'s): each map whose entries type
/// differs cast, its entries struct by name (missing fields null, numbers widened).
pub(crate) fn cast_maps(
    batch: &RecordBatch,
    schema: &Arc<Schema>,
) -> datafusion::common::Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| cast_map_entries(c, f.data_type()))
        .collect::<datafusion::common::Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )?)
}

/// `array` as `to`: records by field name (a field the array lacks is null), through lists
/// and maps (map values' records too, at any depth), anything else by DataFusion's cast.
fn cast_map_entries(array: &ArrayRef, to: &DataType) -> datafusion::common::Result<ArrayRef> {
    use arrow::array::{new_null_array, GenericListArray, MapArray, OffsetSizeTrait};
    fn list<O: OffsetSizeTrait>(
        array: &ArrayRef,
        to: &arrow::datatypes::FieldRef,
    ) -> datafusion::common::Result<ArrayRef> {
        let l = array.as_list::<O>();
        let values = cast_map_entries(l.values(), to.data_type())?;
        Ok(Arc::new(GenericListArray::<O>::try_new(
            Arc::clone(to),
            l.offsets().clone(),
            values,
            l.nulls().cloned(),
        )?))
    }
    if array.data_type() == to {
        return Ok(Arc::clone(array));
    }
    match (array.data_type(), to) {
        (DataType::Map(..), DataType::Map(entries, sorted)) => {
            let m = array.as_map();
            let cast = cast_map_entries(
                &(Arc::new(m.entries().clone()) as ArrayRef),
                entries.data_type(),
            )?;
            Ok(Arc::new(MapArray::try_new(
                Arc::clone(entries),
                m.offsets().clone(),
                cast.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?))
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let columns = fields
                .iter()
                .map(|f| match s.column_by_name(f.name()) {
                    Some(c) => cast_map_entries(c, f.data_type()),
                    None if f.is_nullable() => Ok(new_null_array(f.data_type(), s.len())),
                    None => Err(datafusion::common::DataFusionError::Execution(format!(
                        "field {} of a record is missing and cannot be null",
                        f.name()
                    ))),
                })
                .collect::<datafusion::common::Result<Vec<_>>>()?;
            Ok(Arc::new(StructArray::try_new_with_length(
                fields.clone(),
                columns,
                s.nulls().cloned(),
                s.len(),
            )?))
        }
        (DataType::List(_), DataType::List(item)) => list::<i32>(array, item),
        (DataType::LargeList(_), DataType::LargeList(item)) => list::<i64>(array, item),
        _ => datafusion::common::nested_struct::cast_column(
            array,
            to,
            &datafusion::common::format::DEFAULT_CAST_OPTIONS,
        ),
    }
}

/// The field-name path of `expr` if it is `get_field(... get_field(column, a) ..., z)` over a
/// column: `(column index, [a, ..., z])`.
fn field_path(expr: &Arc<dyn PhysicalExpr>) -> Option<(usize, Vec<String>)> {
    let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    if call.name() != "get_field" || call.args().len() != 2 {
        return None;
    }
    let name = match call.args()[1].downcast_ref::<Literal>()?.value() {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => s.clone(),
        _ => return None,
    };
    let base = &call.args()[0];
    if let Some(column) = base.downcast_ref::<Column>() {
        return Some((column.index(), vec![name]));
    }
    let (index, mut path) = field_path(base)?;
    path.push(name);
    Some((index, path))
}

fn visit(expr: &Arc<dyn PhysicalExpr>, uses: &mut BTreeMap<usize, Use>) {
    if let Some((index, path)) = field_path(expr) {
        match uses.entry(index).or_insert_with(|| Use::Fields(Vec::new())) {
            Use::Whole => {}
            Use::Fields(paths) => paths.push(path),
        }
        return;
    }
    if let Some(column) = expr.downcast_ref::<Column>() {
        uses.insert(column.index(), Use::Whole);
        return;
    }
    for child in expr.children() {
        visit(child, uses);
    }
}

/// Does `path` lead through struct fields of `data_type` (not through lists or maps, where
/// `get_field` means something else or avrow's paths would prune elements)?
pub(crate) fn through_structs(mut data_type: &DataType, path: &[String]) -> bool {
    for name in path {
        let DataType::Struct(fields) = data_type else {
            return false;
        };
        match fields.iter().find(|f| f.name() == name) {
            Some(f) => data_type = f.data_type(),
            None => return false,
        }
    }
    true
}

/// For each column of `schema` that `exprs` read only through struct field paths, those
/// paths as avrow projections (`column.a.b`); columns read whole are absent.
pub(crate) fn field_projections<'a>(
    exprs: impl IntoIterator<Item = &'a Arc<dyn PhysicalExpr>>,
    schema: &Schema,
) -> BTreeMap<String, Vec<String>> {
    let mut uses = BTreeMap::new();
    for expr in exprs {
        visit(expr, &mut uses);
    }
    let mut out = BTreeMap::new();
    for (index, used) in uses {
        let (Use::Fields(paths), Some(field)) = (used, schema.fields().get(index)) else {
            continue;
        };
        let dotted = |p: &Vec<String>| p.iter().all(|n| !n.contains('.') && !n.is_empty());
        if field.name().contains('.')
            || paths.is_empty()
            || !paths
                .iter()
                .all(|p| dotted(p) && through_structs(field.data_type(), p))
        {
            continue;
        }
        let mut projections: Vec<String> = paths
            .iter()
            .map(|p| format!("{}.{}", field.name(), p.join(".")))
            .collect();
        projections.sort();
        projections.dedup();
        out.insert(field.name().clone(), projections);
    }
    out
}

/// Whether `schema` has a struct column ([`with_struct_nulls`] changes nothing otherwise).
pub(crate) fn has_structs(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| holds_struct(f.data_type()))
}

/// Whether `data_type` is a struct or holds one (in a list, a map or a union).
fn holds_struct(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(_) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_struct(f.data_type()),
        DataType::Union(fields, _) => fields.iter().any(|(_, f)| holds_struct(f.data_type())),
        DataType::Dictionary(_, v) => holds_struct(v),
        _ => false,
    }
}

/// `batch` with each struct's nulls added to its fields' (through structs nested in
/// structs, and structs inside lists, maps and unions), so that a field of a null struct is
/// null. The decoder leaves a placeholder there (0, an empty string), as Arrow allows, and
/// DataFusion 55's `get_field` returns the field's own values without the struct's nulls
/// (apache/datafusion#25120, fixed after 55): `s.a IS NULL` was false and `s.a` 0 for a null
/// `s`. Bitmap work only: a column with no null struct is returned as it is.
pub(crate) fn with_struct_nulls(batch: RecordBatch) -> datafusion::common::Result<RecordBatch> {
    let mut columns = batch.columns().to_vec();
    let mut changed = false;
    for column in &mut columns {
        if holds_struct(column.data_type()) {
            if let Some(pushed) = push_nulls(column, None)? {
                *column = pushed;
                changed = true;
            }
        }
    }
    if !changed {
        return Ok(batch);
    }
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

/// `array` null where `parent` (its struct's nulls) is, and the same for its own fields if
/// it is a struct; `None` if that changes nothing.
fn push_nulls(
    array: &ArrayRef,
    parent: Option<&NullBuffer>,
) -> datafusion::common::Result<Option<ArrayRef>> {
    let masked = match parent {
        // (Unions and the null type have no validity of their own to add to.)
        Some(parent)
            if !matches!(
                array.data_type(),
                DataType::Union(..) | DataType::Null | DataType::RunEndEncoded(..)
            ) && !array
                .logical_nulls()
                .is_some_and(|own| own.contains(parent)) =>
        {
            let null_parent = BooleanArray::new(!parent.inner(), None);
            Some(arrow::compute::nullif(array.as_ref(), &null_parent)?)
        }
        _ => None,
    };
    let current = masked.as_ref().unwrap_or(array);
    // Records inside lists, maps and unions: their own nulls go into their fields (a list's
    // or map's nulls need not: the entries of a null list are not reachable).
    let inner = match current.data_type() {
        DataType::Struct(_) => None,
        t if !holds_struct(t) => return Ok(masked),
        DataType::List(field) => list_pushed::<i32>(current, field)?,
        DataType::LargeList(field) => list_pushed::<i64>(current, field)?,
        DataType::FixedSizeList(field, size) => {
            let list = current.as_fixed_size_list();
            push_nulls(list.values(), None)?.map(|values| {
                Arc::new(arrow::array::FixedSizeListArray::new(
                    field.clone(),
                    *size,
                    values,
                    list.nulls().cloned(),
                )) as ArrayRef
            })
        }
        DataType::Map(field, sorted) => {
            let map = current.as_map();
            let entries: ArrayRef = Arc::new(map.entries().clone());
            match push_nulls(&entries, None)? {
                Some(entries) => Some(Arc::new(arrow::array::MapArray::try_new(
                    field.clone(),
                    map.offsets().clone(),
                    entries.as_struct().clone(),
                    map.nulls().cloned(),
                    *sorted,
                )?) as ArrayRef),
                None => None,
            }
        }
        DataType::Union(fields, _) => {
            let union = current.as_union();
            let mut children = Vec::with_capacity(fields.len());
            let mut changed = false;
            for (type_id, _) in fields.iter() {
                let child = union.child(type_id);
                match push_nulls(child, None)? {
                    Some(pushed) => {
                        children.push(pushed);
                        changed = true;
                    }
                    None => children.push(Arc::clone(child)),
                }
            }
            match changed {
                true => Some(Arc::new(arrow::array::UnionArray::try_new(
                    fields.clone(),
                    union.type_ids().clone(),
                    union.offsets().cloned(),
                    children,
                )?) as ArrayRef),
                false => None,
            }
        }
        // (Lists of other layouts and dictionaries are not what avrow decodes.)
        _ => return Ok(masked),
    };
    if let Some(inner) = inner {
        return Ok(Some(inner));
    }
    let DataType::Struct(fields) = current.data_type() else {
        return Ok(masked);
    };
    let s = current.as_struct();
    let nulls = s.nulls().filter(|n| n.null_count() > 0);
    let mut children = s.columns().to_vec();
    let mut changed = false;
    for child in &mut children {
        if let Some(pushed) = push_nulls(child, nulls)? {
            *child = pushed;
            changed = true;
        }
    }
    if !changed {
        return Ok(masked);
    }
    Ok(Some(Arc::new(StructArray::try_new(
        fields.clone(),
        children,
        s.nulls().cloned(),
    )?)))
}

/// [`push_nulls`] into a list's items, the list kept (its offsets and nulls), or `None` when
/// its items are unchanged.
fn list_pushed<O: arrow::array::OffsetSizeTrait>(
    current: &ArrayRef,
    field: &arrow::datatypes::FieldRef,
) -> datafusion::common::Result<Option<ArrayRef>> {
    let list = current.as_list::<O>();
    Ok(push_nulls(list.values(), None)?.map(|values| {
        Arc::new(arrow::array::GenericListArray::<O>::new(
            field.clone(),
            list.offsets().clone(),
            values,
            list.nulls().cloned(),
        )) as ArrayRef
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, Fields};
    use datafusion::common::config::ConfigOptions;
    use datafusion::functions::core::get_field;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::BinaryExpr;

    fn schema() -> Schema {
        let inner = Fields::from(vec![
            Field::new("x", DataType::Int64, true),
            Field::new("y", DataType::Utf8, true),
        ]);
        let s = Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Struct(inner), true),
        ]);
        Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", DataType::Struct(s), true),
            Field::new(
                "l",
                DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
                true,
            ),
        ])
    }

    fn col(name: &str, schema: &Schema) -> Arc<dyn PhysicalExpr> {
        Arc::new(Column::new_with_schema(name, schema).unwrap())
    }

    fn field(base: Arc<dyn PhysicalExpr>, name: &str, schema: &Schema) -> Arc<dyn PhysicalExpr> {
        let args = vec![base, Arc::new(Literal::new(ScalarValue::from(name))) as _];
        Arc::new(
            ScalarFunctionExpr::try_new(
                get_field(),
                args,
                schema,
                Arc::new(ConfigOptions::default()),
            )
            .unwrap(),
        )
    }

    #[test]
    fn struct_fields_become_paths_and_whole_uses_win() {
        let schema = schema();
        let sa = field(col("s", &schema), "a", &schema);
        let sbx = field(field(col("s", &schema), "b", &schema), "x", &schema);
        let got = field_projections([&sa, &sbx], &schema);
        assert_eq!(got["s"], ["s.a", "s.b.x"]);
        // `s` also used whole: no pruning.
        let whole = col("s", &schema);
        assert!(field_projections([&sa, &whole], &schema).is_empty());
        // Inside another expression.
        let sum: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            sa.clone(),
            Operator::Plus,
            col("id", &schema),
        ));
        let got = field_projections([&sum], &schema);
        assert_eq!(got.len(), 1);
        assert_eq!(got["s"], ["s.a"]);
        // Paths must lead through struct fields.
        let s = schema.field(1).data_type();
        assert!(through_structs(s, &["b".into(), "y".into()]));
        assert!(!through_structs(s, &["zz".into()]));
        assert!(!through_structs(
            schema.field(2).data_type(),
            &["item".into()]
        ));
    }
}
