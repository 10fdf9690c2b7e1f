//! The logic of avrow's fuzz targets, free of libFuzzer: each `fuzz_targets/*.rs` calls one
//! function here, and `readers/tests/integration/fuzzed.rs` includes this file (by `#[path]`)
//! to replay the committed seeds and regressions in ordinary `cargo test`.
//!
//! Every function takes arbitrary bytes. Errors are expected and ignored; a panic (including
//! the assertions here, which check invariants every decode must keep) is a finding, and so
//! is a hang or a huge allocation (caught by libFuzzer's `-timeout` and `-malloc_limit_mb`, or
//! by the test's guards).
//!
//! Only `avrow`, `avrow::avrow_engine` and `arrow_array` are used, so that the file builds in
//! both crates.

use arrow_array::{Array, RecordBatch};
use avrow::avrow_engine::schema::Fingerprint;
use avrow::avrow_engine::varint::{self, KernelKind};
use avrow::avrow_engine::{
    DecodeError, DecodeErrorKind, DecodeOptions, DecodePlan, RecordDecoder, Schema,
    StreamCheckError,
};

/// Blocks may decompress to at most this much, so that legitimate inputs cannot allocate much.
pub const MAX_BLOCK_SIZE: usize = 16 << 20;

/// Batch sizes the targets pick from (small, so that batches split blocks and records).
const BATCH_SIZES: [usize; 8] = [1, 2, 3, 5, 8, 64, 100, 1024];

/// Stop consuming a reader after this many batches: a block of `i32::MAX` zero-byte records
/// (all-null rows) is legitimate and would otherwise run for minutes with tiny batches.
const MAX_BATCHES: usize = 1 << 14;

/// The kernel numbered `i` (modulo the kernels available on this CPU).
fn kernel(i: usize) -> KernelKind {
    let k = varint::available_kernels();
    k[i % k.len()]
}

/// Checks every batch must pass: not over the batch size, the decoder's schema, and valid Arrow
/// data (offsets, UTF-8, union type ids, child lengths: `validate_full`).
fn check_batch(batch: &RecordBatch, batch_size: usize) {
    assert!(
        batch.num_rows() <= batch_size,
        "batch of {} rows exceeds the batch size {batch_size}",
        batch.num_rows()
    );
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        assert_eq!(column.len(), batch.num_rows(), "column {}", field.name());
        if let Err(e) = column.to_data().validate_full() {
            panic!("column {} is not valid Arrow data: {e}", field.name());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// container
// ---------------------------------------------------------------------------------------------

/// Reader options of one container decode, picked from the input's length (so that the input
/// itself is a whole, unmodified Avro file: the seeds are real files).
#[derive(Debug, Clone, Copy)]
pub struct ContainerOpts {
    pub batch_size: usize,
    pub threads: usize,
    pub kernel: KernelKind,
    pub utf8_view: bool,
    /// Also read with a projection of the last top-level field.
    pub project: bool,
    /// Also read in two byte ranges (split at this fraction of the length, in 256ths).
    pub split: Option<u8>,
}

impl ContainerOpts {
    pub fn pick(data: &[u8]) -> ContainerOpts {
        // Spread the length's bits so that neighbouring lengths pick different options.
        let s = (data.len() as u32).wrapping_mul(0x9E37_79B9) >> 16;
        ContainerOpts {
            batch_size: BATCH_SIZES[(s & 7) as usize],
            threads: 1 + ((s >> 3) & 1) as usize,
            kernel: kernel((s >> 4) as usize & 3),
            utf8_view: (s >> 6) & 1 == 1,
            project: (s >> 7) & 3 == 0,
            split: ((s >> 9) & 3 == 0).then_some((s >> 11) as u8),
        }
    }

    fn builder(&self) -> avrow::ReaderBuilder {
        avrow::ReaderBuilder::new()
            .with_batch_size(self.batch_size)
            .with_threads(self.threads)
            .with_varint_kernel(self.kernel)
            .with_utf8_view(self.utf8_view)
            .with_max_block_size(MAX_BLOCK_SIZE)
    }
}

/// What one reader produced: its batches, and the error it ended with (if any).
struct Outcome {
    batches: Vec<RecordBatch>,
    error: Option<String>,
}

fn drain(reader: Result<avrow::Reader, avrow::Error>, opts: &ContainerOpts) -> Outcome {
    let reader = match reader {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                batches: Vec::new(),
                error: Some(e.to_string()),
            }
        }
    };
    let schema = reader.schema();
    let mut batches = Vec::new();
    for batch in reader.take(MAX_BATCHES) {
        match batch {
            Ok(b) => {
                check_batch(&b, opts.batch_size);
                assert_eq!(b.schema().fields(), schema.fields(), "batch schema");
                // Keep only a few: enough to compare the sources, without holding everything.
                if batches.len() < 64 {
                    batches.push(b);
                }
            }
            Err(e) => {
                return Outcome {
                    batches,
                    error: Some(e.to_string()),
                }
            }
        }
    }
    Outcome {
        batches,
        error: None,
    }
}

/// Arbitrary bytes as a whole Avro container file, through `read_bytes` and `read_stream` (a
/// `Cursor`), every batch checked. Where both read the whole file, they must agree.
pub fn container(data: &[u8]) {
    let opts = ContainerOpts::pick(data);
    let from_bytes = drain(opts.builder().read_bytes(data.to_vec()), &opts);
    let from_stream = drain(
        opts.builder()
            .read_stream(std::io::Cursor::new(data.to_vec())),
        &opts,
    );
    match (&from_bytes.error, &from_stream.error) {
        (None, None) => assert!(
            from_bytes.batches == from_stream.batches,
            "read_bytes and read_stream decoded different batches"
        ),
        (None, Some(e)) => panic!("read_bytes read the whole file, read_stream failed: {e}"),
        (Some(e), None) => panic!("read_stream read the whole file, read_bytes failed: {e}"),
        (Some(_), Some(_)) => return,
    }
    let rows: usize = from_bytes.batches.iter().map(|b| b.num_rows()).sum();
    if from_bytes.batches.len() >= 64 {
        return; // not all kept: nothing to compare with
    }
    if opts.project {
        project_last_field(data, &opts, &from_bytes.batches);
    }
    if let Some(at) = opts.split {
        // Any partition into byte ranges reads every block exactly once.
        let at = (data.len() as u64 * u64::from(at)) / 256;
        let mut total = 0;
        for range in [0..at, at..data.len() as u64] {
            let part = drain(
                opts.builder()
                    .with_range(range.clone())
                    .read_bytes(data.to_vec()),
                &opts,
            );
            if let Some(e) = part.error {
                panic!("the whole file reads, its byte range {range:?} fails: {e}");
            }
            assert!(
                part.batches.len() < 64,
                "a range gave more batches than the file"
            );
            total += part.batches.iter().map(|b| b.num_rows()).sum::<usize>();
        }
        assert_eq!(
            total, rows,
            "two byte ranges read {total} rows, the file {rows}"
        );
    }
}

/// Read `data` again with a projection of the last top-level field: the same rows of that
/// column as the full read.
fn project_last_field(data: &[u8], opts: &ContainerOpts, full: &[RecordBatch]) {
    let Some(first) = full.first() else {
        return;
    };
    let schema = first.schema();
    let Some(last) = schema.fields().last() else {
        return;
    };
    let projected = drain(
        opts.builder()
            .with_projection([last.name().as_str()])
            .read_bytes(data.to_vec()),
        opts,
    );
    if let Some(e) = projected.error {
        panic!(
            "the whole file reads, the projection [{}] fails: {e}",
            last.name()
        );
    }
    let column = schema.fields().len() - 1;
    let want: Vec<_> = full.iter().map(|b| b.column(column).clone()).collect();
    let got: Vec<_> = projected
        .batches
        .iter()
        .map(|b| {
            assert_eq!(b.num_columns(), 1, "projection of one field");
            b.column(0).clone()
        })
        .collect();
    assert!(
        want.len() == got.len()
            && want
                .iter()
                .zip(&got)
                .all(|(w, g)| w.to_data() == g.to_data()),
        "the projection [{}] decoded other values than the full read",
        last.name()
    );
}

// ---------------------------------------------------------------------------------------------
// schema
// ---------------------------------------------------------------------------------------------

/// Arbitrary bytes as schema JSON: parse, Parsing Canonical Form (which must parse again to the
/// same form), the three fingerprints, a decode plan, and resolution against itself (which must
/// succeed whenever the plan does, with the same Arrow fields).
pub fn schema(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(schema) = Schema::parse(text) else {
        return;
    };
    let canonical = schema.canonical_form();
    // Parsing Canonical Form drops `"namespace"` attributes, so a type in the null namespace
    // written inside a namespaced one reads back in the enclosing namespace (a limitation of
    // the specification, shared by the Java implementation): round trips are only checked
    // where the named types are all in the null namespace or all in some namespace.
    let mixed = {
        let named = schema.named_types();
        let in_null = named
            .iter()
            .filter(|t| t.name.namespace().is_none())
            .count();
        in_null != 0 && in_null != named.len()
    };
    if !mixed {
        match Schema::parse(&canonical) {
            Ok(again) => assert_eq!(
                again.canonical_form(),
                canonical,
                "the canonical form's canonical form differs"
            ),
            Err(e) => panic!("the canonical form {canonical} does not parse: {e}"),
        }
    }
    for f in [Fingerprint::Rabin, Fingerprint::Md5, Fingerprint::Sha256] {
        let _ = schema.fingerprint(f);
    }
    let options = DecodeOptions::default();
    let Ok(plan) = DecodePlan::new(&schema, &options) else {
        return;
    };
    let _ = plan.min_record_size();
    let _ = plan.decoder().flush();
    match DecodePlan::resolve(&schema, &schema, &options) {
        Ok(resolved) => assert_eq!(
            resolved.arrow_schema().fields(),
            plan.arrow_schema().fields(),
            "resolving a schema against itself changed the Arrow fields"
        ),
        Err(e) => panic!("a schema does not resolve against itself: {e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// decode
// ---------------------------------------------------------------------------------------------

/// Schemas for the `decode` target: every Avro type, logical types, recursion.
pub const SCHEMAS: &[&str] = &[
    // 0: primitives
    r#"{"type":"record","name":"P","fields":[{"name":"n","type":"null"},{"name":"b","type":"boolean"},
        {"name":"i","type":"int"},{"name":"l","type":"long"},{"name":"f","type":"float"},{"name":"d","type":"double"}]}"#,
    // 1: strings and bytes
    r#"{"type":"record","name":"S","fields":[{"name":"s","type":"string"},{"name":"b","type":"bytes"}]}"#,
    // 2: fixed, including fixed(0)
    r#"{"type":"record","name":"F","fields":[{"name":"f4","type":{"type":"fixed","name":"F4","size":4}},
        {"name":"f0","type":{"type":"fixed","name":"F0","size":0}},{"name":"i","type":"int"}]}"#,
    // 3: enum
    r#"{"type":"record","name":"E","fields":[{"name":"e","type":{"type":"enum","name":"Suit",
        "symbols":["SPADES","HEARTS","DIAMONDS","CLUBS"]}},{"name":"one","type":{"type":"enum","name":"One","symbols":["A"]}}]}"#,
    // 4: arrays
    r#"{"type":"record","name":"A","fields":[{"name":"ints","type":{"type":"array","items":"int"}},
        {"name":"strs","type":{"type":"array","items":"string"}},
        {"name":"nested","type":{"type":"array","items":{"type":"array","items":"long"}}},
        {"name":"nulls","type":{"type":"array","items":"null"}}]}"#,
    // 5: maps
    r#"{"type":"record","name":"M","fields":[{"name":"m","type":{"type":"map","values":"long"}},
        {"name":"mm","type":{"type":"map","values":{"type":"array","items":"string"}}}]}"#,
    // 6: nested records, array of records, a nullable record
    r#"{"type":"record","name":"Outer","namespace":"ns","fields":[{"name":"id","type":"long"},
        {"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"},{"name":"s","type":"string"}]}},
        {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
            {"name":"sku","type":"string"},{"name":"q","type":"int"}]}}},
        {"name":"opt","type":["null","Inner"]}]}"#,
    // 7: nullable unions, null first and last
    r#"{"type":"record","name":"N","fields":[{"name":"a","type":["null","string"]},{"name":"b","type":["int","null"]},
        {"name":"c","type":["null",{"type":"array","items":["null","double"]}]}]}"#,
    // 8: general unions
    r#"{"type":"record","name":"U","fields":[{"name":"u","type":["null","int","string",
        {"type":"record","name":"UR","fields":[{"name":"x","type":"long"}]},{"type":"array","items":"int"},
        {"type":"map","values":"boolean"},{"type":"enum","name":"UE","symbols":["X","Y"]},
        {"type":"fixed","name":"UF","size":2}]},{"name":"v","type":["string","bytes"]}]}"#,
    // 9: decimals on bytes and fixed (Decimal128 and Decimal256), and beyond 76 digits
    r#"{"type":"record","name":"D","fields":[
        {"name":"b","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
        {"name":"f","type":{"type":"fixed","name":"D16","size":16,"logicalType":"decimal","precision":38,"scale":4}},
        {"name":"w","type":{"type":"fixed","name":"D32","size":32,"logicalType":"decimal","precision":76,"scale":0}},
        {"name":"big","type":{"type":"bytes","logicalType":"decimal","precision":60,"scale":3}},
        {"name":"huge","type":{"type":"bytes","logicalType":"decimal","precision":80,"scale":1}},
        {"name":"small","type":{"type":"fixed","name":"D2","size":2,"logicalType":"decimal","precision":4,"scale":1}}]}"#,
    // 10: uuids
    r#"{"type":"record","name":"Id","fields":[{"name":"s","type":{"type":"string","logicalType":"uuid"}},
        {"name":"f","type":{"type":"fixed","name":"U16","size":16,"logicalType":"uuid"}}]}"#,
    // 11: dates, times, timestamps
    r#"{"type":"record","name":"T","fields":[
        {"name":"date","type":{"type":"int","logicalType":"date"}},
        {"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
        {"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
        {"name":"ms","type":{"type":"long","logicalType":"timestamp-millis"}},
        {"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
        {"name":"ns","type":{"type":"long","logicalType":"timestamp-nanos"}},
        {"name":"lms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
        {"name":"lus","type":{"type":"long","logicalType":"local-timestamp-micros"}},
        {"name":"lns","type":{"type":"long","logicalType":"local-timestamp-nanos"}}]}"#,
    // 12: duration
    r#"{"type":"record","name":"Du","fields":[{"name":"d","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}},
        {"name":"od","type":["null","Dur"]}]}"#,
    // 13: recursive: a linked list
    r#"{"type":"record","name":"Cons","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Cons"]}]}"#,
    // 14: recursive: a tree through an array (one recursive edge: two of them unroll 2^depth-fold,
    // see fuzz/regressions/schema/recursive-two-edges-exponential-plan.avsc)
    r#"{"type":"record","name":"Tree","fields":[{"name":"label","type":"string"},
        {"name":"kids","type":{"type":"array","items":"Tree"}}]}"#,
    // 15: records of zero-byte values only
    r#"{"type":"record","name":"Z","fields":[{"name":"n","type":"null"},{"name":"f","type":{"type":"fixed","name":"Z0","size":0}},
        {"name":"r","type":{"type":"record","name":"ZR","fields":[{"name":"n","type":"null"}]}}]}"#,
    // 16: a top-level array, not a record
    r#"{"type":"array","items":["null","string"]}"#,
    // 17: a top-level primitive
    r#""long""#,
    // 18: the Order benchmark shape
    r#"{"type":"record","name":"Order","namespace":"bench","fields":[{"name":"id","type":"long"},
        {"name":"customer","type":"string"},{"name":"total","type":"double"},{"name":"item_count","type":"int"},
        {"name":"paid","type":"boolean"},{"name":"note","type":["null","string"],"default":null},
        {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
            {"name":"sku","type":"string"},{"name":"quantity","type":"int"},{"name":"unit_price","type":"double"}]}}},
        {"name":"counters","type":{"type":"array","items":"long"}},{"name":"attributes","type":{"type":"map","values":"string"}}]}"#,
    // 19: recursive through a map, inside a nullable record
    r#"{"type":"record","name":"MapTree","fields":[{"name":"v","type":["null","long"]},
        {"name":"named","type":{"type":"map","values":"MapTree"}}]}"#,
];

/// Decode options from a flags byte: UTF-8 views, a small recursion depth.
fn decode_options(flags: u8) -> DecodeOptions {
    DecodeOptions {
        utf8_view: flags & 1 == 1,
        max_recursion_depth: if flags & 2 == 2 { 2 } else { 16 },
        ..DecodeOptions::default()
    }
}

/// A record count from the input: one byte, or (for 255) eight little-endian bytes, so that
/// hostile counts get tried too.
fn take_count(data: &mut &[u8]) -> u64 {
    match data.split_first() {
        Some((&255, rest)) if rest.len() >= 8 => {
            let (n, rest) = rest.split_at(8);
            *data = rest;
            u64::from_le_bytes(n.try_into().unwrap())
        }
        Some((&n, rest)) => {
            *data = rest;
            u64::from(n)
        }
        None => 0,
    }
}

/// At most this many batches from one `decode` or `resolve` input of zero-byte records.
const MAX_DECODE_BATCHES: usize = 256;

/// The record count at most (for plans whose records take zero bytes, whose counts are only
/// capped at `i32::MAX`): `decode_block` returns all the batches of a block at once, so a count
/// of two billion null records in batches of one would take hundreds of GB, as designed.
fn cap_zero_size(plan: &DecodePlan, count: u64, batch_size: usize) -> u64 {
    if plan.min_record_size() == 0 {
        count.min((MAX_DECODE_BATCHES * batch_size) as u64)
    } else {
        count
    }
}

/// Everything a decoder produced from some blocks: the batches, or the error (with the rows
/// flushed before it).
#[derive(Debug, PartialEq)]
struct Decoded {
    batches: Vec<RecordBatch>,
    error: Option<String>,
    /// The error of the first block, if it failed.
    first: Option<DecodeError>,
}

/// Decode `blocks` (data, record count) with `decoder`, then flush; every batch checked.
fn decode_blocks(mut decoder: RecordDecoder, blocks: &[(&[u8], u64)]) -> Decoded {
    let batch_size = decoder.batch_size();
    let mut batches = Vec::new();
    let mut error = None;
    let mut first = None;
    for (i, &(data, count)) in blocks.iter().enumerate() {
        match decoder.decode_block(data, count) {
            Ok(b) => batches.extend(b),
            Err(e) => {
                error = Some(e.to_string());
                if i == 0 {
                    first = Some(e);
                }
                break;
            }
        }
    }
    match decoder.flush() {
        Ok(b) => batches.extend(b),
        Err(e) => panic!("flush failed: {e}"),
    }
    for b in &batches {
        check_batch(b, batch_size);
    }
    Decoded {
        batches,
        error,
        first,
    }
}

/// Decode the tail of an input with `plan`: `[count][batch size][split][data...]`. The data is
/// cut into two blocks at `split` (0: one block), the count split likewise. The same decode with
/// the scalar varint kernel and with another kernel must agree exactly.
fn decode_tail(plan: &DecodePlan, mut data: &[u8]) {
    let count = take_count(&mut data);
    let (batch_byte, split, kernel_byte) = match data {
        [a, b, c, rest @ ..] => {
            let t = (*a, *b, *c);
            data = rest;
            t
        }
        _ => return,
    };
    let batch_size = BATCH_SIZES[batch_byte as usize % BATCH_SIZES.len()];
    let count = cap_zero_size(plan, count, batch_size);
    let blocks: Vec<(&[u8], u64)> = if split == 0 || data.is_empty() {
        vec![(data, count)]
    } else {
        let at = split as usize % (data.len() + 1);
        let first = count.min(u64::from(kernel_byte >> 4));
        vec![(&data[..at], first), (&data[at..], count - first)]
    };
    let decoder = plan.decoder().with_batch_size(batch_size);
    let other = kernel(kernel_byte as usize);
    let reference = decode_blocks(decoder.clone().with_kernel(KernelKind::Scalar), &blocks);
    check_in_pieces(
        plan,
        blocks[0],
        reference.first.as_ref(),
        split,
        kernel_byte,
    );
    encode_round_trip(&reference.batches);
    if other != KernelKind::Scalar {
        let decoded = decode_blocks(decoder.with_kernel(other), &blocks);
        assert!(
            decoded == reference,
            "the {other} kernel decoded differently from the scalar one: {:?} vs {:?}",
            decoded.error,
            reference.error
        );
    }
}

/// The decoded batches written again by the encoder with the Avro schema they were read as
/// (their `avro.schema`), then decoded by a plan of that schema: the same values. Skipped where
/// the batches do not hold that schema's whole records (a projection) or its plain mapping.
fn encode_round_trip(batches: &[RecordBatch]) {
    let Some(first) = batches.first() else {
        return;
    };
    let Ok(avro) = avrow::avrow_engine::encode::avro_schema_for(first.schema_ref()) else {
        return;
    };
    let Ok(encoder) = avrow::avrow_engine::encode::EncodePlan::new(first.schema(), avro.clone())
    else {
        return;
    };
    let Ok(plan) = DecodePlan::new(&avro, &DecodeOptions::default()) else {
        return;
    };
    if !plan
        .arrow_schema()
        .fields()
        .iter()
        .zip(first.schema().fields())
        .all(|(a, b)| a.data_type() == b.data_type())
    {
        return;
    }
    let mut data = Vec::new();
    let mut rows = 0;
    for b in batches {
        encoder
            .encode(b, &mut data)
            .unwrap_or_else(|e| panic!("a decoded batch does not encode: {e}"));
        rows += b.num_rows();
    }
    // The batches are all full but the last: the same batch size cuts them the same way.
    let mut decoder = plan.decoder().with_batch_size(first.num_rows().max(1));
    let mut again = decoder
        .decode_block(&data, rows as u64)
        .unwrap_or_else(|e| panic!("what the encoder wrote does not decode: {e}"));
    again.extend(decoder.flush().expect("flush"));
    assert_eq!(
        again.len(),
        batches.len(),
        "batches after encoding and decoding again"
    );
    for (x, y) in batches.iter().zip(&again) {
        for (i, (a, b)) in x.columns().iter().zip(y.columns()).enumerate() {
            assert!(
                a.to_data() == b.to_data(),
                "column {i} differs after encoding and decoding again"
            );
        }
    }
}

/// [`RecordDecoder::check_stream`] over `block` in pieces (of 1–8 bytes) with a window (of
/// 16–136 bytes, or larger than the block): it never rejects a block that decodes, and where
/// the window holds the whole block its error is the one decoding gives.
fn check_in_pieces(
    plan: &DecodePlan,
    (data, count): (&[u8], u64),
    decoded: Option<&DecodeError>,
    a: u8,
    b: u8,
) {
    let decoder = plan.decoder();
    let piece = 1 + (a as usize & 7);
    let window = if b & 1 == 0 {
        data.len() + 16
    } else {
        16 + (b as usize >> 1)
    };
    let mut at = 0;
    let mut fill = |out: &mut Vec<u8>| -> Result<usize, ()> {
        let p = &data[at..(at + piece).min(data.len())];
        at += p.len();
        out.extend_from_slice(p);
        Ok(p.len())
    };
    let checked = match decoder.check_stream(count, window, data.len(), &mut fill) {
        Ok(()) => None,
        Err(StreamCheckError::Decode(e)) => Some(e),
        Err(e) => panic!("the source never fails: {e:?}"),
    };
    match (&checked, decoded) {
        // Inside a record larger than the window the check holds the data to the writer's
        // schema, also in fields the plan skips (where decoding jumps over a collection block
        // by its recorded size, or reads a string as bytes): it may refuse such invalid data
        // that decoding lets through, and nothing else.
        (Some(e), None)
            if !matches!(
                e.kind(),
                DecodeErrorKind::BlockSizeMismatch { .. }
                    | DecodeErrorKind::InvalidUtf8
                    | DecodeErrorKind::InvalidBoolean(_)
                    | DecodeErrorKind::EnumIndex { .. }
                    | DecodeErrorKind::Varint(
                        avrow::avrow_engine::varint::VarintError::IntOutOfRange
                    )
            ) =>
        {
            panic!("the check rejected a block that decodes: {e}")
        }
        // With the whole block in the window, the same error (a count too large for the data
        // is found where the data ends).
        (Some(c), Some(d))
            if window > data.len() && !matches!(d.kind(), DecodeErrorKind::TooLarge(_)) =>
        {
            assert_eq!(c.kind(), d.kind(), "check {c} vs decode {d}");
            assert_eq!(
                (c.offset(), c.record()),
                (d.offset(), d.record()),
                "check {c} vs decode {d}"
            );
        }
        (None, Some(d)) if window > data.len() => {
            panic!("the check passed a block whose decode fails: {d}")
        }
        _ => {}
    }
}

/// Record decoding of arbitrary bytes against [`SCHEMAS`]: `[schema][flags][tail]` where the
/// tail is read by `decode_tail` (`[count][batch size][split][kernel][data...]`).
pub fn decode(data: &[u8]) {
    let [which, flags, rest @ ..] = data else {
        return;
    };
    decode_tail(
        &seed_plan(*which as usize % SCHEMAS.len(), *flags & 3),
        rest,
    );
}

/// The plan of seed schema `which` with the options of `flags`, compiled once per process
/// (compiling is most of the cost of a short input).
fn seed_plan(which: usize, flags: u8) -> DecodePlan {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static PLANS: OnceLock<Mutex<HashMap<(usize, u8), DecodePlan>>> = OnceLock::new();
    let mut plans = PLANS.get_or_init(Default::default).lock().unwrap();
    plans
        .entry((which, flags))
        .or_insert_with(|| {
            let schema = Schema::parse(SCHEMAS[which]).expect("seed schema parses");
            DecodePlan::new(&schema, &decode_options(flags)).expect("seed schema compiles")
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------
// resolve
// ---------------------------------------------------------------------------------------------

/// Writer and reader schemas from arbitrary bytes: `writer JSON [\0 reader JSON [\0 tail]]`.
/// Without a reader part the writer is resolved against itself; a writer part of one byte
/// `0xNN` (not JSON) names seed schema `NN` of [`SCHEMAS`], likewise the reader. When
/// `DecodePlan::resolve` succeeds, the tail is decoded with it as in the `decode` target
/// (`[flags][count][batch size][split][kernel][data...]`).
pub fn resolve(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0);
    let writer_text = parts.next().unwrap_or_default();
    let reader_text = parts.next().unwrap_or(writer_text);
    let tail = parts.next().unwrap_or_default();
    let (Some(writer), Some(reader)) = (schema_of(writer_text), schema_of(reader_text)) else {
        return;
    };
    let (flags, tail) = tail.split_first().map_or((0, &[][..]), |(f, t)| (*f, t));
    let Ok(plan) = DecodePlan::resolve(&writer, &reader, &decode_options(flags)) else {
        return;
    };
    decode_tail(&plan, tail);
}

/// A schema from one part of a `resolve` input: a seed schema's number, or JSON.
fn schema_of(part: &[u8]) -> Option<Schema> {
    match part {
        [n] if !n.is_ascii_digit() && *n != b'"' => {
            Schema::parse(SCHEMAS[*n as usize % SCHEMAS.len()]).ok()
        }
        _ => Schema::parse(std::str::from_utf8(part).ok()?).ok(),
    }
}
