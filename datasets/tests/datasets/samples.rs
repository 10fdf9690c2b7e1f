//! The committed samples in `datasets/samples/` are reproduced byte for byte by the commands
//! documented in its README and `regenerate.sh`.

use std::path::PathBuf;

use avrow_datasets::{generate, Codec, GenOptions, Shape};

use crate::{container, read_all};

/// One committed sample: file name, shape, rows, codec, rows per block, seed, block sizes.
struct Sample {
    file: &'static str,
    shape: Shape,
    rows: usize,
    codec: Codec,
    block_rows: usize,
    seed: u64,
    blocks: &'static [u64],
}

const SAMPLES: &[Sample] = &[
    Sample {
        file: "order.avro",
        shape: Shape::Order,
        rows: 1500,
        codec: Codec::Deflate,
        block_rows: 500,
        seed: 42,
        blocks: &[500, 500, 500],
    },
    Sample {
        file: "wide.avro",
        shape: Shape::Wide,
        rows: 1500,
        codec: Codec::Snappy,
        block_rows: 400,
        seed: 42,
        blocks: &[400, 400, 400, 300],
    },
    Sample {
        file: "telemetry.avro",
        shape: Shape::Telemetry,
        rows: 4000,
        codec: Codec::Null,
        block_rows: 1500,
        seed: 42,
        blocks: &[1500, 1500, 1000],
    },
    Sample {
        file: "counters.avro",
        shape: Shape::Counters,
        rows: 1200,
        codec: Codec::Deflate,
        block_rows: 500,
        seed: 42,
        blocks: &[500, 500, 200],
    },
];

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

impl Sample {
    /// The CLI arguments that regenerate this sample, as documented.
    fn command(&self) -> String {
        format!(
            "{} --rows {} --codec {} --block-rows {} --seed {} -o datasets/samples/{}",
            self.shape, self.rows, self.codec, self.block_rows, self.seed, self.file
        )
    }
}

#[test]
fn samples_are_reproducible() {
    for s in SAMPLES {
        let path = samples_dir().join(s.file);
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(committed.len() <= 2 << 20, "{} is over 2 MiB", s.file);
        let opts = GenOptions {
            rows: s.rows,
            codec: s.codec,
            block_rows: s.block_rows,
            seed: s.seed,
        };
        let fresh = generate(s.shape, &opts).unwrap();
        assert!(
            committed == fresh,
            "{} differs from `{}`; if the generator changed on purpose, run datasets/samples/regenerate.sh",
            s.file,
            s.command()
        );
        assert_eq!(
            container::parse(&committed).block_rows,
            s.blocks,
            "{}",
            s.file
        );
        assert_eq!(read_all(&committed).len(), s.rows, "{}", s.file);
    }
}

#[test]
fn samples_readme_and_script_document_each_command() {
    let readme = std::fs::read_to_string(samples_dir().join("README.md")).unwrap();
    let script = std::fs::read_to_string(samples_dir().join("regenerate.sh")).unwrap();
    for s in SAMPLES {
        let cmd = s.command();
        assert!(
            readme.contains(&format!("cargo run --release -p avrow-datasets -- {cmd}")),
            "README.md lacks `{cmd}`"
        );
        assert!(script.contains(&cmd), "regenerate.sh lacks `{cmd}`");
    }
}
