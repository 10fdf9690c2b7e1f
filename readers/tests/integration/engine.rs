//! The parallel engine's guarantees (issue 4), on files written by apache-avro through
//! `avrow-datasets`: identical batches for 1, 2 and 8 threads under every codec, streams read
//! through a pipe in tiny pieces, everything before an error delivered, several files read as
//! one, and small inputs decoded without a pool.

use arrow::compute::concat_batches;
use arrow::record_batch::RecordBatch;
use avrow::ReaderBuilder;
use avrow_datasets::{Codec, GenOptions, Shape};
use std::io::{Read, Write};

/// A multi-unit file: ~1.6 MB of Order records in blocks of 97 rows.
fn order_file(codec: Codec, rows: usize, seed: u64) -> Vec<u8> {
    let opts = GenOptions {
        rows,
        codec,
        block_rows: 97,
        seed,
    };
    avrow_datasets::generate(Shape::Order, &opts).expect("generate")
}

fn read_all(builder: ReaderBuilder, bytes: &[u8]) -> (RecordBatch, usize, usize) {
    let reader = builder.read_bytes(bytes.to_vec()).expect("open");
    let threads = reader.threads();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("decode")).collect();
    let count = batches.len();
    (
        concat_batches(&schema, &batches).expect("concat"),
        threads,
        count,
    )
}

#[test]
fn threads_1_2_8_give_identical_batches_under_every_codec() {
    for (i, codec) in Codec::ALL.into_iter().enumerate() {
        let file = order_file(codec, 3000, i as u64);
        let (one, used, _) = read_all(
            ReaderBuilder::new().with_threads(1).with_batch_size(500),
            &file,
        );
        assert_eq!(used, 1);
        assert_eq!(one.num_rows(), 3000, "{codec:?}");
        for threads in [2, 8] {
            let reader = ReaderBuilder::new()
                .with_threads(threads)
                .with_batch_size(500)
                .read_bytes(file.clone())
                .expect("open");
            assert_eq!(
                reader.threads(),
                threads,
                "{codec:?}: several units run on a pool"
            );
            let schema = reader.schema();
            let batches: Vec<RecordBatch> = reader.map(|b| b.expect("decode")).collect();
            assert!(
                batches.iter().all(|b| b.num_rows() <= 500),
                "batch size exceeded"
            );
            let all = concat_batches(&schema, &batches).expect("concat");
            assert_eq!(
                all, one,
                "{codec:?}: {threads} threads differ from 1 thread"
            );
        }
    }
}

/// A reader that hands out at most `chunk` bytes per call.
struct Tiny<R> {
    inner: R,
    chunk: usize,
}

impl<R: Read> Read for Tiny<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk);
        self.inner.read(&mut buf[..n])
    }
}

#[test]
fn a_stream_through_a_pipe_in_tiny_reads_matches_bytes() {
    let file = order_file(Codec::Snappy, 2500, 11);
    let (expected, _, _) = read_all(ReaderBuilder::new().with_threads(1), &file);
    for threads in [1, 4] {
        let (reader, mut writer) = std::io::pipe().expect("pipe");
        let data = file.clone();
        let feeder = std::thread::spawn(move || {
            // Small writes, so the reader keeps finding a nearly empty pipe.
            for piece in data.chunks(1000) {
                writer.write_all(piece).expect("write to pipe");
            }
        });
        let stream = Tiny {
            inner: reader,
            chunk: 7,
        };
        let reader = ReaderBuilder::new()
            .with_threads(threads)
            .read_stream(stream)
            .expect("open stream");
        let schema = reader.schema();
        let batches: Vec<RecordBatch> = reader.map(|b| b.expect("decode")).collect();
        feeder.join().expect("feeder");
        let all = concat_batches(&schema, &batches).expect("concat");
        assert_eq!(all, expected, "stream with {threads} threads");
    }
}

/// Each block of a file: (start offset, rows, end offset just past its sync marker).
fn blocks(file: &[u8]) -> Vec<(u64, u64, u64)> {
    let starts: Vec<(u64, u64)> = avrow::BlockReader::from_bytes(file.to_vec())
        .expect("open")
        .map(|b| {
            let b = b.expect("block");
            (b.offset(), b.record_count())
        })
        .collect();
    let ends = starts
        .iter()
        .skip(1)
        .map(|s| s.0)
        .chain([file.len() as u64]);
    starts
        .iter()
        .zip(ends)
        .map(|(&(start, rows), end)| (start, rows, end))
        .collect()
}

#[test]
fn everything_before_an_error_is_delivered_then_the_error_then_nothing() {
    let file = order_file(Codec::Null, 3000, 21);
    let spans = blocks(&file);
    let bad = spans.len() / 2;
    let (_, _, end) = spans[bad];
    let mut damaged = file.clone();
    // Break the sync marker that ends block `bad`.
    damaged[end as usize - 1] ^= 0xff;
    let rows_before: u64 = spans[..bad].iter().map(|s| s.1).sum();
    for threads in [1, 2, 8] {
        let mut reader = ReaderBuilder::new()
            .with_threads(threads)
            .with_batch_size(333)
            .read_bytes(damaged.clone())
            .expect("open");
        let mut rows = 0u64;
        let error = loop {
            match reader.next() {
                Some(Ok(batch)) => rows += batch.num_rows() as u64,
                Some(Err(e)) => break e.to_string(),
                None => panic!("threads {threads}: no error for a damaged file"),
            }
        };
        assert_eq!(
            rows, rows_before,
            "threads {threads}: rows before the error"
        );
        assert!(
            error.contains(&format!("block {bad}")),
            "threads {threads}: {error}"
        );
        assert!(error.contains("sync marker"), "threads {threads}: {error}");
        assert!(
            reader.next().is_none(),
            "threads {threads}: the reader stops after an error"
        );
    }
}

#[test]
fn open_many_reads_files_in_order_as_one_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut expected = Vec::new();
    let mut paths = Vec::new();
    for (i, codec) in [Codec::Null, Codec::Zstandard, Codec::Deflate]
        .into_iter()
        .enumerate()
    {
        let file = order_file(codec, 700 + i * 100, 30 + i as u64);
        let (batch, _, _) = read_all(ReaderBuilder::new().with_threads(1), &file);
        expected.push(batch);
        let path = dir.path().join(format!("part-{i}.avro"));
        std::fs::write(&path, &file).expect("write");
        paths.push(path);
    }
    let schema = expected[0].schema();
    let expected = concat_batches(&schema, &expected).expect("concat");
    for threads in [1, 4] {
        let reader = ReaderBuilder::new()
            .with_threads(threads)
            .open_many(&paths)
            .expect("open_many");
        let batches: Vec<RecordBatch> = reader.map(|b| b.expect("decode")).collect();
        let all = concat_batches(&schema, &batches).expect("concat");
        assert_eq!(all, expected, "open_many with {threads} threads");
    }
    // A file with another schema is refused, naming it.
    let other = avrow_datasets::generate(
        Shape::Counters,
        &GenOptions {
            rows: 10,
            ..GenOptions::default()
        },
    )
    .expect("generate");
    let other_path = dir.path().join("counters.avro");
    std::fs::write(&other_path, other).expect("write");
    paths.push(other_path);
    let err = ReaderBuilder::new()
        .open_many(&paths)
        .expect_err("different schemas");
    assert!(err.to_string().contains("counters.avro"), "{err}");
}

#[test]
fn small_inputs_are_decoded_without_a_pool() {
    let file = order_file(Codec::Null, 100, 41);
    let reader = ReaderBuilder::new()
        .with_threads(8)
        .read_bytes(file)
        .expect("open");
    assert_eq!(
        reader.threads(),
        1,
        "a single work unit is decoded on the caller's thread"
    );
}

/// Column buffers of dropped batches are recycled into later batches (the engine's buffer
/// pool): a reader whose batches are dropped one by one must produce exactly what a reader
/// whose batches are all kept (nothing recycled) produces, for every shape (lists, maps,
/// strings, nullable values, enums, floats), with batches large enough to be recycled and
/// short batches at unit ends.
#[test]
fn recycled_buffers_never_leak_old_values() {
    for (i, shape) in Shape::ALL.into_iter().enumerate() {
        let opts = GenOptions {
            rows: 9000,
            codec: Codec::Null,
            block_rows: 700,
            seed: 90 + i as u64,
        };
        let file = avrow_datasets::generate(shape, &opts).expect("generate");
        for threads in [1, 2] {
            let builder = || {
                ReaderBuilder::new()
                    .with_threads(threads)
                    .with_batch_size(4096)
            };
            let kept: Vec<RecordBatch> = builder()
                .read_bytes(file.clone())
                .expect("open")
                .map(|b| b.expect("decode"))
                .collect();
            let mut n = 0;
            for batch in builder().read_bytes(file.clone()).expect("open") {
                let batch = batch.expect("decode");
                assert_eq!(
                    batch, kept[n],
                    "{shape:?}, {threads} threads: batch {n} differs once buffers are recycled"
                );
                n += 1;
                // `batch` is dropped here: its buffers go back to the pool.
            }
            assert_eq!(n, kept.len(), "{shape:?}: batch count");
        }
    }
}

/// A thread a core and more cannot help decoding or encoding; an absurd count (Python's
/// `threads=2**40` started threads one after another and never returned) is capped at eight
/// a core (at least 16), and reads and writes the same.
#[test]
fn absurd_thread_counts_are_capped() {
    let file = order_file(Codec::Null, 20_000, 43);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = (8 * cores).max(16);
    let (one, _, _) = read_all(ReaderBuilder::new().with_threads(1), &file);
    let (many, threads, _) = read_all(ReaderBuilder::new().with_threads(1 << 40), &file);
    assert!(threads > 1 && threads <= cap, "{threads} threads");
    assert_eq!(one, many);
    let mut w = avrow::WriterBuilder::new(one.schema())
        .with_threads(1 << 40)
        .with_block_size(4096)
        .build(Vec::new())
        .expect("writer");
    w.write(&one).expect("write");
    let written = w.finish().expect("finish");
    let (back, _, _) = read_all(ReaderBuilder::new().with_threads(1), &written);
    assert_eq!(back, one);
}
