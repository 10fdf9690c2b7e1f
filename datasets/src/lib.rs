//! Deterministic, seeded Avro benchmark datasets for avrow.
//!
//! Four record shapes (schemas in `datasets/schemas/`, embedded here):
//!
//! | [`Shape`] | record | what it stresses |
//! | --- | --- | --- |
//! | [`Shape::Order`] | `bench.Order` | nesting: 10 `Line` records, 64 longs and a 2-entry map per row |
//! | [`Shape::Wide`] | `bench.WideRecord` | 100 flat fields of 10 types, including nullable unions and logical types |
//! | [`Shape::Telemetry`] | `bench.Reading` | small rows: longs, floats, an enum, a short string, 16 doubles |
//! | [`Shape::Counters`] | `bench.Counters` | one long array of 256 values mixing 1- and 3-byte varints |
//!
//! Values follow realistic, non-uniform distributions (see each shape's documentation): ids
//! and counters of 3–5 varint bytes, 8-byte microsecond timestamps, 1-byte small counts and enum
//! indexes, mixed string lengths, 10–30 % nulls in nullable fields.
//!
//! Files are written by the independent [apache-avro](https://docs.rs/apache-avro) crate, so a bug
//! in avrow's own encoding or decoding cannot hide in the test data. Rows are encoded through
//! apache-avro's schema-aware serde serializer rather than `apache_avro::types::Value`: a
//! `Value::Map` is a `std::collections::HashMap`, whose random iteration order would make the
//! Order files differ from run to run. The file header is assembled here with its metadata in a
//! fixed order (apache-avro keeps it in a `HashMap` too) and the sync marker is derived from the
//! seed, so the same [`GenOptions`] always give byte-identical files.
//!
//! ```
//! use avrow_datasets::{generate, Codec, GenOptions, Shape};
//!
//! let opts = GenOptions { rows: 1000, codec: Codec::Snappy, block_rows: 250, seed: 7 };
//! let bytes = generate(Shape::Telemetry, &opts)?;
//! assert_eq!(&bytes[..4], b"Obj\x01");
//! assert_eq!(bytes, generate(Shape::Telemetry, &opts)?);
//! # Ok::<(), avrow_datasets::Error>(())
//! ```

mod rng;
mod shapes;

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use apache_avro::Schema;

use crate::rng::Rng;
use crate::shapes::counters::CountersGenerator;
use crate::shapes::order::OrderGenerator;
use crate::shapes::telemetry::TelemetryGenerator;
use crate::shapes::wide::WideGenerator;
use crate::shapes::RowGenerator;

/// Errors from generating or writing a dataset.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A shape name that is not one of `order`, `wide`, `telemetry`, `counters`.
    #[error("unknown shape `{0}`; expected one of: order, wide, telemetry, counters")]
    UnknownShape(String),
    /// A codec name that is not one of the Avro codecs supported here.
    #[error(
        "unknown codec `{0}`; expected one of: null, deflate, snappy, zstandard (or zstd), bzip2, xz"
    )]
    UnknownCodec(String),
    /// [`GenOptions::block_rows`] was zero.
    #[error("block_rows must be at least 1")]
    ZeroBlockRows,
    /// The embedded schema of a shape was rejected by apache-avro (a bug in this crate).
    #[error("apache-avro rejected the embedded {shape} schema")]
    Schema {
        /// The shape whose schema failed.
        shape: Shape,
        /// apache-avro's error.
        #[source]
        source: apache_avro::Error,
    },
    /// apache-avro could not serialize the parsed schema to JSON for the header.
    #[error("apache-avro could not serialize the {shape} schema to JSON")]
    SchemaJson {
        /// The shape whose schema failed.
        shape: Shape,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// apache-avro could not encode a generated row (a bug in this crate's generator).
    #[error("apache-avro failed to encode {shape} row {row}")]
    Encode {
        /// The shape being generated.
        shape: Shape,
        /// Zero-based index of the row.
        row: usize,
        /// apache-avro's error.
        #[source]
        source: apache_avro::Error,
    },
    /// apache-avro failed to compress or write a block (usually an I/O error underneath).
    #[error("apache-avro failed to write a {codec} block")]
    Block {
        /// The codec of the file.
        codec: Codec,
        /// apache-avro's error.
        #[source]
        source: apache_avro::Error,
    },
    /// Writing the header or flushing the output failed.
    #[error("failed to write the Avro file")]
    Io(#[from] io::Error),
}

/// One of the four benchmark record shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// `bench.Order`: nested lines, a long array and a map.
    Order,
    /// `bench.WideRecord`: 100 flat fields.
    Wide,
    /// `bench.Reading`: IoT telemetry.
    Telemetry,
    /// `bench.Counters`: 256 longs per row.
    Counters,
}

impl Shape {
    /// All shapes, in a fixed order.
    pub const ALL: [Shape; 4] = [Shape::Order, Shape::Wide, Shape::Telemetry, Shape::Counters];

    /// The shape's Avro schema, exactly as in `datasets/schemas/<name>.avsc`.
    pub fn schema_json(self) -> &'static str {
        match self {
            Shape::Order => include_str!("../schemas/order.avsc"),
            Shape::Wide => include_str!("../schemas/wide.avsc"),
            Shape::Telemetry => include_str!("../schemas/telemetry.avsc"),
            Shape::Counters => include_str!("../schemas/counters.avsc"),
        }
    }

    /// The short lower-case name (`order`, `wide`, `telemetry`, `counters`), as accepted by
    /// [`FromStr`] and used for file names.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Order => "order",
            Shape::Wide => "wide",
            Shape::Telemetry => "telemetry",
            Shape::Counters => "counters",
        }
    }

    /// The full name of the top-level Avro record (`bench.Order`, `bench.WideRecord`,
    /// `bench.Reading`, `bench.Counters`).
    pub fn record_name(self) -> &'static str {
        match self {
            Shape::Order => "bench.Order",
            Shape::Wide => "bench.WideRecord",
            Shape::Telemetry => "bench.Reading",
            Shape::Counters => "bench.Counters",
        }
    }

    /// The average encoded (uncompressed) size of one row in bytes, measured on generated data.
    pub fn mean_row_bytes(self) -> f64 {
        match self {
            Shape::Order => MEAN_ROW_BYTES[0],
            Shape::Wide => MEAN_ROW_BYTES[1],
            Shape::Telemetry => MEAN_ROW_BYTES[2],
            Shape::Counters => MEAN_ROW_BYTES[3],
        }
    }

    /// An upper bound on the encoded size of one row; sizes apache-avro's block buffer.
    fn max_row_bytes(self) -> usize {
        match self {
            Shape::Order => 1024,
            Shape::Wide => 2048,
            Shape::Telemetry => 256,
            Shape::Counters => 1024,
        }
    }

    /// The PRNG stream of the shape's row data (so one seed gives unrelated data per shape).
    fn stream(self) -> u64 {
        match self {
            Shape::Order => 1,
            Shape::Wide => 2,
            Shape::Telemetry => 3,
            Shape::Counters => 4,
        }
    }
}

/// Measured mean row sizes (bytes, null codec, over 100 000 rows of seed 42), in
/// [`Shape::ALL`] order; the crate's tests check them against fresh data.
const MEAN_ROW_BYTES: [f64; 4] = [541.60, 594.07, 163.48, 521.34];

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shape {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Shape::ALL
            .into_iter()
            .find(|shape| shape.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::UnknownShape(s.to_owned()))
    }
}

/// An Avro block compression codec.
///
/// Compression levels are fixed so output is reproducible: deflate 6 (zlib's default), zstandard
/// 3, bzip2 9, xz 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Codec {
    /// No compression.
    #[default]
    Null,
    /// Raw deflate (RFC 1951).
    Deflate,
    /// Snappy, each block followed by the CRC-32 of its uncompressed bytes.
    Snappy,
    /// Zstandard.
    Zstandard,
    /// bzip2.
    Bzip2,
    /// xz (LZMA2).
    Xz,
}

impl Codec {
    /// All codecs, in a fixed order.
    pub const ALL: [Codec; 6] = [
        Codec::Null,
        Codec::Deflate,
        Codec::Snappy,
        Codec::Zstandard,
        Codec::Bzip2,
        Codec::Xz,
    ];

    /// The codec's name in the `avro.codec` header entry (`null`, `deflate`, `snappy`,
    /// `zstandard`, `bzip2`, `xz`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstandard => "zstandard",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
        }
    }

    /// The compression level used, where the codec has one.
    pub fn level(self) -> Option<u8> {
        match self {
            Codec::Null | Codec::Snappy => None,
            Codec::Deflate => Some(6),
            Codec::Zstandard => Some(3),
            Codec::Bzip2 => Some(9),
            Codec::Xz => Some(6),
        }
    }

    fn to_apache(self) -> apache_avro::Codec {
        match self {
            Codec::Null => apache_avro::Codec::Null,
            // DeflateSettings' default is miniz_oxide's DefaultCompression, i.e. level 6.
            Codec::Deflate => apache_avro::Codec::Deflate(apache_avro::DeflateSettings::default()),
            Codec::Snappy => apache_avro::Codec::Snappy,
            Codec::Zstandard => {
                apache_avro::Codec::Zstandard(apache_avro::ZstandardSettings::new(3))
            }
            Codec::Bzip2 => apache_avro::Codec::Bzip2(apache_avro::Bzip2Settings::new(9)),
            Codec::Xz => apache_avro::Codec::Xz(apache_avro::XzSettings::new(6)),
        }
    }

    /// The `avro.codec.compression_level` header entry apache-avro writes for this codec.
    fn level_metadata(self) -> Option<u8> {
        match self {
            Codec::Zstandard | Codec::Bzip2 | Codec::Xz => self.level(),
            Codec::Null | Codec::Deflate | Codec::Snappy => None,
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Codec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        if s.eq_ignore_ascii_case("zstd") {
            return Ok(Codec::Zstandard);
        }
        Codec::ALL
            .into_iter()
            .find(|codec| codec.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::UnknownCodec(s.to_owned()))
    }
}

/// What to generate: how many rows, compressed how, in blocks of how many rows, from which seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// Number of records.
    pub rows: usize,
    /// Block compression codec.
    pub codec: Codec,
    /// Records per container block (at least 1). Every block holds exactly this many records
    /// except the last, which holds the remainder; a block is cut early only if its
    /// uncompressed size would pass 256 MiB.
    pub block_rows: usize,
    /// PRNG seed: the same options always produce byte-identical files.
    pub seed: u64,
}

impl Default for GenOptions {
    /// 10 000 rows, null codec, 4096 rows per block, seed 42.
    fn default() -> Self {
        GenOptions {
            rows: 10_000,
            codec: Codec::Null,
            block_rows: DEFAULT_BLOCK_ROWS,
            seed: DEFAULT_SEED,
        }
    }
}

/// Default records per block: about 0.7–3 MB blocks, depending on the shape.
pub const DEFAULT_BLOCK_ROWS: usize = 4096;

/// Default seed.
pub const DEFAULT_SEED: u64 = 42;

/// Largest uncompressed block buffer handed to apache-avro.
const MAX_BLOCK_BUFFER: usize = 256 << 20;

/// Writes a complete Avro object container file of `shape` to `out` and returns its size in
/// bytes. `out` is written in large pieces; wrapping it in a `BufWriter` is not needed.
pub fn write<W: Write>(shape: Shape, opts: &GenOptions, out: W) -> Result<u64, Error> {
    match shape {
        Shape::Order => write_rows::<OrderGenerator, W>(shape, opts, out),
        Shape::Wide => write_rows::<WideGenerator, W>(shape, opts, out),
        Shape::Telemetry => write_rows::<TelemetryGenerator, W>(shape, opts, out),
        Shape::Counters => write_rows::<CountersGenerator, W>(shape, opts, out),
    }
}

/// Generates a complete Avro object container file of `shape` in memory.
pub fn generate(shape: Shape, opts: &GenOptions) -> Result<Vec<u8>, Error> {
    let estimate = (opts.rows as f64 * shape.mean_row_bytes()) as usize;
    let mut buf = Vec::with_capacity(if opts.codec == Codec::Null {
        estimate + 4096
    } else {
        estimate / 4 + 4096
    });
    write(shape, opts, &mut buf)?;
    Ok(buf)
}

/// About how many rows make an uncompressed (null codec) file of `target_bytes` bytes
/// (at least 1). Use it to size benchmark files, e.g. `rows_for_bytes(Shape::Order, 100_000_000)`.
pub fn rows_for_bytes(shape: Shape, target_bytes: u64) -> usize {
    let rows = (target_bytes as f64 / shape.mean_row_bytes()).round();
    (rows as usize).max(1)
}

fn write_rows<G: RowGenerator, W: Write>(
    shape: Shape,
    opts: &GenOptions,
    out: W,
) -> Result<u64, Error> {
    if opts.block_rows == 0 {
        return Err(Error::ZeroBlockRows);
    }
    let schema =
        Schema::parse_str(shape.schema_json()).map_err(|source| Error::Schema { shape, source })?;
    let marker = sync_marker(opts.seed, shape);

    let mut out = CountingWriter {
        inner: out,
        bytes: 0,
    };
    write_header(&mut out, shape, &schema, opts.codec, &marker)?;

    // apache-avro cuts a block once its buffer reaches `block_size` bytes; make that bound
    // unreachable within `block_rows` rows and cut blocks ourselves with `flush`.
    let block_size = opts
        .block_rows
        .saturating_mul(shape.max_row_bytes())
        .min(MAX_BLOCK_BUFFER);
    let codec = opts.codec;
    let block_err = |source| Error::Block { codec, source };
    let mut writer = apache_avro::Writer::builder()
        .schema(&schema)
        .writer(out)
        .codec(codec.to_apache())
        .block_size(block_size)
        .marker(marker)
        .has_header(true)
        .build()
        .map_err(block_err)?;

    let mut rng = Rng::new(opts.seed, shape.stream());
    let mut generator = G::new(&mut rng);
    for row in 0..opts.rows {
        let value = generator.next_row(&mut rng);
        writer
            .append_ser(value)
            .map_err(|source| Error::Encode { shape, row, source })?;
        if (row + 1) % opts.block_rows == 0 {
            writer.flush().map_err(block_err)?;
        }
    }
    let mut out = writer.into_inner().map_err(block_err)?;
    out.inner.flush()?;
    Ok(out.bytes)
}

/// The 16-byte sync marker, derived from the seed and shape.
fn sync_marker(seed: u64, shape: Shape) -> [u8; 16] {
    let mut rng = Rng::new(seed, 0x5EED_0000 + shape.stream());
    let mut marker = [0u8; 16];
    marker[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    marker[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
    marker
}

/// Writes the container header: magic, metadata map in a fixed order, sync marker.
///
/// The metadata matches what apache-avro's own header writer produces (`avro.schema`, then
/// `avro.codec` unless null, then `avro.codec.compression_level` for zstandard, bzip2 and xz),
/// with the schema serialized by apache-avro as its writer would.
fn write_header<W: Write>(
    out: &mut W,
    shape: Shape,
    schema: &Schema,
    codec: Codec,
    marker: &[u8; 16],
) -> Result<(), Error> {
    let schema =
        serde_json::to_string(schema).map_err(|source| Error::SchemaJson { shape, source })?;
    let level = codec.level_metadata().map(|l| [l]);
    let mut entries: Vec<(&str, &[u8])> = vec![("avro.schema", schema.as_bytes())];
    if codec != Codec::Null {
        entries.push(("avro.codec", codec.name().as_bytes()));
    }
    if let Some(level) = &level {
        entries.push(("avro.codec.compression_level", level));
    }

    let mut header = Vec::with_capacity(schema.len() + 128);
    header.extend_from_slice(b"Obj\x01");
    put_long(&mut header, entries.len() as i64);
    for (key, value) in entries {
        put_long(&mut header, key.len() as i64);
        header.extend_from_slice(key.as_bytes());
        put_long(&mut header, value.len() as i64);
        header.extend_from_slice(value);
    }
    put_long(&mut header, 0);
    header.extend_from_slice(marker);
    out.write_all(&header)?;
    Ok(())
}

/// Appends `v` as an Avro long (zigzag varint).
fn put_long(buf: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        buf.push((z as u8) | 0x80);
        z >>= 7;
    }
    buf.push(z as u8);
}

/// Counts bytes and turns every `write` into `write_all`: apache-avro writes blocks with a single
/// `Write::write` call, which a writer may legally accept only partly.
struct CountingWriter<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write_all(buf)?;
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
