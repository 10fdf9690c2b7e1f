//! The main job done with arrow-rs alone, as a peer for `benches/parquet.py`: read an Avro
//! file with `arrow-avro`'s `ReaderBuilder` and write Parquet with the `parquet` crate's
//! `ArrowWriter` (zstd at its default level, every other property at its default), one thread.
//!
//! ```sh
//! cargo run --release -p avrow-benches --bin arrow_avro_parquet -- IN.avro OUT.parquet
//! ```

use std::fs::File;
use std::io::BufReader;
use std::process::ExitCode;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

fn run(input: &str, output: &str) -> Result<(), Box<dyn std::error::Error>> {
    let reader = arrow_avro::reader::ReaderBuilder::new()
        .with_batch_size(8192)
        .build(BufReader::new(File::open(input)?))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut writer = ArrowWriter::try_new(File::create(output)?, reader.schema(), Some(props))?;
    for batch in reader {
        writer.write(&batch?)?;
    }
    writer.close()?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: arrow_avro_parquet IN.avro OUT.parquet");
        return ExitCode::from(2);
    };
    match run(input, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arrow_avro_parquet: {input}: {e}");
            ExitCode::FAILURE
        }
    }
}
