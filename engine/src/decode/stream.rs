//! Checking a block whose data arrives in pieces, such as a decompressor's output, without
//! holding all of it: [`RecordDecoder::check_stream`]. A reader calls it before it commits
//! memory to a block that expands far beyond its compressed size (a decompression bomb), so
//! that an invalid block fails within a bounded window and only a valid one is decompressed
//! whole.
//!
//! The records are decoded by a copy of the block's own decoder, so that every check the real
//! decode makes is made, a window at a time, and thrown away. A record larger than the window
//! is stepped over as it streams past, held to the writer's schema: varints, lengths,
//! collection counts (and that a block's recorded byte size is what its items take), union
//! branches, recursion depth, and the values whose validity the schema alone decides — the
//! UTF-8 of strings and map keys, `int` ranges, booleans, enum indexes — also in fields the
//! plan skips (such data is not valid Avro). What only the plan decides (a uuid's form, a
//! decimal's width, a duration's range, a resolved enum symbol) is checked when the block is
//! decoded.

use super::skip::Skip;
use super::RecordDecoder;
use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::VarintError;

/// Why [`RecordDecoder::check_stream`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamCheckError<E> {
    /// The source of the pieces failed (for example, the data does not decompress).
    Source(E),
    /// The data is not a valid block. Offsets count from the start of the block's data and
    /// record indexes from its first record, as in [`RecordDecoder::decode_block`].
    Decode(DecodeError),
}

/// Records decoded per call while checking.
const GROUP: usize = 1024;

/// The smallest window [`RecordDecoder::check_stream`] uses.
const MIN_WINDOW: usize = 16;

type Fill<'f, E> = &'f mut dyn FnMut(&mut Vec<u8>) -> Result<usize, E>;

/// The part of the block's data in memory, and where it is in the block.
struct Window<'f, E> {
    buf: Vec<u8>,
    /// The next byte to read in `buf`.
    pos: usize,
    /// The offset in the block's data of `buf[0]`.
    base: usize,
    /// The source has no more pieces.
    end: bool,
    fill: Fill<'f, E>,
}

impl<E> Window<'_, E> {
    fn available(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Append the source's next piece, first dropping the bytes already read once they are
    /// at least as many as the bytes left to read: each byte left is moved to the front for
    /// at least as many read (moving them at every piece moved the whole window for each
    /// piece), and the buffer holds at most twice what is left to read and a piece. False
    /// at the end.
    fn refill(&mut self) -> Result<bool, StreamCheckError<E>> {
        if self.end {
            return Ok(false);
        }
        if self.pos > 0 && self.pos >= self.available() {
            self.buf.drain(..self.pos);
            self.base += self.pos;
            self.pos = 0;
        }
        let n = (self.fill)(&mut self.buf).map_err(StreamCheckError::Source)?;
        if n == 0 {
            self.end = true;
        }
        Ok(n > 0)
    }

    fn error(&self, kind: DecodeErrorKind, at: usize) -> StreamCheckError<E> {
        StreamCheckError::Decode(DecodeError::new(kind, at))
    }

    fn byte(&mut self) -> Result<Option<u8>, StreamCheckError<E>> {
        while self.pos == self.buf.len() {
            if !self.refill()? {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }

    /// A zigzag varint, as the scalar kernel reads it.
    fn long(&mut self) -> Result<i64, StreamCheckError<E>> {
        let start = self.offset();
        let mut v = 0u64;
        for i in 0..10 {
            let Some(b) = self.byte()? else {
                return Err(self.error(DecodeErrorKind::Varint(VarintError::Truncated), start));
            };
            if i == 9 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(crate::varint::unzigzag64(v));
            }
        }
        Err(self.error(DecodeErrorKind::Varint(VarintError::Overlong), start))
    }

    /// Step over `n` bytes, reading pieces as needed but keeping none of them.
    fn take(&mut self, n: u64) -> Result<(), StreamCheckError<E>> {
        let start = self.offset();
        let mut left = n;
        loop {
            let k = left.min(self.available() as u64);
            self.pos += k as usize;
            left -= k;
            if left == 0 {
                return Ok(());
            }
            if !self.refill()? {
                let kind = DecodeErrorKind::UnexpectedEof {
                    needed: n,
                    available: n - left,
                };
                return Err(self.error(kind, start));
            }
        }
    }

    /// A length, then that many bytes.
    fn sized(&mut self) -> Result<(), StreamCheckError<E>> {
        let at = self.offset();
        let n = self.long()?;
        if n < 0 {
            return Err(self.error(DecodeErrorKind::NegativeLength(n), at));
        }
        self.take(n as u64)
    }

    /// A length, then that many bytes of UTF-8, checked as they stream past.
    fn string(&mut self) -> Result<(), StreamCheckError<E>> {
        let at = self.offset();
        let n = self.long()?;
        if n < 0 {
            return Err(self.error(DecodeErrorKind::NegativeLength(n), at));
        }
        let start = self.offset();
        let mut left = n as u64;
        let mut utf8 = Utf8Stream::default();
        loop {
            let k = left.min(self.available() as u64) as usize;
            if !utf8.feed(&self.buf[self.pos..self.pos + k]) {
                return Err(self.error(DecodeErrorKind::InvalidUtf8, start));
            }
            self.pos += k;
            left -= k as u64;
            if left == 0 {
                break;
            }
            if !self.refill()? {
                let kind = DecodeErrorKind::UnexpectedEof {
                    needed: n as u64,
                    available: n as u64 - left,
                };
                return Err(self.error(kind, start));
            }
        }
        if !utf8.complete() {
            return Err(self.error(DecodeErrorKind::InvalidUtf8, start));
        }
        Ok(())
    }
}

/// UTF-8 validation of a string that arrives in pieces: a sequence cut by a piece's end is
/// kept and completed from the next.
#[derive(Default)]
struct Utf8Stream {
    carry: [u8; 4],
    n: usize,
}

impl Utf8Stream {
    /// Whether the bytes so far can still be UTF-8.
    fn feed(&mut self, mut b: &[u8]) -> bool {
        if self.n > 0 {
            let need = match self.carry[0] {
                0xc2..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf4 => 4,
                _ => return false,
            };
            while self.n < need && !b.is_empty() {
                self.carry[self.n] = b[0];
                self.n += 1;
                b = &b[1..];
            }
            if self.n < need {
                return true;
            }
            if std::str::from_utf8(&self.carry[..need]).is_err() {
                return false;
            }
            self.n = 0;
        }
        match std::str::from_utf8(b) {
            Ok(_) => true,
            Err(e) if e.error_len().is_none() => {
                let tail = &b[e.valid_up_to()..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.n = tail.len();
                true
            }
            Err(_) => false,
        }
    }

    /// Whether the string ended on a whole character.
    fn complete(&self) -> bool {
        self.n == 0
    }
}

/// Skip one value as it streams past. `limit` is the most bytes the block may hold: it bounds
/// collection counts as the bytes left bound them in [`Skip::skip`].
fn skip_pull<E>(s: &Skip, w: &mut Window<'_, E>, limit: usize) -> Result<(), StreamCheckError<E>> {
    match s {
        Skip::Bytes(n) => w.take(*n as u64),
        Skip::Varint => w.long().map(drop),
        Skip::Varints(k) => (0..*k).try_for_each(|_| w.long().map(drop)),
        Skip::Sized => w.sized(),
        Skip::Str => w.string(),
        Skip::Int => {
            let at = w.offset();
            let v = w.long()?;
            if i32::try_from(v).is_err() {
                return Err(w.error(DecodeErrorKind::Varint(VarintError::IntOutOfRange), at));
            }
            Ok(())
        }
        Skip::Boolean => {
            let at = w.offset();
            match w.byte()? {
                Some(0 | 1) => Ok(()),
                Some(b) => Err(w.error(DecodeErrorKind::InvalidBoolean(b), at)),
                None => Err(w.error(
                    DecodeErrorKind::UnexpectedEof {
                        needed: 1,
                        available: 0,
                    },
                    at,
                )),
            }
        }
        Skip::Enum(symbols) => {
            let at = w.offset();
            let index = w.long()?;
            if usize::try_from(index).map_or(true, |i| i >= *symbols) {
                return Err(w.error(
                    DecodeErrorKind::EnumIndex {
                        index,
                        symbols: *symbols,
                    },
                    at,
                ));
            }
            Ok(())
        }
        Skip::Array(item) => blocks_pull(w, limit, item.min_size(), &mut |w| {
            skip_pull(item, w, limit)
        }),
        Skip::Map(value) => blocks_pull(w, limit, 1 + value.min_size(), &mut |w| {
            w.string()?;
            skip_pull(value, w, limit)
        }),
        Skip::Record(parts) => parts.iter().try_for_each(|p| skip_pull(p, w, limit)),
        Skip::Fields(fields, _) => fields.iter().try_for_each(|(_, p)| skip_pull(p, w, limit)),
        Skip::Union(branches) => {
            let at = w.offset();
            let index = w.long()?;
            match usize::try_from(index) {
                Ok(b) if b < branches.len() => skip_pull(&branches[b], w, limit),
                _ => Err(w.error(
                    DecodeErrorKind::UnionIndex {
                        index,
                        branches: branches.len(),
                    },
                    at,
                )),
            }
        }
        Skip::NullOrVarint(null) | Skip::NullOrSized(null) | Skip::NullOrBytes(null, _) => {
            let at = w.offset();
            let index = w.long()?;
            if index == i64::from(*null) {
                return Ok(());
            }
            if index != i64::from(1 - *null) {
                return Err(w.error(DecodeErrorKind::UnionIndex { index, branches: 2 }, at));
            }
            match s {
                Skip::NullOrVarint(_) => w.long().map(drop),
                Skip::NullOrSized(_) => w.sized(),
                Skip::NullOrBytes(_, n) => w.take(*n as u64),
                _ => unreachable!("a nullable skip"),
            }
        }
        Skip::TooDeep(name, depth) => Err(w.error(
            DecodeErrorKind::RecursionLimit {
                type_name: name.to_string(),
                depth: *depth,
            },
            w.offset(),
        )),
    }
}

type Item<'a, 'f, E> = &'a mut dyn FnMut(&mut Window<'f, E>) -> Result<(), StreamCheckError<E>>;

fn blocks_pull<'f, E>(
    w: &mut Window<'f, E>,
    limit: usize,
    min_item_size: usize,
    item: Item<'_, 'f, E>,
) -> Result<(), StreamCheckError<E>> {
    loop {
        let at = w.offset();
        let count = w.long()?;
        if count == 0 {
            return Ok(());
        }
        // A negative count is followed by the block's byte size. Decoding reads the items of
        // a block it keeps and jumps over one it skips: the items are read here, and must
        // take the recorded size, so that both ways agree.
        let size = if count < 0 {
            let size_at = w.offset();
            let size = w.long()?;
            if size < 0 {
                return Err(w.error(DecodeErrorKind::NegativeLength(size), size_at));
            }
            Some(size as u64)
        } else {
            None
        };
        let n = count.unsigned_abs();
        let start = w.offset();
        let left = limit.saturating_sub(start);
        // Items of zero bytes take nothing to step over, however many there are.
        if let Some(fit) = left.checked_div(min_item_size) {
            if n > fit as u64 {
                return Err(w.error(
                    DecodeErrorKind::TooLarge(Limit::Items {
                        count: n,
                        min_item_size,
                        left,
                    }),
                    at,
                ));
            }
            for _ in 0..n {
                item(w)?;
            }
        }
        if let Some(declared) = size {
            let actual = (w.offset() - start) as u64;
            if actual != declared {
                return Err(w.error(DecodeErrorKind::BlockSizeMismatch { declared, actual }, at));
            }
        }
    }
}

/// Whether a decode error can come from the window ending inside a record rather than from
/// the data: more bytes may turn it into a valid record.
fn cut_by_window_end(e: &DecodeError) -> bool {
    matches!(
        e.kind(),
        DecodeErrorKind::UnexpectedEof { .. }
            | DecodeErrorKind::Varint(VarintError::Truncated)
            | DecodeErrorKind::TooLarge(_)
    )
}

impl RecordDecoder {
    /// Check that the data `fill` produces is a valid block of `count` records, holding at
    /// most about twice `window` bytes of it at a time (bytes already checked are dropped once
    /// they are as many as those left), and decoding nothing into this decoder.
    ///
    /// `fill` appends the data's next piece to the vector it is given and returns the piece's
    /// length (0 at the end); it also enforces the block size limit, `limit` (the most bytes
    /// the data may have), which bounds collection counts in records larger than the window.
    ///
    /// Records are decoded as [`RecordDecoder::decode_block`] decodes them and dropped. A record
    /// larger than the window is only checked for its structure as it streams past (see the
    /// module documentation). A block that passes can still fail to decode; one that fails
    /// here would fail to decode, with the same error where the failing record fits the
    /// window. (A count too large for the data is reported where the data ends, not as
    /// [`DecodeErrorKind::TooLarge`].)
    ///
    /// ```
    /// use avrow_engine::{DecodeOptions, DecodePlan, StreamCheckError, schema::Schema};
    /// let schema = Schema::parse(r#"{"type":"record","name":"r","fields":[
    ///     {"name":"s","type":"string"}]}"#)?;
    /// let decoder = DecodePlan::new(&schema, &DecodeOptions::default())?.decoder();
    /// // Two records ("a", "bc"), then a stray byte, arriving one byte at a time.
    /// let data = [0x02, b'a', 0x04, b'b', b'c', 0x00];
    /// let mut at = 0;
    /// let mut fill = |out: &mut Vec<u8>| -> Result<usize, ()> {
    ///     let piece = &data[at..(at + 1).min(data.len())];
    ///     at += piece.len();
    ///     out.extend_from_slice(piece);
    ///     Ok(piece.len())
    /// };
    /// let Err(StreamCheckError::Decode(e)) = decoder.check_stream(2, 1 << 20, 1 << 20, &mut fill)
    /// else { panic!("the stray byte is an error") };
    /// assert_eq!(e.offset(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`StreamCheckError::Source`] if `fill` fails, [`StreamCheckError::Decode`] if the data is
    /// not a valid block.
    pub fn check_stream<E>(
        &self,
        count: u64,
        window: usize,
        limit: usize,
        fill: Fill<'_, E>,
    ) -> Result<(), StreamCheckError<E>> {
        let window = window.max(MIN_WINDOW);
        let mut w = Window {
            buf: Vec::with_capacity(window.min(1 << 20)),
            pos: 0,
            base: 0,
            end: false,
            fill,
        };
        // As many records as `limit` bytes can hold (records of no bytes: `i32::MAX`).
        self.check_record_count(count, limit)
            .map_err(StreamCheckError::Decode)?;
        let mut done: u64 = 0;
        if self.min_record_size == 0 {
            // Records of no bytes: whatever their number, the data must be empty.
            done = count;
        }
        let mut d = self.clone();
        d.truncate(0);
        while done < count {
            if !w.end && w.available() < window / 2 {
                w.refill()?;
                continue;
            }
            let n = (count - done).min(GROUP as u64) as usize;
            let mut pos = w.pos;
            let Err(e) = d.decode_rows(&w.buf, &mut pos, n) else {
                d.truncate(0);
                w.pos = pos;
                done += n as u64;
                continue;
            };
            // The rows before the bad record are whole: step over them.
            let whole = d.buffered_rows();
            d.truncate(0);
            let first = done;
            if whole > 0 {
                let mut pos = w.pos;
                d.decode_rows(&w.buf, &mut pos, whole).map_err(|e| {
                    StreamCheckError::Decode(DecodeError::new(
                        DecodeErrorKind::Internal(format!(
                            "records that decoded once failed the second time: {e}"
                        )),
                        w.offset(),
                    ))
                })?;
                d.truncate(0);
                w.pos = pos;
                done += whole as u64;
            }
            if w.end || !cut_by_window_end(&e) {
                return Err(StreamCheckError::Decode(
                    e.with_record_base(first).with_offset_base(w.base),
                ));
            }
            // The window ends inside the record at `w.pos`.
            if w.available() < window {
                // Read on until the record has twice the bytes it had (or the window is
                // full), so that a long record is decoded again only a few times.
                let a = w.available();
                let target = (a * 2).max(a + 1).min(window);
                while w.available() < target && w.refill()? {}
            } else if let Some(skip) = &self.record_skip {
                // A record larger than the window: step over it as it streams past.
                skip_pull(skip, &mut w, limit).map_err(|e| match e {
                    StreamCheckError::Decode(e) => StreamCheckError::Decode(e.at_record(done)),
                    other => other,
                })?;
                done += 1;
            } else {
                // No skip for this schema (it unrolls too far): hold the record whole.
                w.refill()?;
            }
        }
        // Every record is read: the data must end here.
        let at = w.offset();
        let mut trailing = 0;
        loop {
            trailing += w.available();
            w.pos = w.buf.len();
            if !w.refill()? {
                break;
            }
        }
        if trailing > 0 {
            return Err(w.error(DecodeErrorKind::TrailingBytes(trailing), at));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::DecodeOptions;
    use crate::schema::Schema;
    use crate::DecodePlan;

    fn decoder(schema: &str) -> RecordDecoder {
        let schema = Schema::parse(schema).unwrap();
        DecodePlan::new(&schema, &DecodeOptions::default())
            .unwrap()
            .decoder()
    }

    /// Check `data` in pieces of `piece` bytes with a window of `window`.
    fn check(
        d: &RecordDecoder,
        data: &[u8],
        count: u64,
        piece: usize,
        window: usize,
    ) -> Result<(), DecodeError> {
        let mut at = 0;
        let mut fill = |out: &mut Vec<u8>| -> Result<usize, ()> {
            let p = &data[at..(at + piece).min(data.len())];
            at += p.len();
            out.extend_from_slice(p);
            Ok(p.len())
        };
        match d.check_stream(count, window, data.len(), &mut fill) {
            Ok(()) => Ok(()),
            Err(StreamCheckError::Decode(e)) => Err(e),
            Err(StreamCheckError::Source(())) => unreachable!("the source never fails"),
        }
    }

    fn long(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        crate::varint::Kernel::write_long(crate::varint::Scalar, v, &mut out);
        out
    }

    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
        {"name":"id","type":"long"},
        {"name":"s","type":"string"},
        {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
        {"name":"tags","type":{"type":"array","items":"string"}},
        {"name":"u","type":["null","int","string"]}]}"#;

    /// One record of [`SCHEMA`] whose string is `len` bytes of `fill`.
    fn record(id: i64, len: usize, fill: u8, e: i64, tags: usize) -> Vec<u8> {
        let mut r = long(id);
        r.extend(long(len as i64));
        r.extend(std::iter::repeat_n(fill, len));
        r.extend(long(e));
        if tags > 0 {
            r.extend(long(tags as i64));
            for t in 0..tags {
                r.extend(long(1));
                r.push(b'a' + t as u8 % 26);
            }
        }
        r.extend(long(0));
        r.extend(long(1));
        r.extend(long(id));
        r
    }

    fn decode(d: &RecordDecoder, data: &[u8], count: u64) -> Result<(), DecodeError> {
        let mut d = d.clone();
        d.decode_block(data, count).map(drop)
    }

    #[test]
    fn agrees_with_decoding_the_whole_block() {
        let d = decoder(SCHEMA);
        let mut data = Vec::new();
        for i in 0..5000 {
            data.extend(record(
                i,
                (i as usize * 7) % 300,
                b'x',
                i % 2,
                i as usize % 4,
            ));
        }
        let n = 5000;
        assert_eq!(decode(&d, &data, n), Ok(()));
        // Every kind of damage, at places that fall in different windows and pieces.
        let mut cases: Vec<(Vec<u8>, u64)> = vec![
            (data.clone(), n),
            (data.clone(), n - 1),
            (data.clone(), n + 1),
            (data[..data.len() - 1].to_vec(), n),
        ];
        for at in [3usize, 70_000, 150_001, data.len() - 10] {
            for byte in [0xff, 0x80, 0x05, 0x7f] {
                let mut bad = data.clone();
                bad[at] = byte;
                cases.push((bad, n));
            }
            let mut utf8 = data.clone();
            let s = (at..utf8.len())
                .chain((0..at).rev())
                .find(|&i| utf8[i] == b'x')
                .unwrap();
            utf8[s] = 0xc3;
            cases.push((utf8, n));
        }
        for (case, count) in &cases {
            let expected = decode(&d, case, *count);
            for (piece, window) in [(1 << 20, 1 << 20), (4093, 1 << 16), (1, 1 << 16)] {
                let got = check(&d, case, *count, piece, window);
                match (&expected, &got) {
                    (Ok(()), Ok(())) => {}
                    (Err(a), Err(b)) if a.kind() == b.kind() => {
                        assert_eq!((a.offset(), a.record()), (b.offset(), b.record()));
                        assert_eq!(a.field_path(), b.field_path());
                    }
                    // A count beyond the data: the whole block says TooLarge before decoding,
                    // the check finds where the data ends.
                    (Err(a), Err(_)) if matches!(a.kind(), DecodeErrorKind::TooLarge(_)) => {}
                    _ => panic!("decode {expected:?}, check {got:?} (piece {piece})"),
                }
            }
        }
    }

    #[test]
    fn records_larger_than_the_window_stream_past() {
        let d = decoder(SCHEMA);
        let mut data = record(1, 10, b'y', 0, 2);
        data.extend(record(2, 5 << 20, b'z', 1, 3));
        data.extend(record(3, 10, b'y', 0, 0));
        assert_eq!(check(&d, &data, 3, 1 << 16, 1 << 16), Ok(()));
        assert_eq!(decode(&d, &data, 3), Ok(()));
        // The same with a stray byte after it, and with the data cut inside the large string.
        let mut trailing = data.clone();
        trailing.push(0);
        let e = check(&d, &trailing, 3, 1 << 16, 1 << 16).unwrap_err();
        assert_eq!(e.kind(), &DecodeErrorKind::TrailingBytes(1));
        assert_eq!(e.offset(), data.len());
        let cut = &data[..3 << 20];
        let e = check(&d, cut, 3, 1 << 16, 1 << 16).unwrap_err();
        assert!(
            matches!(e.kind(), DecodeErrorKind::UnexpectedEof { .. }),
            "{e}"
        );
        assert_eq!(e.record(), Some(1));
        // A union branch out of range after the large string.
        let mut bad = data.clone();
        let r0 = record(1, 10, b'y', 0, 2).len();
        let r1 = record(2, 5 << 20, b'z', 1, 3).len();
        bad[r0 + r1 - 2] = 0x0a;
        let e = check(&d, &bad, 3, 1 << 16, 1 << 16).unwrap_err();
        assert!(
            matches!(e.kind(), DecodeErrorKind::UnionIndex { .. }),
            "{e}"
        );
        assert_eq!(e.record(), Some(1));
        assert_eq!(e.offset(), r0 + r1 - 2);
    }

    #[test]
    fn values_in_large_records_are_checked_as_they_stream() {
        // A string of 1 MiB whose UTF-8 breaks at a piece boundary, or only at its end, and
        // other values the writer's schema says are invalid, in a record larger than the window.
        let d = decoder(SCHEMA);
        let big = |tweak: &dyn Fn(&mut Vec<u8>)| {
            let mut r = record(1, 1 << 20, b'a', 1, 2);
            tweak(&mut r);
            r
        };
        let string_at = long(1).len() + long(1 << 20).len();
        for (what, data, kind) in [
            (
                "a valid 4-byte character across pieces",
                big(&|r| r[string_at + 4095..string_at + 4099].copy_from_slice("😀".as_bytes())),
                None,
            ),
            (
                "a bad byte",
                big(&|r| r[string_at + 70_000] = 0xff),
                Some(DecodeErrorKind::InvalidUtf8),
            ),
            (
                "a cut character at the end",
                big(&|r| r[string_at + (1 << 20) - 1] = 0xe2),
                Some(DecodeErrorKind::InvalidUtf8),
            ),
            (
                "an enum index",
                big(&|r| r[string_at + (1 << 20)] = 0x06),
                Some(DecodeErrorKind::EnumIndex {
                    index: 3,
                    symbols: 2,
                }),
            ),
        ] {
            let got = check(&d, &data, 1, 4096, 1 << 16);
            match kind {
                None => assert_eq!(got, Ok(()), "{what}"),
                Some(k) => assert_eq!(got.unwrap_err().kind(), &k, "{what}"),
            }
        }
        // An int beyond 32 bits and a boolean byte of 2, in a record with a large string.
        let d = decoder(
            r#"{"type":"record","name":"r","fields":[{"name":"s","type":"string"},
                {"name":"i","type":"int"},{"name":"b","type":"boolean"}]}"#,
        );
        let mut data = long(1 << 17);
        data.extend(std::iter::repeat_n(b'z', 1 << 17));
        let good = [data.clone(), long(5), vec![1]].concat();
        assert_eq!(check(&d, &good, 1, 4096, 1 << 16), Ok(()));
        let int = [data.clone(), long(1 << 40), vec![1]].concat();
        assert!(matches!(
            check(&d, &int, 1, 4096, 1 << 16).unwrap_err().kind(),
            DecodeErrorKind::Varint(VarintError::IntOutOfRange)
        ));
        let boolean = [data, long(5), vec![2]].concat();
        assert_eq!(
            check(&d, &boolean, 1, 4096, 1 << 16).unwrap_err().kind(),
            &DecodeErrorKind::InvalidBoolean(2)
        );
    }

    #[test]
    fn huge_counts_in_a_large_record_are_bounded_by_the_limit() {
        let d = decoder(SCHEMA);
        let mut data = record(1, 1 << 17, b'z', 1, 0);
        data.truncate(data.len() - 3);
        data.extend(long(1 << 40));
        let mut at = 0;
        let mut fill = |out: &mut Vec<u8>| -> Result<usize, ()> {
            let p = &data[at..(at + 4096).min(data.len())];
            at += p.len();
            out.extend_from_slice(p);
            Ok(p.len())
        };
        let Err(StreamCheckError::Decode(e)) = d.check_stream(1, 1 << 16, 1 << 20, &mut fill)
        else {
            panic!("a count of 2^40 strings is refused");
        };
        assert!(matches!(e.kind(), DecodeErrorKind::TooLarge(_)), "{e}");
    }

    #[test]
    fn sized_collection_blocks_in_large_records_must_take_their_size() {
        let d = decoder(
            r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"long"}}]}"#,
        );
        // One block of 100 000 longs of 1 byte each, with its byte size, in a record larger
        // than the window.
        let block = |size: i64| {
            let mut r = long(-100_000);
            r.extend(long(size));
            r.extend(std::iter::repeat_n(0x02, 100_000));
            r.push(0);
            r
        };
        assert_eq!(check(&d, &block(100_000), 1, 4096, 1 << 10), Ok(()));
        let e = check(&d, &block(99_999), 1, 4096, 1 << 10).unwrap_err();
        assert_eq!(
            e.kind(),
            &DecodeErrorKind::BlockSizeMismatch {
                declared: 99_999,
                actual: 100_000
            }
        );
        assert_eq!((e.offset(), e.record()), (0, Some(0)));
    }

    #[test]
    fn records_of_no_bytes_need_empty_data() {
        let d = decoder(r#"{"type":"record","name":"r","fields":[{"name":"n","type":"null"}]}"#);
        assert_eq!(check(&d, &[], i32::MAX as u64, 1, 1), Ok(()));
        let e = check(&d, &[], 1 << 40, 1, 1).unwrap_err();
        assert_eq!(Err(e), decode(&d, &[], 1 << 40));
        let e = check(&d, &[0; 10], 3, 4, 1).unwrap_err();
        assert_eq!(e.kind(), &DecodeErrorKind::TrailingBytes(10));
    }

    #[test]
    fn a_failing_source_is_reported() {
        let d = decoder(SCHEMA);
        let mut fill = |_: &mut Vec<u8>| -> Result<usize, &str> { Err("corrupt") };
        assert!(matches!(
            d.check_stream(1, 1 << 16, 1 << 20, &mut fill),
            Err(StreamCheckError::Source("corrupt"))
        ));
    }
}
