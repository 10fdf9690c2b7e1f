//! `avrow count FILE...`: record counts from the block headers, without decompressing or
//! decoding. Every block's framing and sync marker is still checked, and its count against its
//! size as decoding checks it, so a truncated or corrupt file is an error rather than another
//! count than reading it would give.

use super::{json_text, print, Status};
use crate::args::CountArgs;
use crate::inputs::{self, ByteCounter, Input};
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

/// The record count of one input.
///
/// # Errors
/// The input cannot be read, or a block is malformed.
pub fn count(input: &Input) -> Result<u64, avrow::Error> {
    input.blocks(&ByteCounter::default())?.count_records()
}

/// Counts every input; a failing input is reported on stderr (or in the JSON) and makes the
/// exit status 1, the others are still counted.
///
/// # Errors
/// An input pattern matches nothing, or writing the result fails.
pub fn run(args: &CountArgs) -> Result<Status> {
    let inputs = inputs::expand(&args.files)?;
    let results: Vec<(String, Result<u64, avrow::Error>)> = inputs
        .iter()
        .map(|input| (input.to_string(), count(input)))
        .collect();
    let ok = results.iter().all(|(_, r)| r.is_ok());
    let total: u64 = results.iter().filter_map(|(_, r)| r.as_ref().ok()).sum();
    if args.json {
        let files: Vec<serde_json::Value> = results
            .iter()
            .map(|(file, r)| match r {
                Ok(n) => serde_json::json!({ "file": file, "records": n }),
                Err(e) => serde_json::json!({ "file": file, "error": e.to_string() }),
            })
            .collect();
        print(&json_text(
            &serde_json::json!({ "files": files, "total": total }),
            false,
        ))?;
    } else {
        for (_, r) in &results {
            if let Err(e) = r {
                let _ = writeln!(std::io::stderr(), "avrow: error: {e}");
            }
        }
        let mut text = String::new();
        if let [(_, Ok(n))] = results.as_slice() {
            text = format!("{n}\n");
        } else if results.len() > 1 {
            let width = total.to_string().len();
            for (file, r) in &results {
                if let Ok(n) = r {
                    text.push_str(&format!("{n:>width$} {file}\n"));
                }
            }
            text.push_str(&format!("{total:>width$} total\n"));
        }
        print(&text)?;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
