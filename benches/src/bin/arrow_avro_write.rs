//! Arrow → Avro done with arrow-rs alone, as the peer of `avrow convert X.arrow -o Y.avro` in
//! `benches/write.py`: read an Arrow IPC file with `arrow-ipc`'s `FileReader` and write an
//! Avro container file (no compression) with `arrow-avro`'s `AvroWriter`, one thread.
//!
//! ```sh
//! cargo run --release -p avrow-benches --bin arrow_avro_write -- IN.arrow OUT.avro
//! ```

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::process::ExitCode;

fn run(input: &str, output: &str) -> Result<(), Box<dyn std::error::Error>> {
    let reader = arrow_ipc::reader::FileReader::try_new(BufReader::new(File::open(input)?), None)?;
    let schema = reader.schema().as_ref().clone();
    let mut writer =
        arrow_avro::writer::AvroWriter::new(BufWriter::new(File::create(output)?), schema)?;
    for batch in reader {
        writer.write(&batch?)?;
    }
    writer.finish()?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: arrow_avro_write IN.arrow OUT.avro");
        return ExitCode::from(2);
    };
    match run(input, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arrow_avro_write: {e}");
            ExitCode::FAILURE
        }
    }
}
