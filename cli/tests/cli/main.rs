//! Integration tests of the `avrow` binary: every subcommand on the shared fixtures (copied to
//! `cli/tests/data/`), the samples and generated multi-block files, with outputs checked by an
//! independent reader (`cli/tests/oracle.py`: pyarrow reads the output, fastavro the input);
//! and every error path.

mod avro_out;
mod convert;
mod errors;
mod harness;
mod inspect;
mod multi;
mod pipes;
mod recovery;
mod sql;
