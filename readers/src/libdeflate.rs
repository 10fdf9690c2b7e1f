//! libdeflate's raw-deflate decompressor through its C API (`libdeflate-sys`), for what the
//! `libdeflater` wrapper does not return: how many input bytes the deflate stream used. A
//! block whose stream ends well before the block does is not a valid block (its byte size
//! lies, for instance to swallow the blocks after it), and only the `_ex` entry point says
//! where the stream ended. `unsafe` here buys libdeflate's speed (1.3–1.4× zlib-rs on the
//! bench files, docs/perf/codecs.md); `codec.rs`'s tests check it against zlib-rs.

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_deflate_decompress_ex,
    libdeflate_free_decompressor, libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE,
    libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// What a whole-buffer inflate gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inflated {
    /// The stream ended after `used` input bytes, having produced `produced` bytes.
    Done { used: usize, produced: usize },
    /// The output buffer is too small for the stream's output.
    NoSpace,
    /// The data is not a valid deflate stream (or ends before its final block does).
    BadData,
}

/// One libdeflate decompressor (a few KB of tables), reused block after block.
pub(crate) struct Libdeflate {
    raw: NonNull<libdeflate_decompressor>,
}

// SAFETY: a libdeflate decompressor is plain heap memory with no thread affinity; it is used
// only through `&mut self`, so it is never used by two threads at once.
unsafe impl Send for Libdeflate {}

impl Libdeflate {
    /// A decompressor; `None` only if libdeflate cannot allocate its tables.
    pub(crate) fn new() -> Option<Libdeflate> {
        // SAFETY: no arguments; the result is null or a decompressor we own from here on.
        let raw = unsafe { libdeflate_alloc_decompressor() };
        NonNull::new(raw).map(|raw| Libdeflate { raw })
    }

    /// Inflate the raw deflate stream at the start of `input` into `out` (cleared first),
    /// producing at most `room` bytes. The output is written into `out`'s spare capacity, so
    /// no byte is zeroed before libdeflate writes it (a 300 MB block spent a tenth of its
    /// read zeroing its room). On anything but [`Inflated::Done`], `out` is left empty.
    pub(crate) fn inflate(&mut self, input: &[u8], out: &mut Vec<u8>, room: usize) -> Inflated {
        out.clear();
        if out.capacity() < room {
            // A fresh allocation rather than a grown one, which would copy the old bytes.
            *out = Vec::new();
        }
        out.reserve(room);
        let mut used = 0usize;
        let mut produced = 0usize;
        // SAFETY: `self.raw` is a live decompressor owned by `self` (exclusive through
        // `&mut`); `input` is valid for its length and `out`'s allocation for `room` bytes
        // (reserved above); libdeflate reads only `input`, and of the output only bytes it has
        // itself written, and writes only within the `room` bytes; the two out-parameters are
        // valid `usize`s.
        let result = unsafe {
            libdeflate_deflate_decompress_ex(
                self.raw.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                room,
                &mut used,
                &mut produced,
            )
        };
        #[allow(non_upper_case_globals)]
        match result {
            libdeflate_result_LIBDEFLATE_SUCCESS => {
                let produced = produced.min(room);
                // SAFETY: on success libdeflate has written `produced` bytes (at most `room`,
                // within the capacity reserved) from the start of `out`'s allocation.
                unsafe { out.set_len(produced) };
                Inflated::Done {
                    used: used.min(input.len()),
                    produced,
                }
            }
            libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => Inflated::NoSpace,
            // BAD_DATA, and SHORT_OUTPUT (not returned when the output length is asked for).
            _ => Inflated::BadData,
        }
    }
}

impl Drop for Libdeflate {
    fn drop(&mut self) {
        // SAFETY: allocated by `libdeflate_alloc_decompressor`, freed once, here.
        unsafe { libdeflate_free_decompressor(self.raw.as_ptr()) }
    }
}
