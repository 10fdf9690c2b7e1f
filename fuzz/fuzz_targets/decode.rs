//! Fuzzes record decoding: arbitrary block bytes decoded by `RecordDecoder::decode_block` and
//! `flush` against one of the fixed schemas in `avrow_fuzz::SCHEMAS` (every Avro type, logical
//! types, recursion). The first bytes pick the schema, options, record count, batch size, a
//! split into two blocks and a varint kernel, whose result must equal the scalar kernel's.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| avrow_fuzz::decode(data));
