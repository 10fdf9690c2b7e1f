//! Inputs: files, standard input (`-`), directories and glob patterns, expanded into a list of
//! [`Input`]s; and opening them as readers or block readers.

use crate::error::usage;
use anyhow::{bail, Context, Result};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Input {
    /// The size in bytes, when known before reading (files).
    pub fn size(&self) -> Option<u64> {
        match self {
            Input::Stdin => None,
            Input::File(path) => std::fs::metadata(path).ok().map(|m| m.len()),
        }
    }

    /// Opens the input as a record reader. For standard input, `counter` receives the bytes
    /// read so far.
    pub fn open(
        &self,
        builder: avrow::ReaderBuilder,
        counter: &ByteCounter,
    ) -> Result<avrow::Reader, avrow::Error> {
        match self {
            Input::Stdin => builder.read_stream(CountingReader::new(std::io::stdin(), counter)),
            Input::File(path) => builder.open(path),
        }
    }

    /// Opens the input as a block reader (no record decoding). For standard input, `counter`
    /// receives the bytes read so far.
    pub fn blocks(&self, counter: &ByteCounter) -> Result<avrow::BlockReader, avrow::Error> {
        match self {
            Input::Stdin => {
                avrow::BlockReader::from_stream(CountingReader::new(std::io::stdin(), counter))
            }
            Input::File(path) => avrow::BlockReader::open(path),
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Stdin => f.write_str("<stdin>"),
            Input::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Expands command-line inputs: `-` is standard input (only on its own), a directory stands
/// for its `*.avro` files (sorted, not recursive), a path that does not exist but contains
/// `*`, `?` or `[` is a glob pattern (matches sorted); anything else is a file.
///
/// # Errors
/// `-` among other inputs, an invalid pattern, a pattern or directory matching nothing.
pub fn expand(raw: &[PathBuf]) -> Result<Vec<Input>> {
    if raw.iter().any(|p| p.as_os_str() == "-") {
        if raw.len() > 1 {
            return Err(usage(
                "`-` (standard input) cannot be combined with other inputs",
            ));
        }
        return Ok(vec![Input::Stdin]);
    }
    let mut inputs = Vec::new();
    for path in raw {
        if path.is_dir() {
            let before = inputs.len();
            let mut files = Vec::new();
            for entry in std::fs::read_dir(path)
                .with_context(|| format!("cannot read directory {}", path.display()))?
            {
                let entry =
                    entry.with_context(|| format!("cannot read directory {}", path.display()))?;
                let p = entry.path();
                if p.is_file() && has_avro_extension(&p) {
                    files.push(p);
                }
            }
            files.sort();
            inputs.extend(files.into_iter().map(Input::File));
            if inputs.len() == before {
                bail!("{}: the directory holds no .avro file", path.display());
            }
        } else if !path.exists() && is_pattern(path) {
            let pattern = path.to_string_lossy();
            let matches = glob::glob(&pattern)
                .map_err(|e| usage(format!("invalid glob pattern {pattern}: {e}")))?;
            let mut files = Vec::new();
            for m in matches {
                let p = m.with_context(|| format!("cannot expand {pattern}"))?;
                if p.is_file() {
                    files.push(p);
                }
            }
            if files.is_empty() {
                bail!("{pattern}: no file matches the pattern");
            }
            files.sort();
            inputs.extend(files.into_iter().map(Input::File));
        } else {
            inputs.push(Input::File(path.clone()));
        }
    }
    Ok(inputs)
}

/// The one input of a single-file subcommand (`schema`, `info`, `head`).
pub fn single(path: &Path) -> Input {
    if path.as_os_str() == "-" {
        Input::Stdin
    } else {
        Input::File(path.to_path_buf())
    }
}

fn has_avro_extension(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("avro"))
}

fn is_pattern(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// A shared count of bytes read from a stream.
#[derive(Debug, Clone, Default)]
pub struct ByteCounter(Arc<AtomicU64>);

impl ByteCounter {
    /// Bytes counted so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
}

/// A reader that counts the bytes it returns into a [`ByteCounter`].
pub struct CountingReader<R> {
    inner: R,
    counter: ByteCounter,
}

impl<R> CountingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, counter: &ByteCounter) -> Self {
        CountingReader {
            inner,
            counter: counter.clone(),
        }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.add(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_stands_alone() {
        assert_eq!(expand(&["-".into()]).unwrap(), vec![Input::Stdin]);
        let err = expand(&["-".into(), "a.avro".into()]).unwrap_err();
        assert_eq!(crate::error::exit_code(&err), 2);
    }

    #[test]
    fn directories_and_patterns_expand_sorted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.avro", "a.avro", "c.txt", "D.AVRO"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let names = |inputs: Vec<Input>| -> Vec<String> {
            inputs
                .into_iter()
                .map(|i| match i {
                    Input::File(p) => p.file_name().unwrap().to_string_lossy().into_owned(),
                    Input::Stdin => "-".into(),
                })
                .collect()
        };
        assert_eq!(
            names(expand(&[dir.path().to_path_buf()]).unwrap()),
            ["D.AVRO", "a.avro", "b.avro"]
        );
        let pattern = dir.path().join("*.avro");
        assert_eq!(names(expand(&[pattern]).unwrap()), ["a.avro", "b.avro"]);
        assert!(expand(&[dir.path().join("*.parquet")]).is_err());
        let missing = dir.path().join("missing.avro");
        assert_eq!(
            expand(std::slice::from_ref(&missing)).unwrap(),
            vec![Input::File(missing)]
        );
    }
}
