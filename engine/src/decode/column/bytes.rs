//! Byte-sequence columns: strings and bytes (offsets and data, UTF-8 validated per buffer,
//! optionally finished as views), `fixed` (also the 16 bytes of a parsed `uuid` string), and the
//! copy and check helpers they share.

use super::nullable::null_index;
use super::uuid::parse_uuid;
use super::{grow, offsets_overflow};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::decode::pool::BufferPool;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::Kernel;
use arrow_array::{
    ArrayRef, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, StringArray, StringViewArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::DataType;
use std::hint::select_unpredictable;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BytesKind {
    Binary,
    Utf8,
}

#[derive(Debug, Clone)]
pub(crate) struct BytesCol {
    /// Starts with a leading 0.
    pub(super) offsets: Vec<i32>,
    data: Vec<u8>,
    kind: BytesKind,
    view: bool,
    /// Bytes of `data` already validated as UTF-8.
    validated_bytes: usize,
    /// Values whose start offset was already checked to be a char boundary.
    validated_values: usize,
    /// Mean value length of the last finished batch (to reserve the data buffer up front).
    mean_len: usize,
}

impl BytesCol {
    pub(crate) fn new(kind: BytesKind, view: bool) -> Self {
        BytesCol {
            offsets: vec![0],
            data: Vec::new(),
            kind,
            view,
            validated_bytes: 0,
            validated_values: 0,
            mean_len: 0,
        }
    }

    /// Room for `n` more values; the data buffer gets the last batch's mean length per value
    /// and some ([`super::room`]), so that it does not regrow (and copy) while a batch fills.
    pub(super) fn reserve(&mut self, n: usize, room: super::Room<'_>) {
        let pool = room.pool;
        let mean = room.mean(
            self.mean_len,
            self.data.len(),
            self.offsets.len().saturating_sub(1),
        );
        grow(&mut self.offsets, n, pool);
        grow(
            &mut self.data,
            super::room(n, mean).saturating_add(CHUNK),
            pool,
        );
    }

    #[inline(always)]
    pub(super) fn push<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let n = c.len_prefix()?;
        let from = c.pos;
        c.pos += n;
        if c.check_utf8 && self.kind == BytesKind::Utf8 {
            check_value_utf8(&c.buf[from..from + n], start)?;
        }
        append_bytes(&mut self.data, c.buf, from, n);
        match i32::try_from(self.data.len()) {
            Ok(end) => {
                self.offsets.push(end);
                Ok(())
            }
            Err(_) => Err(offsets_overflow(start)),
        }
    }

    /// [`BytesCol::push`] on the fast path.
    #[inline(always)]
    pub(super) fn push_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        // (Strings are validated per buffer: the fast path never runs with `check_utf8`.)
        let (from, n) = f.len_prefix();
        append_bytes(&mut self.data, f.buf, from, n);
        match i32::try_from(self.data.len()) {
            Ok(end) => self.offsets.push(end),
            Err(_) => {
                f.fail();
                self.push_empty();
            }
        }
    }

    /// A nullable string or bytes value (`value_byte` the encoded index of its branch) on the
    /// fast path, with no branch on whether it is null, as
    /// [`super::nullable::number_or_null`] reads numbers: the length after the index is read
    /// either way, the bytes after it copied (none for a null: the fixed-size move of
    /// [`append_bytes`] stores past the end, which stays spare capacity), and the position
    /// moved past them only for a value. `false`, with nothing read, where that does not
    /// decide (a bad index, a length that does not read or goes past the data), and for a
    /// column of long values (a mean above half of [`CHUNK`] in the last batch): their copies
    /// take `memcpy`, nulls the fixed move, and the branch between the two would mispredict
    /// as the one on null did (`bytes_nullable`, ~60-byte values: 15 % slower this way).
    #[inline(always)]
    pub(super) fn or_null_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        value_byte: u8,
        validity: &mut Validity,
    ) -> bool {
        if self.mean_len > CHUNK / 2 {
            return false;
        }
        let p = f.pos;
        let Some(&index) = f.buf.get(p) else {
            return false;
        };
        let (present, index_ok) = null_index(index, value_byte);
        let mut from = p + 1;
        let (n, valid) = match f.k.read_u64_branchless(f.buf, &mut from) {
            // Not negative (zigzag odd), and within the data.
            Ok(z) => (
                (z >> 1) as usize,
                (z & 1 == 0) & ((z >> 1) <= (f.buf.len() - from) as u64),
            ),
            Err(_) => {
                from = p + 1;
                (0, false)
            }
        };
        if !index_ok | (present & !valid) {
            return false;
        }
        let n = select_unpredictable(present, n, 0);
        append_bytes(&mut self.data, f.buf, from, n);
        f.pos = select_unpredictable(present, from + n, p + 1);
        validity.push(present);
        match i32::try_from(self.data.len()) {
            Ok(end) => self.offsets.push(end),
            Err(_) => {
                f.fail();
                self.push_empty();
            }
        }
        true
    }

    pub(super) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(super) fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.offsets.truncate(len + 1);
            self.data.truncate(self.offsets[len] as usize);
            self.validated_values = self.validated_values.min(len);
            self.validated_bytes = self.validated_bytes.min(self.data.len());
        }
    }

    pub(super) fn push_empty(&mut self) {
        let last = self.offsets[self.offsets.len() - 1];
        self.offsets.push(last);
    }

    /// Validate the UTF-8 appended since the last call: the new bytes as a whole, and that every
    /// new value starts on a character boundary. Which value is bad is found by decoding again
    /// with [`Cursor::check_utf8`] (see `RecordDecoder::decode_rows`).
    pub(super) fn validate_utf8(&mut self) -> Result<(), DecodeErrorKind> {
        if self.kind != BytesKind::Utf8 {
            return Ok(());
        }
        let new_bytes = &self.data[self.validated_bytes..];
        let values = self.len();
        let ok = new_bytes.is_ascii()
            || (simdutf8::basic::from_utf8(new_bytes).is_ok()
                && self.offsets[self.validated_values..values]
                    .iter()
                    .all(|&o| {
                        self.data
                            .get(o as usize)
                            .is_none_or(|&b| (b as i8) >= -0x40)
                    }));
        if !ok {
            return Err(DecodeErrorKind::InvalidUtf8);
        }
        self.validated_bytes = self.data.len();
        self.validated_values = values;
        Ok(())
    }

    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let data = std::mem::take(&mut self.data);
        self.mean_len = data.len().div_ceil(offsets.len().max(2) - 1);
        debug_assert!(
            self.kind == BytesKind::Binary || self.validated_values == offsets.len() - 1,
            "string column finished before UTF-8 validation"
        );
        self.validated_bytes = 0;
        self.validated_values = 0;
        if self.view {
            return self.finish_view(&offsets, data, nulls, pool);
        }
        debug_assert_eq!(offsets.last().map(|&o| o as usize), Some(data.len()));
        let offsets = pool.scalar(offsets);
        let offsets = if cfg!(debug_assertions) {
            OffsetBuffer::new(offsets)
        } else {
            // SAFETY: the offsets start at 0 (`vec![0]`) and never decrease: each push appends
            // the current length of `data`, which only grows between pushes (`push_empty`
            // repeats the last offset, `truncate` cuts `data` back to the last kept offset), and
            // every offset fits `i32` (checked before it is pushed). Debug builds check all of
            // this with `OffsetBuffer::new` above. (Validating ~8 instructions per value was 2 %
            // of decoding string-heavy records.)
            unsafe { OffsetBuffer::new_unchecked(offsets) }
        };
        let values = pool.buffer(data);
        match self.kind {
            BytesKind::Binary => Arc::new(BinaryArray::new(offsets, values, nulls)),
            BytesKind::Utf8 => {
                if cfg!(debug_assertions) {
                    return Arc::new(
                        StringArray::try_new(offsets, values, nulls)
                            .expect("validate_utf8 accepted invalid UTF-8"),
                    );
                }
                // SAFETY: `validate_utf8` checked all of `values` as UTF-8 and that every
                // value starts on a character boundary, and the offsets are monotonic (see
                // above) and within `values` (built from its length).
                // Debug builds check the same with `try_new` above.
                Arc::new(unsafe { StringArray::new_unchecked(offsets, values, nulls) })
            }
        }
    }

    fn finish_view(
        &self,
        offsets: &[i32],
        data: Vec<u8>,
        nulls: Option<NullBuffer>,
        pool: &Arc<BufferPool>,
    ) -> ArrayRef {
        let views: Vec<u128> = offsets
            .windows(2)
            .map(|w| {
                let (s, e) = (w[0] as usize, w[1] as usize);
                arrow_array::builder::make_view(&data[s..e], 0, s as u32)
            })
            .collect();
        let views = ScalarBuffer::from(views);
        let buffers: Arc<[Buffer]> = if data.is_empty() {
            Arc::from(Vec::new())
        } else {
            Arc::from(vec![pool.buffer(data)])
        };
        match self.kind {
            BytesKind::Binary => Arc::new(
                BinaryViewArray::try_new(views, buffers, nulls).expect("views built from offsets"),
            ),
            BytesKind::Utf8 => Arc::new(
                StringViewArray::try_new(views, buffers, nulls)
                    .expect("views built from validated offsets"),
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct FixedCol {
    pub(super) size: usize,
    pub(super) len: usize,
    pub(super) data: Vec<u8>,
    data_type: DataType,
}

impl BytesCol {
    /// The fixed-width bytes of one value: an offset, or a view.
    pub(super) fn slot_size(&self) -> usize {
        if self.view {
            16
        } else {
            4
        }
    }
}

impl FixedCol {
    pub(crate) fn new(size: usize, data_type: DataType) -> Self {
        FixedCol {
            size,
            len: 0,
            data: Vec::new(),
            data_type,
        }
    }

    /// A `fixed` value on the fast path (zeros after a failure, so that the lengths agree for
    /// the truncation that follows).
    #[inline(always)]
    pub(super) fn push_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        let b = f.take(self.size);
        if b.len() == self.size {
            // (`b` is the `size` bytes before `f.pos`.)
            append_bytes(&mut self.data, f.buf, f.pos - self.size, self.size);
        } else {
            self.data.resize(self.data.len() + self.size, 0);
        }
        self.len += 1;
    }

    /// A nullable `fixed` value (`value_byte` the encoded index of its branch) on the fast
    /// path, with no branch on null, as [`super::nullable::number_or_null`] reads numbers: the
    /// `size` bytes after the index are copied either way, from the data for a value and from
    /// zeros for a null (whose slot holds zeros, as on the branching path), and the position
    /// moves past them only for a value. `false`, with nothing read, where that does not
    /// decide: a bad index, a value past the data, values longer than one fixed move.
    #[inline(always)]
    pub(super) fn or_null_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        value_byte: u8,
        validity: &mut Validity,
    ) -> bool {
        const ZEROS: [u8; 2 * CHUNK] = [0; 2 * CHUNK];
        let size = self.size;
        let p = f.pos;
        let Some(&index) = f.buf.get(p) else {
            return false;
        };
        let (present, index_ok) = null_index(index, value_byte);
        let from = p + 1;
        // (`p` is in the buffer, so `from <= f.buf.len()`.)
        let fits = f.buf.len() - from >= size;
        if !index_ok | (present & !fits) | (size > CHUNK) {
            return false;
        }
        let (src, at) = select_unpredictable(present, (f.buf, from), (&ZEROS[..], 0));
        append_bytes(&mut self.data, src, at, size);
        self.len += 1;
        validity.push(present);
        f.pos = select_unpredictable(present, from + size, from);
        true
    }

    /// A `uuid` string on the fast path, parsed into its 16 bytes (a text that is not a UUID
    /// fails the record: the slow path names the error).
    #[inline(always)]
    pub(super) fn push_uuid_sticky<K: Kernel>(&mut self, f: &mut Sticky<'_, K>) {
        let s = f.bytes();
        match parse_uuid(s) {
            Some(uuid) => self.data.extend_from_slice(&uuid),
            None => {
                f.fail();
                self.data.extend_from_slice(&[0; 16]);
            }
        }
        self.len += 1;
    }

    /// A nullable `uuid` string (`value_byte` the encoded index of its branch) on the fast path,
    /// with no branch on null: the 36 characters after the index and the length byte are parsed
    /// either way, from the data for a value and from the nil UUID's text for a null (whose
    /// slot holds zeros, as on the branching path), and the position moves past them only for
    /// a value. `false`, with nothing read, where that does not decide: a bad index, a value
    /// whose length is not the one byte of 36, past the data, or not a UUID (the branching path
    /// then reports it).
    #[inline(always)]
    pub(super) fn uuid_or_null_sticky<K: Kernel>(
        &mut self,
        f: &mut Sticky<'_, K>,
        value_byte: u8,
        validity: &mut Validity,
    ) -> bool {
        const NIL: &[u8; 36] = b"00000000-0000-0000-0000-000000000000";
        /// 36 as a zigzag varint.
        const LEN_36: u8 = 72;
        let p = f.pos;
        let Some(&index) = f.buf.get(p) else {
            return false;
        };
        let (present, index_ok) = null_index(index, value_byte);
        let from = p + 1;
        // (`p` is in the buffer, so `from <= f.buf.len()`.)
        let fits = f.buf.len() - from >= 37;
        let len_ok = f.buf.get(from) == Some(&LEN_36);
        if !index_ok | (present & !(fits & len_ok)) {
            return false;
        }
        let (src, at) = select_unpredictable(present, (f.buf, from + 1), (&NIL[..], 0));
        let Some(uuid) = src
            .get(at..)
            .and_then(|s| s.first_chunk::<36>())
            .and_then(|s| parse_uuid(s))
        else {
            return false;
        };
        self.data.extend_from_slice(&uuid);
        self.len += 1;
        validity.push(present);
        f.pos = select_unpredictable(present, from + 37, from);
        true
    }

    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let len = std::mem::take(&mut self.len);
        let data = std::mem::take(&mut self.data);
        let builder = ArrayDataBuilder::new(self.data_type.clone())
            .len(len)
            .add_buffer(pool.buffer(data))
            .nulls(nulls);
        Arc::new(FixedSizeBinaryArray::from(
            builder.build().expect("fixed-size data matches its length"),
        ))
    }
}

/// The bytes [`append_bytes`] moves at once; builders that reserve exactly add them as slack,
/// so that the last values of a batch do not double the buffer.
pub(super) const CHUNK: usize = 64;

/// Append `buf[from..from + n]` to `data` (the caller checked `from + n <= buf.len()`).
///
/// Short values (most strings in real records) are copied as one fixed 64-byte move instead of
/// a call to `memcpy`, when 64 bytes are readable at `from` and writable at the end of `data`;
/// `extend_from_slice` is the reference the fast path is tested against.
#[inline(always)]
pub(super) fn append_bytes(data: &mut Vec<u8>, buf: &[u8], from: usize, n: usize) {
    if n <= CHUNK
        && buf
            .len()
            .checked_sub(from)
            .is_some_and(|left| left >= CHUNK)
    {
        data.reserve(CHUNK);
        let len = data.len();
        // SAFETY: `from + CHUNK <= buf.len()`, so CHUNK bytes are readable at `buf[from]`;
        // `reserve(CHUNK)` guarantees CHUNK writable bytes at `data[len]`; the two regions belong to
        // different allocations (`data` is owned, `buf` is borrowed), so they do not overlap.
        // Only the first `n <= CHUNK` bytes become part of `data` (`set_len(len + n)`): they are
        // initialized by the copy, and the bytes after them stay spare capacity.
        unsafe {
            std::ptr::copy_nonoverlapping(
                buf.as_ptr().add(from),
                data.as_mut_ptr().add(len),
                CHUNK,
            );
            data.set_len(len + n);
        }
    } else {
        data.extend_from_slice(&buf[from..from + n]);
    }
}

/// Append the `size` bytes at `first`, `first + stride`, ... (`rows` of them) of `buf` to
/// `data`: one `fixed` field of `rows` fixed-size records (the caller checked that the rows
/// are in `buf`).
///
/// Each value is one constant-size move of the smallest of 16, 32 or 64 bytes that holds it,
/// into room reserved once, the length set once at the end: each move's excess lands where
/// the next value goes and is overwritten by it (or stays spare capacity after the last), and
/// no room check or length update is made per value (twice [`append_bytes`]'s speed here:
/// docs/perf/families.md). Larger values, and the last rows, whose move would read past
/// `buf`, are copied by slice; `extend_from_slice` per value is the reference.
pub(super) fn extend_strided(
    data: &mut Vec<u8>,
    buf: &[u8],
    first: usize,
    rows: usize,
    stride: usize,
    size: usize,
) {
    debug_assert!(rows == 0 || first + (rows - 1) * stride + size <= buf.len());
    match size {
        0 => {}
        1..=16 => extend_moves::<16>(data, buf, first, rows, stride, size),
        17..=32 => extend_moves::<32>(data, buf, first, rows, stride, size),
        33..=64 => extend_moves::<64>(data, buf, first, rows, stride, size),
        _ => (0..rows).for_each(|r| {
            let from = first + r * stride;
            data.extend_from_slice(&buf[from..from + size]);
        }),
    }
}

/// [`extend_strided`] with moves of `M >= size` bytes.
#[inline(always)]
fn extend_moves<const M: usize>(
    data: &mut Vec<u8>,
    buf: &[u8],
    first: usize,
    rows: usize,
    stride: usize,
    size: usize,
) {
    debug_assert!(size <= M && stride >= size);
    // The rows whose `M` bytes are all in `buf`: those starting at or before `buf.len() - M`.
    let fast = match buf.len().checked_sub(M) {
        Some(last) if last >= first => ((last - first) / stride + 1).min(rows),
        _ => 0,
    };
    // (`fast * size <= buf.len() + size`: bounded by the input, whatever the caller passed.)
    data.reserve(fast * size + M);
    let start = data.len();
    let src = buf.as_ptr();
    let dst = data.as_mut_ptr();
    for r in 0..fast {
        // SAFETY: row `r < fast` starts at `first + r * stride <= buf.len() - M`, so `M`
        // bytes are readable there; `start + r * size + M <= start + fast * size + M`, within
        // the capacity reserved above; `data` is owned and `buf` borrowed, so the two do not
        // overlap. Only the first `size` bytes of each move become part of `data` (the length
        // is set below to `start + rows * size`, after every row is written in order).
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.add(first + r * stride),
                dst.add(start + r * size),
                M,
            );
        }
    }
    // SAFETY: the `fast * size` bytes after `start` were written above (each row's first
    // `size` bytes, in order), within the reserved capacity.
    unsafe { data.set_len(start + fast * size) };
    for r in fast..rows {
        let from = first + r * stride;
        data.extend_from_slice(&buf[from..from + size]);
    }
}

#[cold]
#[inline(never)]
fn check_value_utf8(value: &[u8], at: usize) -> Result<(), DecodeError> {
    match std::str::from_utf8(value) {
        Ok(_) => Ok(()),
        Err(_) => Err(DecodeError::new(DecodeErrorKind::InvalidUtf8, at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch whose values are a few percent longer than the last batch's fits the room
    /// reserved for it: the data buffer is not regrown (copied into fresh memory) as it
    /// fills. (Reserved without the pool, whose recycled buffers may be larger than asked.)
    #[test]
    fn a_batch_a_little_longer_than_the_last_fits_its_room() {
        use crate::decode::pool::BufferPool;
        let pool = Arc::new(BufferPool::default());
        let buf = vec![7u8; 400];
        let fill = |col: &mut BytesCol, n: usize, len: usize| {
            for _ in 0..n {
                append_bytes(&mut col.data, &buf, 0, len);
                col.offsets.push(col.data.len() as i32);
            }
        };
        for (mean, longer) in [(100, 105), (300, 318), (10, 10)] {
            let mut col = BytesCol::new(BytesKind::Binary, false);
            fill(&mut col, 1000, mean);
            drop(col.finish(None, &pool));
            col.reserve(1000, super::super::Room::PLAIN);
            let data = col.data.as_ptr();
            fill(&mut col, 1000, longer);
            assert_eq!(col.data.as_ptr(), data, "mean {mean}, then {longer}");
        }
    }

    #[test]
    fn append_bytes_matches_extend_from_slice() {
        let buf: Vec<u8> = (0..=255u8).cycle().take(400).collect();
        for from in [0usize, 1, 7, 250, 320, 336, 340, 384, 399, 400] {
            for n in 0..=70usize {
                if from + n > buf.len() {
                    continue;
                }
                for prefix in [0usize, 3, 16] {
                    let mut fast = vec![9u8; prefix];
                    let mut reference = fast.clone();
                    append_bytes(&mut fast, &buf, from, n);
                    reference.extend_from_slice(&buf[from..from + n]);
                    assert_eq!(fast, reference, "from {from} n {n} prefix {prefix}");
                }
            }
        }
    }

    #[test]
    fn extend_strided_matches_extend_from_slice() {
        let buf: Vec<u8> = (0..=255u8).cycle().take(700).collect();
        for size in [0usize, 1, 4, 6, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100] {
            for extra in [0usize, 1, 9, 40] {
                let stride = size + extra;
                for first in [0usize, 3, 100] {
                    for prefix in [0usize, 5] {
                        let most = buf
                            .len()
                            .saturating_sub(first + size)
                            .checked_div(stride)
                            .map_or(20, |m| m + 1);
                        for rows in [0, 1, 2, most.saturating_sub(1), most] {
                            if rows > 0 && first + (rows - 1) * stride + size > buf.len() {
                                continue;
                            }
                            let mut fast = vec![7u8; prefix];
                            let mut reference = fast.clone();
                            extend_strided(&mut fast, &buf, first, rows, stride, size);
                            for r in 0..rows {
                                let from = first + r * stride;
                                reference.extend_from_slice(&buf[from..from + size]);
                            }
                            assert_eq!(
                                fast, reference,
                                "size {size} stride {stride} first {first} rows {rows}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// `fixed` fields in fixed-size records (the strided path) and after a `long` (the record
    /// loop) hold exactly their bytes, in batches that end anywhere.
    #[test]
    fn fixed_fields_hold_their_bytes() {
        use crate::decode::{DecodeOptions, DecodePlan};
        use crate::schema::Schema;
        use arrow_array::{Array, FixedSizeBinaryArray};
        let sizes = [16, 4, 6, 32, 1];
        let fields: Vec<String> = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(r#"{{"name":"f{i}","type":{{"type":"fixed","name":"x{i}","size":{n}}}}}"#)
            })
            .collect();
        let rows = 300;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let values: Vec<Vec<u8>> = (0..rows * sizes.len())
            .map(|i| {
                (0..sizes[i % sizes.len()])
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect()
            })
            .collect();
        for lead in [false, true] {
            let schema = Schema::parse(&format!(
                r#"{{"type":"record","name":"r","fields":[{}{}]}}"#,
                if lead {
                    r#"{"name":"n","type":"long"},"#
                } else {
                    ""
                },
                fields.join(",")
            ))
            .unwrap();
            let mut block = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if lead && i % sizes.len() == 0 {
                    block.push(0x04);
                }
                block.extend_from_slice(v);
            }
            for batch_size in [1, 17, 300] {
                let mut decoder = DecodePlan::new(&schema, &DecodeOptions::default())
                    .unwrap()
                    .decoder()
                    .with_batch_size(batch_size);
                let mut batches = decoder.decode_block(&block, rows as u64).unwrap();
                batches.extend(decoder.flush().unwrap());
                for j in 0..sizes.len() {
                    let got: Vec<&[u8]> = batches
                        .iter()
                        .flat_map(|b| {
                            let a = b.column(j + usize::from(lead));
                            let a = a.as_any().downcast_ref::<FixedSizeBinaryArray>().unwrap();
                            (0..a.len()).map(|i| a.value(i)).collect::<Vec<_>>()
                        })
                        .collect();
                    let expected: Vec<&[u8]> = values[j..]
                        .iter()
                        .step_by(sizes.len())
                        .map(Vec::as_slice)
                        .collect();
                    assert_eq!(got, expected, "field {j}, lead {lead}, batch {batch_size}");
                }
            }
        }
    }
}
