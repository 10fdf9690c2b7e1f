//! Fuzzes schema resolution: a writer and a reader schema (JSON texts, or numbers of the seed
//! schemas in `avrow_fuzz::SCHEMAS`, separated by NUL bytes) through `DecodePlan::resolve`;
//! when it succeeds, the remaining bytes are decoded with the plan as in the `decode` target.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| avrow_fuzz::resolve(data));
