//! Shared pieces of avrow's benchmarks: the binaries' flag helpers, the varint benchmarks' data
//! and operations, the benchmark files (generated once, cached under `target/bench-data/`) and
//! the apache-avro `Value` → Arrow conversion that stands for the path DataFusion used before
//! arrow-avro (read `Value`s, then fill Arrow builders column by column).

pub mod args;
pub mod data;
pub mod readers;
pub mod value_to_arrow;
pub mod varint_data;
