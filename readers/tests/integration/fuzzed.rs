//! Replays the fuzzing corpora committed under `fuzz/`: every file of `fuzz/regressions/<target>/`
//! (minimised findings) and `fuzz/seeds/<target>/` through the same logic as the fuzz target
//! (`fuzz/src/lib.rs`, included here), and the container files also through the ordinary
//! reader options of [`harness`](crate::harness). Each input must finish without a panic, within
//! a time limit, and without a huge allocation; errors are fine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::alloc_guard;
use crate::harness::{panic_message, read_avrow_caught, with_timeout, Opts, Src};

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod targets;

/// Generous: the slowest of these inputs takes milliseconds.
const LIMIT: Duration = Duration::from_secs(20);

/// Findings not fixed yet: `(target, file name)`, each also with an ignored test below.
const OPEN: &[(&str, &str)] = &[];

/// Container inputs that legitimately hold more rows than the harness keeps
/// ([`crate::harness::MAX_ROWS`]: it holds every batch to compare them): millions of records
/// of zero bytes. The fuzz target's own replay (`container_inputs`, which stops a reader after
/// 16 384 batches) and `hostile::blocks_of_zero_byte_records_share_one_batch` cover them.
const MANY_ROWS: &[&str] = &[
    "zero-byte-records-many-small-batches.avro",
    "zero-byte-records-after-a-partial-batch.avro",
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted (none if the directory does not exist).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("read_dir entry").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "py" && e != "md"))
        .collect();
    files.sort();
    files
}

/// Run `f` on `data` (no panic, bounded time, no huge allocation); returns the failure.
fn replay(what: &str, data: Vec<u8>, f: fn(&[u8])) -> Result<(), String> {
    let (huge_before, _) = alloc_guard::huge();
    let result = with_timeout(what, LIMIT, move || {
        std::panic::catch_unwind(|| f(&data)).map_err(|p| panic_message(&p))
    });
    let (huge_after, largest) = alloc_guard::huge();
    if huge_after != huge_before {
        return Err(format!("a huge allocation ({largest} bytes) was requested"));
    }
    result.map_err(|p| format!("panicked: {p}"))
}

/// Replay every seed and regression of `target`, except the open findings; fail listing all
/// the inputs that failed.
fn replay_all(target: &str, f: fn(&[u8])) -> usize {
    let mut failures = Vec::new();
    let mut n = 0;
    for kind in ["seeds", "regressions"] {
        for path in inputs(kind, target) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if OPEN.contains(&(target, name.as_str())) {
                continue;
            }
            let what = format!("{kind}/{target}/{name}");
            let data = std::fs::read(&path).expect("read input");
            n += 1;
            if let Err(e) = replay(&what, data, f) {
                failures.push(format!("{what}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    n
}

#[test]
fn container_inputs() {
    let n = replay_all("container", targets::container);
    assert!(n >= 20, "only {n} container inputs found under fuzz/");
}

/// The container inputs also through the harness's reader, with other options than the fuzz
/// target picked, from bytes and from a trickling stream.
#[test]
fn container_inputs_through_the_harness() {
    for kind in ["seeds", "regressions"] {
        for path in inputs(kind, "container") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if OPEN.contains(&("container", name.as_str())) || MANY_ROWS.contains(&name.as_str()) {
                continue;
            }
            let data = std::fs::read(&path).expect("read input");
            for (src, batch_size, threads) in [(Src::Bytes, 3, 2), (Src::Stream, 1024, 1)] {
                let opts = Opts {
                    src,
                    batch_size,
                    threads: Some(threads),
                    ..Opts::default()
                };
                let what = format!("{kind}/container/{name} ({src:?})");
                let (huge_before, _) = alloc_guard::huge();
                let d = data.clone();
                let r = with_timeout(&what, LIMIT, move || read_avrow_caught(&d, &opts));
                if let Err(p) = r {
                    panic!("{what}: avrow panicked: {p}");
                }
                let (huge_after, largest) = alloc_guard::huge();
                assert_eq!(
                    huge_after, huge_before,
                    "{what}: a huge allocation ({largest} bytes) was requested"
                );
            }
        }
    }
}

/// The seed files of the real fixtures decode without error (the fuzz target would not say).
#[test]
fn container_seeds_decode() {
    for path in inputs("seeds", "container") {
        let data = std::fs::read(&path).expect("read input");
        let what = path.display().to_string();
        match read_avrow_caught(&data, &Opts::batch(3)) {
            Ok(Ok(d)) => assert!(d.num_rows() > 0, "{what}: no rows"),
            Ok(Err(e)) => panic!("{what}: {e}"),
            Err(p) => panic!("{what}: panicked: {p}"),
        }
    }
}

#[test]
fn schema_inputs() {
    let n = replay_all("schema", targets::schema);
    assert!(n >= 10, "only {n} schema inputs found under fuzz/");
}

#[test]
fn decode_inputs() {
    let n = replay_all("decode", targets::decode);
    assert!(n >= 10, "only {n} decode inputs found under fuzz/");
}

#[test]
fn resolve_inputs() {
    let n = replay_all("resolve", targets::resolve);
    assert!(n >= 10, "only {n} resolve inputs found under fuzz/");
}

/// The seed schemas of the decode target all parse and compile (the target expects it).
#[test]
fn decode_seed_schemas_compile() {
    for (i, text) in targets::SCHEMAS.iter().enumerate() {
        let schema = avrow::Schema::parse(text).unwrap_or_else(|e| panic!("schema {i}: {e}"));
        avrow::avrow_engine::DecodePlan::new(&schema, &Default::default())
            .unwrap_or_else(|e| panic!("schema {i}: {e}"));
    }
}

/// Arrow fields in `fields`, counting every nested child.
fn count_fields(fields: &arrow_schema::Fields) -> usize {
    use arrow_schema::DataType;
    fields
        .iter()
        .map(|f| {
            1 + match f.data_type() {
                DataType::Struct(children) => count_fields(children),
                DataType::List(item) | DataType::Map(item, _) => {
                    count_fields(&arrow_schema::Fields::from(vec![item.clone()]))
                }
                DataType::Union(branches, _) => {
                    count_fields(&branches.iter().map(|(_, f)| f.clone()).collect())
                }
                _ => 0,
            }
        })
        .sum()
}

/// Finding 1 (`fuzz/regressions/schema/recursive-two-edges-exponential-plan.avsc`): a record
/// that refers to itself twice (array items and map values) is unrolled 2^16-fold at the default
/// recursion depth, because the depth is counted per path: this 194-byte schema compiled to
/// 458 745 Arrow fields under the old plan cap of 2^20 nodes. With the cap at 2^16 it is
/// refused at once.
#[test]
fn finding_1_two_recursive_edges_stay_small() {
    let text = std::fs::read_to_string(
        fuzz_dir().join("regressions/schema/recursive-two-edges-exponential-plan.avsc"),
    )
    .unwrap();
    let schema = avrow::Schema::parse(&text).unwrap();
    let start = std::time::Instant::now();
    let plan = avrow::avrow_engine::DecodePlan::new(&schema, &Default::default());
    let took = start.elapsed();
    if let Ok(plan) = plan {
        let n = count_fields(plan.arrow_schema().fields());
        assert!(
            n <= 100_000,
            "a {}-byte schema compiled to {n} Arrow fields in {took:?}",
            text.len()
        );
    }
}

/// Finding 1 through a file (`fuzz/regressions/container/recursive-two-edges-exponential-plan.avro`,
/// 268 bytes, one record): opening it and reading the row took 12 s (4 s to open) and 230 MB on
/// this VM in the test profile before the plan cap was lowered. It must fail fast or read fast.
#[test]
fn finding_1_file_reads_in_bounded_time() {
    let path = fuzz_dir().join("regressions/container/recursive-two-edges-exponential-plan.avro");
    let data = std::fs::read(path).unwrap();
    let start = std::time::Instant::now();
    let r = with_timeout("finding 1 file", LIMIT, move || {
        read_avrow_caught(&data, &Opts::default())
    });
    assert!(r.is_ok(), "panicked: {r:?}", r = r.err());
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "reading a 268-byte file took {took:?}"
    );
}
