//! The engine's integration tests, one binary with a module per topic.
mod varint;
