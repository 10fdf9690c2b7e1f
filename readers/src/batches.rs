//! The queue of decoded batches between a worker and the reader: batches in file order, with
//! a run of identical batches held as one entry.
//!
//! Records that take zero bytes (nulls, empty records, `fixed(0)`, and defaults resolved onto
//! them) are all the same row, so every full batch of them is the same arrays; a block may
//! declare up to `i32::MAX` of them in a few bytes. Held one by one, a 451-byte file read with
//! one row per batch committed 23 GB. A run is kept as one batch and a count, and handed out
//! one clone at a time.

use arrow_array::RecordBatch;
use avrow_engine::BatchSink;
use std::collections::VecDeque;

#[derive(Debug)]
enum Entry {
    One(RecordBatch),
    /// `batch`, `times` times (at least once).
    Run {
        batch: RecordBatch,
        times: u64,
    },
}

/// Batches in order; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Batches {
    entries: VecDeque<Entry>,
    /// Full ([`BatchSink::is_full`]) once batches of this many bytes were pushed (`None`:
    /// never), so that a block's decoding pauses for them to be handed out.
    pause_at: Option<usize>,
    /// Bytes of the batches pushed (counted only with `pause_at`).
    pushed_bytes: usize,
}

impl Batches {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A queue that is full once it was pushed batches of `bytes` (any batch, for 0).
    pub(crate) fn pausing_at(bytes: usize) -> Self {
        Batches {
            pause_at: Some(bytes),
            ..Self::default()
        }
    }

    fn count(&mut self, batch: &RecordBatch) {
        if matches!(self.pause_at, Some(b) if b > 0) {
            self.pushed_bytes = self
                .pushed_bytes
                .saturating_add(batch.get_array_memory_size());
        }
    }

    /// The next batch.
    pub(crate) fn pop_front(&mut self) -> Option<RecordBatch> {
        match self.entries.front_mut()? {
            Entry::Run { batch, times } if *times > 1 => {
                *times -= 1;
                Some(batch.clone())
            }
            _ => match self.entries.pop_front()? {
                Entry::One(batch) | Entry::Run { batch, .. } => Some(batch),
            },
        }
    }

    /// Entries (not batches): a mark for [`Batches::first_since`].
    pub(crate) fn mark(&self) -> usize {
        self.entries.len()
    }

    /// Drops every batch pushed since `mark` and returns the first of them, if any.
    pub(crate) fn first_since(&mut self, mark: usize) -> Option<RecordBatch> {
        if self.entries.len() <= mark {
            return None;
        }
        self.entries.truncate(mark + 1);
        match self.entries.pop_back()? {
            Entry::One(batch) | Entry::Run { batch, .. } => Some(batch),
        }
    }

    /// Appends `other`'s batches.
    pub(crate) fn append(&mut self, other: Batches) {
        self.entries.extend(other.entries);
    }

    /// Batches held (counting each run in full).
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::One(_) => 1,
                Entry::Run { times, .. } => *times,
            })
            .sum()
    }
}

impl BatchSink for Batches {
    fn push(&mut self, batch: RecordBatch) {
        self.count(&batch);
        self.entries.push_back(Entry::One(batch));
    }

    /// `batch`, `times` times in a row, held as one entry (its memory counted once).
    fn push_run(&mut self, batch: RecordBatch, times: u64) {
        match times {
            0 => {}
            1 => self.push(batch),
            _ => {
                self.count(&batch);
                self.entries.push_back(Entry::Run { batch, times });
            }
        }
    }

    fn is_full(&self) -> bool {
        self.pause_at
            .is_some_and(|bytes| !self.entries.is_empty() && self.pushed_bytes >= bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int32Array};
    use std::sync::Arc;

    fn batch(v: i32) -> RecordBatch {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![v]));
        RecordBatch::try_from_iter([("a", a)]).unwrap()
    }

    #[test]
    fn runs_hand_out_their_batch_as_often_as_pushed_in_order() {
        let mut q = Batches::new();
        q.push(batch(1));
        q.push_run(batch(2), 3);
        q.push_run(batch(9), 0);
        q.push_run(batch(3), 1);
        assert_eq!(q.len(), 5);
        let got: Vec<RecordBatch> = std::iter::from_fn(|| q.pop_front()).collect();
        assert_eq!(got, vec![batch(1), batch(2), batch(2), batch(2), batch(3)]);
    }

    #[test]
    fn first_since_drops_what_followed_the_mark() {
        let mut q = Batches::new();
        q.push(batch(1));
        let mark = q.mark();
        assert!(q.first_since(mark).is_none());
        q.push_run(batch(2), 5);
        q.push(batch(3));
        assert_eq!(q.first_since(mark), Some(batch(2)));
        assert_eq!(q.len(), 1);
        let mut other = Batches::new();
        other.push(batch(4));
        q.append(other);
        assert_eq!(q.pop_front(), Some(batch(1)));
        assert_eq!(q.pop_front(), Some(batch(4)));
        assert_eq!(q.pop_front(), None);
    }
}
