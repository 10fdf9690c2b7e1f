//! Avro's Arrow columns as Parquet stores them: [`avrow::parquet_compat`]'s mapping, and the
//! Parquet schema this writer gives it ([`parquet_schema`]: durations annotated as
//! `INTERVAL`).

pub use avrow::parquet_compat::*;

use anyhow::Result;
use std::sync::Arc;

/// The Parquet schema of `mapping`, with the duration columns annotated as `INTERVAL`.
///
/// # Errors
/// The schema does not convert.
pub fn parquet_schema(
    mapping: &Mapping,
    converter: parquet::arrow::ArrowSchemaConverter<'_>,
) -> Result<Option<parquet::schema::types::SchemaDescriptor>> {
    use parquet::basic::ConvertedType;
    use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
    let Some(marked) = &mapping.marked else {
        return Ok(None);
    };
    let descriptor = converter.convert(marked)?;
    fn rebuild(t: &TypePtr) -> Result<TypePtr> {
        let info = t.get_basic_info();
        let id = info.has_id().then(|| info.id());
        match t.as_ref() {
            Type::PrimitiveType {
                physical_type,
                type_length,
                ..
            } if id.is_some_and(|id| id >= DURATION_ID_BASE) => Ok(Arc::new(
                Type::primitive_type_builder(info.name(), *physical_type)
                    .with_repetition(info.repetition())
                    .with_length(*type_length)
                    .with_converted_type(ConvertedType::INTERVAL)
                    .build()?,
            )),
            Type::PrimitiveType { .. } => Ok(t.clone()),
            Type::GroupType { fields, .. } => {
                let fields = fields.iter().map(rebuild).collect::<Result<Vec<_>>>()?;
                let mut builder = Type::group_type_builder(info.name())
                    .with_fields(fields)
                    .with_converted_type(info.converted_type())
                    .with_logical_type(info.logical_type_ref().cloned())
                    .with_id(id);
                if info.has_repetition() {
                    builder = builder.with_repetition(info.repetition());
                }
                Ok(Arc::new(builder.build()?))
            }
        }
    }
    let root = rebuild(&descriptor.root_schema_ptr())?;
    Ok(Some(SchemaDescriptor::new(root)))
}
