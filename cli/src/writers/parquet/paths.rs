//! Which leaf columns the byte-array writer (`dictionary.rs`) takes from the `parquet` crate,
//! where each is in a batch (its path through records, the nullable fields on the way), and
//! one batch of such a column: its array and definition levels, computed here from the
//! records' validity instead of the crate's level builder.

use anyhow::{anyhow, bail, Result};
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Fields};
use parquet::basic::{Compression, Encoding, Type as Physical};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::SchemaDescriptor;

/// Where a leaf column written here is in a batch: its top-level column, the struct children
/// down to it, whether each field on the way is nullable (the top-level one first, the leaf
/// last), and the column's maximum definition level (the nullable ones).
#[derive(Debug, Clone)]
pub struct KeyPath {
    top: usize,
    children: Vec<usize>,
    nullable: Vec<bool>,
    pub(super) max_def: u8,
    /// The column's dotted path, for errors.
    name: String,
}

/// The columns of a schema written here.
#[derive(Debug, Clone)]
pub struct KeyColumns {
    /// Per Parquet leaf column, in order: its path if this module writes it.
    pub paths: Vec<Option<KeyPath>>,
    /// Per top-level field: its leaf columns are all written here.
    pub whole: Vec<bool>,
}

impl KeyColumns {
    /// The dictionary columns among the leaf columns of `descriptor`, the Parquet schema of
    /// `fields`, written with `props`.
    pub fn new(fields: &Fields, descriptor: &SchemaDescriptor, props: &WriterProperties) -> Self {
        let mut paths = Vec::new();
        let mut counts = Vec::with_capacity(fields.len());
        for (top, field) in fields.iter().enumerate() {
            let start = paths.len();
            walk(field, top, &mut Vec::new(), &mut Vec::new(), &mut paths);
            counts.push(paths.len() - start);
        }
        if paths.len() != descriptor.num_columns()
            || props.writer_version() != WriterVersion::PARQUET_1_0
        {
            return KeyColumns {
                paths: vec![None; descriptor.num_columns()],
                whole: vec![false; fields.len()],
            };
        }
        let paths: Vec<_> = paths
            .into_iter()
            .zip(descriptor.columns())
            .map(|(path, column)| {
                let path = path?;
                let col = column.path();
                let codec = matches!(
                    props.compression(col),
                    Compression::UNCOMPRESSED | Compression::SNAPPY | Compression::ZSTD(_)
                );
                let levels = column.max_rep_level() == 0
                    && column.max_def_level() == i16::from(path.max_def);
                let plain = matches!(props.encoding(col), None | Some(Encoding::PLAIN));
                (column.physical_type() == Physical::BYTE_ARRAY
                    && levels
                    && codec
                    && plain
                    && props.bloom_filter_properties(col).is_none())
                .then(|| KeyPath {
                    name: col.string(),
                    ..path
                })
            })
            .collect();
        let mut start = 0;
        let whole = counts
            .iter()
            .map(|&count| {
                let leaves = &paths[start..start + count];
                start += count;
                count > 0 && leaves.iter().all(Option::is_some)
            })
            .collect();
        KeyColumns { paths, whole }
    }
}

/// Appends the paths of the leaf columns of `field` (None for those not written here).
fn walk(
    field: &Field,
    top: usize,
    children: &mut Vec<usize>,
    nullable: &mut Vec<bool>,
    out: &mut Vec<Option<KeyPath>>,
) {
    nullable.push(field.is_nullable());
    match field.data_type() {
        DataType::Struct(fields) => {
            for (i, child) in fields.iter().enumerate() {
                children.push(i);
                walk(child, top, children, nullable, out);
                children.pop();
            }
        }
        DataType::Dictionary(key, value)
            if key.is_dictionary_key_type()
                && matches!(
                    value.as_ref(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
                ) =>
        {
            out.push(key_path(top, children, nullable));
        }
        data_type if is_bytes(data_type) => out.push(key_path(top, children, nullable)),
        other => out.extend(std::iter::repeat_n(None, leaf_count(other))),
    }
    nullable.pop();
}

/// Whether columns of `data_type` (not a dictionary) are written here.
fn is_bytes(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

/// The path of a leaf column under the fields `nullable` says, if its levels fit a byte.
fn key_path(top: usize, children: &[usize], nullable: &[bool]) -> Option<KeyPath> {
    let defs = nullable.iter().filter(|n| **n).count();
    u8::try_from(defs).ok().map(|max_def| KeyPath {
        top,
        children: children.to_vec(),
        nullable: nullable.to_vec(),
        max_def,
        name: String::new(),
    })
}

/// The Parquet leaf columns of a field of type `data_type`.
fn leaf_count(data_type: &DataType) -> usize {
    match data_type {
        DataType::Struct(fields) => fields.iter().map(|f| leaf_count(f.data_type())).sum(),
        DataType::List(item)
        | DataType::LargeList(item)
        | DataType::FixedSizeList(item, _)
        | DataType::ListView(item)
        | DataType::LargeListView(item)
        | DataType::Map(item, _) => leaf_count(item.data_type()),
        _ => 1,
    }
}

/// One batch of a column written here: the leaf's array (a dictionary, strings or bytes) and,
/// when the column has definition levels, every row's.
pub struct KeyLeaf {
    pub(super) values: ArrayRef,
    pub(super) def: Option<Vec<u8>>,
}

impl KeyPath {
    /// The column in `batch`.
    ///
    /// # Errors
    /// A field that is not nullable holds a null under present parents.
    pub fn leaf(&self, batch: &RecordBatch) -> Result<KeyLeaf> {
        let rows = batch.num_rows();
        let mut node = batch.column(self.top).clone();
        let mut def = (self.max_def > 0).then(|| vec![0u8; rows]);
        // The nullable fields above `node`: a row is present at `node` if its level is this.
        let mut above = 0u8;
        for (depth, &nullable) in self.nullable.iter().enumerate() {
            if depth > 0 {
                let parent = node
                    .as_struct_opt()
                    .ok_or_else(|| anyhow!("a record column is not a struct array"))?;
                node = parent.column(self.children[depth - 1]).clone();
            }
            let nulls = node.logical_nulls();
            match (&mut def, nulls) {
                (Some(def), nulls) if nullable => {
                    match nulls {
                        None => def
                            .iter_mut()
                            .filter(|d| **d == above)
                            .for_each(|d| *d += 1),
                        Some(nulls) => {
                            for (d, valid) in def.iter_mut().zip(nulls.inner().iter()) {
                                *d += u8::from(*d == above && valid);
                            }
                        }
                    }
                    above += 1;
                }
                (def, Some(nulls)) if !nullable => {
                    let present = |i: usize| def.as_ref().is_none_or(|d| d[i] == above);
                    if let Some(i) = (0..rows).find(|&i| nulls.is_null(i) && present(i)) {
                        bail!(
                            "column {}, row {i}: a null in a field that is not nullable",
                            self.name
                        );
                    }
                }
                _ => {}
            }
        }
        let expected = match node.data_type() {
            DataType::Dictionary(..) => node.as_any_dictionary_opt().is_some(),
            data_type => is_bytes(data_type),
        };
        if !expected {
            bail!(
                "column {}: an array of {} where its schema has another type",
                self.name,
                node.data_type()
            );
        }
        Ok(KeyLeaf { values: node, def })
    }
}
