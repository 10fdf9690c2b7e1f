//! The errors a program matches on: each failure comes as its own variant, carrying the file,
//! the limit or the name involved, not only a sentence.

use super::*;
use avrow::{Codec, Error, ReaderBuilder, WriterBuilder};
use avrow_engine::{DecodeErrorKind, Limit, PlanError};

fn open_err(bytes: Vec<u8>) -> Error {
    match ReaderBuilder::new().read_bytes(bytes) {
        Ok(reader) => match reader.into_iter().find_map(Result::err) {
            Some(e) => e,
            None => panic!("the input was read without an error"),
        },
        Err(e) => e,
    }
}

#[test]
fn an_unknown_codec_names_the_file_and_the_codec() {
    let mut f = header_with(&[
        ("avro.schema", long_rec().as_bytes()),
        ("avro.codec", b"lz5-turbo"),
    ]);
    f.extend_from_slice(&block(1, &varint(5)));
    match open_err(f) {
        e @ Error::UnknownCodec { .. } => {
            assert_eq!(e.file(), Some("<bytes>"), "{e}");
            let Error::UnknownCodec { codec, .. } = e else {
                unreachable!()
            };
            assert_eq!(codec, "lz5-turbo");
        }
        other => panic!("expected UnknownCodec, got {other:?}"),
    }
}

#[test]
fn a_record_count_beyond_the_data_carries_the_limit() {
    let schema = rec(r#"{"name":"a","type":"double"},{"name":"b","type":"double"}"#);
    match open_err(file(&schema, &[block(3000, &[0u8; 64])])) {
        Error::Decode { source, block, .. } => {
            assert_eq!(block, 0);
            assert_eq!(
                source.kind(),
                &DecodeErrorKind::TooLarge(Limit::Records {
                    count: 3000,
                    bytes: 64,
                    min_record_size: 16
                })
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn an_array_count_beyond_the_data_carries_the_limit() {
    let schema = rec(r#"{"name":"xs","type":{"type":"array","items":"long"}}"#);
    let mut data = varint(1_000_000);
    data.extend([2, 4, 6, 0]);
    match open_err(file(&schema, &[block(1, &data)])) {
        Error::Decode { source, .. } => match source.kind() {
            DecodeErrorKind::TooLarge(Limit::Items {
                count,
                min_item_size,
                ..
            }) => {
                assert_eq!((*count, *min_item_size), (1_000_000, 1));
                assert!(source.field_path().contains("xs"), "{source}");
            }
            other => panic!("expected an item limit, got {other:?}"),
        },
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn a_union_of_too_many_branches_names_its_path_and_size() {
    let branches: Vec<String> = (0..128)
        .map(|i| format!(r#"{{"type":"record","name":"R{i}","fields":[]}}"#))
        .collect();
    let schema = rec(&format!(
        r#"{{"name":"u","type":[{}]}}"#,
        branches.join(",")
    ));
    match open_err(file(&schema, &[])) {
        Error::Plan {
            source: PlanError::TooManyBranches { path, branches },
            ..
        } => {
            assert_eq!(branches, 128);
            assert!(path.contains('u'), "{path}");
        }
        other => panic!("expected TooManyBranches, got {other:?}"),
    }
}

#[test]
fn a_range_of_a_stream_names_the_stream() {
    let f = file(&long_rec(), &[block(1, &varint(5))]);
    let Err(e) = ReaderBuilder::new()
        .with_range(0..10)
        .read_stream(std::io::Cursor::new(f))
    else {
        panic!("a stream cannot be read by range")
    };
    assert!(matches!(e, Error::NotSeekable { .. }), "{e:?}");
    assert!(e.file().is_some(), "{e}");
}

#[test]
fn a_level_the_codec_does_not_take_carries_its_levels() {
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Int64, false),
    ]));
    let Err(e) = WriterBuilder::new(schema.clone())
        .with_codec(Codec::Deflate)
        .with_level(99)
        .build(Vec::new())
    else {
        panic!("deflate has no level 99")
    };
    match e {
        Error::Level {
            codec,
            level,
            levels,
        } => {
            assert_eq!((codec, level, levels), (Codec::Deflate, 99, Some(0..=12)));
        }
        other => panic!("expected Level, got {other:?}"),
    }
    let Err(e) = WriterBuilder::new(schema)
        .with_codec(Codec::Snappy)
        .with_level(1)
        .build(Vec::new())
    else {
        panic!("snappy has no levels")
    };
    assert!(matches!(e, Error::Level { levels: None, .. }), "{e:?}: {e}");
    assert!(e.to_string().contains("has no compression levels"), "{e}");
}

#[test]
fn an_arrow_schema_that_derives_no_valid_avro_schema_is_a_plan_error_not_a_bug() {
    use arrow::datatypes::{DataType, Field, Schema};
    // Two columns of one name: Arrow allows it, an Avro record does not.
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, false),
        Field::new("x", DataType::Utf8, false),
    ]));
    let Err(e) = WriterBuilder::new(schema).build(Vec::new()) else {
        panic!("a record cannot have two fields named x")
    };
    match e {
        Error::Plan {
            source: PlanError::Underivable { reason, schema },
            ..
        } => {
            assert!(schema.contains("\"x\""), "{schema}");
            assert!(!reason.is_empty());
        }
        other => panic!("expected Underivable, got {other:?}"),
    }
}
