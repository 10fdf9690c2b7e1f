//! avrow's integration tests: one binary, a module per topic.
mod alloc_guard;
mod api;
mod canonical;
mod differential;
mod encoder;
mod engine;
mod fixtures;
mod gen;
mod harness;
mod hostile;
mod oracle;
mod parallel;
mod projection;
mod recursion;
mod resolution;
mod robustness;
mod schemas;
