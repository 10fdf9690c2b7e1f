//! Batches re-cut at multiples of the batch size before they are encoded, so that page
//! boundaries do not depend on how reading threads cut them.

use anyhow::Result;
use arrow::array::RecordBatch;

/// Re-cuts a stream of batches at multiples of `size` rows from its start, as one thread
/// reads them. A column writer checks its page size at the end of every write, so the file
/// depends on where batches end, and batches read on several threads end short at work-unit
/// boundaries. Batches already cut right pass through; only the pieces around a short one are
/// joined (a copy of at most `size` rows).
pub struct Rebatch {
    size: usize,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
}

impl Rebatch {
    pub fn new(size: usize) -> Rebatch {
        Rebatch {
            size: size.max(1),
            pending: Vec::new(),
            pending_rows: 0,
        }
    }

    /// Appends to `out` the batches of `size` rows that `batch` completes.
    pub fn push(&mut self, batch: &RecordBatch, out: &mut Vec<RecordBatch>) -> Result<()> {
        let rows = batch.num_rows();
        let mut offset = 0;
        if self.pending_rows > 0 {
            offset = (self.size - self.pending_rows).min(rows);
            self.pending.push(batch.slice(0, offset));
            self.pending_rows += offset;
            if self.pending_rows == self.size {
                out.extend(self.flush()?);
            }
        }
        while rows - offset >= self.size {
            out.push(if offset == 0 && rows == self.size {
                batch.clone()
            } else {
                batch.slice(offset, self.size)
            });
            offset += self.size;
        }
        if offset < rows {
            self.pending.push(batch.slice(offset, rows - offset));
            self.pending_rows += rows - offset;
        }
        Ok(())
    }

    /// The rows held back, joined.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        self.pending_rows = 0;
        let pending = std::mem::take(&mut self.pending);
        Ok(match pending.len() {
            0 => None,
            1 => pending.into_iter().next(),
            _ => Some(arrow::compute::concat_batches(
                &pending[0].schema(),
                &pending,
            )?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writers::parquet::tests::batches;

    #[test]
    fn rebatch_cuts_at_multiples_of_the_batch_size() {
        let (_, batches) = batches();
        let mut rebatch = Rebatch::new(250);
        let mut out = Vec::new();
        for batch in &batches {
            rebatch.push(batch, &mut out).unwrap();
        }
        out.extend(rebatch.flush().unwrap());
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(out.len(), rows.div_ceil(250));
        assert!(out[..out.len() - 1].iter().all(|b| b.num_rows() == 250));
        let joined = arrow::compute::concat_batches(&out[0].schema(), &out).unwrap();
        let expected = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
        assert_eq!(joined, expected);
    }
}
