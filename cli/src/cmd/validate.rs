//! `avrow validate FILE...`: decode every record of every file; report each file as valid
//! (with its record count) or invalid (with the first error: file, block, byte offset, field
//! path). With `--skip-bad-blocks`, every bad block of a file is listed, not only the first.
//! The exit status is 1 if any file is invalid or unreadable, else 3 if bad blocks were
//! skipped, else 0.

use super::{json_text, print, Status};
use crate::args::ValidateArgs;
use crate::inputs::{self, ByteCounter, Input};
use crate::skips::{self, SkipTally, EXIT_SKIPPED};
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

/// How one file fared.
enum Outcome {
    /// Every block read (or, with `--skip-bad-blocks`, the blocks that could be read).
    Valid {
        records: u64,
        /// Blocks skipped (`--skip-bad-blocks`).
        bad: Vec<avrow::SkippedBlock>,
    },
    /// The data is not valid Avro (header, blocks, records).
    Invalid(avrow::Error),
    /// The file could not be read at all.
    Unreadable(avrow::Error),
}

fn validate(input: &Input, args: &ValidateArgs) -> Outcome {
    let mut builder = avrow::ReaderBuilder::new()
        .with_threads(args.threads)
        .with_skip_bad_blocks(args.skip_bad_blocks);
    if let Some(limit) = args.max_block_size {
        builder = builder.with_max_block_size(limit);
    }
    if let Some(depth) = args.max_recursion_depth {
        builder = builder.with_max_recursion_depth(depth);
    }
    let mut reader = match input.open(builder, &ByteCounter::default()) {
        Ok(reader) => reader,
        Err(e @ avrow::Error::Io { .. }) => return Outcome::Unreadable(e),
        Err(e) => return Outcome::Invalid(e),
    };
    let mut records = 0u64;
    let mut bad = Vec::new();
    while let Some(batch) = reader.next() {
        match batch {
            Ok(batch) => records += batch.num_rows() as u64,
            Err(e) => return Outcome::Invalid(e),
        }
        bad.extend(reader.take_skipped());
    }
    bad.extend(reader.take_skipped());
    Outcome::Valid { records, bad }
}

/// The error text, prefixed with the file name unless it already starts with it.
fn located(file: &str, error: &avrow::Error) -> String {
    let text = error.to_string();
    if text.starts_with(file) {
        text
    } else {
        format!("{file}: {text}")
    }
}

/// Validates every input.
///
/// # Errors
/// An input pattern matches nothing, or writing the report fails.
pub fn run(args: &ValidateArgs) -> Result<Status> {
    let inputs = inputs::expand(&args.files)?;
    let mut all_valid = true;
    let mut tally = SkipTally::default();
    let mut entries = Vec::new();
    for input in &inputs {
        let file = input.to_string();
        let outcome = validate(input, args);
        all_valid &= matches!(outcome, Outcome::Valid { .. });
        match outcome {
            Outcome::Valid { records, bad } if bad.is_empty() => {
                entries.push(json!({ "file": file, "valid": true, "records": records }));
                if !args.json {
                    print(&format!("ok       {file}: {records} records\n"))?;
                }
            }
            Outcome::Valid { records, bad } => {
                let blocks: Vec<_> = bad
                    .iter()
                    .map(|s| {
                        json!({
                            "block": s.block,
                            "start": s.range.start,
                            "end": s.range.end,
                            "records": s.records,
                            "error": skips::reason(s),
                        })
                    })
                    .collect();
                let count = bad.len();
                if !args.json {
                    for s in &bad {
                        let declared = match s.records {
                            Some(n) => format!("{n} records"),
                            None => "record count unreadable".into(),
                        };
                        print(&format!(
                            "bad      {file}: block {} (bytes {}..{}, {declared}): {}\n",
                            s.block,
                            s.range.start,
                            s.range.end,
                            skips::reason(s)
                        ))?;
                    }
                    print(&format!(
                        "invalid  {file}: {count} bad block(s); {records} records in the good blocks\n"
                    ))?;
                }
                tally.add(bad);
                entries.push(json!({
                    "file": file,
                    "valid": false,
                    "records": records,
                    "bad_blocks": blocks,
                }));
            }
            Outcome::Invalid(e) => {
                entries.push(json!({ "file": file, "valid": false, "error": e.to_string() }));
                if !args.json {
                    print(&format!("invalid  {}\n", located(&file, &e)))?;
                }
            }
            Outcome::Unreadable(e) => {
                entries.push(json!({ "file": file, "valid": false, "error": e.to_string() }));
                if !args.json {
                    let _ = writeln!(std::io::stderr(), "avrow: error: {}", located(&file, &e));
                }
            }
        }
    }
    if args.json {
        print(&json_text(
            &json!({ "valid": all_valid && !tally.any(), "files": entries }),
            false,
        ))?;
    }
    if !args.json {
        if let Some(line) = tally.summary() {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
    Ok(if !all_valid {
        ExitCode::FAILURE
    } else if tally.any() {
        ExitCode::from(EXIT_SKIPPED)
    } else {
        ExitCode::SUCCESS
    })
}
