//! What `convert` reads batches from: Avro through `avrow::Reader`, or an Arrow IPC file or
//! stream or a Parquet file, recognised by their magic bytes (`ARROW1`, the IPC continuation
//! marker, `PAR1`), so that `avrow convert data.parquet -o data.avro` works. IPC files are
//! read in place (`mapped_ipc.rs`).

use crate::error::usage;
use crate::inputs::Input;
use crate::mapped_ipc::MappedIpcFile;
use anyhow::{Context, Result};
use arrow::array::RecordBatch;
use arrow::array::RecordBatchReader;
use arrow::datatypes::SchemaRef;
use std::io::Read;
use std::path::Path;

/// The format of an input file, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// An Avro object container file (or anything else: avrow's reader says what is wrong).
    Avro,
    /// An Arrow IPC file.
    IpcFile,
    /// An Arrow IPC stream.
    IpcStream,
    /// A Parquet file.
    Parquet,
}

impl InputFormat {
    /// The format of `input` (standard input is read as Avro).
    pub fn of(input: &Input) -> Result<InputFormat> {
        let Input::File(path) = input else {
            return Ok(InputFormat::Avro);
        };
        let mut head = [0u8; 8];
        let mut f =
            std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(match &head[..n] {
            [b'A', b'R', b'R', b'O', b'W', b'1', ..] => InputFormat::IpcFile,
            [0xff, 0xff, 0xff, 0xff, ..] => InputFormat::IpcStream,
            [b'P', b'A', b'R', b'1', ..] => InputFormat::Parquet,
            _ => InputFormat::Avro,
        })
    }
}

/// Batches of an Arrow IPC or Parquet file, with the columns asked for.
pub struct ArrowInput {
    schema: SchemaRef,
    batches: Box<dyn Iterator<Item = Result<RecordBatch>>>,
}

impl ArrowInput {
    /// Opens `path` as `format` (IPC or Parquet), reading batches of `batch_size` rows where
    /// the format lets the reader choose, keeping only the top-level `columns` (all if empty).
    pub fn open(
        path: &Path,
        format: InputFormat,
        batch_size: usize,
        columns: &[String],
    ) -> Result<Self> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
        let (schema, batches): (SchemaRef, Box<dyn Iterator<Item = Result<RecordBatch>>>) =
            match format {
                InputFormat::IpcFile => {
                    let r = MappedIpcFile::open(path, &file)?;
                    (r.schema(), Box::new(r.into_batches()))
                }
                InputFormat::IpcStream => {
                    let r = arrow_ipc::reader::StreamReader::try_new(
                        std::io::BufReader::new(file),
                        None,
                    )
                    .with_context(|| format!("{name}: not a readable Arrow IPC stream"))?;
                    (r.schema(), Box::new(r.map(|b| b.map_err(Into::into))))
                }
                InputFormat::Parquet => {
                    let builder =
                        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                            file,
                        )
                        .with_context(|| format!("{name}: not a readable Parquet file"))?;
                    // The file's key-value metadata (where avrow puts the Avro schema it read)
                    // on the Arrow schema, as the IPC formats carry it.
                    let mut metadata = builder.schema().metadata().clone();
                    for kv in builder
                        .metadata()
                        .file_metadata()
                        .key_value_metadata()
                        .into_iter()
                        .flatten()
                    {
                        if let Some(v) = &kv.value {
                            if !metadata.contains_key(&kv.key) {
                                metadata.insert(kv.key.clone(), v.clone());
                            }
                        }
                    }
                    let r = builder.with_batch_size(batch_size).build()?;
                    let schema = std::sync::Arc::new(
                        arrow::datatypes::Schema::new(r.schema().fields().clone())
                            .with_metadata(metadata),
                    );
                    (schema, Box::new(r.map(|b| b.map_err(Into::into))))
                }
                InputFormat::Avro => unreachable!("Avro inputs are read by avrow"),
            };
        if columns.is_empty() {
            return Ok(ArrowInput { schema, batches });
        }
        let indices = columns
            .iter()
            .map(|c| {
                schema.index_of(c).map_err(|_| {
                    usage(format!(
                        "--columns {c}: {name} has no top-level column {c:?} (nested paths apply to Avro input)"
                    ))
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        let projected = std::sync::Arc::new(schema.project(&indices)?);
        let batches = batches.map(move |b| Ok(b?.project(&indices)?));
        Ok(ArrowInput {
            schema: projected,
            batches: Box::new(batches),
        })
    }

    /// The batches' schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for ArrowInput {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next()
    }
}
