//! Fuzzes whole Avro container files: arbitrary bytes through `ReaderBuilder::read_bytes` and
//! `read_stream` (header, metadata, codecs, block framing, sync markers, record decoding), every
//! batch drained and checked; both sources must agree on files they read to the end. Batch
//! size, threads (1 or 2), varint kernel and UTF-8 views are picked from the input's length, so
//! that a real `.avro` file is a valid input as it is.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| avrow_fuzz::container(data));
