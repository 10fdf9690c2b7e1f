//! Integration tests of avrow-datafusion, one binary with topic modules.

mod common;
mod distributed;
mod object_store;
mod oracle;
mod slt;
mod splits;
mod sql;
mod stats;
