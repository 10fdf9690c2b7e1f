//! No-panic robustness on damaged inputs: every truncation of fixtures and generated multi-block
//! files, and seeded random corruption, decoded under a watchdog so a hang fails the test.
//!
//! A truncated file is an error unless the cut falls exactly after a sync marker (the header's or
//! a block's): then it is a valid, shorter file and must give exactly the complete blocks' rows.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::fixtures::fixture_files;
use crate::gen::{all_codecs, codec_name, inject_empty_blocks, random_case, write_file, Rng};
use crate::harness::{read_avrow_caught, Opts};
use crate::oracle::{apache_rows, diff_rows, Container, N};

/// `AVROW_SCALE=<n>` multiplies the number of corruptions and generated subjects (default 1).
fn scale() -> usize {
    std::env::var("AVROW_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Longest a single decode of these small inputs may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// One file to damage: name, bytes, its rows (the oracle), its framing.
struct Subject {
    name: String,
    bytes: Vec<u8>,
    rows: Vec<N>,
    container: Container,
}

fn subjects(generated: usize) -> Vec<Subject> {
    let mut out = Vec::new();
    for (name, bytes) in fixture_files() {
        let container = Container::parse(&bytes).unwrap();
        let model = container.model().unwrap();
        let rows = apache_rows(&model, &bytes).unwrap();
        out.push(Subject {
            name,
            bytes,
            rows,
            container,
        });
    }
    // Generated multi-block files: every codec, some with empty blocks.
    let codecs = all_codecs();
    let mut seed = 500_000;
    while out.len() < 23 + generated {
        seed += 1;
        let case = random_case(seed);
        if case.values.is_empty() || case.values.len() > 80 {
            continue;
        }
        let mut rng = Rng::new(seed);
        let codec = codecs[out.len() % codecs.len()];
        // Half from apache-avro's Writer, half from the test encoder (collections in blocks
        // with byte sizes, padded varints).
        let file = if out.len() % 2 == 0 {
            write_file(&mut rng, &case.schema, &case.values, codec)
        } else {
            let style = crate::encoder::Style {
                chunk_collections: true,
                pad_varints: true,
                pad_decimals: true,
                upper_uuids: true,
            };
            crate::encoder::write_file_styled(
                &mut rng,
                &case.schema,
                &case.model,
                &case.values,
                codec,
                style,
            )
        };
        let rows = apache_rows(&case.model, &file).unwrap();
        let file = if rng.one_in(2) {
            inject_empty_blocks(&mut rng, &file, codec, 2)
        } else {
            file
        };
        let container = Container::parse(&file).unwrap();
        out.push(Subject {
            name: format!("generated seed {seed} ({})", codec_name(codec)),
            bytes: file,
            rows,
            container,
        });
    }
    out
}

/// Run `jobs` on a worker thread; each job reports when done. A job that does not report within
/// [`HANG`] fails the test naming it. Returns the failures the jobs reported.
fn with_watchdog<J>(jobs: Vec<(String, J)>) -> Vec<String>
where
    J: FnOnce() -> Option<String> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<(usize, Option<String>)>();
    let names: Vec<String> = jobs.iter().map(|j| j.0.clone()).collect();
    let total = jobs.len();
    std::thread::spawn(move || {
        for (i, (_, job)) in jobs.into_iter().enumerate() {
            let r = job();
            if tx.send((i, r)).is_err() {
                return;
            }
        }
    });
    let mut failures = Vec::new();
    let mut next = 0;
    while next < total {
        match rx.recv_timeout(HANG) {
            Ok((i, r)) => {
                failures.extend(r);
                next = i + 1;
            }
            Err(_) => {
                panic!(
                    "decode hung (> {HANG:?}) on {}",
                    names.get(next).map(String::as_str).unwrap_or("?")
                );
            }
        }
    }
    failures
}

/// The cut points to try for a file of `len` bytes: all of them for small files, a dense
/// sample plus every block boundary (and its neighbours) for bigger ones.
fn cut_points(s: &Subject, rng: &mut Rng) -> Vec<usize> {
    let len = s.bytes.len();
    if len <= 3000 {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..len).step_by(len / 600 + 1).collect();
    for _ in 0..300 {
        v.push(rng.below(len));
    }
    for b in std::iter::once(s.container.header_len).chain(s.container.blocks.iter().map(|b| b.end))
    {
        for d in [-2i64, -1, 0, 1, 2] {
            let p = b as i64 + d;
            if p >= 0 && (p as usize) < len {
                v.push(p as usize);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn every_truncation_is_an_error_or_exactly_the_complete_blocks() {
    let mut jobs = Vec::new();
    let mut rng = Rng::new(7);
    for s in subjects(24) {
        let cuts = cut_points(&s, &mut rng);
        let valid: Vec<(usize, usize)> = {
            // (cut, rows of the complete blocks before it)
            let mut v = vec![(s.container.header_len, 0usize)];
            let mut rows = 0usize;
            for b in &s.container.blocks {
                rows += b.count as usize;
                v.push((b.end, rows));
            }
            v
        };
        let name = s.name.clone();
        jobs.push((
            format!("{name}: truncations"),
            move || -> Option<String> {
                let mut fails = Vec::new();
                for cut in cuts {
                    let opts = Opts::batch(3);
                    let r = read_avrow_caught(&s.bytes[..cut], &opts);
                    let want = valid.iter().find(|v| v.0 == cut).map(|v| v.1);
                    match (r, want) {
                        (Err(p), _) => fails.push(format!("cut at {cut}: panic: {p}")),
                        (Ok(Ok(d)), Some(n)) => {
                            if let Some(m) = diff_rows(&s.rows[..n], &d.rows()) {
                                fails.push(format!("cut at {cut} (after a sync marker): {m}"));
                            }
                        }
                        (Ok(Err(_)), Some(_)) => {
                            fails.push(format!(
                                "cut at {cut} is exactly after a sync marker, a valid file, but avrow errs"
                            ));
                        }
                        (Ok(Ok(d)), None) => fails.push(format!(
                            "cut at {cut} of {} bytes (inside the header or a block) gave Ok with {} rows instead of an error",
                            s.bytes.len(),
                            d.num_rows()
                        )),
                        (Ok(Err(_)), None) => {}
                    }
                    if fails.len() >= 5 {
                        break;
                    }
                }
                (!fails.is_empty()).then(|| format!("{}: {}", s.name, fails.join("; ")))
            },
        ));
    }
    let failures = with_watchdog(jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same through `read_stream` (a reader returning a few bytes per call) on a sample of cuts.
#[test]
fn truncated_streams_error_too() {
    let mut jobs = Vec::new();
    for s in subjects(6).into_iter().step_by(3) {
        let len = s.bytes.len();
        let ends: Vec<usize> = std::iter::once(s.container.header_len)
            .chain(s.container.blocks.iter().map(|b| b.end))
            .collect();
        jobs.push((format!("{}: stream truncations", s.name), move || {
            let mut fails = Vec::new();
            for cut in (0..len).step_by(len / 97 + 1) {
                let opts = Opts {
                    src: crate::harness::Src::Stream,
                    ..Opts::batch(4)
                };
                match read_avrow_caught(&s.bytes[..cut], &opts) {
                    Err(p) => fails.push(format!("cut {cut}: panic {p}")),
                    Ok(Ok(d)) if !ends.contains(&cut) => fails.push(format!(
                        "cut {cut}: Ok with {} rows from a stream that ends inside a block",
                        d.num_rows()
                    )),
                    _ => {}
                }
            }
            (!fails.is_empty()).then(|| format!("{}: {}", s.name, fails.join("; ")))
        }));
    }
    let failures = with_watchdog(jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Seeded random corruption: never a panic, never a hang; Ok or Err are both acceptable.
#[test]
fn random_corruption_never_panics_or_hangs() {
    let mut jobs = Vec::new();
    let mut rng = Rng::new(0xC0FFEE);
    for s in subjects(24 * scale()) {
        let mut inputs = Vec::new();
        for k in 0..40 * scale() {
            let mut b = s.bytes.clone();
            let flips = 1 + rng.below(4);
            for _ in 0..flips {
                // Mostly inside a block's data, sometimes anywhere (header and framing too).
                let blocks: Vec<_> = s
                    .container
                    .blocks
                    .iter()
                    .filter(|b| b.data_len > 0)
                    .collect();
                let i = if blocks.is_empty() || rng.one_in(4) {
                    rng.below(b.len())
                } else {
                    let blk = rng.pick(&blocks);
                    blk.data_start + rng.below(blk.data_len)
                };
                b[i] = match rng.below(4) {
                    0 => b[i] ^ (1 << rng.below(8)),
                    1 => 0xff,
                    2 => 0x80,
                    _ => rng.next_u64() as u8,
                };
            }
            inputs.push((k, b));
        }
        let name = s.name.clone();
        jobs.push((format!("{name}: corruptions"), move || {
            let mut fails = Vec::new();
            for (k, b) in inputs {
                let start = Instant::now();
                let opts = Opts::batch(1 + k % 5);
                if let Err(p) = read_avrow_caught(&b, &opts) {
                    fails.push(format!("corruption #{k}: panic: {p}"));
                }
                let took = start.elapsed();
                if took > Duration::from_secs(10) {
                    fails.push(format!("corruption #{k}: took {took:?}"));
                }
            }
            (!fails.is_empty()).then(|| format!("{name}: {}", fails.join("; ")))
        }));
    }
    let failures = with_watchdog(jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Counts from the block headers are held to what the block could hold, as decoding holds
/// them: a count larger than the records fit is an error naming the block (it was the
/// answer of `count(*)`), counts of records of no bytes are capped, and honest files count
/// as they read.
#[test]
fn counts_from_headers_are_checked_against_the_block() {
    use arrow_array::{ArrayRef, Int64Array, NullArray, RecordBatch};
    use std::sync::Arc;
    let write = |column: ArrayRef, codec: avrow::Codec| {
        let batch = RecordBatch::try_from_iter([("c", column)]).unwrap();
        let mut w = avrow::WriterBuilder::new(batch.schema())
            .with_codec(codec)
            .build(Vec::new())
            .unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap()
    };
    // The first block's count varint (zigzag) set to `count`, the rest as written.
    let with_count = |file: &[u8], count: i64| {
        let start = avrow::BlockReader::from_bytes(file.to_vec())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .offset() as usize;
        let mut pos = start;
        while file[pos] & 0x80 != 0 {
            pos += 1;
        }
        let mut out = file[..start].to_vec();
        let mut z = ((count << 1) ^ (count >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
        out.extend_from_slice(&file[pos + 1..]);
        out
    };
    let longs = write(
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        avrow::Codec::Null,
    );
    let honest = avrow::BlockReader::from_bytes(longs.clone()).unwrap();
    assert_eq!(honest.count_records().unwrap(), 3);
    let lying = with_count(&longs, 5);
    let e = avrow::BlockReader::from_bytes(lying.clone())
        .unwrap()
        .count_records()
        .unwrap_err();
    assert!(e.to_string().contains("cannot hold 5 records"), "{e}");
    // Reading it says the same.
    let read = read_avrow_caught(&lying, &Opts::default()).unwrap();
    assert!(read.is_err());
    // Records of no bytes: up to 2^31 - 1 a block, as decoding allows.
    let nulls = write(Arc::new(NullArray::new(4)), avrow::Codec::Deflate);
    assert_eq!(
        avrow::BlockReader::from_bytes(with_count(&nulls, i32::MAX as i64))
            .unwrap()
            .count_records()
            .unwrap(),
        i32::MAX as u64
    );
    let e = avrow::BlockReader::from_bytes(with_count(&nulls, 1 << 40))
        .unwrap()
        .count_records()
        .unwrap_err();
    assert!(e.to_string().contains("no bytes"), "{e}");
}
