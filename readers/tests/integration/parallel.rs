//! Files big enough for the parallel engine (several work units): with 1, 2 and 4 threads and
//! every source, the batches equal apache-avro's reading, in order; damage in a middle unit is
//! an error naming that block; byte ranges partition the rows exactly.

use apache_avro::types::Value;
use apache_avro::{Codec, Schema};

use crate::gen::{random_value, write_file, Rng};
use crate::harness::{check_decode, read_avrow_caught, Opts, Src};
use crate::oracle::{apache_rows, diff_rows, Container, Model, N};

const SCHEMA: &str = r#"{"type":"record","name":"Event","namespace":"par","fields":[
  {"name":"id","type":"long"},
  {"name":"name","type":"string"},
  {"name":"score","type":["null","double"]},
  {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B","C"]}},
  {"name":"tags","type":{"type":"array","items":"string"}},
  {"name":"attrs","type":{"type":"map","values":["null","long","string"]}},
  {"name":"when","type":{"type":"long","logicalType":"timestamp-micros"}},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":4}},
  {"name":"inner","type":{"type":"record","name":"Inner","fields":[
      {"name":"a","type":"int"},{"name":"b","type":["null",{"type":"fixed","name":"F8","size":8}]}]}}
]}"#;

/// A file of about `approx_bytes` with small blocks, and its oracle rows.
pub(crate) fn big_file(seed: u64, approx_bytes: usize, codec: Codec) -> (Model, Vec<u8>, Vec<N>) {
    let model = Model::parse_str(SCHEMA).unwrap();
    let schema = Schema::parse_str(SCHEMA).unwrap();
    let mut rng = Rng::new(seed);
    // ~120 bytes per row on average
    let rows = approx_bytes / 120;
    let values: Vec<Value> = (0..rows)
        .map(|_| random_value(&mut rng, &model, &model.root, 2))
        .collect();
    let file = write_file(&mut rng, &schema, &values, codec);
    let expected = apache_rows(&model, &file).unwrap();
    assert_eq!(expected.len(), rows);
    (model, file, expected)
}

#[test]
fn parallel_decoding_matches_apache_avro() {
    let mut failures = Vec::new();
    for (seed, codec) in [
        (1u64, Codec::Null),
        (2, Codec::Snappy),
        (3, Codec::Deflate(apache_avro::DeflateSettings::default())),
        (
            4,
            Codec::Zstandard(apache_avro::ZstandardSettings::default()),
        ),
    ] {
        // 1.5 MB: several 256 KiB work units for 2 and 4 threads.
        let (model, file, expected) = big_file(seed, 3 << 19, codec);
        let blocks = Container::parse(&file).unwrap().blocks.len();
        assert!(blocks > 20, "only {blocks} blocks");
        for (threads, src, bs) in [
            (1, Src::Bytes, 1000),
            (2, Src::Bytes, 7),
            (4, Src::Bytes, 1000),
            (4, Src::Path, 8192),
            (3, Src::Path, 999),
        ] {
            {
                let o = Opts {
                    src,
                    threads: Some(threads),
                    ..Opts::batch(bs)
                };
                if let Err(e) = check_decode(&model, &file, &expected, &o) {
                    failures.push(format!("seed {seed} {codec:?} {o:?}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn parallel_stream_matches_apache_avro() {
    // Streams use 4 MiB units: 7 MB makes two.
    let (model, file, expected) = big_file(5, 7 << 20, Codec::Null);
    for threads in [1, 4] {
        let o = Opts {
            src: Src::Stream,
            threads: Some(threads),
            ..Opts::batch(4096)
        };
        check_decode(&model, &file, &expected, &o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
    }
}

/// Truncation and a bad sync marker deep inside a big file: errors (naming the block), never a
/// shorter Ok, whatever the thread count.
#[test]
fn parallel_damage_is_an_error() {
    let (_, file, expected) = big_file(6, 3 << 19, Codec::Null);
    let c = Container::parse(&file).unwrap();
    let mid = c.blocks.len() / 2;
    // A bad sync marker after the middle block.
    let mut bad = file.clone();
    let at = c.blocks[mid].end - 5;
    bad[at] ^= 0xff;
    for threads in [1, 4] {
        let o = Opts {
            threads: Some(threads),
            ..Opts::batch(1000)
        };
        match read_avrow_caught(&bad, &o) {
            Err(p) => panic!("threads {threads}: panic {p}"),
            Ok(Ok(d)) => panic!(
                "threads {threads}: a bad sync marker gave {} rows",
                d.num_rows()
            ),
            Ok(Err(e)) => {
                assert!(
                    e.contains(&format!("block {mid}")),
                    "threads {threads}: the error does not name block {mid}: {e}"
                );
            }
        }
        // Cuts inside blocks spread over the file, and exactly at block ends.
        let mut rng = Rng::new(threads as u64);
        for _ in 0..12 {
            let b = &c.blocks[rng.below(c.blocks.len())];
            let inside = b.data_start + rng.below(b.data_len.max(1));
            match read_avrow_caught(&file[..inside], &o) {
                Err(p) => panic!("threads {threads}, cut {inside}: panic {p}"),
                Ok(Ok(d)) => panic!(
                    "threads {threads}: cut at {inside} (inside a block) gave Ok with {} rows",
                    d.num_rows()
                ),
                Ok(Err(_)) => {}
            }
            let rows_before: usize = c
                .blocks
                .iter()
                .take_while(|x| x.end <= b.end)
                .map(|x| x.count as usize)
                .sum();
            match read_avrow_caught(&file[..b.end], &o) {
                Err(p) => panic!("threads {threads}, cut {}: panic {p}", b.end),
                Ok(Err(e)) => panic!("threads {threads}: cut at block end {}: {e}", b.end),
                Ok(Ok(d)) => {
                    if let Some(m) = diff_rows(&expected[..rows_before], &d.rows()) {
                        panic!("threads {threads}, cut at block end {}: {m}", b.end);
                    }
                }
            }
        }
    }
}

/// `with_range`: any partition of the file's bytes into ranges gives every row exactly once,
/// in order; `split_ranges` suggests such a partition.
#[test]
fn byte_ranges_partition_the_rows() {
    let (_, file, expected) = big_file(7, 1 << 20, Codec::Deflate(Default::default()));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ranges.avro");
    std::fs::write(&path, &file).unwrap();
    let len = file.len() as u64;
    let mut rng = Rng::new(11);
    let mut partitions: Vec<Vec<std::ops::Range<u64>>> = Vec::new();
    for n in [1usize, 2, 3, 7, 40] {
        let mut cuts: Vec<u64> = (0..n - 1).map(|_| rng.below(len as usize) as u64).collect();
        cuts.push(0);
        cuts.push(len);
        cuts.sort_unstable();
        partitions.push(cuts.windows(2).map(|w| w[0]..w[1]).collect());
    }
    partitions.push(avrow::split_ranges(&path, 5).unwrap());
    for ranges in partitions {
        let mut rows = Vec::new();
        for r in &ranges {
            let reader = avrow::ReaderBuilder::new()
                .with_batch_size(333)
                .with_range(r.clone())
                .open(&path)
                .unwrap_or_else(|e| panic!("range {r:?}: {e}"));
            for b in reader {
                let b = b.unwrap_or_else(|e| panic!("range {r:?}: {e}"));
                rows.extend(crate::oracle::batch_rows(&b));
            }
        }
        if let Some(m) = diff_rows(&expected, &rows) {
            panic!("ranges {ranges:?}: {m}");
        }
    }
}

#[test]
fn parallel_units_end_on_batch_boundaries() {
    // Work units hold whole blocks of a multiple of the batch size, or of a power-of-two
    // fraction of it (towards the end of the input, where units shrink): a batch cut at a
    // unit's end is short of that by less than one block.
    let (_, file, expected) = big_file(9, 3 << 19, Codec::Null);
    let max_block = Container::parse(&file)
        .unwrap()
        .blocks
        .iter()
        .map(|b| b.count)
        .max()
        .unwrap() as usize;
    for (threads, bs) in [(2, 1000), (2, 8192), (4, 300)] {
        let reader = avrow::ReaderBuilder::new()
            .with_threads(threads)
            .with_batch_size(bs)
            .read_bytes(file.clone())
            .unwrap();
        let sizes: Vec<usize> = reader.map(|b| b.unwrap().num_rows()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), expected.len());
        let near_a_fraction = |n: usize| {
            (0..20)
                .map(|k| bs >> k)
                .any(|r| n <= r && n + max_block >= r)
        };
        let odd: Vec<_> = sizes[..sizes.len() - 1]
            .iter()
            .filter(|&&n| !near_a_fraction(n))
            .collect();
        assert!(
            odd.is_empty() && sizes[0] == *sizes.iter().max().unwrap(),
            "{threads} threads, batch {bs}: batches {sizes:?} (blocks of up to {max_block} rows)"
        );
    }
}
