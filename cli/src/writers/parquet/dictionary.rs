//! Dictionary columns written from their Arrow keys: Avro enums, and any Arrow dictionary of
//! strings or bytes reached through records only (not inside lists or maps).
//!
//! The `parquet` crate writes a dictionary array as it writes strings: it interns every row's
//! value (a hash and a comparison per row) and finds the statistics by comparing every row's
//! value with the page's minimum and maximum. An Arrow dictionary already is one. Here each
//! batch's dictionary is interned once (a table from its keys to the column chunk's ids, kept
//! while batches share the dictionary, as the decoder's do), a row costs a lookup, the pages
//! hold the ids hybrid-encoded (`hybrid.rs`), and the statistics come from the set of ids each
//! page uses. The chunk (dictionary page, v1 data pages, chunk statistics, column and offset
//! indexes, page encoding statistics) is spliced into the row group as the crate splices its
//! own (`SerializedRowGroupWriter::append_column`). Pages end every
//! `data_page_row_count_limit` rows (or earlier at the page size limit), wherever batches end.
//!
//! Taken only where the crate would write a dictionary, without a bloom filter, with v1 data
//! pages and a codec this module has (none, snappy, zstd); other columns stay with the crate.
//! The dictionary never falls back to PLAIN: an enum's symbols are bounded by its schema.

use super::hybrid;
use anyhow::{anyhow, bail, Context, Result};
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Fields};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType, Type as Physical};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, SchemaDescriptor};
use std::collections::HashMap;

/// Where a dictionary leaf column is in a batch: its top-level column, the struct children
/// down to it, whether each field on the way is nullable (the top-level one first, the leaf
/// last), and the column's maximum definition level (the nullable ones).
#[derive(Debug, Clone)]
pub struct KeyPath {
    top: usize,
    children: Vec<usize>,
    nullable: Vec<bool>,
    max_def: u8,
    /// The column's dotted path, for errors.
    name: String,
}

/// The dictionary columns of a schema.
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
                (column.physical_type() == Physical::BYTE_ARRAY
                    && levels
                    && codec
                    && props.dictionary_enabled(col)
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
            let defs = nullable.iter().filter(|n| **n).count();
            out.push(u8::try_from(defs).ok().map(|max_def| KeyPath {
                top,
                children: children.clone(),
                nullable: nullable.clone(),
                max_def,
                name: String::new(),
            }));
        }
        other => out.extend(std::iter::repeat_n(None, leaf_count(other))),
    }
    nullable.pop();
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

/// One batch of a dictionary column: the leaf's dictionary array and, when the column has
/// definition levels, every row's.
pub struct KeyLeaf {
    dict: ArrayRef,
    def: Option<Vec<u8>>,
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
        if node.as_any_dictionary_opt().is_none() {
            bail!("a dictionary column is not a dictionary array");
        }
        Ok(KeyLeaf { dict: node, def })
    }
}

/// The values of a column chunk's dictionary, in id order, and their ids.
#[derive(Default)]
struct Dictionary {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    ids: HashMap<Box<[u8]>, u32>,
}

impl Dictionary {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, id: u32) -> &[u8] {
        let id = id as usize;
        let start = if id == 0 { 0 } else { self.ends[id - 1] };
        &self.bytes[start..self.ends[id]]
    }

    fn intern(&mut self, value: &[u8]) -> Result<u32> {
        if let Some(&id) = self.ids.get(value) {
            return Ok(id);
        }
        let id = u32::try_from(self.ends.len()).context("a dictionary of 4 billion values")?;
        self.bytes.extend_from_slice(value);
        self.ends.push(self.bytes.len());
        self.ids.insert(value.into(), id);
        Ok(id)
    }
}

/// The page codecs this module has.
enum Codec {
    None,
    Snappy(Box<snap::raw::Encoder>),
    Zstd(zstd::bulk::Compressor<'static>),
}

impl Codec {
    fn new(compression: Compression) -> Result<Codec> {
        Ok(match compression {
            Compression::UNCOMPRESSED => Codec::None,
            Compression::SNAPPY => Codec::Snappy(Box::new(snap::raw::Encoder::new())),
            Compression::ZSTD(level) => {
                Codec::Zstd(zstd::bulk::Compressor::new(level.compression_level())?)
            }
            other => bail!("{other} pages of dictionary columns are the parquet crate's"),
        })
    }

    fn compress(&mut self, data: &[u8]) -> Result<Bytes> {
        Ok(match self {
            Codec::None => Bytes::copy_from_slice(data),
            Codec::Snappy(encoder) => encoder.compress_vec(data)?.into(),
            Codec::Zstd(compressor) => compressor.compress(data)?.into(),
        })
    }
}

/// A key whose value has no id yet.
const UNASSIGNED: u32 = u32::MAX;

/// A batch dictionary's values and the ids here of its keys. Ids follow the order in which
/// values first appear in the rows, as the `parquet` crate's do: the file does not depend on
/// how the rows were cut into batches, nor on values of the batches' dictionaries that no row
/// uses.
struct Remap {
    values: ArrayRef,
    /// Per key, its value's id, or [`UNASSIGNED`] before the key's first use.
    ids: Vec<u32>,
}

impl Remap {
    /// The id of key `k`, its value interned in `dictionary` on its first use.
    #[inline]
    fn id(&mut self, k: usize, dictionary: &mut Dictionary) -> Result<u32> {
        match self.ids.get(k) {
            Some(&id) if id != UNASSIGNED => Ok(id),
            Some(_) => self.first_use(k, dictionary),
            None => bail!("a key ({k}) outside its dictionary of {}", self.ids.len()),
        }
    }

    #[cold]
    fn first_use(&mut self, k: usize, dictionary: &mut Dictionary) -> Result<u32> {
        let values = &self.values;
        let value = match values.data_type() {
            DataType::Utf8 => values.as_string::<i32>().value(k).as_bytes(),
            DataType::LargeUtf8 => values.as_string::<i64>().value(k).as_bytes(),
            DataType::Binary => values.as_binary::<i32>().value(k),
            DataType::LargeBinary => values.as_binary::<i64>().value(k),
            other => bail!("a dictionary of {other} is not written here"),
        };
        let id = dictionary.intern(value)?;
        self.ids[k] = id;
        Ok(id)
    }
}

/// The page being filled.
#[derive(Default)]
struct PageBuf {
    /// Definition levels of its rows (when the column has them).
    def: Vec<u8>,
    /// Ids of its values (rows that are not null).
    ids: Vec<u32>,
    rows: usize,
    /// The ids it uses, one bit each.
    used: Vec<u64>,
}

impl PageBuf {
    /// Appends a value's id.
    #[inline]
    fn push(&mut self, id: u32) {
        self.ids.push(id);
        let word = id as usize >> 6;
        if word >= self.used.len() {
            self.used.resize(word + 1, 0);
        }
        self.used[word] |= 1 << (id & 63);
    }
}

/// A data page written, with what its statistics need.
struct DataPage {
    page: CompressedPage,
    rows: usize,
    nulls: usize,
    /// The ids of its smallest and largest value; `None` if all are null.
    range: Option<(u32, u32)>,
}

/// Writes one dictionary column of one row group.
pub struct KeyWriter {
    descr: ColumnDescPtr,
    max_def: u8,
    compression: Compression,
    codec: Codec,
    statistics: EnabledStatistics,
    offset_index: bool,
    /// Longest value the column index (and the chunk statistics) hold, if limited.
    index_truncate: Option<usize>,
    statistics_truncate: Option<usize>,
    page_rows: usize,
    page_bytes: usize,
    dictionary: Dictionary,
    /// The last batch's dictionary and the ids of its keys here.
    last: Option<Remap>,
    page: PageBuf,
    pages: Vec<DataPage>,
    scratch: Vec<u8>,
}

impl KeyWriter {
    /// A writer for the column `descr` (at `path` in the batches), with `props`.
    ///
    /// # Errors
    /// The column's codec is not one this module has.
    pub fn new(descr: ColumnDescPtr, path: &KeyPath, props: &WriterProperties) -> Result<Self> {
        let col = descr.path();
        let compression = props.compression(col);
        Ok(KeyWriter {
            max_def: path.max_def,
            compression,
            codec: Codec::new(compression)?,
            statistics: props.statistics_enabled(col),
            offset_index: !props.offset_index_disabled(),
            index_truncate: props.column_index_truncate_length(),
            statistics_truncate: props.statistics_truncate_length(),
            page_rows: props
                .data_page_row_count_limit()
                .clamp(1, i32::MAX as usize),
            page_bytes: props.column_data_page_size_limit(col).max(1),
            descr,
            dictionary: Dictionary::default(),
            last: None,
            page: PageBuf::default(),
            pages: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The ids here of the keys of the dictionary `values` so far: the last batch's if it
    /// has the same values, else none yet ([`UNASSIGNED`]).
    fn remap(&mut self, values: &ArrayRef) -> Remap {
        if let Some(last) = self.last.take() {
            if last.values.to_data().ptr_eq(&values.to_data()) || &last.values == values {
                return last;
            }
        }
        Remap {
            values: values.clone(),
            ids: vec![UNASSIGNED; values.len()],
        }
    }

    /// Rows that make a page (at least one): the row limit, or fewer ids than fill the page
    /// size limit at the dictionary's width.
    fn capacity(&self) -> usize {
        let width = hybrid::bits_for(self.dictionary.len().saturating_sub(1) as u64).max(1);
        let by_bytes = self.page_bytes.saturating_mul(8) / usize::from(width);
        self.page_rows.min(by_bytes).max(1)
    }

    /// Encodes one batch of the column.
    ///
    /// # Errors
    /// A key outside its dictionary, or compressing a page fails.
    pub fn write(&mut self, leaf: &KeyLeaf) -> Result<()> {
        let dict = leaf
            .dict
            .as_any_dictionary_opt()
            .ok_or_else(|| anyhow!("a dictionary column is not a dictionary array"))?;
        let mut remap = self.remap(dict.values());
        // An empty dictionary (an enum without symbols, or a union branch no row of the batch
        // takes) can only be under null rows: a present one finds no id and is an error.
        let keys = if remap.values.is_empty() {
            vec![0; dict.keys().len()]
        } else {
            dict.normalized_keys()
        };
        let mut i = 0;
        while i < keys.len() {
            if self.page.rows >= self.capacity() {
                self.flush_page()?;
            }
            let take = (self.capacity() - self.page.rows).min(keys.len() - i);
            let (page, dictionary) = (&mut self.page, &mut self.dictionary);
            match &leaf.def {
                None => {
                    for &k in &keys[i..i + take] {
                        page.push(remap.id(k, dictionary)?);
                    }
                }
                Some(def) => {
                    page.def.extend_from_slice(&def[i..i + take]);
                    for (&d, &k) in def[i..i + take].iter().zip(&keys[i..i + take]) {
                        if d == self.max_def {
                            page.push(remap.id(k, dictionary)?);
                        }
                    }
                }
            }
            page.rows += take;
            i += take;
            if self.page.rows >= self.capacity() {
                self.flush_page()?;
            }
        }
        self.last = Some(remap);
        Ok(())
    }

    /// The ids of the smallest and largest value the page in progress uses (none if it has
    /// no values); clears its set of ids.
    fn take_range(&mut self) -> Option<(u32, u32)> {
        let dictionary = &self.dictionary;
        let mut range: Option<(u32, u32)> = None;
        for (w, word) in self.page.used.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let id = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let value = dictionary.get(id);
                range = Some(match range {
                    None => (id, id),
                    Some((lo, hi)) => (
                        if value < dictionary.get(lo) { id } else { lo },
                        if value > dictionary.get(hi) { id } else { hi },
                    ),
                });
            }
        }
        range
    }

    /// Encodes and compresses the page in progress.
    fn flush_page(&mut self) -> Result<()> {
        let rows = self.page.rows;
        if rows == 0 {
            return Ok(());
        }
        let width = hybrid::bits_for(self.dictionary.len().saturating_sub(1) as u64).max(1);
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        if self.max_def > 0 {
            buf.extend_from_slice(&[0; 4]);
            hybrid::encode(
                &self.page.def,
                hybrid::bits_for(self.max_def.into()),
                &mut buf,
            );
            let len = u32::try_from(buf.len() - 4).context("definition levels over 4 GiB")?;
            buf[..4].copy_from_slice(&len.to_le_bytes());
        }
        buf.push(width);
        hybrid::encode(&self.page.ids, width, &mut buf);
        let data = self.codec.compress(&buf)?;
        let page = CompressedPage::new(
            Page::DataPage {
                buf: data,
                num_values: rows as u32,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            buf.len(),
        );
        let nulls = rows - self.page.ids.len();
        let range = self.take_range();
        self.pages.push(DataPage {
            page,
            rows,
            nulls,
            range,
        });
        self.page.def.clear();
        self.page.ids.clear();
        self.page.rows = 0;
        self.scratch = buf;
        Ok(())
    }

    /// Writes the column chunk: its bytes (offsets from 0) and what the row group needs.
    ///
    /// # Errors
    /// Compressing or writing a page fails, or the chunk has no rows.
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult)> {
        self.flush_page()?;
        if self.pages.is_empty() {
            bail!("a dictionary column chunk without rows");
        }
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let mut plain = Vec::with_capacity(self.dictionary.bytes.len() + 4 * self.dictionary.len());
        for id in 0..self.dictionary.len() as u32 {
            let value = self.dictionary.get(id);
            plain.extend_from_slice(&(value.len() as u32).to_le_bytes());
            plain.extend_from_slice(value);
        }
        if i32::try_from(plain.len()).is_err() {
            bail!("column {}: a dictionary page over 2 GiB", self.descr.path());
        }
        let dictionary_page = CompressedPage::new(
            Page::DictionaryPage {
                buf: self.codec.compress(&plain)?,
                num_values: self.dictionary.len() as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            plain.len(),
        );
        let spec = writer.write_page(dictionary_page)?;
        let dictionary_offset = spec.offset as i64;
        let mut compressed = spec.compressed_size as i64;
        let mut uncompressed = spec.uncompressed_size as i64;
        let mut offsets = OffsetIndexBuilder::new();
        let mut index = ColumnIndexBuilder::new(Physical::BYTE_ARRAY);
        let too_long = |value: &[u8], limit: Option<usize>| limit.is_some_and(|l| value.len() > l);
        let (mut values, mut nulls, mut range, mut first) = (0u64, 0u64, None, None);
        let pages = std::mem::take(&mut self.pages);
        let data_pages = pages.len();
        for page in pages {
            let spec = writer.write_page(page.page)?;
            first.get_or_insert(spec.offset as i64);
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            offsets.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
            offsets.append_row_count(page.rows as i64);
            values += page.rows as u64;
            nulls += page.nulls as u64;
            match page.range {
                None => index.append(true, Vec::new(), Vec::new(), page.nulls as i64),
                Some((lo, hi)) => {
                    let (min, max) = (self.dictionary.get(lo), self.dictionary.get(hi));
                    if too_long(min, self.index_truncate) || too_long(max, self.index_truncate) {
                        // Shortened bounds are not worth their code here: no index.
                        index.to_invalid();
                    }
                    index.append(false, min.to_vec(), max.to_vec(), page.nulls as i64);
                    range = Some(match range {
                        None => (lo, hi),
                        Some((l, h)) => (
                            if min < self.dictionary.get(l) { lo } else { l },
                            if max > self.dictionary.get(h) { hi } else { h },
                        ),
                    });
                }
            }
        }
        writer.close()?;
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.compression)
            .set_encodings(vec![
                Encoding::PLAIN,
                Encoding::RLE,
                Encoding::RLE_DICTIONARY,
            ])
            .set_num_values(values as i64)
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_data_page_offset(first.unwrap_or(dictionary_offset))
            .set_dictionary_page_offset(Some(dictionary_offset))
            .set_page_encoding_stats(vec![
                PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                },
                PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::RLE_DICTIONARY,
                    count: data_pages as i32,
                },
            ]);
        if self.statistics != EnabledStatistics::None {
            let bound = |id: u32| {
                let value = self.dictionary.get(id);
                (!too_long(value, self.statistics_truncate))
                    .then(|| ByteArray::from(value.to_vec()))
            };
            let (min, max) = match range {
                Some((lo, hi)) => (bound(lo), bound(hi)),
                None => (None, None),
            };
            metadata =
                metadata.set_statistics(Statistics::byte_array(min, max, None, Some(nulls), false));
        }
        let column_index = match self.statistics {
            EnabledStatistics::Page if index.valid() => Some(index.build()?),
            _ => None,
        };
        let bytes_written = sink.bytes_written() as u64;
        let buffer = sink.into_inner()?;
        let close = ColumnCloseResult {
            bytes_written,
            rows_written: values,
            metadata: metadata.build()?,
            bloom_filter: None,
            column_index,
            offset_index: self.offset_index.then(|| offsets.build()),
        };
        Ok((Bytes::from(buffer), close))
    }
}
