//! Helpers shared by the topic modules.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use arrow::util::pretty::pretty_format_batches;
use avrow_datafusion::{AvrowReadOptions, AvrowSource};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::DataFusionError;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};

/// A file of `datasets/samples/`.
pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../datasets/samples")
        .join(name)
}

/// The real files from other implementations the reader's tests hold.
pub fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../readers/tests/data/fixtures");
    let mut out = Vec::new();
    for sub in ["apache", "spark"] {
        for entry in std::fs::read_dir(root.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "avro") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A session with `partitions` target partitions, files split at any size.
pub fn config(partitions: usize) -> SessionConfig {
    SessionConfig::new()
        .with_target_partitions(partitions)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 0)
}

/// A session with avrow as its `avro` format.
pub fn avrow_ctx(partitions: usize) -> SessionContext {
    let ctx = SessionContext::new_with_config(config(partitions));
    avrow_datafusion::register(&ctx).unwrap();
    ctx
}

/// Run `sql` and return the batches.
pub async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Run `sql`, expecting an error; its message.
pub async fn query_err(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.collect().await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sql}: no error"),
        },
    }
}

/// Batches as a table, for comparing answers.
pub fn text(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).unwrap().to_string()
}

/// `CREATE EXTERNAL TABLE name STORED AS AVRO LOCATION 'path'`.
pub async fn create(ctx: &SessionContext, name: &str, path: &Path) {
    let sql = format!(
        "CREATE EXTERNAL TABLE {name} STORED AS AVRO LOCATION '{}'",
        path.display()
    );
    query(ctx, &sql).await;
}

/// The sample `order.avro` rewritten with blocks of about `block` bytes (many sync markers to
/// split at).
pub fn small_blocks(dir: &Path, block: usize) -> PathBuf {
    let path = dir.join(format!("order-{block}.avro"));
    rewrite(&sample("order.avro"), &path, block, avrow::Codec::Deflate);
    path
}

/// The file `from` written again by avrow to `to`, in blocks of about `block` bytes under
/// `codec`.
pub fn rewrite(from: &Path, to: &Path, block: usize, codec: avrow::Codec) {
    let reader = avrow::ReaderBuilder::new().open(from).unwrap();
    let mut writer = avrow::WriterBuilder::new(reader.schema())
        .with_block_size(block)
        .with_codec(codec)
        .build(std::fs::File::create(to).unwrap())
        .unwrap();
    for batch in reader {
        writer.write(&batch.unwrap()).unwrap();
    }
    writer.finish().unwrap();
}

/// Read `path` through avrow's `FileSource` with one partition per range, in order.
pub async fn read_ranges(path: &Path, ranges: &[(u64, u64)]) -> Vec<RecordBatch> {
    let ctx = SessionContext::new();
    let schema = avrow::ReaderBuilder::new().open(path).unwrap().schema();
    let size = std::fs::metadata(path).unwrap().len();
    let source = Arc::new(AvrowSource::new(
        TableSchema::from(schema),
        AvrowReadOptions::default(),
    ));
    let location = path.canonicalize().unwrap().display().to_string();
    let groups = ranges
        .iter()
        .map(|&(start, end)| {
            FileGroup::new(vec![
                PartitionedFile::new(location.clone(), size).with_range(start as i64, end as i64)
            ])
        })
        .collect();
    let config = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), source)
        .with_file_groups(groups)
        .build();
    let plan = DataSourceExec::from_data_source(config);
    let mut out = Vec::new();
    for partition in 0..ranges.len() {
        let stream = plan.execute(partition, ctx.task_ctx()).unwrap();
        out.extend(
            datafusion::physical_plan::common::collect(stream)
                .await
                .unwrap(),
        );
    }
    out
}

/// `dir/lying.avro`: three `long` records in one block whose header declares 5 (a count
/// its 3 bytes of data cannot hold).
pub fn lying_count_file(dir: &Path) -> PathBuf {
    use arrow::array::{ArrayRef, Int64Array};
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)])
            .unwrap();
    let mut w = avrow::WriterBuilder::new(batch.schema())
        .build(Vec::new())
        .unwrap();
    w.write(&batch).unwrap();
    let mut file = w.finish().unwrap();
    let start = avrow::BlockReader::from_bytes(file.clone())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .offset() as usize;
    assert_eq!(file[start], 6, "a count of 3, one byte");
    file[start] = 10; // 5 records in 3 bytes
    let path = dir.join("lying.avro");
    std::fs::write(&path, &file).unwrap();
    path
}

/// `count` files of random schemas written by fastavro (`python/tests/random_avro.py`: every
/// type, nested, seeds from 1000), in `dir`.
pub fn fastavro_files(dir: &Path, count: usize) -> Vec<PathBuf> {
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/tests");
    // The paths as arguments, not in the program's text: no quoting to get wrong.
    let program = format!(
        r#"
import random, sys
sys.path.insert(0, sys.argv[1])
from random_avro import case, fastavro_file
for seed in range({count}):
    schema, records = case(1000 + seed)
    rng = random.Random(seed)
    data = fastavro_file(schema, records, rng.choice(["null", "deflate"]), 4000)
    open(sys.argv[2] + "/r%d.avro" % seed, "wb").write(data)
"#
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&program)
        .arg(&generator)
        .arg(dir)
        .output()
        .expect("python3 must be installed, with fastavro (scripts/test installs it)");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (0..count).map(|i| dir.join(format!("r{i}.avro"))).collect()
}

/// Every row of `batches` as its cells' text (nulls as `NULL`).
pub fn rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, DataFusionError> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            out.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Ok(out)
}

/// A map column of string keys: `offsets` cut `keys` and `values` (an array of as many
/// entries) into rows.
pub fn map_of(
    values: arrow::array::ArrayRef,
    keys: Vec<&str>,
    offsets: Vec<i32>,
) -> arrow::array::ArrayRef {
    use arrow::array::{Array, ArrayRef, MapArray, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field, Fields};
    let entries = StructArray::new(
        Fields::from(vec![
            Field::new("keys", DataType::Utf8, false),
            Field::new("values", values.data_type().clone(), false),
        ]),
        vec![Arc::new(StringArray::from(keys)) as ArrayRef, values],
        None,
    );
    Arc::new(MapArray::new(
        Arc::new(Field::new("entries", entries.data_type().clone(), false)),
        arrow::buffer::OffsetBuffer::new(offsets.into()),
        entries,
        None,
        false,
    ))
}
