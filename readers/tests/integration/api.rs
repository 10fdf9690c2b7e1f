//! Edges of the library API: odd builder settings, streams that fail or are interrupted, files
//! without blocks.

use std::io::Read;

use crate::fixtures::fixture_files;
use crate::harness::{read_avrow, read_avrow_caught, with_timeout, Opts};
use crate::oracle::{diff_rows, Container};

fn weather() -> Vec<u8> {
    fixture_files()
        .into_iter()
        .find(|f| f.0 == "apache/weather.avro")
        .unwrap()
        .1
}

#[test]
fn batch_size_zero_is_rejected_or_harmless() {
    let bytes = weather();
    let r = with_timeout(
        "batch size 0",
        std::time::Duration::from_secs(20),
        move || {
            std::panic::catch_unwind(move || {
                match avrow::ReaderBuilder::new()
                    .with_batch_size(0)
                    .read_bytes(bytes)
                {
                    Err(e) => Err(e.to_string()),
                    Ok(r) => {
                        let mut rows = 0;
                        for b in r {
                            match b {
                                Ok(b) => {
                                    assert!(b.num_rows() > 0, "an empty batch from batch size 0");
                                    rows += b.num_rows();
                                }
                                Err(e) => return Err(e.to_string()),
                            }
                            assert!(rows <= 5, "more rows than the file has");
                        }
                        Ok(rows)
                    }
                }
            })
        },
    );
    match r {
        Err(_) => panic!("batch size 0 panicked"),
        Ok(Ok(rows)) => assert_eq!(rows, 5),
        Ok(Err(e)) => assert!(e.contains("batch"), "{e}"),
    }
}

#[test]
fn empty_and_duplicate_projections_do_not_panic() {
    let bytes = weather();
    for p in [
        vec![],
        vec!["temp", "temp"],
        vec!["station", "station", "time"],
    ] {
        let o = Opts {
            projection: Some(p.iter().map(|s| s.to_string()).collect()),
            ..Opts::default()
        };
        match read_avrow_caught(&bytes, &o) {
            Err(panic) => panic!("projection {p:?}: panic {panic}"),
            Ok(Ok(d)) => {
                let mut names: Vec<_> =
                    d.schema.fields().iter().map(|f| f.name().clone()).collect();
                names.dedup();
                let mut want: Vec<String> = p.iter().map(|s| s.to_string()).collect();
                want.dedup();
                assert_eq!(
                    names.len(),
                    d.schema.fields().len(),
                    "projection {p:?}: duplicate columns"
                );
                if !p.is_empty() {
                    assert_eq!(d.num_rows(), 5, "projection {p:?}");
                }
            }
            Ok(Err(_)) => {}
        }
    }
}

/// A header-only file (zero blocks) has its schema and no rows; so does a file of empty blocks.
#[test]
fn files_without_rows() {
    let bytes = weather();
    let c = Container::parse(&bytes).unwrap();
    let header = bytes[..c.header_len].to_vec();
    let d = read_avrow(&header, &Opts::default()).unwrap();
    assert_eq!(d.num_rows(), 0);
    assert_eq!(d.schema.fields().len(), 3);
    let mut empties = header.clone();
    for _ in 0..3 {
        empties.extend_from_slice(&[0, 0]);
        empties.extend_from_slice(&c.sync);
    }
    let d = read_avrow(&empties, &Opts::default()).unwrap();
    assert_eq!(d.num_rows(), 0);
}

/// A `Read` that fails with `Interrupted` on every other call (which readers must retry) and
/// hands out few bytes per call.
struct Interrupting {
    data: Vec<u8>,
    pos: usize,
    calls: usize,
}

impl Read for Interrupting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(2) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "try again",
            ));
        }
        let n = buf.len().min(5).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A `Read` that fails for good after `fail_at` bytes.
struct Failing {
    data: Vec<u8>,
    pos: usize,
    fail_at: usize,
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.fail_at {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf
            .len()
            .min(self.fail_at - self.pos)
            .min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn interrupted_reads_are_retried() {
    for (name, bytes) in fixture_files() {
        let want = read_avrow(&bytes, &Opts::default()).unwrap().rows();
        let r = Opts::default()
            .builder()
            .read_stream(Interrupting {
                data: bytes,
                pos: 0,
                calls: 0,
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rows = Vec::new();
        for b in r {
            rows.extend(crate::oracle::batch_rows(
                &b.unwrap_or_else(|e| panic!("{name}: {e}")),
            ));
        }
        assert!(diff_rows(&want, &rows).is_none(), "{name}");
    }
}

#[test]
fn stream_io_errors_are_errors_naming_the_cause() {
    let bytes = weather();
    for fail_at in [0, 3, 40, bytes.len() / 2, bytes.len() - 1] {
        let data = bytes.clone();
        let r = std::panic::catch_unwind(move || {
            let reader = Opts::default().builder().read_stream(Failing {
                data,
                pos: 0,
                fail_at,
            })?;
            let mut n = 0;
            for b in reader {
                n += b?.num_rows();
            }
            Ok::<usize, avrow::Error>(n)
        });
        match r {
            Err(_) => panic!("fail at {fail_at}: panic"),
            Ok(Ok(n)) => panic!("fail at {fail_at}: Ok with {n} rows"),
            Ok(Err(e)) => assert!(
                e.to_string().contains("disk on fire"),
                "fail at {fail_at}: the error hides the I/O cause: {e}"
            ),
        }
    }
}

/// `read_stream_part`: the header followed by a run of blocks from the middle of a file reads
/// those blocks' rows, and errors give byte offsets in the whole file.
#[test]
fn a_stream_of_the_header_and_some_blocks_reads_those_blocks() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/samples/order.avro");
    let bytes = std::fs::read(&path).unwrap();
    let blocks: Vec<avrow::Block> = avrow::BlockReader::open(&path)
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(blocks.len(), 3);
    let header_len = avrow::BlockReader::open(&path).unwrap().header().len() as usize;
    let rows =
        |r: avrow::Reader| -> Vec<arrow_array::RecordBatch> { r.map(|b| b.unwrap()).collect() };
    // Blocks 1 and 2 (the last): from block 1's offset to the end.
    let (from, to) = (blocks[1].offset() as usize, bytes.len());
    let mut part = bytes[..header_len].to_vec();
    part.extend_from_slice(&bytes[from..to]);
    let got = rows(
        avrow::ReaderBuilder::new()
            .read_stream_part("part", std::io::Cursor::new(part), from as u64)
            .unwrap(),
    );
    let want = rows(
        avrow::ReaderBuilder::new()
            .with_range(from as u64 - 16..to as u64 - 16)
            .open(&path)
            .unwrap(),
    );
    assert_eq!(got, want);
    assert_eq!(
        got.iter().map(|b| b.num_rows() as u64).sum::<u64>(),
        blocks[1].record_count() + blocks[2].record_count()
    );
    // A run cut inside its second block: the error names the input and a file offset.
    let mut cut = bytes[..header_len].to_vec();
    cut.extend_from_slice(&bytes[from..to - 100]);
    let err = avrow::ReaderBuilder::new()
        .read_stream_part("part", std::io::Cursor::new(cut), from as u64)
        .unwrap()
        .find_map(|b| b.err())
        .expect("an error");
    let text = err.to_string();
    assert!(text.starts_with("part: block 1 at byte "), "{text}");
    let offset: u64 = text["part: block 1 at byte ".len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(offset, blocks[2].offset(), "{text}");
}

#[test]
fn a_directory_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for mmap in [true, false] {
        let err = avrow::ReaderBuilder::new()
            .with_mmap(mmap)
            .open(dir.path())
            .expect_err("a directory is not an Avro file")
            .to_string();
        assert!(err.contains("a directory, not an Avro file"), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");
    }
}

/// Small files are read into memory, larger ones mapped (the bound is 256 KiB): on either side
/// of it a file reads as the same file streamed or given as bytes, whole and in ranges.
#[test]
fn files_read_or_mapped_by_size_give_the_same_batches() {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for rows in [10i64, 7_000, 9_000, 40_000] {
        let batch = RecordBatch::try_from_iter([
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef,
            ),
            (
                "s",
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|i| format!("row {i} of {rows}, padded")),
                )) as ArrayRef,
            ),
        ])
        .unwrap();
        let path = dir.path().join(format!("{rows}.avro"));
        let mut writer = avrow::WriterBuilder::new(batch.schema())
            .with_codec(avrow::Codec::Null)
            .with_block_size(16 << 10)
            .build(std::fs::File::create(&path).unwrap())
            .unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        sizes.push(bytes.len());
        let collect = |reader: avrow::Reader| reader.map(|b| b.unwrap()).collect::<Vec<_>>();
        let concat = |batches: Vec<RecordBatch>| {
            arrow::compute::concat_batches(&batch.schema(), &batches).unwrap()
        };
        let mapped = concat(collect(avrow::ReaderBuilder::new().open(&path).unwrap()));
        assert_eq!(mapped, batch, "{rows} rows");
        let streamed = avrow::ReaderBuilder::new()
            .with_mmap(false)
            .open(&path)
            .unwrap();
        assert_eq!(concat(collect(streamed)), batch, "{rows} rows, streamed");
        let given = avrow::ReaderBuilder::new().read_bytes(bytes).unwrap();
        assert_eq!(concat(collect(given)), batch, "{rows} rows, bytes");
        let mut parts = Vec::new();
        for range in avrow::split_ranges(&path, 3).unwrap() {
            let reader = avrow::ReaderBuilder::new()
                .with_range(range)
                .open(&path)
                .unwrap();
            parts.extend(collect(reader));
        }
        assert_eq!(concat(parts), batch, "{rows} rows, in three ranges");
        let counted = avrow::BlockReader::open(&path)
            .unwrap()
            .count_records()
            .unwrap();
        assert_eq!(counted, rows as u64);
    }
    // The files straddle the bound.
    assert!(sizes.iter().any(|&s| s < 256 << 10), "{sizes:?}");
    assert!(sizes.iter().any(|&s| s > 256 << 10), "{sizes:?}");
}
