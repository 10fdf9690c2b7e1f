//! Suggesting byte ranges that split one file into balanced parts (for distributing a file
//! across tasks or machines with [`ReaderBuilder::with_range`](crate::ReaderBuilder::with_range)).

use crate::container::{frame_block, read_header, Counting};
use crate::error::{Error, Result};
use crate::source::{map_file, open_path};
use std::ops::Range;
use std::path::Path;

/// Suggest `n` byte ranges that partition the file `path` (`0..len`, in order, no gaps) with
/// about the same number of block bytes each. Boundaries fall on block sync markers, so each
/// range holds whole blocks (a range may be empty when there are fewer blocks than ranges).
///
/// ```no_run
/// let ranges = avrow::split_ranges("big.avro", 4)?;
/// for range in ranges {
///     let reader = avrow::ReaderBuilder::new().with_range(range).open("big.avro")?;
///     // hand `reader` to a task...
/// #   drop(reader);
/// }
/// # Ok::<(), avrow::Error>(())
/// ```
///
/// # Errors
/// The file cannot be read, or its header or block framing is invalid.
pub fn split_ranges(path: impl AsRef<Path>, n: usize) -> Result<Vec<Range<u64>>> {
    let path = path.as_ref();
    let name = path.display().to_string();
    if n == 0 {
        return Err(Error::InvalidArgument(
            "split_ranges needs at least one range".into(),
        ));
    }
    let (bytes, _map) = map_file(&open_path(path, &name)?, &name)?;
    let mut counting = Counting::new(&bytes[..], 0);
    let header = read_header(&mut counting, &name)?;
    let len = bytes.len() as u64;
    // The sync position of each block: where the marker before it starts.
    let mut sync_positions = Vec::new();
    let mut pos = header.len() as usize;
    let mut index = 0;
    while let Some(span) = frame_block(&bytes, pos, index, &header.sync(), &name)? {
        sync_positions.push(pos as u64 - 16);
        pos = span.end;
        index += 1;
    }
    let mut bounds = vec![0u64];
    for k in 1..n as u64 {
        let target = len * k / n as u64;
        let prev = *bounds.last().expect("non-empty");
        let b = sync_positions
            .iter()
            .copied()
            .find(|&p| p >= target)
            .unwrap_or(len)
            .max(prev);
        bounds.push(b);
    }
    bounds.push(len);
    Ok(bounds.windows(2).map(|w| w[0]..w[1]).collect())
}
