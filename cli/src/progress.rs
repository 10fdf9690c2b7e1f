//! The progress bar of `convert` (stderr, only on a terminal and without `--quiet`) and its
//! one-line summary.
//!
//! The reader does not report how many input bytes it has consumed, so the bar maps rows done
//! to bytes done through the block headers: before converting files, one pass over the block
//! headers (no decompression, no decoding; with memory maps it touches one page per block)
//! records where each block ends and how many rows precede it. Standard input has no known
//! size: the bar then shows the bytes read so far, without an ETA.

use crate::inputs::{ByteCounter, Input};
use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::io::Write;
use std::time::{Duration, Instant};

/// Rows → bytes for files: for each block, the rows up to and including it and the input
/// bytes up to its end (across all inputs).
#[derive(Debug, Default)]
struct BlockMap {
    rows: Vec<u64>,
    bytes: Vec<u64>,
}

impl BlockMap {
    fn scan(inputs: &[Input]) -> Option<BlockMap> {
        let mut map = BlockMap::default();
        let (mut rows, mut base) = (0u64, 0u64);
        for input in inputs {
            let Input::File(path) = input else {
                return None;
            };
            let blocks = avrow::BlockReader::open(path).ok()?;
            for block in blocks {
                let block = block.ok()?;
                rows += block.record_count();
                map.rows.push(rows);
                map.bytes
                    .push(base + block.offset() + block.data().len() as u64 + 16);
            }
            base += input.size()?;
        }
        Some(map)
    }

    /// Input bytes done once `rows` rows are done.
    fn bytes_for(&self, rows: u64) -> u64 {
        if rows == 0 {
            return 0;
        }
        let i = self.rows.partition_point(|&r| r < rows);
        match self.bytes.get(i) {
            Some(&b) => b,
            None => self.bytes.last().copied().unwrap_or(0),
        }
    }
}

/// Progress of one conversion.
pub struct Progress {
    bar: Option<ProgressBar>,
    map: Option<BlockMap>,
    stdin: Option<ByteCounter>,
    rows: u64,
    start: Instant,
}

impl Progress {
    /// Starts measuring; shows a bar when stderr is a terminal and not `quiet`. `counter`
    /// counts the bytes read from standard input, if it is the input.
    pub fn start(inputs: &[Input], counter: &ByteCounter, quiet: bool) -> Progress {
        let start = Instant::now();
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                map: None,
                stdin: None,
                rows: 0,
                start,
            };
        }
        let total: Option<u64> = inputs.iter().map(Input::size).sum();
        let map = BlockMap::scan(inputs);
        let bar = match (total, &map) {
            (Some(total), Some(_)) => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {elapsed_precise} [{wide_bar}] {bytes}/{total_bytes} \
                         {msg} {bytes_per_sec} ETA {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar
            }
            _ => {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {elapsed_precise} {bytes} {msg} {bytes_per_sec}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar
            }
        };
        bar.enable_steady_tick(Duration::from_millis(200));
        let stdin = inputs.contains(&Input::Stdin).then(|| counter.clone());
        Progress {
            bar: Some(bar),
            map,
            stdin,
            rows: 0,
            start,
        }
    }

    /// `rows` more rows are done.
    pub fn advance(&mut self, rows: u64) {
        self.rows += rows;
        let Some(bar) = &self.bar else {
            return;
        };
        let bytes = match (&self.map, &self.stdin) {
            (Some(map), _) => map.bytes_for(self.rows),
            (None, Some(counter)) => counter.get(),
            (None, None) => 0,
        };
        bar.set_position(bytes);
        bar.set_message(format!("{} rows", HumanCount(self.rows)));
    }

    /// Writes a line on standard error above the bar (or plainly, without a bar).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
        }
    }

    /// Removes the bar; returns the rows done and the time taken.
    pub fn finish(mut self) -> (u64, Duration) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        (self.rows, self.start.elapsed())
    }
}

impl Drop for Progress {
    /// A conversion that fails clears its bar before the error is printed.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The one-line summary of a conversion.
pub fn summary(
    rows: u64,
    input: &str,
    input_bytes: u64,
    output: &str,
    output_bytes: u64,
    elapsed: Duration,
) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        (rows as f64 / secs).round() as u64
    } else {
        rows
    };
    format!(
        "avrow: {} rows: {input} ({}) -> {output} ({}) in {secs:.2}s, {} rows/s",
        HumanCount(rows),
        HumanBytes(input_bytes),
        HumanBytes(output_bytes),
        HumanCount(rate),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_to_block_ends() {
        let map = BlockMap {
            rows: vec![10, 20, 25],
            bytes: vec![100, 200, 260],
        };
        assert_eq!(map.bytes_for(0), 0);
        assert_eq!(map.bytes_for(1), 100);
        assert_eq!(map.bytes_for(10), 100);
        assert_eq!(map.bytes_for(11), 200);
        assert_eq!(map.bytes_for(25), 260);
        assert_eq!(map.bytes_for(99), 260);
    }

    #[test]
    fn summary_names_everything() {
        let line = summary(
            1500,
            "in.avro",
            2048,
            "out.parquet",
            1024,
            Duration::from_millis(500),
        );
        assert_eq!(
            line,
            "avrow: 1,500 rows: in.avro (2.00 KiB) -> out.parquet (1.00 KiB) in 0.50s, 3,000 rows/s"
        );
    }
}
