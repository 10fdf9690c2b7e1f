//! Reading Avro container files through `object_store` without fetching whole objects: the
//! header from a growing prefix, one split as the header plus the split's blocks (ranged GETs
//! of the split and of the tail of its last block, framed here so that nothing past that
//! block is asked for), and row counts from the block headers alone.
//!
//! These readers are blocking (`std::io::Read`): they run on a blocking thread of the tokio
//! runtime (never on a worker) and wait on the store with the [`Handle`] of the runtime they
//! run in, found at each GET: an [`Object`] may outlive the execution that located it (a
//! scan's file cache keeps files whose later splits never opened, under a `LIMIT`), and the
//! next execution may run in another runtime.

use std::io::Read;
use std::ops::Range;
use std::sync::Arc;

use avrow::avrow_engine::varint::{Kernel, Scalar};
use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use tokio::runtime::Handle;

/// The first GET of a header; doubled until the header fits.
const HEADER_PROBE: u64 = 64 << 10;
/// Bytes of one GET while a split's blocks are read.
const READ_CHUNK: u64 = 8 << 20;
/// Bytes of one GET while only block headers are walked (row counts) or a sync marker is
/// looked for.
const WALK_CHUNK: u64 = 256 << 10;
/// A header larger than this is refused (the reader's own limits are smaller still).
const MAX_HEADER: u64 = 64 << 20;
/// The most GETs a row count walks with (after the header's), and the most bytes it fetches:
/// a table's registration costs a few requests per object, not the object. An object whose
/// block headers are not all reached within them gets an estimate, not a count.
const COUNT_MAX_GETS: u32 = 32;
const COUNT_MAX_BYTES: u64 = 4 << 20;

/// One object of a store, read with ranged GETs.
#[derive(Clone)]
pub(crate) struct Object {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) location: Path,
    pub(crate) size: u64,
}

impl Object {
    /// The name errors give this object.
    pub(crate) fn name(&self) -> String {
        self.location.to_string()
    }

    fn get(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        let range = range.start.min(self.size)..range.end.min(self.size);
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let handle = Handle::try_current().map_err(|e| {
            std::io::Error::other(format!(
                "reading {} outside a tokio runtime: {e}",
                self.name()
            ))
        })?;
        handle
            .block_on(self.store.get_range(&self.location, range))
            .map_err(std::io::Error::other)
    }
}

/// The object's header bytes and the parsed header (through avrow's reader, so that every
/// check of the header is the reader's).
#[derive(Clone)]
pub(crate) struct HeaderBytes {
    pub(crate) bytes: Bytes,
    pub(crate) header: avrow::Header,
    /// Everything the header's GET brought (the header and the object's first bytes after
    /// it): the first split and the row count start from it instead of fetching it again.
    prefix: Bytes,
}

/// Fetch the header: a 64 KiB prefix, doubled while the header does not fit (up to the
/// object's size and `MAX_HEADER`).
pub(crate) fn read_header(object: &Object) -> avrow::Result<HeaderBytes> {
    let mut want = HEADER_PROBE;
    loop {
        let prefix = object.get(0..want).map_err(|source| avrow::Error::Io {
            file: object.name(),
            source,
        })?;
        let got = prefix.len() as u64;
        match avrow::BlockReader::from_stream(std::io::Cursor::new(prefix.clone())) {
            Ok(blocks) => {
                let header = blocks.header().clone();
                let len = header.len() as usize;
                return Ok(HeaderBytes {
                    bytes: prefix.slice(..len.min(prefix.len())),
                    header,
                    prefix,
                });
            }
            // A header cut short by the prefix: fetch more, unless this was all there is. Any
            // other error (not Avro, a malformed header) is final: no larger GET would mend it.
            Err(avrow::Error::Header {
                kind: avrow::HeaderErrorKind::Truncated { .. },
                ..
            }) if got == want && want < object.size.min(MAX_HEADER) => {
                want = (want * 2).min(object.size.min(MAX_HEADER));
            }
            Err(e) => return Err(rename(e, &object.name())),
        }
    }
}

/// Errors of a reader over fetched bytes name the object, not `<stream>`.
fn rename(e: avrow::Error, name: &str) -> avrow::Error {
    match e {
        avrow::Error::Header { offset, kind, .. } => avrow::Error::Header {
            file: name.to_string(),
            offset,
            kind,
        },
        avrow::Error::Io { source, .. } => avrow::Error::Io {
            file: name.to_string(),
            source,
        },
        other => other,
    }
}

/// A window of fetched bytes over an object.
struct Window {
    object: Object,
    start: u64,
    bytes: Bytes,
    /// GETs made and bytes fetched by this window (the header's prefix not counted).
    gets: u32,
    fetched: u64,
}

impl Window {
    /// A window holding the object's first bytes, as the header's GET fetched them.
    fn new(object: Object, prefix: Bytes) -> Self {
        Window {
            object,
            start: 0,
            bytes: prefix,
            gets: 0,
            fetched: 0,
        }
    }

    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Make `at..at + n` (clipped to the object) present, fetching `at..at + max(n, chunk)`
    /// when it is not.
    fn ensure(&mut self, at: u64, n: u64, chunk: u64) -> std::io::Result<()> {
        let want_end = (at + n).min(self.object.size);
        if at >= self.start && want_end <= self.end() {
            return Ok(());
        }
        let end = (at + n.max(chunk)).min(self.object.size);
        self.bytes = self.object.get(at..end)?;
        self.start = at;
        self.gets += 1;
        self.fetched += self.bytes.len() as u64;
        Ok(())
    }

    fn slice(&self, range: Range<u64>) -> Bytes {
        let from = (range.start - self.start) as usize;
        let to = (range.end.min(self.end()) - self.start) as usize;
        self.bytes.slice(from..to)
    }
}

/// A block's framing: its record count, its data's size and where it ends (after its sync
/// marker); `None` where the framing cannot be read (the reader then reports the exact error).
fn frame(window: &mut Window, at: u64, chunk: u64) -> std::io::Result<Option<(u64, u64, u64)>> {
    window.ensure(at, 20, chunk)?;
    let head = window.slice(at..at + 20);
    let Some((count, a)) = varint(&head) else {
        return Ok(None);
    };
    let Some((size, b)) = varint(&head[a..]) else {
        return Ok(None);
    };
    if count < 0 || size < 0 {
        return Ok(None);
    }
    let end = at
        .checked_add((a + b) as u64)
        .and_then(|e| e.checked_add(size as u64))
        .and_then(|e| e.checked_add(16));
    Ok(end.map(|end| (count as u64, size as u64, end)))
}

/// One zigzag varint long and its length in bytes (the reader's reference kernel).
fn varint(bytes: &[u8]) -> Option<(i64, usize)> {
    let mut pos = 0;
    let value = Scalar.read_long(bytes, &mut pos).ok()?;
    Some((value, pos))
}

/// Rows of an object, from its block headers (no block data is fetched beyond what shares a
/// GET with a header). Each block's framing is checked as the reader checks it: the sync
/// marker before it (fetched with its header) and the one after the last block.
pub(crate) fn count_rows(object: &Object, header: &HeaderBytes) -> std::io::Result<RowCount> {
    let (prefix, header) = (header.prefix.clone(), &header.header);
    let invalid = |what: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {what}", object.name()),
        )
    };
    let sync = header.sync();
    // Each count is checked against its block's size as decoding checks it (a count the
    // records could not fill is an error, not the answer): the stored bytes bound the data
    // with the null codec, the block size limit otherwise.
    let min_record_size = avrow::avrow_engine::DecodePlan::new(
        header.schema(),
        &avrow::avrow_engine::DecodeOptions::default(),
    )
    .map(|plan| plan.decoder().min_record_size())
    .unwrap_or(0);
    let uncompressed = header.codec() == avrow::Codec::Null;
    let mut window = Window::new(object.clone(), prefix);
    let first = header.len();
    let mut at = first;
    let mut rows = 0u64;
    // Small blocks: framings in chunks of many blocks; after a block larger than a chunk,
    // only the next framing (its marker before it).
    let mut chunk = WALK_CHUNK;
    loop {
        if window.gets >= COUNT_MAX_GETS || window.fetched >= COUNT_MAX_BYTES {
            return Ok(RowCount::Estimate(estimate(
                rows,
                at - first,
                object.size - first,
            )));
        }
        // The marker that ends the previous block (or the header) and this block's framing
        // come in one GET.
        window.ensure(at - 16, 36, chunk)?;
        if window.slice(at - 16..at) != sync[..] {
            return Err(invalid(format!(
                "no sync marker at byte {} (the end of the block before byte {at})",
                at - 16
            )));
        }
        if at >= object.size {
            return Ok(RowCount::Exact(rows));
        }
        match frame(&mut window, at, chunk)? {
            Some((count, size, end)) if end <= object.size => {
                let bytes = match uncompressed {
                    true => usize::try_from(size).unwrap_or(usize::MAX),
                    false => avrow::DEFAULT_MAX_BLOCK_SIZE,
                };
                avrow::avrow_engine::Limit::check_records(count, bytes, min_record_size)
                    .map_err(|limit| invalid(format!("the block at byte {at}: {limit}")))?;
                rows = rows.checked_add(count).ok_or_else(|| {
                    invalid(format!(
                        "the blocks up to byte {end} declare more than {} records",
                        u64::MAX
                    ))
                })?;
                chunk = if end - at > WALK_CHUNK {
                    36
                } else {
                    WALK_CHUNK
                };
                at = end;
            }
            _ => {
                return Err(invalid(format!(
                    "the block at byte {at} has invalid framing"
                )))
            }
        }
    }
}

/// How many rows an object holds, from its block headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowCount {
    /// Every block header was read.
    Exact(u64),
    /// The walk stopped within its budget: the rows of the blocks it read, scaled to the
    /// object's size.
    Estimate(u64),
}

/// `rows` in the first `walked` bytes of `total` (block bytes after the header), scaled.
fn estimate(rows: u64, walked: u64, total: u64) -> u64 {
    if walked == 0 {
        return 0;
    }
    (u128::from(rows) * u128::from(total) / u128::from(walked)).min(u128::from(u64::MAX)) as u64
}

/// Where the blocks of `range` start (the Hadoop rule: a range reads the blocks whose
/// preceding sync marker starts inside it): the header's end when the range holds the
/// header's sync marker, else just after the first sync marker at or after `range.start`;
/// `None` when the range holds no sync marker.
fn first_block(
    window: &mut Window,
    header: &avrow::Header,
    range: &Range<u64>,
) -> std::io::Result<Option<u64>> {
    let header_sync = header.len() - 16;
    if range.start <= header_sync {
        return Ok((header_sync < range.end).then_some(header.len()));
    }
    if let Some(found) = hop_to(window, header, range)? {
        return Ok(found);
    }
    scan_to_first(window, header, range)
}

/// [`first_block`] of a range past the header's marker by looking for the first sync marker
/// at or after its start.
fn scan_to_first(
    window: &mut Window,
    header: &avrow::Header,
    range: &Range<u64>,
) -> std::io::Result<Option<u64>> {
    let sync = header.sync();
    let mut at = range.start;
    while at < range.end && at < window.object.size {
        // A marker must start before `range.end`: nothing past its last byte is fetched.
        let n = WALK_CHUNK.min(range.end + 15 - at);
        window.ensure(at, n, n)?;
        let piece = window.slice(at..window.end());
        if let Some(i) = memchr::memmem::find(&piece, &sync) {
            let found = at + i as u64;
            return Ok((found < range.end).then_some(found + 16));
        }
        if window.end() >= window.object.size {
            break;
        }
        // A marker may straddle two GETs.
        at = window.end() - 15;
    }
    Ok(None)
}

/// Block framings [`hop_to`] may read before it gives up and the split scans for a marker.
const MAX_HOPS: u64 = 4;

/// [`first_block`] by hopping from block to block, from the first (whose framing came with the
/// header's GET), when blocks are large against the distance to `range`: a split inside a
/// block larger than itself then learns that it holds no marker from framings alone (a few
/// bytes each) instead of fetching itself to look for one. `None`: hopping would take more
/// than [`MAX_HOPS`] framings, or one could not be read; the caller scans.
///
/// A hop trusts a block's byte size; the split that reads that block checks the sync marker
/// after it and that the block's data ends where its size says (the codecs refuse bytes left
/// after their stream), so a size that lies ends the query with that split's error, even
/// when the lie spans whole blocks marker to marker.
fn hop_to(
    window: &mut Window,
    header: &avrow::Header,
    range: &Range<u64>,
) -> std::io::Result<Option<Option<u64>>> {
    let size = window.object.size;
    let mut at = header.len();
    let mut hops = 0;
    while hops < MAX_HOPS {
        // The first framing lies in the header's GET; later ones fetch their 20 bytes.
        let Some((_, _, end)) = frame(window, at, 20)? else {
            return Ok(None);
        };
        if end > size || end <= at {
            return Ok(None);
        }
        if hops == 0 && range.start.saturating_sub(at) > MAX_HOPS * (end - at) {
            // Blocks are small against the distance: scanning is cheaper.
            return Ok(None);
        }
        let marker = end - 16;
        if marker >= range.start {
            return Ok(Some((marker < range.end).then_some(end)));
        }
        at = end;
        hops += 1;
        if at >= size {
            // Past the last block: no marker at or after `range.start`.
            return Ok(Some(None));
        }
    }
    Ok(None)
}

/// The bytes of one split as a stream: the header, then the split's blocks, fetched in
/// `READ_CHUNK` pieces; it ends after the last block whose sync marker starts in the range.
pub(crate) struct SplitStream {
    header: Bytes,
    window: Window,
    /// The next byte of the object to hand out.
    pos: u64,
    /// Where the block being handed out ends.
    block_end: u64,
    range_end: u64,
    done: bool,
}

impl SplitStream {
    /// The stream of `range` and the file offset of its first block.
    pub(crate) fn new(
        object: Object,
        header: HeaderBytes,
        range: Range<u64>,
    ) -> std::io::Result<(Self, u64)> {
        let mut window = Window::new(object, header.prefix);
        let first = first_block(&mut window, &header.header, &range)?;
        let pos = first.unwrap_or(header.header.len());
        Ok((
            SplitStream {
                header: header.bytes,
                window,
                pos,
                block_end: pos,
                range_end: range.end,
                done: first.is_none(),
            },
            pos,
        ))
    }
}

impl Read for SplitStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.header.is_empty() {
            let n = buf.len().min(self.header.len());
            buf[..n].copy_from_slice(&self.header[..n]);
            self.header = self.header.slice(n..);
            return Ok(n);
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let size = self.window.object.size;
        if self.pos == self.block_end {
            // The sync marker before the block at `pos` starts at `pos - 16`.
            if self.done || self.pos >= size || self.pos - 16 >= self.range_end {
                return Ok(0);
            }
            // The framing GET also brings the block's data, up to the split's end.
            let chunk = READ_CHUNK.min(self.range_end.max(self.pos + 20) - self.pos);
            self.block_end = match frame(&mut self.window, self.pos, chunk)? {
                Some((_, _, end)) => end.min(size),
                // Hand the reader what there is and let it name the framing error.
                None => {
                    self.done = true;
                    (self.pos + WALK_CHUNK).min(size)
                }
            };
        }
        // Fetch nothing past the split: blocks after `range_end` are not ours, and the block
        // that crosses it is fetched to its end when it is reached.
        let limit = self.block_end.max(self.range_end).min(size);
        let chunk = READ_CHUNK.min(limit - self.pos).max(1);
        self.window.ensure(self.pos, 1, chunk)?;
        let piece = self.window.slice(self.pos..self.block_end);
        if piece.is_empty() {
            return Ok(0);
        }
        let n = buf.len().min(piece.len());
        buf[..n].copy_from_slice(&piece[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    /// For every range of a file of large and small blocks, hopping finds the first block the
    /// scan for a marker finds.
    #[test]
    fn hops_agree_with_the_scan_for_every_range() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../datasets/samples/order.avro"
        );
        let reader = avrow::ReaderBuilder::new().open(sample).unwrap();
        let mut bytes = Vec::new();
        let mut writer = avrow::WriterBuilder::new(reader.schema())
            .with_block_size(48 << 10)
            .build(&mut bytes)
            .unwrap();
        for batch in reader {
            writer.write(&batch.unwrap()).unwrap();
        }
        writer.finish().unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let location = Path::from("f.avro");
        let size = bytes.len() as u64;
        runtime
            .block_on(store.put(&location, bytes.into()))
            .unwrap();
        let object = Object {
            store,
            location,
            size,
        };
        let _context = runtime.enter();
        let header = read_header(&object).unwrap();
        let (mut hopped, mut checked) = (0, 0);
        let step = (size / 97).max(1);
        for start in (header.header.len() as u64 - 8..=size + 8).step_by(step as usize) {
            for end in [start, start + 1, start + step, start + 5 * step, size + 1] {
                let range = start..end;
                let mut window = Window::new(object.clone(), header.prefix.clone());
                let scanned = scan_to_first(&mut window, &header.header, &range).unwrap();
                let mut window = Window::new(object.clone(), header.prefix.clone());
                if let Some(hop) = hop_to(&mut window, &header.header, &range).unwrap() {
                    assert_eq!(hop, scanned, "{range:?} of {size}");
                    hopped += 1;
                }
                checked += 1;
            }
        }
        assert!(
            hopped > 20 && hopped < checked,
            "{hopped} of {checked} ranges hopped"
        );
    }

    #[test]
    fn varints_decode_zigzag_longs() {
        assert_eq!(varint(&[0x00]), Some((0, 1)));
        assert_eq!(varint(&[0x01]), Some((-1, 1)));
        assert_eq!(varint(&[0x02]), Some((1, 1)));
        assert_eq!(varint(&[0xac, 0x02]), Some((150, 2)));
        assert_eq!(varint(&[0x80; 10]), None);
        assert_eq!(varint(&[0x80]), None);
    }
}
