//! What `convert` reads batches from: Avro through `avrow::Reader`, or an Arrow IPC file or
//! stream or a Parquet file, recognised by their magic bytes (`ARROW1`, the IPC continuation
//! marker, `PAR1`), so that `avrow convert data.parquet -o data.avro` works. IPC files
//! and streams are read in place (`mapped_ipc.rs`).

use crate::error::{catch_quietly, usage};
use crate::inputs::Input;
use crate::mapped_ipc::{MappedIpcFile, MappedIpcStream};
use anyhow::{Context, Result};
use arrow::array::RecordBatch;
use arrow::array::RecordBatchReader;
use arrow::datatypes::SchemaRef;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

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
    /// The format of `input` (standard input: see [`InputFormat::of_head`]).
    pub fn of(input: &Input) -> Result<InputFormat> {
        let Input::File(path) = input else {
            return Ok(InputFormat::Avro);
        };
        let f =
            std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut head = Vec::with_capacity(8);
        f.take(8).read_to_end(&mut head)?;
        Ok(Self::of_head(&head))
    }

    /// The format whose magic bytes start `head`.
    pub fn of_head(head: &[u8]) -> InputFormat {
        match head {
            [b'A', b'R', b'R', b'O', b'W', b'1', ..] => InputFormat::IpcFile,
            [0xff, 0xff, 0xff, 0xff, ..] => InputFormat::IpcStream,
            [b'P', b'A', b'R', b'1', ..] => InputFormat::Parquet,
            _ => InputFormat::Avro,
        }
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
        Self::open_file(file, &name, format, batch_size, columns)
    }

    /// [`ArrowInput::open`] of an open file, named `name` in errors.
    pub fn open_file(
        file: std::fs::File,
        name: &str,
        format: InputFormat,
        batch_size: usize,
        columns: &[String],
    ) -> Result<Self> {
        let name = name.to_string();
        // arrow-ipc's stream reader and the parquet crate panic on some damaged input (a
        // schema's unknown type, a bit width of 1088): opening and every batch are guarded,
        // and such a panic is an error naming the file. (The mapped IPC readers guard their
        // own, and check the lengths messages declare before arrow-ipc allocates them.)
        let opened = catch_quietly(|| -> Result<(SchemaRef, Batches)> {
            Ok(match format {
                InputFormat::IpcFile => {
                    let r = MappedIpcFile::open(&name, &file)?;
                    (r.schema(), Box::new(r.into_batches()))
                }
                InputFormat::IpcStream => {
                    let r = MappedIpcStream::open(&name, &file)?;
                    (r.schema(), Box::new(r.into_batches()))
                }
                InputFormat::Parquet => {
                    let (schema, batches) = open_parquet(&name, file, batch_size, columns)?;
                    restored(&name, schema, batches)
                }
                InputFormat::Avro => unreachable!("Avro inputs are read by avrow"),
            })
        });
        let (schema, batches) = opened.map_err(|panic| damaged(&name, &panic))??;
        let batches: Batches = Box::new(Guarded {
            name: name.clone(),
            inner: Some(batches),
        });
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

/// Batches of an Arrow IPC or Parquet file, as [`ArrowInput`] holds them.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch>>>;

/// The error of a library's panic on the damaged file `name`.
fn damaged(name: &str, panic: &str) -> anyhow::Error {
    anyhow::anyhow!("{name}: damaged file (the reader failed on it: {panic})")
}

/// [`Batches`] whose every step is guarded against a panic of the library reading them
/// ([`catch_quietly`]); after one, they end with its error.
struct Guarded {
    name: String,
    inner: Option<Batches>,
}

impl Iterator for Guarded {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.inner.as_mut()?;
        match catch_quietly(|| inner.next()) {
            Ok(item) => item,
            Err(panic) => {
                self.inner = None;
                Some(Err(damaged(&self.name, &panic)))
            }
        }
    }
}

/// A Parquet file that avrow wrote from Avro reads back as the Avro file reads: its columns
/// restored ([`avrow::parquet_compat::Restore`]) to the Arrow schema its recorded Avro schema
/// (`avro.schema`, parsed as a writer schema is) reads as, so that unions stored as structs,
/// durations, records without fields and enums come back, and converting it to Avro writes
/// the recorded schema; the file's other metadata is kept. A file whose columns are not
/// exactly the recorded schema's (written from a query, by another tool, or read with other
/// options than the default) is read as stored.
fn restored(name: &str, schema: SchemaRef, batches: Batches) -> (SchemaRef, Batches) {
    let target = schema
        .metadata()
        .get(avrow::avrow_engine::AVRO_SCHEMA_KEY)
        .and_then(|json| avrow::Schema::parse_writer(json).ok())
        .and_then(|avro| {
            let options = avrow::avrow_engine::DecodeOptions::default();
            avrow::avrow_engine::DecodePlan::new(&avro, &options).ok()
        })
        .map(|plan| {
            let target = plan.arrow_schema();
            let mut metadata = schema.metadata().clone();
            metadata.extend(target.metadata().clone());
            Arc::new(target.as_ref().clone().with_metadata(metadata))
        });
    let restore = target
        .filter(|target| target.fields() != schema.fields())
        .and_then(|target| avrow::parquet_compat::Restore::new(&schema, target).ok());
    match restore {
        Some(restore) => {
            let schema = Arc::clone(restore.schema());
            let name = name.to_string();
            let batches = batches.map(move |b| {
                restore
                    .apply(&b?)
                    .with_context(|| format!("{name}: restoring the recorded Avro types"))
            });
            (schema, Box::new(batches))
        }
        None => (schema, batches),
    }
}

/// A Parquet file's schema and batches, the file's key-value metadata (where avrow puts the
/// Avro schema it read) on the Arrow schema, as the IPC formats carry it.
///
/// Columns stored as Parquet `INTERVAL` (months, days and milliseconds: Avro's `duration`,
/// as avrow writes it) read as `Interval(MonthDayNano)`: arrow's Parquet reader reads them
/// either as `Interval(DayTime)`, without the months, or as `Interval(YearMonth)`, months
/// only, so a top-level one is read both ways (a second reader over those columns alone)
/// and the two joined. One inside a group is refused rather than read without its months.
fn open_parquet(
    name: &str,
    file: std::fs::File,
    batch_size: usize,
    columns: &[String],
) -> Result<(SchemaRef, Batches)> {
    use arrow::array::{Array, AsArray, PrimitiveArray};
    use arrow::datatypes::{
        DataType, IntervalDayTimeType, IntervalMonthDayNano, IntervalMonthDayNanoType,
        IntervalUnit, IntervalYearMonthType, Schema,
    };
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    use parquet::arrow::ProjectionMask;
    use std::sync::Arc;

    let clone = || {
        file.try_clone()
            .with_context(|| format!("cannot open {name}"))
    };
    let (main_file, months_file) = (clone()?, clone()?);
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("{name}: not a readable Parquet file"))?;
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
    // The top-level INTERVAL columns (their indexes among the Arrow schema's fields).
    let descr = builder.parquet_schema();
    let mut intervals: Vec<usize> = Vec::new();
    for (leaf, column) in descr.columns().iter().enumerate() {
        if column.converted_type() != parquet::basic::ConvertedType::INTERVAL {
            continue;
        }
        // (Only the columns asked for: `--columns` keeps top-level columns.)
        let root = &column.path().parts()[0];
        if !columns.is_empty() && !columns.contains(root) {
            continue;
        }
        if column.path().parts().len() != 1 {
            anyhow::bail!(
                "{name}: column {} is a Parquet INTERVAL inside a group, which arrow's Parquet \
                 reader reads without its months: unsupported (top-level INTERVAL columns are \
                 read)",
                column.path()
            );
        }
        intervals.push(descr.get_column_root_idx(leaf));
    }
    if intervals.is_empty() {
        let main = builder.with_batch_size(batch_size).build()?;
        let schema = Arc::new(Schema::new(main.schema().fields().clone()).with_metadata(metadata));
        return Ok((schema, Box::new(main.map(|b| b.map_err(Into::into)))));
    }
    // The INTERVAL columns read as `unit`, the others as the file says.
    let file_fields = builder.schema().fields().clone();
    let read_as = |unit: IntervalUnit| {
        let fields: Vec<_> = file_fields
            .iter()
            .enumerate()
            .map(|(i, f)| match intervals.contains(&i) {
                true => Arc::new(f.as_ref().clone().with_data_type(DataType::Interval(unit))),
                false => Arc::clone(f),
            })
            .collect();
        ArrowReaderOptions::new().with_schema(Arc::new(Schema::new(fields)))
    };
    let main = ParquetRecordBatchReaderBuilder::try_new_with_options(
        main_file,
        read_as(IntervalUnit::DayTime),
    )?
    .with_batch_size(batch_size)
    .build()?;
    let fields = main.schema().fields().clone();
    // The same file again, its INTERVAL columns alone, as months.
    let months = ParquetRecordBatchReaderBuilder::try_new_with_options(
        months_file,
        read_as(IntervalUnit::YearMonth),
    )?;
    let mask = ProjectionMask::roots(months.parquet_schema(), intervals.iter().copied());
    let months = months
        .with_projection(mask)
        .with_batch_size(batch_size)
        .build()?;
    let out_fields: Vec<_> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match intervals.contains(&i) {
            true => Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(DataType::Interval(IntervalUnit::MonthDayNano)),
            ),
            false => Arc::clone(f),
        })
        .collect();
    let schema = Arc::new(Schema::new(out_fields).with_metadata(metadata));
    let out = Arc::clone(&schema);
    let name = name.to_string();
    let batches = main.zip(months).map(move |(days, months)| {
        let (days, months) = (days?, months?);
        // (Same metadata, batch size and rows: the two readers' batches align.)
        anyhow::ensure!(
            days.num_rows() == months.num_rows(),
            "{name}: the INTERVAL columns' second read gave {} rows where the first gave {}",
            months.num_rows(),
            days.num_rows()
        );
        let mut columns = days.columns().to_vec();
        // (In the file's order, as the projection keeps them: the k-th is column k.)
        for (k, &i) in intervals.iter().enumerate() {
            let d = columns[i].as_primitive::<IntervalDayTimeType>();
            let m = months.column(k).as_primitive::<IntervalYearMonthType>();
            // Parquet's three parts are unsigned: milliseconds up to 2^32 - 1 fit in
            // nanoseconds; months and days must fit Arrow's `i32`.
            let mut values = Vec::with_capacity(d.len());
            for (row, (d, &m)) in d.values().iter().zip(m.values()).enumerate() {
                if (m < 0 || d.days < 0) && columns[i].is_valid(row) {
                    anyhow::bail!(
                        "{name}: column {}, row {row}: an INTERVAL of 2^31 months or days or \
                         more, which Arrow's MonthDayNano interval cannot hold",
                        out.field(i).name()
                    );
                }
                values.push(IntervalMonthDayNano::new(
                    m,
                    d.days,
                    i64::from(d.milliseconds as u32) * 1_000_000,
                ));
            }
            let nulls = columns[i].nulls().cloned();
            columns[i] = Arc::new(PrimitiveArray::<IntervalMonthDayNanoType>::new(
                values.into(),
                nulls,
            ));
        }
        Ok(RecordBatch::try_new(Arc::clone(&out), columns)?)
    });
    Ok((schema, Box::new(batches)))
}

impl Iterator for ArrowInput {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, ListArray, StringArray};
    use arrow::datatypes::Int64Type;
    use std::sync::Arc;

    fn table() -> RecordBatch {
        let n = 30;
        RecordBatch::try_from_iter([
            (
                "s",
                Arc::new(StringArray::from_iter(
                    (0..n).map(|i| (i % 3 != 2).then(|| ["abc", "de"][i % 2].to_string())),
                )) as ArrayRef,
            ),
            (
                "i",
                Arc::new(Int64Array::from_iter_values(0..n as i64)) as _,
            ),
            (
                "l",
                Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
                    (0..n as i64).map(|i| (i % 3 != 1).then(|| vec![Some(i), Some(2)])),
                )) as _,
            ),
        ])
        .unwrap()
    }

    /// Every byte of `file` in `range` with one bit flipped (two bits in turn), opened as
    /// `format` and read to the end: errors are fine, a panic of the library must not escape.
    /// The errors, and those that were a library's panic.
    fn every_flip_is_an_error_or_batches(
        file: &[u8],
        range: std::ops::Range<usize>,
        format: InputFormat,
    ) -> (usize, usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged");
        let (mut errors, mut guarded) = (0, 0);
        for at in range {
            for bit in [at % 8, (at + 3) % 8] {
                let mut damaged = file.to_vec();
                damaged[at] ^= 1 << bit;
                std::fs::write(&path, &damaged).unwrap();
                let read = ArrowInput::open(&path, format, 1024, &[])
                    .and_then(|input| input.batches.collect::<Result<Vec<_>>>());
                if let Err(e) = &read {
                    errors += 1;
                    guarded += usize::from(format!("{e:#}").contains("damaged file"));
                }
            }
        }
        (errors, guarded)
    }

    #[test]
    fn damaged_ipc_streams_and_parquet_files_are_errors_not_panics() {
        let batch = table();
        let mut stream = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut stream, &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        // The whole stream: a flipped length or body length is checked against the file before
        // arrow-ipc sees it (its stream reader allocated what a length said, and aborted).
        let whole = 0..stream.len();
        let (stream_errors, stream_panics) =
            every_flip_is_an_error_or_batches(&stream, whole, InputFormat::IpcStream);
        let mut parquet = Vec::new();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(&mut parquet, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let whole = 0..parquet.len();
        let (parquet_errors, parquet_panics) =
            every_flip_is_an_error_or_batches(&parquet, whole, InputFormat::Parquet);
        assert!(stream_errors > 0 && parquet_errors > 0);
        // (The libraries did panic on some, and the guard made those errors.)
        assert!(stream_panics + parquet_panics > 0);
    }
}
