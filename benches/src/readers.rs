//! One whole-file decode per reader, from memory, consuming every batch or value: what the
//! criterion bench (`benches/shapes.rs`) and the interleaved ratio binary (`src/bin/ratios.rs`)
//! time. Each returns the rows it saw, so callers can check that nothing was skipped.

use crate::data::BenchFile;
use crate::value_to_arrow;

/// Batch size for the readers that take one (avrow, arrow-avro, the `Value` → Arrow path).
pub const BATCH: usize = 8192;

/// avrow on `threads` threads (`1`: the calling thread; `0`: every core).
pub fn avrow_rows(file: &BenchFile, threads: usize) -> usize {
    avrow_bytes_rows(&file.bytes, threads).expect("avrow decodes")
}

/// [`avrow_rows`] of any file in memory.
///
/// # Errors
/// avrow cannot read it.
pub fn avrow_bytes_rows(bytes: &bytes::Bytes, threads: usize) -> Result<usize, avrow::Error> {
    let reader = avrow::ReaderBuilder::new()
        .with_threads(threads)
        .with_batch_size(BATCH)
        .read_bytes(bytes.clone())?;
    let mut rows = 0;
    for batch in reader {
        rows += batch?.num_rows();
    }
    Ok(rows)
}

/// arrow-rs's reader (`arrow_avro::reader::ReaderBuilder`).
pub fn arrow_avro_rows(file: &BenchFile) -> usize {
    arrow_avro_bytes_rows(&file.bytes).expect("arrow-avro decodes")
}

/// [`arrow_avro_rows`] of any file in memory.
///
/// # Errors
/// arrow-avro cannot read it.
pub fn arrow_avro_bytes_rows(bytes: &[u8]) -> Result<usize, arrow_schema_latest::ArrowError> {
    let reader = arrow_avro::reader::ReaderBuilder::new()
        .with_batch_size(BATCH)
        .build(bytes)?;
    let mut rows = 0;
    for batch in reader {
        rows += batch?.num_rows();
    }
    Ok(rows)
}

/// apache-avro's `Reader`, one `Value` per record.
pub fn apache_value_rows(file: &BenchFile) -> usize {
    let reader = apache_avro::Reader::new(&file.bytes[..]).expect("apache-avro opens the file");
    let mut rows = 0;
    for value in reader {
        std::hint::black_box(value.expect("apache-avro decodes"));
        rows += 1;
    }
    rows
}

/// apache-avro's `Value`s turned into Arrow batches of [`BATCH`] rows with builders (the path
/// DataFusion used before arrow-avro).
pub fn apache_to_arrow_rows(file: &BenchFile, schema: &arrow_schema::SchemaRef) -> usize {
    let reader = apache_avro::Reader::new(&file.bytes[..]).expect("apache-avro opens the file");
    let mut rows = 0;
    let mut chunk = Vec::with_capacity(BATCH);
    for value in reader {
        chunk.push(value.expect("apache-avro decodes"));
        if chunk.len() == BATCH {
            rows += value_to_arrow::to_batch(schema, &chunk).num_rows();
            chunk.clear();
        }
    }
    if !chunk.is_empty() {
        rows += value_to_arrow::to_batch(schema, &chunk).num_rows();
    }
    rows
}
