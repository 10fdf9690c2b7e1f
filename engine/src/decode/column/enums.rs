//! Enums: [`EnumCol`] pushes each value's dictionary key (remapped under schema resolution,
//! checked per value) and finishes the batch as a `DictionaryArray` over the symbols.

use super::extend_checked;
use super::nullable::{number_or_null_in, ReadAt};
use crate::decode::bits::Validity;
use crate::decode::cursor::{Cursor, Sticky};
use crate::decode::pool::BufferPool;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::{unzigzag64, Kernel};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, StringArray};
use arrow_buffer::NullBuffer;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct EnumCol {
    pub(super) keys: Vec<i32>,
    pub(super) symbols: ArrayRef,
    n_symbols: usize,
    /// Schema resolution: the reader's index of each writer symbol (`-1`: none, an error).
    remap: Option<Arc<EnumRemap>>,
}

/// The writer's enum symbols resolved against the reader's.
#[derive(Debug)]
pub(crate) struct EnumRemap {
    /// The reader's index of each writer symbol, `-1` where there is none.
    pub(crate) keys: Box<[i32]>,
    pub(crate) writer_symbols: Box<[String]>,
}

/// An enum's index (a zigzag varint) as its output key, valid if it has one, for
/// [`number_or_null`](super::nullable::number_or_null).
struct KeyAt<'a, K> {
    k: K,
    n_symbols: usize,
    remap: Option<&'a EnumRemap>,
}

impl<K: Kernel> ReadAt<i32> for KeyAt<'_, K> {
    #[inline(always)]
    fn read_at(&self, buf: &[u8], at: usize) -> (i32, usize, bool) {
        let mut end = at;
        match self.k.read_u64_branchless(buf, &mut end) {
            Ok(index) => {
                let key = enum_key(unzigzag64(index), self.n_symbols, self.remap);
                (key, end, key >= 0)
            }
            Err(_) => (0, at, false),
        }
    }
}

/// The output key of the writer's index `index` of an enum of `n_symbols` symbols (resolved
/// with `remap`); negative if there is none.
#[inline(always)]
fn enum_key(index: i64, n_symbols: usize, remap: Option<&EnumRemap>) -> i32 {
    if index as u64 >= n_symbols as u64 {
        return -1;
    }
    match remap {
        None => index as i32,
        Some(remap) => remap.keys[index as usize],
    }
}

impl EnumCol {
    pub(crate) fn new(symbols: &[String]) -> Self {
        // An enum without symbols can hold no value; its dictionary gets one entry so that
        // placeholder keys (under a null parent) stay valid.
        let dict: Vec<&str> = if symbols.is_empty() {
            vec![""]
        } else {
            symbols.iter().map(String::as_str).collect()
        };
        EnumCol {
            keys: Vec::new(),
            symbols: Arc::new(StringArray::from(dict)),
            n_symbols: symbols.len(),
            remap: None,
        }
    }

    /// Read the writer's indexes through `remap` (schema resolution).
    pub(crate) fn with_remap(mut self, remap: EnumRemap) -> Self {
        self.n_symbols = remap.keys.len();
        self.remap = Some(Arc::new(remap));
        self
    }

    /// The output key of the writer's index `index`; negative if there is none (out of
    /// range, or a writer symbol the reader's enum lacks).
    #[inline(always)]
    pub(super) fn key(&self, index: i64) -> i32 {
        enum_key(index, self.n_symbols, self.remap.as_deref())
    }

    /// Append the keys of the writer's indexes at field `j` of each row of `k` values in
    /// `values`; whether every one had a key (if not, the caller drops what was appended). No
    /// branch a value: invalid indexes append -1.
    #[inline(always)]
    pub(super) fn extend_checked(&mut self, values: &[i64], j: usize, k: usize) -> bool {
        let (n_symbols, remap) = (self.n_symbols, self.remap.as_deref());
        extend_checked(&mut self.keys, values, j, k, |index| {
            let key = enum_key(index, n_symbols, remap);
            (key, key >= 0)
        })
    }

    /// A nullable enum's value on the fast path, with no branch on null
    /// ([`super::nullable::number_or_null`]): `false`, with nothing read, where that does not
    /// decide.
    #[inline(always)]
    pub(super) fn or_null_sticky<K: Kernel, const INLINE: bool>(
        &mut self,
        f: &mut Sticky<'_, K>,
        value_byte: u8,
        validity: &mut Validity,
    ) -> bool {
        let read = KeyAt {
            k: f.k,
            n_symbols: self.n_symbols,
            remap: self.remap.as_deref(),
        };
        let keys = &mut self.keys;
        number_or_null_in::<K, i32, INLINE>(f, value_byte, validity, read, |key| keys.push(key))
    }

    /// The keys decoded so far as a dictionary array over the symbols (with `nulls` from a
    /// nullable parent); the column is left empty.
    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>, pool: &Arc<BufferPool>) -> ArrayRef {
        let keys = Int32Array::new(pool.scalar(std::mem::take(&mut self.keys)), nulls);
        Arc::new(dictionary(keys, self.symbols.clone()))
    }

    pub(super) fn decode<K: Kernel>(&mut self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        let start = c.pos;
        let index = c.long()?;
        if index < 0 || index as u64 >= self.n_symbols as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::EnumIndex {
                    index,
                    symbols: self.n_symbols,
                },
                start,
            ));
        }
        let key = match &self.remap {
            None => index as i32,
            Some(remap) => {
                let key = remap.keys[index as usize];
                if key < 0 {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnresolvedEnumSymbol(
                            remap.writer_symbols[index as usize].clone(),
                        ),
                        start,
                    ));
                }
                key
            }
        };
        self.keys.push(key);
        Ok(())
    }
}

/// `keys` over `values` as a dictionary array. Every key is checked against the dictionary in
/// one pass with no branch per key, which the compiler vectorizes: `DictionaryArray::try_new`
/// stops at the first bad key, a branch and a null check per key, which was a quarter of the
/// enum family's decoding time. Only if some key is out of range (none is: the decoders check
/// each index and give null slots the key 0) does `try_new` look again, skipping null slots.
fn dictionary(keys: Int32Array, values: ArrayRef) -> DictionaryArray<Int32Type> {
    let len = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let out_of_range = keys
        .values()
        .iter()
        .fold(0u32, |acc, &k| acc | u32::from(k as u32 >= len));
    if out_of_range == 0 {
        // SAFETY: `new_unchecked` asks that `try_new` would succeed. `try_new` fails only for
        // a key of a valid slot outside `0..values.len()`, and every key, valid or null, was
        // just found inside it (as `u32`, so negative keys count as out of range).
        unsafe { DictionaryArray::new_unchecked(keys, values) }
    } else {
        DictionaryArray::try_new(keys, values).expect("enum indexes checked while decoding")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    /// `dictionary` (unchecked where its own pass finds every key in range) against
    /// `DictionaryArray::try_new`: keys in range, with and without nulls, and keys out of
    /// range (past the end, negative) under null slots, which only the checked path accepts;
    /// every result valid by arrow's full validation.
    #[test]
    fn dictionary_matches_try_new() {
        let symbols: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
        let cases: [(Vec<i32>, Option<Vec<bool>>); 5] = [
            (vec![0, 1, 2, 2, 0], None),
            (vec![], None),
            (vec![2, 0, 1], Some(vec![true, false, true])),
            (vec![2, 3, 1], Some(vec![true, false, true])),
            (vec![-1, 0, i32::MIN], Some(vec![false, true, false])),
        ];
        for (keys, valid) in cases {
            let keys = Int32Array::new(keys.into(), valid.map(NullBuffer::from));
            let got = dictionary(keys.clone(), symbols.clone());
            got.to_data().validate_full().unwrap();
            let want = DictionaryArray::<Int32Type>::try_new(keys, symbols.clone()).unwrap();
            assert_eq!(got, want);
        }
    }

    /// A valid key equal to the dictionary's length is refused (by `try_new`, after the
    /// range pass found it): the bound is exclusive.
    #[test]
    #[should_panic(expected = "enum indexes checked while decoding")]
    fn dictionary_refuses_a_valid_key_past_the_symbols() {
        let symbols: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
        dictionary(Int32Array::from(vec![0, 3]), symbols);
    }
}
