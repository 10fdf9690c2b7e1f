//! `avrow completions SHELL`: a completion script from clap_complete.

use crate::args::{Cli, CompletionsArgs};
use anyhow::Result;
use clap::CommandFactory;
use std::io::Write;

/// Prints the completion script for `args.shell`.
///
/// # Errors
/// Writing to standard output fails.
pub fn run(args: &CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "avrow", &mut script);
    let mut out = super::stdout();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}
