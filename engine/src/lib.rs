//! # avrow-engine
//!
//! The decoding core of [avrow](https://docs.rs/avrow): the Avro schema model, the Avro → Arrow
//! type mapping, the decode plan, the varint kernels and the record decoders that write Arrow
//! buffers. It does no I/O and owns no file or thread, like `csv-core`: give it the bytes of a
//! decompressed block and the block's record count, get Arrow `RecordBatch`es.
//!
//! Most users want the `avrow` crate, which reads container files (every codec, in parallel)
//! on top of this one. Use this crate directly to decode Avro data that arrives some other way
//! (a message queue, a custom framing): see [`DecodePlan`].

pub mod decode;
pub mod encode;
pub mod error;
pub mod schema;
pub mod varint;

pub use decode::{
    BatchSink, BlockProgress, DecodeOptions, DecodePlan, RecordDecoder, StreamCheckError,
    DEFAULT_BATCH_SIZE,
};
pub use error::{DecodeError, DecodeErrorKind, Limit, PlanError};
pub use schema::{Schema, SchemaError, SchemaErrorKind, AVRO_SCHEMA_KEY};
