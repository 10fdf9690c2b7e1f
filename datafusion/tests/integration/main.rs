//! Integration tests of avrow-datafusion, one binary with topic modules.

mod common;
mod distributed;
pub mod object_store;
mod oracle;
mod random_queries;
#[cfg(feature = "cloud")]
mod s3;
mod slt;
mod splits;
mod sql;
mod stats;
mod write;
