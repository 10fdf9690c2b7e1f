//! Benchmarks for avrow live in `benches/`; this library is empty.
