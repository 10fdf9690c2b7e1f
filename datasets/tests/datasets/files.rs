//! Every shape under every codec reads back with apache-avro; blocks, header and determinism.

use apache_avro::{Reader, Schema};
use avrow_datasets::{generate, rows_for_bytes, write, Codec, Error, GenOptions, Shape};

use crate::container;
use crate::{opts, read_all};

#[test]
fn every_shape_and_codec_reads_back() {
    for shape in Shape::ALL {
        let expected_schema = Schema::parse_str(shape.schema_json()).unwrap();
        for codec in Codec::ALL {
            let bytes = generate(shape, &opts(300, codec, 128)).unwrap();
            let reader = Reader::new(&bytes[..]).unwrap();
            assert_eq!(
                reader.writer_schema().canonical_form(),
                expected_schema.canonical_form(),
                "{shape}/{codec}: schema"
            );
            let rows = reader.collect::<Result<Vec<_>, _>>().unwrap().len();
            assert_eq!(rows, 300, "{shape}/{codec}: rows");

            let c = container::parse(&bytes);
            assert_eq!(c.block_rows, [128, 128, 44], "{shape}/{codec}: blocks");
            let codec_meta = c.meta("avro.codec");
            if codec == Codec::Null {
                assert_eq!(codec_meta, None);
            } else {
                assert_eq!(codec_meta, Some(codec.name().as_bytes()), "{shape}/{codec}");
            }
            assert_eq!(c.metadata[0].0, "avro.schema");
        }
    }
}

#[test]
fn decoded_records_are_the_named_shape() {
    for shape in Shape::ALL {
        let bytes = generate(shape, &opts(5, Codec::Null, 10)).unwrap();
        let reader = Reader::new(&bytes[..]).unwrap();
        match reader.writer_schema() {
            Schema::Record(r) => assert_eq!(r.name.fullname(None), shape.record_name()),
            other => panic!("{shape}: not a record schema: {other:?}"),
        }
        assert_eq!(read_all(&bytes).len(), 5);
    }
}

#[test]
fn same_seed_gives_identical_bytes() {
    for shape in Shape::ALL {
        for codec in [Codec::Null, Codec::Deflate, Codec::Zstandard] {
            let o = opts(700, codec, 256);
            let a = generate(shape, &o).unwrap();
            let b = generate(shape, &o).unwrap();
            assert!(a == b, "{shape}/{codec}: two runs differ");
        }
        let a = generate(shape, &opts(200, Codec::Null, 64)).unwrap();
        let other_seed = GenOptions {
            seed: 43,
            ..opts(200, Codec::Null, 64)
        };
        let c = generate(shape, &other_seed).unwrap();
        assert!(a != c, "{shape}: seeds 42 and 43 give the same file");
    }
}

#[test]
fn write_returns_the_byte_count_and_matches_generate() {
    for shape in Shape::ALL {
        let o = opts(321, Codec::Snappy, 100);
        let mut out = Vec::new();
        let n = write(shape, &o, &mut out).unwrap();
        assert_eq!(n, out.len() as u64);
        assert_eq!(out, generate(shape, &o).unwrap());
    }
}

#[test]
fn block_rows_controls_blocks() {
    let bytes = generate(Shape::Order, &opts(1000, Codec::Zstandard, 100)).unwrap();
    assert_eq!(container::parse(&bytes).block_rows, vec![100; 10]);

    let bytes = generate(Shape::Counters, &opts(1000, Codec::Null, 1)).unwrap();
    assert_eq!(container::parse(&bytes).block_rows, vec![1; 1000]);

    // Blocks far larger than apache-avro's default 16 kB threshold stay whole.
    let bytes = generate(Shape::Wide, &opts(5000, Codec::Null, 4096)).unwrap();
    assert_eq!(container::parse(&bytes).block_rows, [4096, 904]);

    let bytes = generate(Shape::Telemetry, &opts(10, Codec::Null, 4096)).unwrap();
    assert_eq!(container::parse(&bytes).block_rows, [10]);
}

#[test]
fn zero_rows_is_a_valid_empty_file() {
    for shape in Shape::ALL {
        let bytes = generate(shape, &opts(0, Codec::Deflate, 10)).unwrap();
        assert!(container::parse(&bytes).block_rows.is_empty());
        assert!(read_all(&bytes).is_empty());
    }
}

#[test]
fn zero_block_rows_is_rejected() {
    let err = generate(Shape::Order, &opts(10, Codec::Null, 0)).unwrap_err();
    assert!(matches!(err, Error::ZeroBlockRows), "{err}");
}

#[test]
fn sync_marker_and_header_metadata() {
    let bytes = generate(Shape::Telemetry, &opts(10, Codec::Zstandard, 4)).unwrap();
    let c = container::parse(&bytes);
    let keys: Vec<&str> = c.metadata.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["avro.schema", "avro.codec", "avro.codec.compression_level"]
    );
    assert_eq!(c.meta("avro.codec.compression_level"), Some(&[3u8][..]));
    assert_ne!(c.sync, [0; 16]);
    let other = generate(
        Shape::Telemetry,
        &GenOptions {
            seed: 1,
            ..opts(10, Codec::Zstandard, 4)
        },
    )
    .unwrap();
    assert_ne!(container::parse(&other).sync, c.sync);
}

#[test]
fn names_parse_and_display() {
    for shape in Shape::ALL {
        assert_eq!(shape.name().parse::<Shape>().unwrap(), shape);
        assert_eq!(shape.to_string(), shape.name());
    }
    assert_eq!("Order".parse::<Shape>().unwrap(), Shape::Order);
    for codec in Codec::ALL {
        assert_eq!(codec.name().parse::<Codec>().unwrap(), codec);
        assert_eq!(codec.to_string(), codec.name());
    }
    assert_eq!("zstd".parse::<Codec>().unwrap(), Codec::Zstandard);
    let err = "lz4".parse::<Codec>().unwrap_err();
    assert!(err.to_string().contains("unknown codec `lz4`"), "{err}");
    let err = "orders".parse::<Shape>().unwrap_err();
    assert!(matches!(err, Error::UnknownShape(ref s) if s == "orders"));
}

#[test]
fn default_options() {
    let d = GenOptions::default();
    assert_eq!(d.codec, Codec::Null);
    assert!(d.block_rows > 0 && d.rows > 0);
}

#[test]
fn rows_for_bytes_hits_the_target_size() {
    let target = 4_000_000u64;
    for shape in Shape::ALL {
        let rows = rows_for_bytes(shape, target);
        let len = generate(shape, &opts(rows, Codec::Null, 4096))
            .unwrap()
            .len() as f64;
        let err = (len - target as f64).abs() / target as f64;
        assert!(err < 0.02, "{shape}: {rows} rows gave {len} bytes");
    }
    assert_eq!(rows_for_bytes(Shape::Order, 0), 1);
}
