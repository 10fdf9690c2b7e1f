//! `avrow info FILE`: what the header and the block headers say, without decoding records:
//! codec, sync marker, block and record counts, compressed and uncompressed sizes, metadata
//! (non-UTF-8 values in hex), schema name and fingerprints.
//!
//! The uncompressed size needs each block decompressed (not decoded); blocks are decompressed
//! in parallel, a bounded batch of blocks at a time, and a block that expands far past its
//! stored size (a possible decompression bomb) is counted as it streams, never held whole.

use super::schema::fingerprint_name;
use super::{hex, json_text, print};
use crate::args::InfoArgs;
use crate::inputs::{self, ByteCounter, Input};
use anyhow::Result;
use avrow::avrow_engine::schema::{Fingerprint, Node};
use avrow::{Block, Header};
use indicatif::HumanBytes;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

/// Blocks decompressed together: at most this many, or this many compressed bytes.
const BATCH_BLOCKS: usize = 256;
const BATCH_BYTES: usize = 64 << 20;

/// What `info` reports.
#[derive(Debug)]
struct Info {
    file: String,
    file_size: u64,
    header: Header,
    blocks: u64,
    empty_blocks: u64,
    records: u64,
    compressed: u64,
    uncompressed: u64,
}

fn uncompressed_sizes(blocks: &[Block]) -> Result<u64, avrow::Error> {
    blocks
        .par_iter()
        .map_init(Vec::new, |buf, block| block.decompressed_size(buf))
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

fn gather(input: &Input, max_block_size: Option<usize>) -> Result<Info> {
    let counter = ByteCounter::default();
    let mut reader = input.blocks(&counter)?;
    if let Some(limit) = max_block_size {
        reader = reader.with_max_block_size(limit);
    }
    let header = reader.header().clone();
    let mut info = Info {
        file: input.to_string(),
        file_size: 0,
        header,
        blocks: 0,
        empty_blocks: 0,
        records: 0,
        compressed: 0,
        uncompressed: 0,
    };
    let mut pending: Vec<Block> = Vec::new();
    let mut pending_bytes = 0;
    for block in reader {
        let block = block?;
        info.blocks += 1;
        info.records += block.record_count();
        info.empty_blocks += u64::from(block.record_count() == 0);
        info.compressed += block.data().len() as u64;
        pending_bytes += block.data().len();
        pending.push(block);
        if pending.len() >= BATCH_BLOCKS || pending_bytes >= BATCH_BYTES {
            info.uncompressed += uncompressed_sizes(&pending)?;
            pending.clear();
            pending_bytes = 0;
        }
    }
    info.uncompressed += uncompressed_sizes(&pending)?;
    info.file_size = input.size().unwrap_or_else(|| counter.get());
    Ok(info)
}

/// The full name of the top-level type, or the type itself for unnamed schemas.
fn schema_name(header: &Header) -> String {
    let schema = header.schema();
    match schema.root() {
        Node::Named(i) => schema.named(*i).name.full(),
        Node::Primitive(p, _) => p.name().to_string(),
        Node::Array(_) => "array".into(),
        Node::Map(_) => "map".into(),
        Node::Union(_) => "union".into(),
        _ => "(unknown type)".into(),
    }
}

/// A metadata value: its text if UTF-8, else its bytes in hex.
fn metadata_value(value: &[u8]) -> (&'static str, String) {
    match std::str::from_utf8(value) {
        Ok(text) => ("utf8", text.to_string()),
        Err(_) => ("hex", hex(value)),
    }
}

const FINGERPRINTS: [Fingerprint; 3] = [Fingerprint::Rabin, Fingerprint::Md5, Fingerprint::Sha256];

fn text(info: &Info) -> String {
    let header = &info.header;
    let mut rows: Vec<(String, String)> = vec![
        ("file".into(), info.file.clone()),
        (
            "file size".into(),
            format!("{} bytes ({})", info.file_size, HumanBytes(info.file_size)),
        ),
        ("codec".into(), header.codec().to_string()),
        ("sync marker".into(), hex(&header.sync())),
        ("header size".into(), format!("{} bytes", header.len())),
        ("schema".into(), schema_name(header)),
    ];
    for algorithm in FINGERPRINTS {
        rows.push((
            format!("fingerprint {}", fingerprint_name(algorithm)),
            hex(&header.schema().fingerprint(algorithm)),
        ));
    }
    rows.push((
        "blocks".into(),
        if info.empty_blocks > 0 {
            format!("{} ({} empty)", info.blocks, info.empty_blocks)
        } else {
            info.blocks.to_string()
        },
    ));
    rows.push(("records".into(), info.records.to_string()));
    rows.push((
        "compressed size".into(),
        format!(
            "{} bytes ({})",
            info.compressed,
            HumanBytes(info.compressed)
        ),
    ));
    rows.push((
        "uncompressed size".into(),
        format!(
            "{} bytes ({})",
            info.uncompressed,
            HumanBytes(info.uncompressed)
        ),
    ));
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (key, value) in rows {
        out.push_str(&format!("{:<width$} {value}\n", format!("{key}:")));
    }
    out.push_str("metadata:\n");
    let mut keys: Vec<&String> = header.metadata().keys().collect();
    keys.sort();
    for key in keys {
        let value = &header.metadata()[key];
        let shown = if key == "avro.schema" {
            format!("({} bytes; see `avrow schema`)", value.len())
        } else {
            match metadata_value(value) {
                ("utf8", text) => text,
                (_, hex) => format!("0x{hex} (not UTF-8)"),
            }
        };
        out.push_str(&format!("  {key}: {shown}\n"));
    }
    out
}

fn json(info: &Info) -> Value {
    let header = &info.header;
    let mut metadata = Map::new();
    let mut keys: Vec<&String> = header.metadata().keys().collect();
    keys.sort();
    for key in keys {
        let (encoding, value) = metadata_value(&header.metadata()[key]);
        metadata.insert(key.clone(), json!({ "encoding": encoding, "value": value }));
    }
    let fingerprints: Map<String, Value> = FINGERPRINTS
        .iter()
        .map(|&a| {
            (
                fingerprint_name(a).to_string(),
                json!(hex(&header.schema().fingerprint(a))),
            )
        })
        .collect();
    json!({
        "file": info.file,
        "file_size": info.file_size,
        "codec": header.codec().name(),
        "sync_marker": hex(&header.sync()),
        "header_size": header.len(),
        "schema_name": schema_name(header),
        "fingerprints": fingerprints,
        "blocks": info.blocks,
        "empty_blocks": info.empty_blocks,
        "records": info.records,
        "compressed_size": info.compressed,
        "uncompressed_size": info.uncompressed,
        "metadata": metadata,
    })
}

/// Prints the description of `args.file`.
///
/// # Errors
/// The file cannot be read, its header is invalid, a block is malformed or does not
/// decompress, or writing fails.
pub fn run(args: &InfoArgs) -> Result<()> {
    let info = gather(&inputs::single(&args.file), args.max_block_size)?;
    let out = if args.json {
        json_text(&json(&info), true)
    } else {
        text(&info)
    };
    print(&out)?;
    Ok(())
}
