//! A minimal, independent parser of the Avro object container layout (header and block
//! framing only), used to check block boundaries, metadata and sync markers.

/// The parsed framing of a container file.
pub struct Container {
    /// Header metadata entries, in file order.
    pub metadata: Vec<(String, Vec<u8>)>,
    /// The header's sync marker.
    pub sync: [u8; 16],
    /// Records per block, in file order.
    pub block_rows: Vec<u64>,
}

impl Container {
    /// The value of metadata entry `key`.
    pub fn meta(&self, key: &str) -> Option<&[u8]> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }
}

fn read_long(bytes: &[u8], pos: &mut usize) -> i64 {
    let mut z: u64 = 0;
    let mut shift = 0;
    loop {
        let b = bytes[*pos];
        *pos += 1;
        z |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        assert!(shift < 64, "varint too long at {pos}");
    }
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

fn read_bytes<'a>(bytes: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let len = usize::try_from(read_long(bytes, pos)).expect("non-negative length");
    let out = &bytes[*pos..*pos + len];
    *pos += len;
    out
}

/// Parses header and block framing, asserting that every block ends with the header's sync
/// marker and that the file ends exactly after the last block.
pub fn parse(bytes: &[u8]) -> Container {
    assert_eq!(&bytes[..4], b"Obj\x01", "magic");
    let mut pos = 4;
    let mut metadata = Vec::new();
    loop {
        let mut count = read_long(bytes, &mut pos);
        if count == 0 {
            break;
        }
        if count < 0 {
            count = -count;
            read_long(bytes, &mut pos);
        }
        for _ in 0..count {
            let key = String::from_utf8(read_bytes(bytes, &mut pos).to_vec()).expect("utf-8 key");
            let value = read_bytes(bytes, &mut pos).to_vec();
            metadata.push((key, value));
        }
    }
    let sync: [u8; 16] = bytes[pos..pos + 16].try_into().expect("sync marker");
    pos += 16;

    let mut block_rows = Vec::new();
    while pos < bytes.len() {
        let rows = read_long(bytes, &mut pos);
        let size = read_long(bytes, &mut pos);
        assert!(rows > 0 && size > 0, "block {} framing", block_rows.len());
        pos += size as usize;
        assert_eq!(
            bytes[pos..pos + 16],
            sync,
            "sync after block {}",
            block_rows.len()
        );
        pos += 16;
        block_rows.push(rows as u64);
    }
    assert_eq!(pos, bytes.len(), "file ends after the last block");
    Container {
        metadata,
        sync,
        block_rows,
    }
}
