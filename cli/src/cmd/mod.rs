//! One module per subcommand.

pub mod completions;
pub mod convert;
pub mod count;
pub mod head;
pub mod info;
pub mod schema;
pub mod sql;
pub mod validate;

use crate::output::WatchPipe;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// What a subcommand reports when it did not fail outright: `validate` and `count` report
/// problems per file and then exit with 1.
pub type Status = ExitCode;

/// Buffered standard output. Write errors (a closed pipe) are returned, never panics.
pub fn stdout() -> BufWriter<WatchPipe<io::StdoutLock<'static>>> {
    BufWriter::with_capacity(1 << 16, WatchPipe(io::stdout().lock()))
}

/// Writes `text` to standard output and flushes it.
///
/// # Errors
/// Writing fails (a closed pipe).
pub fn print(text: &str) -> io::Result<()> {
    let mut out = stdout();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// A JSON value printed on one line (pretty when `pretty`).
pub fn json_text(value: &serde_json::Value, pretty: bool) -> String {
    let mut text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .unwrap_or_default();
    text.push('\n');
    text
}
