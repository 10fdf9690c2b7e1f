//! Fuzzes schema JSON: `Schema::parse`, Parsing Canonical Form (which must parse again to
//! itself), the Rabin, MD5 and SHA-256 fingerprints, `DecodePlan::new` with default options,
//! and `DecodePlan::resolve` of the schema against itself (which must succeed with the same
//! Arrow fields).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| avrow_fuzz::schema(data));
