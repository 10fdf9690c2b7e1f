//! A tiny parser of the Avro object container framing (header, blocks, sync markers), used to
//! know where blocks end and to splice files.

use super::*;

/// One data block of a container file.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    pub count: i64,
    pub data_start: usize,
    pub data_len: usize,
    /// One past the block's sync marker.
    pub end: usize,
}

/// The framing of a container file.
#[derive(Clone, Debug)]
pub struct Container {
    pub metadata: BTreeMap<String, Vec<u8>>,
    pub sync: [u8; 16],
    /// One past the header's sync marker.
    pub header_len: usize,
    pub blocks: Vec<BlockInfo>,
}

/// Read one zigzag varint.
pub fn read_long(b: &[u8], pos: &mut usize) -> Result<i64, String> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let byte = *b.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        if shift >= 64 {
            return Err("overlong varint".into());
        }
        v |= ((byte & 0x7f) as u64) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            break;
        }
    }
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

impl Container {
    pub fn parse(b: &[u8]) -> Result<Container, String> {
        if b.get(0..4) != Some(b"Obj\x01") {
            return Err("bad magic".into());
        }
        let mut pos = 4;
        let mut metadata = BTreeMap::new();
        loop {
            let mut n = read_long(b, &mut pos)?;
            if n == 0 {
                break;
            }
            if n < 0 {
                n = -n;
                read_long(b, &mut pos)?;
            }
            for _ in 0..n {
                let kl = read_long(b, &mut pos)? as usize;
                let k = String::from_utf8(b.get(pos..pos + kl).ok_or("truncated")?.to_vec())
                    .map_err(|e| e.to_string())?;
                pos += kl;
                let vl = read_long(b, &mut pos)? as usize;
                let v = b.get(pos..pos + vl).ok_or("truncated")?.to_vec();
                pos += vl;
                metadata.insert(k, v);
            }
        }
        let sync: [u8; 16] = b
            .get(pos..pos + 16)
            .ok_or("truncated sync")?
            .try_into()
            .unwrap();
        pos += 16;
        let header_len = pos;
        let mut blocks = Vec::new();
        while pos < b.len() {
            let start = pos;
            let count = read_long(b, &mut pos)?;
            let size = read_long(b, &mut pos)?;
            if size < 0 || pos + size as usize + 16 > b.len() {
                return Err(format!("bad block at {start}"));
            }
            let data_start = pos;
            pos += size as usize;
            if b[pos..pos + 16] != sync {
                return Err(format!("bad sync after block at {start}"));
            }
            pos += 16;
            blocks.push(BlockInfo {
                count,
                data_start,
                data_len: size as usize,
                end: pos,
            });
        }
        Ok(Container {
            metadata,
            sync,
            header_len,
            blocks,
        })
    }

    pub fn schema_json(&self) -> Result<Json, String> {
        let s = self
            .metadata
            .get("avro.schema")
            .ok_or("no avro.schema in header")?;
        serde_json::from_slice(s).map_err(|e| e.to_string())
    }

    pub fn model(&self) -> Result<Model, String> {
        Model::parse(&self.schema_json()?)
    }
}
