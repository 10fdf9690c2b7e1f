//! # avrow
//!
//! Fast Apache Avro → Apache Arrow. `avrow` reads Avro object container files (every codec:
//! null, deflate, snappy, zstandard, bzip2, xz) from a path, bytes in memory or a stream, and
//! returns Arrow [`RecordBatch`](arrow_array::RecordBatch)es, with projection and a batch size.
//!
//! ```no_run
//! let reader = avrow::ReaderBuilder::new()
//!     .with_batch_size(8192)
//!     .with_projection(["id", "lines.sku"])
//!     .open("data.avro")?;
//! println!("{:?}", reader.schema());
//! for batch in reader {
//!     let batch = batch?;
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok::<(), avrow::Error>(())
//! ```
//!
//! Batches own their memory. The large column buffers of batches you drop return to the
//! reader, which decodes later batches into them (saving the page faults of new memory); it
//! keeps at most about 256 MB of them and frees them when it is dropped. Batches you keep
//! are never touched again.
//!
//! The decoding core lives in [`avrow_engine`] (re-exported): use it to decode Avro records
//! that arrive without a container file.

mod batches;
mod blocks;
mod builder;
mod codec;
mod compress;
mod container;
mod error;
mod libdeflate;
pub mod output;
mod parallel;
pub mod parquet_compat;
mod reader;
mod sequential;
mod source;
mod split;
mod unit;
mod writer;

pub use avrow_engine;
pub use avrow_engine::Schema;
pub use blocks::{Block, BlockReader};
pub use builder::ReaderBuilder;
pub use codec::{Codec, DecompressError};
pub use container::{Header, MAGIC};
pub use error::{BlockErrorKind, BlockPart, Error, HeaderErrorKind, HeaderPart, Result};
pub use reader::{ArrowReader, Reader};
pub use source::{SkippedBlock, DEFAULT_MAX_BLOCK_SIZE};
pub use split::split_ranges;
pub use writer::{Writer, WriterBuilder, DEFAULT_BLOCK_SIZE};
