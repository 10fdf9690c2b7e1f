//! `avrow validate FILE...`: decode every record of every file; report each file as valid
//! (with its record count) or invalid (with the first error: file, block, byte offset, field
//! path). The exit status is 1 if any file is invalid or unreadable.

use super::{json_text, print, Status};
use crate::args::ValidateArgs;
use crate::inputs::{self, ByteCounter, Input};
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

/// How one file fared.
enum Outcome {
    Valid {
        records: u64,
    },
    /// The data is not valid Avro (header, blocks, records).
    Invalid(avrow::Error),
    /// The file could not be read at all.
    Unreadable(avrow::Error),
}

fn validate(input: &Input, threads: usize) -> Outcome {
    let builder = avrow::ReaderBuilder::new().with_threads(threads);
    let reader = match input.open(builder, &ByteCounter::default()) {
        Ok(reader) => reader,
        Err(e @ avrow::Error::Io { .. }) => return Outcome::Unreadable(e),
        Err(e) => return Outcome::Invalid(e),
    };
    let mut records = 0u64;
    for batch in reader {
        match batch {
            Ok(batch) => records += batch.num_rows() as u64,
            Err(e) => return Outcome::Invalid(e),
        }
    }
    Outcome::Valid { records }
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
    let mut entries = Vec::new();
    for input in &inputs {
        let file = input.to_string();
        let outcome = validate(input, args.threads);
        all_valid &= matches!(outcome, Outcome::Valid { .. });
        match outcome {
            Outcome::Valid { records } => {
                entries.push(json!({ "file": file, "valid": true, "records": records }));
                if !args.json {
                    print(&format!("ok       {file}: {records} records\n"))?;
                }
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
            &json!({ "valid": all_valid, "files": entries }),
            false,
        ))?;
    }
    Ok(if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
