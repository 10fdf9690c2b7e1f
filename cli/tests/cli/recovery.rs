//! Hostile and damaged inputs through the binary: `--skip-bad-blocks` (one stderr line per
//! skipped block, a summary, exit status 3, the good blocks' rows in the output), and the
//! peak resident memory of lying and oversized inputs, from a path and from standard input.

use crate::harness::{avrow, generated, names_in, python};
use std::path::{Path, PathBuf};

/// `order` (7 blocks of 777 rows, zstandard) with block 2's compressed data damaged (it fails
/// to decompress or to decode) and block 5's record count made negative.
fn damaged(dir: &Path) -> PathBuf {
    let path = &generated().order;
    let mut bytes = std::fs::read(path).unwrap();
    let sync = avrow::BlockReader::open(path).unwrap().header().sync();
    let blocks: Vec<(usize, usize)> = avrow::BlockReader::open(path)
        .unwrap()
        .map(|b| {
            let b = b.unwrap();
            (b.offset() as usize, b.data().len())
        })
        .collect();
    assert_eq!(blocks.len(), 7);
    // Block 2: the middle of its data.
    let (start, len) = blocks[2];
    let data_end = bytes[start..]
        .windows(16)
        .position(|w| w == sync)
        .map(|i| start + i)
        .unwrap();
    for b in &mut bytes[data_end - len / 2..data_end - len / 2 + 64] {
        *b ^= 0x5a;
    }
    // Block 5: the count 777 (zigzag 1554 = 0x92 0x0c) becomes -777 (0x91 0x0c).
    let (start, _) = blocks[5];
    assert_eq!(&bytes[start..start + 2], [0x92, 0x0c]);
    bytes[start] = 0x91;
    let out = dir.join("damaged.avro");
    std::fs::write(&out, bytes).unwrap();
    out
}

fn rows_in_parquet(path: &Path) -> u64 {
    python(&format!(
        "import pyarrow.parquet as pq; print(pq.read_table({:?}).num_rows)",
        path.display().to_string()
    ))
    .trim()
    .parse()
    .unwrap()
}

#[test]
fn convert_skips_bad_blocks_reports_them_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let input = damaged(dir.path());
    let output = dir.path().join("out.parquet");
    for threads in ["1", "2"] {
        let out = avrow()
            .args(["convert", "--skip-bad-blocks", "--force", "-j", threads])
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
        assert_eq!(lines.len(), 3, "{stderr}");
        assert!(lines[0].contains("skipped block 2 of"), "{stderr}");
        assert!(lines[0].contains("777 records"), "{stderr}");
        // Damaged zstd data (no checksum) may still decompress, to records that do not decode.
        assert!(
            lines[0].contains("zstandard decompression failed") || lines[0].contains(", field "),
            "{stderr}"
        );
        assert!(lines[1].contains("skipped block 5 of"), "{stderr}");
        assert!(lines[1].contains("negative record count -777"), "{stderr}");
        assert!(
            lines[2].starts_with("avrow: skipped 2 bad block(s) in 1 file(s)"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"));
        assert_eq!(rows_in_parquet(&output), 5_000 - 2 * 777);
    }
    // From standard input too.
    let stdin_out = dir.path().join("stdin.parquet");
    let out = avrow()
        .args(["convert", "-", "--skip-bad-blocks", "-o"])
        .arg(&stdin_out)
        .pipe_stdin(&input)
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows_in_parquet(&stdin_out), 5_000 - 2 * 777);
}

#[test]
fn without_the_flag_the_first_bad_block_fails_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = damaged(dir.path());
    let output = dir.path().join("out.parquet");
    let out = avrow()
        .arg("convert")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("block 2 at byte"), "{stderr}");
    assert_eq!(names_in(dir.path()), ["damaged.avro"]);
}

#[test]
fn validate_lists_every_bad_block() {
    let dir = tempfile::tempdir().unwrap();
    let input = damaged(dir.path());
    let out = avrow()
        .args(["validate", "--skip-bad-blocks"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bad: Vec<&str> = stdout.lines().filter(|l| l.starts_with("bad ")).collect();
    assert_eq!(bad.len(), 2, "{stdout}");
    assert!(bad[0].contains(": block 2 (bytes "), "{stdout}");
    assert!(bad[1].contains(": block 5 (bytes "), "{stdout}");
    assert!(
        stdout.contains(&format!("{} records in the good blocks", 5_000 - 2 * 777)),
        "{stdout}"
    );
    // JSON: the blocks with their ranges.
    let out = avrow()
        .args(["validate", "--skip-bad-blocks", "--json"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["valid"], false);
    let blocks = report["files"][0]["bad_blocks"].as_array().unwrap();
    let indexes: Vec<u64> = blocks
        .iter()
        .map(|b| b["block"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [2, 5]);
    assert_eq!(blocks[0]["records"], 777);
    assert!(blocks[1]["records"].is_null());
    // Without the flag: only the first, exit 1.
    let out = avrow().arg("validate").arg(&input).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("block 2 at byte"), "{stdout}");
    assert!(!stdout.contains("block 5"), "{stdout}");
    // A good file is still exit 0 with the flag.
    let out = avrow()
        .args(["validate", "--skip-bad-blocks"])
        .arg(&generated().order)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

// ------------------------------------------------------------------ peak memory

fn zigzag(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// A container file with `codec`, a one-`long` schema and these blocks (count, data).
fn container(codec: &str, blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let schema = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#;
    container_of(schema, codec, blocks)
}

/// A container file with `schema`, `codec` and these blocks (count, data).
fn container_of(schema: &str, codec: &str, blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let sync = *b"0123456789abcdef";
    let mut f = b"Obj\x01".to_vec();
    zigzag(&mut f, 2);
    for (k, v) in [("avro.schema", schema), ("avro.codec", codec)] {
        zigzag(&mut f, k.len() as i64);
        f.extend_from_slice(k.as_bytes());
        zigzag(&mut f, v.len() as i64);
        f.extend_from_slice(v.as_bytes());
    }
    zigzag(&mut f, 0);
    f.extend_from_slice(&sync);
    for (count, data) in blocks {
        zigzag(&mut f, *count);
        zigzag(&mut f, data.len() as i64);
        f.extend_from_slice(data);
        f.extend_from_slice(&sync);
    }
    f
}

/// The hostile files: sizes that lie, and real expansion beyond a limit.
fn hostile_files(dir: &Path) -> Vec<(String, PathBuf, Vec<&'static str>)> {
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>, extra: Vec<&'static str>| {
        assert!(bytes.len() <= 1 << 20, "{name} is over 1 MB");
        let path = dir.join(format!("{name}.avro"));
        std::fs::write(&path, bytes).unwrap();
        files.push((name.to_string(), path, extra));
    };
    // snappy: 64 blocks of 11 bytes, each declaring 1 GiB of output.
    let lying = vec![
        0x80, 0x80, 0x80, 0x80, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];
    add(
        "snappy-lying-length",
        container("snappy", &vec![(10, lying); 64]),
        vec![],
    );
    // null codec: a block declaring 2^40 bytes of data, then a few.
    let mut null = container("null", &[]);
    zigzag(&mut null, 1);
    zigzag(&mut null, 1 << 40);
    null.extend_from_slice(&[0; 100]);
    add("null-lying-size", null, vec![]);
    // Real bombs, at the default block size limit (1 GiB) and at 16 MiB: data that does
    // decompress to far more than the file, and is not a valid block. 256 MiB of zeros is one
    // record (0) and trailing bytes.
    let deflate = |data: &[u8]| {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let zstd = |data: &[u8]| zstd::bulk::compress(data, 3).unwrap();
    let mut zeros = vec![0u8; 256 << 20];
    for (limit, extra) in [("", vec![]), ("-16M", vec!["--max-block-size", "16M"])] {
        let name = format!("deflate-bomb{limit}");
        add(
            &name,
            container("deflate", &[(1, deflate(&zeros))]),
            extra.clone(),
        );
        let name = format!("zstd-bomb{limit}");
        add(&name, container("zstandard", &[(1, zstd(&zeros))]), extra);
    }
    let bzip2 = |data: &[u8]| {
        use std::io::Write;
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let xz = |data: &[u8]| {
        use std::io::Write;
        let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    add(
        "bzip2-bomb",
        container("bzip2", &[(1, bzip2(&zeros))]),
        vec![],
    );
    add("xz-bomb", container("xz", &[(1, xz(&zeros))]), vec![]);
    // 256 Mi valid records of one byte each, then an overlong varint: invalid only at the end.
    zeros.extend_from_slice(&[0xff; 11]);
    let count = (256 << 20) + 1;
    add(
        "zstd-bomb-bad-last-record",
        container("zstandard", &[(count, zstd(&zeros))]),
        vec![],
    );
    drop(zeros);
    // One record holding a 768 MiB string, then a stray byte.
    let schema = r#"{"type":"record","name":"R","fields":[{"name":"s","type":"string"}]}"#;
    let len = 768usize << 20;
    let mut string = Vec::with_capacity(len + 8);
    zigzag(&mut string, len as i64);
    string.resize(string.len() + len, b'a');
    string.push(0);
    add(
        "zstd-bomb-one-long-string",
        container_of(schema, "zstandard", &[(1, zstd(&string))]),
        vec![],
    );
    // The same string, whole, with one byte that is not UTF-8 in its middle.
    string.pop();
    let middle = string.len() / 2;
    string[middle] = 0xff;
    add(
        "zstd-bomb-one-long-string-bad-utf8",
        container_of(schema, "zstandard", &[(1, zstd(&string))]),
        vec![],
    );
    files
}

/// Peak resident memory of the binary alone (mapped code touched at start-up; the debug build
/// linking DataFusion is a large binary), in MB: not counted against the input.
fn baseline_mb(bin: &str) -> u64 {
    let baseline = format!(
        r#"
import json, resource, subprocess
subprocess.run([{bin:?}, "--version"], capture_output=True, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"#
    );
    python(&baseline).trim().parse::<u64>().unwrap() / 1024
}

/// Runs `args` (the program first) with `stdin` (a file, or nothing) in a Python process of
/// its own, so that its children's peak RSS is this run's: the exit code, standard output and
/// error, and the peak RSS in MB.
fn measured_run(args: &[String], stdin: Option<&Path>) -> serde_json::Value {
    let program = format!(
        r#"
import json, resource, subprocess, sys
path = json.loads({stdin:?})
stdin = open(path, 'rb') if path else subprocess.DEVNULL
r = subprocess.run(json.loads({args:?}), stdin=stdin, capture_output=True)
print(json.dumps({{"code": r.returncode, "stdout": r.stdout.decode(errors='replace'),
                  "stderr": r.stderr.decode(errors='replace'),
                  "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024}}))
"#,
        stdin = serde_json::to_string(&stdin.map(|p| p.display().to_string())).unwrap(),
        args = serde_json::to_string(args).unwrap(),
    );
    serde_json::from_str(&python(&program)).unwrap()
}

#[test]
fn hostile_inputs_fail_within_64_mb_of_resident_memory() {
    let dir = tempfile::tempdir().unwrap();
    let files = hostile_files(dir.path());
    let bin = env!("CARGO_BIN_EXE_avrow");
    let out = dir.path().join("out.arrow");
    let baseline_mb = baseline_mb(bin);
    for (name, path, extra) in &files {
        for stdin in [false, true] {
            let input = if stdin {
                "-".to_string()
            } else {
                path.display().to_string()
            };
            let mut args = vec![bin.to_string(), "convert".into(), input, "-o".into()];
            args.push(out.display().to_string());
            args.extend(["--force", "--quiet"].map(String::from));
            args.extend(extra.iter().map(|s| s.to_string()));
            let report = measured_run(&args, stdin.then_some(path.as_path()));
            let what = format!("{name} (stdin: {stdin})");
            assert_eq!(report["code"], 1, "{what}: {report}");
            let rss_mb = report["rss_mb"].as_u64().unwrap();
            assert!(
                rss_mb <= 64 || rss_mb <= baseline_mb + 52,
                "{what}: peak RSS {rss_mb} MB (the binary alone: {baseline_mb} MB)"
            );
            let stderr = report["stderr"].as_str().unwrap();
            assert!(stderr.contains("block 0"), "{what}: {stderr}");
        }
    }
}

/// `info` reports a bomb's uncompressed size by counting it as it streams: within the same
/// memory bound as reading it, under the default limit and `--max-block-size`.
#[test]
fn info_counts_decompression_bombs_within_64_mb_of_resident_memory() {
    let dir = tempfile::tempdir().unwrap();
    let files = hostile_files(dir.path());
    let bin = env!("CARGO_BIN_EXE_avrow");
    let baseline_mb = baseline_mb(bin);
    let bombs: Vec<_> = files
        .iter()
        .filter(|(name, ..)| name.contains("-bomb"))
        .collect();
    assert!(bombs.len() >= 6);
    for (name, path, extra) in bombs {
        for stdin in [false, true] {
            let input = if stdin {
                "-".to_string()
            } else {
                path.display().to_string()
            };
            let mut args = vec![bin.to_string(), "info".into(), input, "--json".into()];
            args.extend(extra.iter().map(|s| s.to_string()));
            let report = measured_run(&args, stdin.then_some(path.as_path()));
            let what = format!("{name} (stdin: {stdin})");
            let rss_mb = report["rss_mb"].as_u64().unwrap();
            assert!(
                rss_mb <= 64 || rss_mb <= baseline_mb + 52,
                "{what}: peak RSS {rss_mb} MB (the binary alone: {baseline_mb} MB)"
            );
            if extra.is_empty() {
                // Every bomb here holds at least 256 MiB, all under the 1 GiB default limit.
                assert_eq!(report["code"], 0, "{what}: {report}");
                let info: serde_json::Value =
                    serde_json::from_str(report["stdout"].as_str().unwrap()).unwrap();
                let size = info["uncompressed_size"].as_u64().unwrap();
                assert!(
                    (256 << 20..=(768 << 20) + 16).contains(&size),
                    "{what}: {size}"
                );
            } else {
                assert_eq!(report["code"], 1, "{what}: {report}");
                let stderr = report["stderr"].as_str().unwrap();
                assert!(
                    stderr.contains("block 0") && stderr.contains("16777216"),
                    "{what}: {stderr}"
                );
            }
        }
    }
}
