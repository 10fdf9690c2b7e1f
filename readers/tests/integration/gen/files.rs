//! Container files written by apache-avro's Writer under every codec, with empty blocks
//! injected and schemas rewritten, and the seeded [`Case`]s the property tests run.

use super::*;

/// Every codec apache-avro can write (fast compression levels: the tests write many blocks).
pub fn all_codecs() -> Vec<Codec> {
    vec![
        Codec::Null,
        Codec::Deflate(apache_avro::DeflateSettings::default()),
        Codec::Snappy,
        Codec::Zstandard(apache_avro::ZstandardSettings::new(1)),
        Codec::Bzip2(apache_avro::Bzip2Settings::new(1)),
        Codec::Xz(apache_avro::XzSettings::new(0)),
    ]
}

pub fn codec_name(c: Codec) -> &'static str {
    c.into()
}

/// Write `values` with apache-avro's Writer, flushing at random points so that the file has
/// many blocks (often of a single record), with a small block size, and sometimes with arrays
/// and maps written in several blocks carrying byte sizes.
pub fn write_file(rng: &mut Rng, schema: &Schema, values: &[Value], codec: Codec) -> Vec<u8> {
    let block_size = *rng.pick(&[64usize, 256, 1024, 16000]);
    let map_array = if rng.one_in(3) {
        Some(rng.range(1, 64))
    } else {
        None
    };
    let mut w = apache_avro::Writer::builder()
        .schema(schema)
        .writer(Vec::new())
        .codec(codec)
        .block_size(block_size)
        .maybe_map_array_target_block_size(map_array)
        .build()
        .expect("writer");
    if rng.one_in(3) {
        w.add_user_metadata("user.key".into(), b"\xff\x00 not utf-8")
            .expect("metadata");
    }
    // xz and bzip2 cost milliseconds per block: fewer one-record blocks for them.
    let slow = matches!(codec, Codec::Xz(_) | Codec::Bzip2(_));
    let flush_one_in = if slow {
        *rng.pick(&[4usize, 1000])
    } else {
        *rng.pick(&[1usize, 2, 5, 1000])
    };
    for v in values {
        w.append_value_ref(v)
            .unwrap_or_else(|e| panic!("apache-avro cannot write {v:?}: {e}"));
        if rng.one_in(flush_one_in) {
            w.flush().expect("flush");
        }
    }
    w.into_inner().expect("into_inner")
}

/// Insert blocks of zero records (each holding the codec's encoding of no bytes) at random
/// block boundaries, including before the first and after the last block. apache-avro's reader
/// stops at such a block, so the oracle must be read from the file before this.
pub fn inject_empty_blocks(rng: &mut Rng, file: &[u8], codec: Codec, how_many: usize) -> Vec<u8> {
    let c = Container::parse(file).expect("own file parses");
    let mut empty = Vec::new();
    codec.compress(&mut empty).expect("compress empty");
    let mut block = Vec::new();
    write_long(&mut block, 0);
    write_long(&mut block, empty.len() as i64);
    block.extend_from_slice(&empty);
    block.extend_from_slice(&c.sync);
    let boundaries: Vec<usize> = std::iter::once(c.header_len)
        .chain(c.blocks.iter().map(|b| b.end))
        .collect();
    let mut at: Vec<usize> = (0..how_many).map(|_| *rng.pick(&boundaries)).collect();
    at.sort_unstable();
    let mut out = Vec::with_capacity(file.len() + how_many * block.len());
    let mut prev = 0;
    for p in at {
        out.extend_from_slice(&file[prev..p]);
        out.extend_from_slice(&block);
        prev = p;
    }
    out.extend_from_slice(&file[prev..]);
    out
}

/// Append a zigzag varint.
pub fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
}

/// A full random case: schema and rows.
pub struct Case {
    pub json: Json,
    pub schema: Schema,
    pub model: Model,
    pub values: Vec<Value>,
}

pub fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let (json, schema, model) = random_schema(&mut rng);
    let rows = match rng.below(10) {
        0 => 0,
        1 => 1,
        2 => rng.range(100, 400),
        _ => rng.range(2, 60),
    };
    let values = (0..rows)
        .map(|_| random_value(&mut rng, &model, &model.root, 3))
        .collect();
    Case {
        json,
        schema,
        model,
        values,
    }
}

/// The same file with another writer schema in its header (same wire encoding assumed): used to
/// test schema features apache-avro cannot write (e.g. `error`, odd logical types).
pub fn rewrite_schema(file: &[u8], schema: &str) -> Vec<u8> {
    let c = Container::parse(file).expect("own file parses");
    let mut out = b"Obj\x01".to_vec();
    let mut meta = c.metadata.clone();
    meta.insert("avro.schema".into(), schema.as_bytes().to_vec());
    write_long(&mut out, meta.len() as i64);
    for (k, v) in &meta {
        write_long(&mut out, k.len() as i64);
        out.extend_from_slice(k.as_bytes());
        write_long(&mut out, v.len() as i64);
        out.extend_from_slice(v);
    }
    write_long(&mut out, 0);
    out.extend_from_slice(&c.sync);
    out.extend_from_slice(&file[c.header_len..]);
    out
}
