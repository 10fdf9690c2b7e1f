//! NDJSON output, and JSON text for nested values (used by CSV output and `head --json`).
//!
//! arrow-json encodes every Arrow type avrow produces except unions; [`UnionEncoderFactory`]
//! fills that gap by writing the value of the selected branch, which is also how Avro's
//! readers (fastavro, the Java generic reader) present a union value. It also writes `uuid`
//! values (`FixedSizeBinary(16)`, extension `arrow.uuid`) in their text form
//! (`8-4-4-4-12` hexadecimal digits), not as 32 bare hexadecimal digits, and dates and
//! timestamps past the calendar as their raw count ([`super::temporal`]).

use super::BatchWriter;
use crate::output::Out;
use anyhow::Result;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, FieldRef};
use arrow::error::ArrowError;
use arrow::json::writer::{
    make_encoder, Encoder, EncoderFactory, EncoderOptions, LineDelimited, NullableEncoder,
    WriterBuilder,
};
use std::io::Write;
use std::sync::Arc;

/// The JSON writer builder avrow uses: explicit nulls, unions as their selected value.
pub fn builder() -> WriterBuilder {
    WriterBuilder::new()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(UnionEncoderFactory))
}

fn encoder_options() -> EncoderOptions {
    EncoderOptions::default()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(UnionEncoderFactory))
}

/// Encodes Arrow union arrays (dense or sparse) as the JSON value of the selected branch, and
/// uuids as strings in their text form.
#[derive(Debug)]
pub struct UnionEncoderFactory;

/// Whether `field` holds uuids (`FixedSizeBinary(16)` with the `arrow.uuid` extension name,
/// as avrow reads Avro's `uuid`).
pub fn is_uuid(field: &arrow::datatypes::Field) -> bool {
    matches!(field.data_type(), DataType::FixedSizeBinary(16))
        && field.extension_type_name() == Some("arrow.uuid")
}

/// The text form of the uuid `b` (16 bytes): `8-4-4-4-12` lowercase hexadecimal digits.
pub fn uuid_text(b: &[u8], out: &mut String) {
    use std::fmt::Write as _;
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{byte:02x}");
    }
}

/// A uuid column's values as strings in their text form.
pub fn uuid_strings(array: &ArrayRef) -> ArrayRef {
    let a = array.as_fixed_size_binary();
    let mut builder = StringBuilder::with_capacity(a.len(), a.len() * 36);
    let mut text = String::with_capacity(36);
    for value in a.iter() {
        match value {
            Some(b) => {
                text.clear();
                uuid_text(b, &mut text);
                builder.append_value(&text);
            }
            None => builder.append_null(),
        }
    }
    Arc::new(builder.finish())
}

impl EncoderFactory for UnionEncoderFactory {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        if super::temporal::has_unshowable(array) {
            // arrow-json's own encoder for the values a calendar shows (options without this
            // factory, which would be asked again).
            static PLAIN: std::sync::LazyLock<EncoderOptions> =
                std::sync::LazyLock::new(|| EncoderOptions::default().with_explicit_nulls(true));
            let shown = make_encoder(field, array, &PLAIN)?;
            return Ok(Some(NullableEncoder::new(
                Box::new(super::temporal::RawWhereUnshowable { array, shown }),
                array.logical_nulls(),
            )));
        }
        if is_uuid(field) {
            return Ok(Some(NullableEncoder::new(
                Box::new(UuidEncoder(array.as_fixed_size_binary(), String::new())),
                array.logical_nulls(),
            )));
        }
        let DataType::Union(fields, _) = array.data_type() else {
            return Ok(None);
        };
        let union = array.as_union();
        let mut branches: Vec<Option<NullableEncoder<'a>>> = Vec::new();
        for (type_id, field) in fields.iter() {
            let slot = usize::try_from(type_id)
                .map_err(|_| ArrowError::JsonError(format!("negative union type id {type_id}")))?;
            if branches.len() <= slot {
                branches.resize_with(slot + 1, || None);
            }
            branches[slot] = Some(make_encoder(field, union.child(type_id).as_ref(), options)?);
        }
        let nulls = union.logical_nulls();
        Ok(Some(NullableEncoder::new(
            Box::new(UnionEncoder { union, branches }),
            nulls,
        )))
    }
}

struct UuidEncoder<'a>(&'a arrow::array::FixedSizeBinaryArray, String);

impl Encoder for UuidEncoder<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        self.1.clear();
        uuid_text(self.0.value(idx), &mut self.1);
        out.push(b'"');
        out.extend_from_slice(self.1.as_bytes());
        out.push(b'"');
    }
}

struct UnionEncoder<'a> {
    union: &'a arrow::array::UnionArray,
    branches: Vec<Option<NullableEncoder<'a>>>,
}

impl Encoder for UnionEncoder<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let type_id = self.union.type_id(idx);
        let offset = self.union.value_offset(idx);
        match usize::try_from(type_id)
            .ok()
            .and_then(|slot| self.branches.get_mut(slot))
            .and_then(Option::as_mut)
        {
            Some(branch) if !branch.is_null(offset) => branch.encode(offset, out),
            _ => out.extend_from_slice(b"null"),
        }
    }
}

/// The values of `array` as JSON text, one string per row (null where the value is null).
///
/// # Errors
/// A type arrow-json cannot encode.
pub fn to_json_text(field: &FieldRef, array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let options = encoder_options();
    let mut encoder = make_encoder(field, array.as_ref(), &options)?;
    let mut builder = StringBuilder::with_capacity(array.len(), array.len() * 16);
    let mut buf = Vec::with_capacity(256);
    for i in 0..array.len() {
        if encoder.is_null(i) {
            builder.append_null();
        } else {
            buf.clear();
            encoder.encode(i, &mut buf);
            let text = std::str::from_utf8(&buf)
                .map_err(|e| ArrowError::JsonError(format!("non-UTF-8 JSON text: {e}")))?;
            builder.append_value(text);
        }
    }
    Ok(Arc::new(builder.finish()))
}

/// Newline-delimited JSON: one object per row, nulls written out.
pub struct NdjsonWriter(arrow::json::Writer<Out, LineDelimited>);

impl NdjsonWriter {
    /// Starts NDJSON output.
    pub fn new(out: Out) -> Self {
        NdjsonWriter(builder().build(out))
    }
}

impl BatchWriter for NdjsonWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        Ok(self.0.write(batch)?)
    }

    fn finish(mut self: Box<Self>) -> Result<Out> {
        self.0.finish()?;
        let mut out = self.0.into_inner();
        out.flush()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray, UnionArray};
    use arrow::buffer::ScalarBuffer;
    use arrow::datatypes::{Field, UnionFields, UnionMode};

    fn union() -> (FieldRef, ArrayRef) {
        let fields = UnionFields::try_new(
            [0, 1, 2],
            [
                Field::new("null", DataType::Null, true),
                Field::new("string", DataType::Utf8, false),
                Field::new("int", DataType::Int32, false),
            ],
        )
        .unwrap();
        let children: Vec<ArrayRef> = vec![
            Arc::new(arrow::array::NullArray::new(1)),
            Arc::new(StringArray::from(vec!["a\"b"])),
            Arc::new(Int32Array::from(vec![7, 8])),
        ];
        let type_ids = ScalarBuffer::from(vec![1i8, 2, 0, 2]);
        let offsets = ScalarBuffer::from(vec![0i32, 0, 0, 1]);
        let array = UnionArray::try_new(fields.clone(), type_ids, Some(offsets), children).unwrap();
        let field = Arc::new(Field::new(
            "u",
            DataType::Union(fields, UnionMode::Dense),
            false,
        ));
        (field, Arc::new(array))
    }

    #[test]
    fn unions_encode_as_their_branch_value() {
        let (field, array) = union();
        let text = to_json_text(&field, &array).unwrap();
        let text = text.as_string::<i32>();
        assert_eq!(text.value(0), r#""a\"b""#);
        assert_eq!(text.value(1), "7");
        assert!(text.is_null(2));
        assert_eq!(text.value(3), "8");
    }

    #[test]
    fn uuids_encode_in_their_text_form() {
        let bytes: Vec<u8> = (0u8..16).map(|b| b * 17).collect();
        let array: ArrayRef = Arc::new(
            arrow::array::FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                [Some(bytes.as_slice()), None].into_iter(),
                16,
            )
            .unwrap(),
        );
        let field = Arc::new(
            Field::new("u", DataType::FixedSizeBinary(16), true).with_metadata(
                [("ARROW:extension:name".to_string(), "arrow.uuid".to_string())].into(),
            ),
        );
        let text = to_json_text(&field, &array).unwrap();
        let text = text.as_string::<i32>();
        assert_eq!(text.value(0), r#""00112233-4455-6677-8899-aabbccddeeff""#);
        assert!(text.is_null(1));
        let strings = uuid_strings(&array);
        assert_eq!(
            strings.as_string::<i32>().value(0),
            "00112233-4455-6677-8899-aabbccddeeff"
        );
        // Fixed bytes without the extension stay as arrow-json writes them.
        let plain = Arc::new(Field::new("f", DataType::FixedSizeBinary(16), true));
        let text = to_json_text(&plain, &array).unwrap();
        assert_eq!(
            text.as_string::<i32>().value(0),
            r#""00112233445566778899aabbccddeeff""#
        );
    }

    #[test]
    fn ndjson_rows_hold_unions() {
        let (field, array) = union();
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![field]));
        let batch = RecordBatch::try_new(schema, vec![array]).unwrap();
        let mut out = Vec::new();
        let mut writer = builder().build::<_, LineDelimited>(&mut out);
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"u\":\"a\\\"b\"}\n{\"u\":7}\n{\"u\":null}\n{\"u\":8}\n"
        );
    }
}
