//! Reporting the blocks `--skip-bad-blocks` skipped: one line per block on standard error as
//! it is met (naming the file, `block N`, its byte range, its declared record count and why),
//! a summary at the end, and exit status 3.

use std::collections::BTreeSet;

/// The exit status of a run that skipped blocks (and had no other error).
pub const EXIT_SKIPPED: u8 = 3;

/// The blocks skipped so far.
#[derive(Debug, Default)]
pub struct SkipTally {
    blocks: u64,
    records: u64,
    /// Blocks whose record count was unreadable.
    unknown_records: u64,
    bytes: u64,
    files: BTreeSet<String>,
}

impl SkipTally {
    /// Counts `skipped` and returns one report line for each.
    pub fn add(&mut self, skipped: Vec<avrow::SkippedBlock>) -> Vec<String> {
        skipped
            .into_iter()
            .map(|s| {
                self.blocks += 1;
                match s.records {
                    Some(n) => self.records += n,
                    None => self.unknown_records += 1,
                }
                self.bytes += s.range.end - s.range.start;
                self.files.insert(s.file.clone());
                line(&s)
            })
            .collect()
    }

    /// Whether anything was skipped.
    pub fn any(&self) -> bool {
        self.blocks > 0
    }

    /// The summary line, if anything was skipped.
    pub fn summary(&self) -> Option<String> {
        if !self.any() {
            return None;
        }
        let records = if self.unknown_records > 0 {
            format!(
                "{} records declared, and {} block(s) whose count was unreadable",
                self.records, self.unknown_records
            )
        } else {
            format!("{} records declared", self.records)
        };
        Some(format!(
            "avrow: skipped {} bad block(s) in {} file(s): {} bytes, {records}",
            self.blocks,
            self.files.len(),
            self.bytes
        ))
    }
}

/// `avrow: skipped block N of FILE (bytes A..B, K records): why`.
pub fn line(s: &avrow::SkippedBlock) -> String {
    let records = match s.records {
        Some(n) => format!("{n} records"),
        None => "record count unreadable".to_string(),
    };
    format!(
        "avrow: skipped block {} of {} (bytes {}..{}, {records}): {}",
        s.block,
        s.file,
        s.range.start,
        s.range.end,
        reason(s)
    )
}

/// The error without the `FILE: block N at byte O: ` prefix the line already says.
pub fn reason(s: &avrow::SkippedBlock) -> String {
    let text = s.error.to_string();
    let prefix = format!("{}: block {} at byte {}: ", s.file, s.block, s.range.start);
    match text.strip_prefix(&prefix) {
        Some(rest) => rest.to_string(),
        None => text,
    }
}
