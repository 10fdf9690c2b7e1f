//! A read position in one block's decompressed bytes, with the primitive Avro reads.

use crate::error::{DecodeError, DecodeErrorKind, Limit};
use crate::varint::Kernel;
use std::cell::Cell;

/// Bytes of one block plus the current offset, decoding varints with the kernel `K`.
pub(crate) struct Cursor<'a, K> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) k: K,
    /// Validate every string value as it is read (the slow path that pinpoints invalid UTF-8
    /// after the per-buffer check found some).
    pub(crate) check_utf8: bool,
    /// Where [`Sticky`] cursors record a failure (see there).
    pub(crate) failed: &'a Cell<bool>,
}

impl<'a, K: Kernel> Cursor<'a, K> {
    pub(crate) fn new(buf: &'a [u8], pos: usize, k: K, failed: &'a Cell<bool>) -> Self {
        Cursor {
            buf,
            pos,
            k,
            check_utf8: false,
            failed,
        }
    }

    #[inline(always)]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn error(&self, kind: DecodeErrorKind, at: usize) -> DecodeError {
        DecodeError::new(kind, at)
    }

    #[inline(always)]
    pub(crate) fn long(&mut self) -> Result<i64, DecodeError> {
        let start = self.pos;
        self.k
            .read_long(self.buf, &mut self.pos)
            .map_err(|e| self.error(DecodeErrorKind::Varint(e), start))
    }

    #[inline(always)]
    pub(crate) fn int(&mut self) -> Result<i32, DecodeError> {
        let start = self.pos;
        self.k
            .read_int(self.buf, &mut self.pos)
            .map_err(|e| self.error(DecodeErrorKind::Varint(e), start))
    }

    /// A union's branch index, checked against its `branches` branches.
    #[inline(always)]
    pub(crate) fn branch(&mut self, branches: usize) -> Result<usize, DecodeError> {
        let start = self.pos;
        let index = self.long()?;
        match usize::try_from(index) {
            Ok(i) if i < branches => Ok(i),
            _ => Err(self.error(DecodeErrorKind::UnionIndex { index, branches }, start)),
        }
    }

    /// The next `n` bytes.
    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.wrapping_add(n);
        match self.buf.get(self.pos..end) {
            Some(b) => {
                self.pos = end;
                Ok(b)
            }
            None => Err(self.eof(n as u64)),
        }
    }

    /// The next `N` bytes as an array.
    #[inline(always)]
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
        {
            Some(b) => {
                self.pos += N;
                Ok(*b)
            }
            None => Err(self.eof(N as u64)),
        }
    }

    #[cold]
    fn eof(&self, needed: u64) -> DecodeError {
        self.error(
            DecodeErrorKind::UnexpectedEof {
                needed,
                available: self.remaining() as u64,
            },
            self.pos,
        )
    }

    /// A length prefix (`bytes`, `string`), checked against the bytes left.
    #[inline(always)]
    pub(crate) fn len_prefix(&mut self) -> Result<usize, DecodeError> {
        let start = self.pos;
        let n = self.long()?;
        if n < 0 {
            return Err(self.error(DecodeErrorKind::NegativeLength(n), start));
        }
        if n as u64 > self.remaining() as u64 {
            return Err(self.eof(n as u64));
        }
        Ok(n as usize)
    }

    /// A length-prefixed byte string.
    #[inline(always)]
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.len_prefix()?;
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..start + n])
    }

    #[inline(always)]
    pub(crate) fn f32(&mut self) -> Result<f32, DecodeError> {
        self.array::<4>().map(f32::from_le_bytes)
    }

    #[inline(always)]
    pub(crate) fn f64(&mut self) -> Result<f64, DecodeError> {
        self.array::<8>().map(f64::from_le_bytes)
    }

    #[inline(always)]
    pub(crate) fn boolean(&mut self) -> Result<bool, DecodeError> {
        match self.buf.get(self.pos) {
            Some(&b) if b <= 1 => {
                self.pos += 1;
                Ok(b == 1)
            }
            Some(&b) => Err(self.error(DecodeErrorKind::InvalidBoolean(b), self.pos)),
            None => Err(self.eof(1)),
        }
    }

    /// The header of one array or map block: `None` at the terminating zero count, otherwise
    /// the item count. `min_item_size` bounds the count by the bytes left (items of zero bytes
    /// are bounded by the caller).
    #[inline(always)]
    pub(crate) fn block_count(
        &mut self,
        min_item_size: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let start = self.pos;
        let count = self.long()?;
        if count == 0 {
            return Ok(None);
        }
        let n = if count < 0 {
            // A negative count is followed by the block's size in bytes.
            let size_at = self.pos;
            let size = self.long()?;
            if size < 0 {
                return Err(self.error(DecodeErrorKind::NegativeLength(size), size_at));
            }
            if size as u64 > self.remaining() as u64 {
                return Err(self.eof(size as u64));
            }
            count.unsigned_abs()
        } else {
            count as u64
        };
        // `n * min_item_size > remaining` (no division: this runs once per array block).
        if n.checked_mul(min_item_size as u64)
            .is_none_or(|need| need > self.remaining() as u64)
        {
            return Err(self.error(
                DecodeErrorKind::TooLarge(Limit::Items {
                    count: n,
                    min_item_size,
                    left: self.remaining(),
                }),
                start,
            ));
        }
        if n > i32::MAX as u64 {
            return Err(self.error(
                DecodeErrorKind::TooLarge(Limit::ItemOffsets { count: n }),
                start,
            ));
        }
        Ok(Some(n as usize))
    }

    /// Like [`Cursor::block_count`], but returns the byte size when the writer recorded one, so
    /// that a skipped collection can be jumped over.
    #[inline]
    pub(crate) fn block_count_and_size(
        &mut self,
    ) -> Result<Option<(u64, Option<usize>)>, DecodeError> {
        let count = self.long()?;
        if count == 0 {
            return Ok(None);
        }
        if count < 0 {
            let size_at = self.pos;
            let size = self.long()?;
            if size < 0 {
                return Err(self.error(DecodeErrorKind::NegativeLength(size), size_at));
            }
            if size as u64 > self.remaining() as u64 {
                return Err(self.eof(size as u64));
            }
            return Ok(Some((count.unsigned_abs(), Some(size as usize))));
        }
        Ok(Some((count as u64, None)))
    }
}

/// The read position of the record fast path ([`StructCol::decode_n`](super::column::StructCol)):
/// reads never return an error. A failed read sets a flag, moves to the end of the data (so
/// that every later read fails too, and no length read afterwards can reserve or copy anything)
/// and yields a placeholder; each record (and each block of a non-numeric array or of a map)
/// is checked once, at its end ([`Sticky::failed`]), and if it failed it is decoded again with
/// [`Cursor`], whose errors name the field and the byte offset. Nested records share their
/// enclosing cursor and its check.
///
/// No `Result` check per field. In the row loop of scalar records
/// ([`StructCol::decode_rows_scalar`](super::column::StructCol)) it lives in registers; in the
/// loops that can read any field the compiler keeps it in memory (see [`Sticky::out_of_line`]).
pub(crate) struct Sticky<'a, K> {
    pub(crate) buf: &'a [u8],
    /// Always `<= buf.len()`.
    pub(crate) pos: usize,
    pub(crate) k: K,
    /// Set on failure. Shared by the nested fast paths of one record and kept in memory on
    /// purpose: a flag in a register costs a move per read; a store only happens on failure.
    /// A fast path starts only while it is clear (outer fast paths stop decoding nested values
    /// after a failure) and leaves it clear when it, or the value-by-value decoding that
    /// follows its failure, succeeds.
    failed: &'a Cell<bool>,
}

/// How far ahead of the record loops' position [`Sticky::prefetch`] asks for the data: 16
/// cache lines (512 to 2048 bytes measured within a few percent of each other on Telemetry
/// and WideRecord, 256 a little slower).
pub(crate) const PREFETCH_AHEAD: usize = 1024;

/// The most bytes past [`PREFETCH_AHEAD`] one record's [`Sticky::prefetch`] asks for.
const PREFETCH_SPAN: usize = 16 << 10;

/// Marks the branch that calls it as unlikely.
#[cold]
#[inline(never)]
fn cold() {}

impl<'a, K: Kernel> Sticky<'a, K> {
    #[inline(always)]
    pub(crate) fn new(c: &Cursor<'a, K>) -> Self {
        let mut f = Sticky {
            buf: c.buf,
            pos: c.pos,
            k: c.k,
            failed: c.failed,
        };
        f.failed.set(false);
        if c.pos > c.buf.len() {
            f.fail();
        }
        f
    }

    /// Ask the CPU to load the data's cache lines from [`PREFETCH_AHEAD`] bytes past the
    /// position to `span` bytes beyond (the last record's size: what the next one likely
    /// takes; one line for records under a line long).
    ///
    /// The record loops read the data front to back, but their reads are dependent steps of
    /// a few bytes each, and the hardware's stream prefetchers stop at every 4 KiB page: a
    /// memory-mapped or freshly decompressed block otherwise costs a few trips to memory per
    /// page.
    #[inline(always)]
    pub(crate) fn prefetch(&self, span: usize) {
        let mut at = self.pos + PREFETCH_AHEAD;
        // (A record of megabytes asks for no more than the next few KiB: the lines past them
        // would be gone from the cache before they are read.)
        let end = (at + span.min(PREFETCH_SPAN)).min(self.buf.len());
        loop {
            if at < self.buf.len() {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `at < buf.len()`, so the pointer is within `buf`; a prefetch only
                // hints the cache and never faults or changes memory (SSE, part of the x86_64
                // baseline).
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch::<_MM_HINT_T0>(self.buf.as_ptr().add(at).cast());
                }
            }
            at += 64;
            if at > end {
                break;
            }
        }
    }

    /// A copy of this cursor for a loop over many values, to run in a local of the loop's
    /// own (then [`Sticky::join`]): a cursor whose address was passed to another function
    /// lives in memory, and a loop through it stores and reloads the position at every value
    /// (the stores into the column buffers might alias it), a dependency of several cycles
    /// on every varint; the copy's position stays in a register.
    #[inline(always)]
    pub(crate) fn fork(&self) -> Self {
        Sticky {
            buf: self.buf,
            pos: self.pos,
            k: self.k,
            failed: self.failed,
        }
    }

    /// Take the position of `fork`, a copy made by [`Sticky::fork`] (a failure is in the
    /// shared flag already).
    #[inline(always)]
    pub(crate) fn join(&mut self, fork: Self) {
        self.pos = fork.pos;
    }

    /// Run `out`, a call the compiler keeps out of line, on a copy of this cursor
    /// ([`Sticky::fork`]), then take the copy's position ([`Sticky::join`]). A cursor whose
    /// address is passed to a call lives in memory for the whole function it is in, so one
    /// such call anywhere in a record's row loop puts every field's position through a store
    /// and a reload. (In the loops that can read any field, calls made this way did not keep
    /// the cursor in registers: the compiler spilled it there anyway, and the copies cost the
    /// loops of arrays and maps 3-10 %; the loop of scalars uses it in its fallback arm, which
    /// its records never take.)
    #[inline(always)]
    pub(crate) fn out_of_line<R>(&mut self, out: impl FnOnce(&mut Self) -> R) -> R {
        let mut g = self.fork();
        let r = out(&mut g);
        self.join(g);
        r
    }

    /// Whether a read failed.
    #[inline(always)]
    pub(crate) fn failed(&self) -> bool {
        self.failed.get()
    }

    /// Record a failure: later reads all fail (at the end of the data).
    #[inline(always)]
    pub(crate) fn fail(&mut self) {
        cold();
        self.failed.set(true);
        self.pos = self.buf.len();
    }

    /// A zigzag long. Through [`Kernel::read_u64_unpredictable`]: consecutive reads are a
    /// record's fields in turn, whose lengths differ, so the branch-free path for varints of
    /// two bytes or more beats the unrolled per-length branches (WideRecord: 12 % less time,
    /// median of 8 paired runs; 357.9M -> 352.7M instructions).
    #[inline(always)]
    pub(crate) fn long(&mut self) -> i64 {
        match self.k.read_u64_unpredictable(self.buf, &mut self.pos) {
            Ok(v) => crate::varint::unzigzag64(v),
            Err(_) => {
                self.fail();
                0
            }
        }
    }

    /// A union branch index: a one-byte varint (every branch of a union of up to 64) read
    /// directly, anything longer as a long. Unions (read or skipped) read one per value; the
    /// branch-free path of [`Sticky::long`] is built for longer varints.
    #[inline(always)]
    pub(crate) fn branch_index(&mut self) -> i64 {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                i64::from(b >> 1) ^ -i64::from(b & 1)
            }
            _ => self.long(),
        }
    }

    #[inline(always)]
    pub(crate) fn int(&mut self) -> i32 {
        let v = self.long();
        if v as i32 as i64 != v {
            self.fail();
        }
        v as i32
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> [u8; N] {
        match self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
        {
            Some(b) => {
                self.pos += N;
                *b
            }
            None => {
                self.fail();
                [0; N]
            }
        }
    }

    /// The next `n` bytes (empty after a failure).
    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let buf = self.buf;
        match buf.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(b) => {
                self.pos += n;
                b
            }
            None => {
                self.fail();
                &[]
            }
        }
    }

    /// A `bytes` or `string` value (empty after a failure).
    #[inline(always)]
    pub(crate) fn bytes(&mut self) -> &'a [u8] {
        let buf = self.buf;
        let (from, n) = self.len_prefix();
        &buf[from..from + n]
    }

    #[inline(always)]
    pub(crate) fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.array::<4>())
    }

    #[inline(always)]
    pub(crate) fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.array::<8>())
    }

    #[inline(always)]
    pub(crate) fn boolean(&mut self) -> bool {
        match self.buf.get(self.pos) {
            Some(&b) if b <= 1 => {
                self.pos += 1;
                b == 1
            }
            _ => {
                self.fail();
                false
            }
        }
    }

    /// A length prefix (`bytes`, `string`) and the value's start: `buf[from..from + n]` is in
    /// bounds (empty after a failure).
    #[inline(always)]
    pub(crate) fn len_prefix(&mut self) -> (usize, usize) {
        let n = self.long();
        if n as u64 > (self.buf.len() - self.pos) as u64 {
            // Negative (huge as u64) or longer than the data left.
            self.fail();
            return (self.pos, 0);
        }
        let from = self.pos;
        self.pos += n as usize;
        (from, n as usize)
    }
}
