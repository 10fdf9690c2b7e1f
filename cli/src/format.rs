//! Output formats and their compression, resolved from `--format`, `--compression` and the
//! output's extension.

use crate::args::{CompressionArg, FormatArg};
use crate::error::usage;
use anyhow::Result;
use std::fmt;
use std::path::Path;

/// What `convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Arrow IPC file format (`.arrow`, `.feather`).
    IpcFile,
    /// Arrow IPC stream format (`.arrows`).
    IpcStream,
    /// Apache Parquet (`.parquet`).
    Parquet,
    /// CSV with a header line, nested values as JSON text (`.csv`).
    Csv,
    /// Newline-delimited JSON (`.ndjson`, `.jsonl`).
    Ndjson,
    /// Avro object container file (`.avro`).
    Avro,
}

impl Format {
    /// The format for a `--format` value.
    ///
    /// # Errors
    /// None today; kept for formats that may need checks.
    pub fn from_arg(arg: FormatArg) -> Result<Format> {
        Ok(match arg {
            FormatArg::Arrow | FormatArg::Feather => Format::IpcFile,
            FormatArg::Arrows => Format::IpcStream,
            FormatArg::Parquet => Format::Parquet,
            FormatArg::Csv => Format::Csv,
            FormatArg::Ndjson | FormatArg::Jsonl => Format::Ndjson,
            FormatArg::Avro => Format::Avro,
        })
    }

    /// The format for an output path's extension.
    ///
    /// # Errors
    /// No extension, or an unknown one.
    pub fn from_path(path: &Path) -> Result<Format> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        Ok(match ext.as_deref() {
            Some("arrow" | "feather" | "ipc") => Format::IpcFile,
            Some("arrows") => Format::IpcStream,
            Some("parquet" | "pq") => Format::Parquet,
            Some("csv") => Format::Csv,
            Some("ndjson" | "jsonl") => Format::Ndjson,
            Some("avro") => Format::Avro,
            Some(other) => {
                return Err(usage(format!(
                    "{}: unknown output extension .{other}; use .arrow, .feather, .arrows, \
                     .parquet, .csv, .ndjson, .jsonl or .avro, or name the format with --format",
                    path.display()
                )))
            }
            None => {
                return Err(usage(format!(
                    "{}: the output has no extension to tell its format; add one or use --format",
                    path.display()
                )))
            }
        })
    }

    /// The file extension written for this format with `--output-dir`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::IpcFile => "arrow",
            Format::IpcStream => "arrows",
            Format::Parquet => "parquet",
            Format::Csv => "csv",
            Format::Ndjson => "ndjson",
            Format::Avro => "avro",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::IpcFile => "Arrow IPC file",
            Format::IpcStream => "Arrow IPC stream",
            Format::Parquet => "Parquet",
            Format::Csv => "CSV",
            Format::Ndjson => "NDJSON",
            Format::Avro => "Avro",
        })
    }
}

/// The compression of the output, checked against the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// None.
    None,
    /// Zstandard.
    Zstd,
    /// Snappy (Parquet).
    Snappy,
    /// Gzip (Parquet).
    Gzip,
    /// LZ4 (Parquet: LZ4_RAW; IPC: LZ4 frame).
    Lz4,
    /// Brotli (Parquet).
    Brotli,
    /// Deflate (Avro).
    Deflate,
    /// bzip2 (Avro).
    Bzip2,
    /// xz (Avro).
    Xz,
}

impl Compression {
    /// The compression for `format`: `--compression` if given and the format supports it,
    /// else the format's default (zstd for Parquet, deflate for Avro, none otherwise).
    ///
    /// # Errors
    /// The format does not support the requested compression.
    pub fn resolve(format: Format, arg: Option<CompressionArg>) -> Result<Compression> {
        let requested = arg.map(|a| match a {
            CompressionArg::None => Compression::None,
            CompressionArg::Zstd => Compression::Zstd,
            CompressionArg::Snappy => Compression::Snappy,
            CompressionArg::Gzip => Compression::Gzip,
            CompressionArg::Lz4 => Compression::Lz4,
            CompressionArg::Brotli => Compression::Brotli,
            CompressionArg::Deflate => Compression::Deflate,
            CompressionArg::Bzip2 => Compression::Bzip2,
            CompressionArg::Xz => Compression::Xz,
        });
        match (format, requested) {
            (Format::Parquet, None) => Ok(Compression::Zstd),
            // Deflate is the one codec besides null that every Avro reader must have.
            (Format::Avro, None) => Ok(Compression::Deflate),
            (
                Format::Avro,
                Some(
                    c @ (Compression::None
                    | Compression::Deflate
                    | Compression::Snappy
                    | Compression::Zstd
                    | Compression::Bzip2
                    | Compression::Xz),
                ),
            ) => Ok(c),
            (Format::Parquet, Some(c @ (Compression::Deflate | Compression::Bzip2 | Compression::Xz))) => {
                Err(usage(format!(
                    "--compression {c} does not apply to Parquet output (use zstd, snappy, gzip, lz4, brotli or none)"
                )))
            }
            (_, None) => Ok(Compression::None),
            (Format::Parquet, Some(c)) => Ok(c),
            (
                Format::IpcFile | Format::IpcStream,
                Some(c @ (Compression::None | Compression::Zstd | Compression::Lz4)),
            ) => Ok(c),
            (_, Some(Compression::None)) => Ok(Compression::None),
            (format, Some(c)) => Err(usage(format!(
                "--compression {c} does not apply to {format} output{}",
                match format {
                    Format::IpcFile | Format::IpcStream => " (use zstd, lz4 or none)",
                    Format::Avro => " (use deflate, snappy, zstd, bzip2, xz or none)",
                    _ => " (only Parquet, Arrow IPC and Avro output are compressed)",
                }
            ))),
        }
    }
}

impl Compression {
    /// Checks `--level` against the compression and format: in Parquet output zstd -7 to 22,
    /// gzip 0 to 9, brotli 0 to 11; in Avro output deflate 0 to 12, zstd -7 to 22, bzip2 1 to
    /// 9, xz 0 to 9.
    ///
    /// # Errors
    /// A level for a compression or format without levels, or out of range.
    pub fn check_level(self, format: Format, level: Option<i32>) -> Result<Option<i32>> {
        let Some(level) = level else {
            return Ok(None);
        };
        let range = match (format, self) {
            (Format::Parquet, Compression::Zstd) => -7..=22,
            (Format::Parquet, Compression::Gzip) => 0..=9,
            (Format::Parquet, Compression::Brotli) => 0..=11,
            (Format::Avro, Compression::Deflate) => 0..=12,
            (Format::Avro, Compression::Zstd) => -7..=22,
            (Format::Avro, Compression::Bzip2) => 1..=9,
            (Format::Avro, Compression::Xz) => 0..=9,
            _ => {
                return Err(usage(format!(
                    "--level applies to zstd, gzip and brotli Parquet output and to deflate, \
                     zstd, bzip2 and xz Avro output, not {self} {format} output"
                )))
            }
        };
        if !range.contains(&level) {
            return Err(usage(format!(
                "--level {level} is out of range for {self} ({} to {})",
                range.start(),
                range.end()
            )));
        }
        Ok(Some(level))
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Snappy => "snappy",
            Compression::Gzip => "gzip",
            Compression::Lz4 => "lz4",
            Compression::Brotli => "brotli",
            Compression::Deflate => "deflate",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions() {
        assert_eq!(
            Format::from_path(Path::new("a.ARROW")).unwrap(),
            Format::IpcFile
        );
        assert_eq!(
            Format::from_path(Path::new("a.feather")).unwrap(),
            Format::IpcFile
        );
        assert_eq!(
            Format::from_path(Path::new("a.arrows")).unwrap(),
            Format::IpcStream
        );
        assert_eq!(
            Format::from_path(Path::new("a.parquet")).unwrap(),
            Format::Parquet
        );
        assert_eq!(Format::from_path(Path::new("a.csv")).unwrap(), Format::Csv);
        assert_eq!(
            Format::from_path(Path::new("a.jsonl")).unwrap(),
            Format::Ndjson
        );
        assert!(Format::from_path(Path::new("a.xlsx")).is_err());
        assert!(Format::from_path(Path::new("a")).is_err());
        assert_eq!(
            Format::from_path(Path::new("a.avro")).unwrap(),
            Format::Avro
        );
    }

    #[test]
    fn compression_defaults_and_checks() {
        assert_eq!(
            Compression::resolve(Format::Parquet, None).unwrap(),
            Compression::Zstd
        );
        assert_eq!(
            Compression::resolve(Format::IpcFile, None).unwrap(),
            Compression::None
        );
        assert_eq!(
            Compression::resolve(Format::IpcStream, Some(CompressionArg::Lz4)).unwrap(),
            Compression::Lz4
        );
        assert!(Compression::resolve(Format::IpcFile, Some(CompressionArg::Snappy)).is_err());
        assert!(Compression::resolve(Format::Csv, Some(CompressionArg::Zstd)).is_err());
        assert_eq!(
            Compression::resolve(Format::Csv, Some(CompressionArg::None)).unwrap(),
            Compression::None
        );
        assert_eq!(
            Compression::resolve(Format::Avro, None).unwrap(),
            Compression::Deflate
        );
        assert!(Compression::resolve(Format::Avro, Some(CompressionArg::Gzip)).is_err());
        assert!(Compression::resolve(Format::Parquet, Some(CompressionArg::Xz)).is_err());
        assert!(Compression::Deflate
            .check_level(Format::Avro, Some(12))
            .is_ok());
        assert!(Compression::Snappy
            .check_level(Format::Avro, Some(1))
            .is_err());
    }
}
