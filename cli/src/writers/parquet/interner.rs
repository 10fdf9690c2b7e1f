//! The dictionary of one column chunk that `dictionary.rs` writes: its values in id order (one
//! buffer and their ends, as the dictionary page stores them) and a hash table from values to
//! ids.
//!
//! String columns intern every row's value here, so a lookup is what a row costs: the table
//! holds only ids (4 bytes a slot) and compares a candidate by its bytes in the values buffer;
//! values are hashed with foldhash, fast on short keys, with a fixed seed so that nothing about
//! the file depends on the process (ids follow first use, not the hash).

use anyhow::{Context, Result};
use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};
use std::hash::BuildHasher;

/// A column chunk's dictionary.
#[derive(Default)]
pub struct Dictionary {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    table: HashTable<u32>,
    hasher: FixedState,
}

impl Dictionary {
    /// Values so far.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The size of the dictionary page (PLAIN: each value's length in 4 bytes, then its bytes).
    pub fn page_size(&self) -> usize {
        self.bytes.len() + 4 * self.ends.len()
    }

    /// The value of `id` (one that [`Dictionary::intern`] gave).
    pub fn get(&self, id: u32) -> &[u8] {
        value(&self.bytes, &self.ends, id)
    }

    /// The id of `value`, a new one (the next) on its first use.
    ///
    /// # Errors
    /// Over 4 billion values.
    #[inline]
    pub fn intern(&mut self, value: &[u8]) -> Result<u32> {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(value);
        let (bytes, ends) = (&self.bytes, &self.ends);
        let entry = self.table.entry(
            hash,
            |&id| self::value(bytes, ends, id) == value,
            |&id| hasher.hash_one(self::value(bytes, ends, id)),
        );
        match entry {
            Entry::Occupied(entry) => Ok(*entry.get()),
            Entry::Vacant(entry) => {
                let id = u32::try_from(self.ends.len())
                    .ok()
                    .filter(|&id| id != u32::MAX)
                    .context("a dictionary of 4 billion values")?;
                entry.insert(id);
                self.bytes.extend_from_slice(value);
                self.ends.push(self.bytes.len());
                Ok(id)
            }
        }
    }

    /// The dictionary page's bytes, PLAIN-encoded.
    pub fn plain(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.page_size());
        for id in 0..self.len() as u32 {
            let value = self.get(id);
            out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            out.extend_from_slice(value);
        }
        out
    }
}

/// Value `id` of the buffer `bytes` cut at `ends`.
#[inline]
fn value<'a>(bytes: &'a [u8], ends: &[usize], id: u32) -> &'a [u8] {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &bytes[start..ends[id]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a map from values to ids in order of first use.
        #[test]
        fn ids_follow_first_use(values in proptest::collection::vec(
            proptest::collection::vec(0u8..4, 0..4), 0..300)) {
            let mut dictionary = Dictionary::default();
            let mut reference: HashMap<Vec<u8>, u32> = HashMap::new();
            for value in &values {
                let next = reference.len() as u32;
                let want = *reference.entry(value.clone()).or_insert(next);
                prop_assert_eq!(dictionary.intern(value).unwrap(), want);
            }
            prop_assert_eq!(dictionary.len(), reference.len());
            for (value, &id) in &reference {
                prop_assert_eq!(dictionary.get(id), value.as_slice());
            }
            let size: usize = reference.keys().map(|v| v.len() + 4).sum();
            prop_assert_eq!(dictionary.page_size(), size);
            prop_assert_eq!(dictionary.plain().len(), size);
        }
    }
}
