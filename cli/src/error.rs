//! How errors end the process: usage errors exit with 2, everything else with 1, a closed
//! standard output (`avrow head f | head -1`) exits quietly with 0. A library's panic that
//! avrow turns into an error ([`catch_quietly`]) is not reported as an internal error.

use std::fmt;
use std::io;

/// An invocation that cannot work whatever the data: conflicting options, an unknown output
/// extension, a feature avrow does not support yet. Exits with status 2, like clap's own
/// usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A [`UsageError`] as an `anyhow::Error`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.into()))
}

/// The exit status for an error.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    // A `--columns` path no input has is a bad argument too.
    let unknown_column = error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<avrow::Error>(),
            Some(avrow::Error::Plan {
                source: avrow::avrow_engine::PlanError::UnknownField { .. },
                ..
            })
        )
    });
    if unknown_column || error.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        1
    }
}

/// The error and its causes on one line, `outer: cause: root cause`, leaving out a cause
/// whose text the line already holds (library errors often repeat their source in their own
/// message).
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line.replace('\n', " ")
}

/// Whether the error comes from writing to a closed pipe, however deeply it is wrapped
/// (anyhow contexts, `ArrowError::IoError`, `ParquetError::External`).
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io.kind() == io::ErrorKind::BrokenPipe;
        }
        if let Some(arrow::error::ArrowError::IoError(_, io)) =
            cause.downcast_ref::<arrow::error::ArrowError>()
        {
            return io.kind() == io::ErrorKind::BrokenPipe;
        }
        if let Some(parquet::errors::ParquetError::External(inner)) =
            cause.downcast_ref::<parquet::errors::ParquetError>()
        {
            return inner
                .downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe);
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_found_through_wrappers() {
        let pipe = || io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert!(is_broken_pipe(&anyhow::Error::new(pipe())));
        assert!(is_broken_pipe(
            &anyhow::Error::new(pipe()).context("writing stdout")
        ));
        let arrow = arrow::error::ArrowError::IoError("x".into(), pipe());
        assert!(is_broken_pipe(&anyhow::Error::new(arrow).context("ipc")));
        let parquet = parquet::errors::ParquetError::External(Box::new(pipe()));
        assert!(is_broken_pipe(&anyhow::Error::new(parquet)));
        let other = io::Error::new(io::ErrorKind::NotFound, "missing");
        assert!(!is_broken_pipe(&anyhow::Error::new(other)));
    }

    #[test]
    fn repeated_causes_are_printed_once() {
        let io = io::Error::new(io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io).context("x.avro: No such file");
        assert_eq!(one_line(&e), "x.avro: No such file");
        let e = anyhow::anyhow!("root").context("middle").context("top");
        assert_eq!(one_line(&e), "top: middle: root");
    }

    #[test]
    fn usage_errors_exit_with_2() {
        assert_eq!(exit_code(&usage("bad")), 2);
        assert_eq!(exit_code(&usage("bad").context("while parsing")), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("data")), 1);
    }
}

thread_local! {
    /// Whether this thread is inside [`catch_quietly`] (the panic hook then stays silent).
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic into `Err` with its message, without the panic hook's "internal
/// error" line: for libraries that panic on damaged input (arrow-ipc), where the error is
/// reported as the input's.
pub fn catch_quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = CATCHING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    result.map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the library failed on it".to_string())
    })
}

/// Whether a panic now is one [`catch_quietly`] catches (for the panic hook).
pub fn panic_is_caught() -> bool {
    CATCHING.with(|c| c.get())
}
