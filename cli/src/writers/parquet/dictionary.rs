//! Byte-array columns written by avrow instead of the `parquet` crate, reached through records
//! only (not inside lists or maps): Arrow dictionaries of strings or bytes (Avro enums), and
//! string and binary columns, with a dictionary where the writer's plan chose one
//! (`encoding.rs`: low-cardinality strings such as a change record's operation, source table
//! or status) and PLAIN pages where it did not.
//!
//! The `parquet` crate writes such a column by interning every row's value in a general
//! interner and finding the statistics by comparing every row's value with the page's
//! minimum and maximum, with page buffers that grow (fresh memory, slow to touch on virtual
//! machines) per page. Here a dictionary array's dictionary is interned once per batch (a
//! table from its keys to the column chunk's ids, kept while batches share the dictionary, as
//! the decoder's do) and a row costs a lookup; a string row costs one hash-table probe
//! (`interner.rs`), none when it repeats the row before; the pages hold the ids hybrid-encoded
//! (`hybrid.rs`) in buffers of the encoding thread's, reused by every column it encodes, and
//! compressed pages are held at their size; the statistics come from the set of
//! ids each page uses. As the crate does, a dictionary whose page outgrows the dictionary page
//! size limit stops growing: the pages so far keep it, the rest of the chunk is PLAIN (bounds
//! then found value by value). Bounds longer than the truncation lengths are shortened as the
//! crate shortens them (`bounds.rs`). The chunk (dictionary page, v1 data pages, chunk
//! statistics, column and offset indexes, page encoding statistics) is spliced into the row
//! group as the crate splices its own (`SerializedRowGroupWriter::append_column`). Pages end
//! every `data_page_row_count_limit` rows (or earlier at the page size limit), wherever
//! batches end.
//!
//! A column without a dictionary is PLAIN from its start, its values gathered in a buffer of
//! the thread's between pages (the crate grows fresh ones for every page) and its bounds found
//! value by value, as the crate finds them. Taken only without a bloom filter, with v1 data pages,
//! PLAIN as the encoding without a dictionary and a codec this module has (none, snappy,
//! zstd); other columns stay with the crate.

use super::bounds;
use super::hybrid;
use super::interner::Dictionary;
use super::paths::{KeyLeaf, KeyPath};
use anyhow::{anyhow, bail, Context, Result};
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::DataType;
use bytes::Bytes;
use parquet::basic::{
    Compression, ConvertedType, Encoding, LogicalType, PageType, Type as Physical,
};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// The page codecs this module has.
enum Codec {
    None,
    Snappy(Box<snap::raw::Encoder>),
    /// At this level, with the thread's compressor ([`ZSTD`]).
    Zstd(i32),
}

impl Codec {
    fn new(compression: Compression) -> Result<Codec> {
        Ok(match compression {
            Compression::UNCOMPRESSED => Codec::None,
            Compression::SNAPPY => Codec::Snappy(Box::new(snap::raw::Encoder::new())),
            Compression::ZSTD(level) => Codec::Zstd(level.compression_level()),
            other => bail!("{other} pages of dictionary columns are the parquet crate's"),
        })
    }

    /// `data` compressed, in a buffer of its size: the codecs' own allocating calls return
    /// a buffer of the worst case's size (a page's held at that size until the row group is
    /// written), so pages are compressed into a buffer of the thread's and copied out.
    fn compress(&mut self, data: &[u8]) -> Result<Bytes> {
        if let Codec::None = self {
            return Ok(Bytes::copy_from_slice(data));
        }
        let mut out = COMPRESSED.take();
        out.clear();
        let len = match self {
            Codec::None => unreachable!("returned above"),
            Codec::Snappy(encoder) => {
                out.resize(snap::raw::max_compress_len(data.len()), 0);
                encoder.compress(data, &mut out)?
            }
            Codec::Zstd(level) => {
                out.reserve(zstd::zstd_safe::compress_bound(data.len()));
                ZSTD.with_borrow_mut(|slot| -> Result<usize> {
                    let compressor = match slot {
                        Some((at, compressor)) if *at == *level => compressor,
                        _ => {
                            &mut slot
                                .insert((*level, zstd::bulk::Compressor::new(*level)?))
                                .1
                        }
                    };
                    Ok(compressor.compress_to_buffer(data, &mut out)?)
                })?
            }
        };
        let page = Bytes::copy_from_slice(&out[..len]);
        COMPRESSED.set(out);
        Ok(page)
    }
}

/// Value `i` of a string or binary array, as bytes.
///
/// # Errors
/// `i` is outside the array, or the array is of another type.
fn byte_value(values: &ArrayRef, i: usize) -> Result<&[u8]> {
    if i >= values.len() {
        bail!("a value ({i}) outside its array of {}", values.len());
    }
    Ok(match values.data_type() {
        DataType::Utf8 => values.as_string::<i32>().value(i).as_bytes(),
        DataType::LargeUtf8 => values.as_string::<i64>().value(i).as_bytes(),
        DataType::Utf8View => values.as_string_view().value(i).as_bytes(),
        DataType::Binary => values.as_binary::<i32>().value(i),
        DataType::LargeBinary => values.as_binary::<i64>().value(i),
        DataType::BinaryView => values.as_binary_view().value(i),
        other => bail!("a column of {other} is not written here"),
    })
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
        let id = dictionary.intern(byte_value(&self.values, k)?)?;
        self.ids[k] = id;
        Ok(id)
    }
}

/// The rows of one batch of a column, as ids in the chunk's dictionary or, once it has fallen
/// back, as values.
trait Rows {
    /// The id of row `r`'s value (a present row), interned on its first use.
    fn id(&mut self, r: usize, dictionary: &mut Dictionary) -> Result<u32>;
    /// Appends row `r`'s value to `page` (after the fallback).
    fn push_value(&self, r: usize, page: &mut PageBuf) -> Result<()>;
}

/// The rows of a dictionary array: a key each.
struct Keys<'a> {
    keys: &'a [usize],
    remap: &'a mut Remap,
}

impl Rows for Keys<'_> {
    #[inline]
    fn id(&mut self, r: usize, dictionary: &mut Dictionary) -> Result<u32> {
        self.remap.id(self.keys[r], dictionary)
    }

    fn push_value(&self, r: usize, page: &mut PageBuf) -> Result<()> {
        page.push_plain(byte_value(&self.remap.values, self.keys[r])?)
    }
}

/// The rows of a string or binary array, interned one by one; a row equal to the last one
/// interned (runs of one value, common in sorted or clustered data) takes its id without a
/// lookup.
struct Strings<F> {
    get: F,
    last: Option<u32>,
}

impl<'a, F: Fn(usize) -> &'a [u8]> Rows for Strings<F> {
    #[inline]
    fn id(&mut self, r: usize, dictionary: &mut Dictionary) -> Result<u32> {
        let value = (self.get)(r);
        if let Some(last) = self.last {
            if dictionary.get(last) == value {
                return Ok(last);
            }
        }
        let id = dictionary.intern(value)?;
        self.last = Some(id);
        Ok(id)
    }

    fn push_value(&self, r: usize, page: &mut PageBuf) -> Result<()> {
        page.push_plain((self.get)(r))
    }
}

/// The page being filled.
#[derive(Default)]
struct PageBuf {
    /// Definition levels of its rows (when the column has them).
    def: Vec<u8>,
    /// Ids of its values (rows that are not null), before the fallback.
    ids: Vec<u32>,
    rows: usize,
    /// The ids it uses, one bit each.
    used: Vec<u64>,
    /// After the fallback: its values PLAIN-encoded, how many, and the smallest and largest.
    plain: Vec<u8>,
    values: usize,
    bounds: Option<(Vec<u8>, Vec<u8>)>,
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

    /// Appends a value after the fallback.
    fn push_plain(&mut self, value: &[u8]) -> Result<()> {
        let len = u32::try_from(value.len()).context("a value over 4 GiB")?;
        if self.plain.capacity() == 0 {
            self.plain = SPARE.take();
        }
        self.plain.extend_from_slice(&len.to_le_bytes());
        self.plain.extend_from_slice(value);
        self.values += 1;
        match &mut self.bounds {
            None => self.bounds = Some((value.to_vec(), value.to_vec())),
            Some((low, _)) if value < low.as_slice() => {
                low.clear();
                low.extend_from_slice(value);
            }
            Some((_, high)) if value > high.as_slice() => {
                high.clear();
                high.extend_from_slice(value);
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// Rows written at a time, between checks of the dictionary's size and, after the fallback,
/// the page's (the `parquet` crate's write batch size): a dictionary or a PLAIN page passes its
/// limit by at most this many values.
const STEP: usize = 1024;

thread_local! {
    /// The page being encoded, before compression: one buffer per thread, reused by every
    /// column the thread encodes (one per column would hold a page's size for each leaf column
    /// of every row group in flight).
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// A page compressed, before it is copied out at its size.
    static COMPRESSED: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// A PLAIN page's values buffer, between pages (the same reasoning).
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The thread's zstd compressor and its level: its context (~0.5 MiB of tables and
    /// buffers for a page at level 1) is allocated once per thread, not once per column of
    /// every row group, where allocating and freeing them faulted fresh pages in each time.
    static ZSTD: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

/// A data page written, with what its statistics need.
struct DataPage {
    page: CompressedPage,
    rows: usize,
    nulls: usize,
    /// Its smallest and largest value, whole; `None` if all are null.
    bounds: Option<(Vec<u8>, Vec<u8>)>,
}

/// Writes one byte-array column of one row group.
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
    /// Whether bounds are shortened as UTF-8.
    utf8: bool,
    page_rows: usize,
    page_bytes: usize,
    /// The dictionary page's size past which the column falls back to PLAIN pages.
    dictionary_bytes: usize,
    dictionary: Dictionary,
    fallback: bool,
    /// The last batch's dictionary and the ids of its keys here.
    last: Option<Remap>,
    page: PageBuf,
    pages: Vec<DataPage>,
    /// Data pages of each encoding: RLE_DICTIONARY, PLAIN.
    encoded: [i32; 2],
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
            utf8: descr.logical_type_ref() == Some(&LogicalType::String)
                || descr.converted_type() == ConvertedType::UTF8,
            page_rows: props
                .data_page_row_count_limit()
                .clamp(1, i32::MAX as usize),
            page_bytes: props.column_data_page_size_limit(col).max(1),
            dictionary_bytes: props.column_dictionary_page_size_limit(col),
            // No dictionary asked for: PLAIN pages from the start.
            fallback: !props.dictionary_enabled(col),
            descr,
            dictionary: Dictionary::default(),
            last: None,
            page: PageBuf::default(),
            pages: Vec::new(),
            encoded: [0; 2],
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

    /// Rows that make a page (at least one): the row limit, or before the fallback fewer ids
    /// than fill the page size limit at the dictionary's width.
    fn capacity(&self) -> usize {
        if self.fallback {
            return self.page_rows;
        }
        let width = hybrid::bits_for(self.dictionary.len().saturating_sub(1) as u64).max(1);
        let by_bytes = self.page_bytes.saturating_mul(8) / usize::from(width);
        self.page_rows.min(by_bytes).max(1)
    }

    /// Encodes one batch of the column.
    ///
    /// # Errors
    /// A key outside its dictionary, or compressing a page fails.
    pub fn write(&mut self, leaf: &KeyLeaf) -> Result<()> {
        let values = &leaf.values;
        let def = leaf.def.as_deref();
        let rows = values.len();
        match values.data_type() {
            DataType::Dictionary(..) => {
                let dict = values
                    .as_any_dictionary_opt()
                    .ok_or_else(|| anyhow!("a dictionary column is not a dictionary array"))?;
                let mut remap = self.remap(dict.values());
                // An empty dictionary (an enum without symbols, or a union branch no row of
                // the batch takes) can only be under null rows: a present one finds no id and
                // is an error.
                let keys = if remap.values.is_empty() {
                    vec![0; dict.keys().len()]
                } else {
                    dict.normalized_keys()
                };
                let result = self.write_rows(
                    def,
                    rows,
                    &mut Keys {
                        keys: &keys,
                        remap: &mut remap,
                    },
                );
                self.last = Some(remap);
                result
            }
            DataType::Utf8 => {
                let array = values.as_string::<i32>();
                self.write_strings(def, rows, |i| array.value(i).as_bytes())
            }
            DataType::LargeUtf8 => {
                let array = values.as_string::<i64>();
                self.write_strings(def, rows, |i| array.value(i).as_bytes())
            }
            DataType::Utf8View => {
                let array = values.as_string_view();
                self.write_strings(def, rows, |i| array.value(i).as_bytes())
            }
            DataType::Binary => {
                let array = values.as_binary::<i32>();
                self.write_strings(def, rows, |i| array.value(i))
            }
            DataType::LargeBinary => {
                let array = values.as_binary::<i64>();
                self.write_strings(def, rows, |i| array.value(i))
            }
            DataType::BinaryView => {
                let array = values.as_binary_view();
                self.write_strings(def, rows, |i| array.value(i))
            }
            other => bail!("a column of {other} is not written here"),
        }
    }

    fn write_strings<'a>(
        &mut self,
        def: Option<&[u8]>,
        rows: usize,
        get: impl Fn(usize) -> &'a [u8],
    ) -> Result<()> {
        self.write_rows(def, rows, &mut Strings { get, last: None })
    }

    /// Encodes `n` rows of `rows` with their definition levels `def` (if the column has them).
    fn write_rows(&mut self, def: Option<&[u8]>, n: usize, rows: &mut impl Rows) -> Result<()> {
        if def.is_some_and(|def| def.len() != n) {
            bail!(
                "column {}: levels of another length than its values",
                self.descr.path()
            );
        }
        let max_def = self.max_def;
        let mut i = 0;
        while i < n {
            if self.page.rows >= self.capacity() {
                self.flush_page()?;
            }
            // At most a step between checks of the dictionary's size, then of the page's.
            let take = (self.capacity() - self.page.rows).min(n - i).min(STEP);
            let range = i..i + take;
            let (page, dictionary) = (&mut self.page, &mut self.dictionary);
            if let Some(def) = def {
                page.def.extend_from_slice(&def[range.clone()]);
            }
            match (self.fallback, def) {
                (false, None) => {
                    for r in range {
                        page.push(rows.id(r, dictionary)?);
                    }
                }
                (false, Some(def)) => {
                    for r in range {
                        if def[r] == max_def {
                            page.push(rows.id(r, dictionary)?);
                        }
                    }
                }
                (true, def) => {
                    for r in range {
                        if def.is_none_or(|def| def[r] == max_def) {
                            rows.push_value(r, page)?;
                        }
                    }
                }
            }
            page.rows += take;
            i += take;
            if !self.fallback && self.dictionary.page_size() >= self.dictionary_bytes {
                // As the crate does: the pages so far keep the dictionary, the rest are PLAIN.
                self.flush_page()?;
                self.fallback = true;
            } else if self.page.rows >= self.capacity()
                || (self.fallback && self.page.plain.len() >= self.page_bytes)
            {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// The smallest and largest value the page in progress uses (none if it has no values);
    /// clears its set of ids.
    fn take_range(&mut self) -> Option<(Vec<u8>, Vec<u8>)> {
        let dictionary = &self.dictionary;
        let mut range: Option<(&[u8], &[u8])> = None;
        for (w, word) in self.page.used.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let id = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let value = dictionary.get(id);
                range = Some(match range {
                    None => (value, value),
                    Some((low, high)) => (low.min(value), high.max(value)),
                });
            }
        }
        range.map(|(low, high)| (low.to_vec(), high.to_vec()))
    }

    /// Encodes and compresses the page in progress.
    fn flush_page(&mut self) -> Result<()> {
        let rows = self.page.rows;
        if rows == 0 {
            return Ok(());
        }
        let mut buf = SCRATCH.take();
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
        let (encoding, values, bounds) = if self.fallback {
            buf.extend_from_slice(&self.page.plain);
            // The values' buffer goes back to the thread, for whichever column it encodes
            // next: a column holds its values only while its page is filling.
            // (A page of nulls has none and leaves the thread's spare in place.)
            let mut plain = std::mem::take(&mut self.page.plain);
            if plain.capacity() > 0 {
                plain.clear();
                SPARE.set(plain);
            }
            self.encoded[1] += 1;
            let values = std::mem::take(&mut self.page.values);
            (Encoding::PLAIN, values, self.page.bounds.take())
        } else {
            let width = hybrid::bits_for(self.dictionary.len().saturating_sub(1) as u64).max(1);
            buf.push(width);
            hybrid::encode(&self.page.ids, width, &mut buf);
            self.encoded[0] += 1;
            let values = self.page.ids.len();
            self.page.ids.clear();
            (Encoding::RLE_DICTIONARY, values, self.take_range())
        };
        let data = self.codec.compress(&buf)?;
        let page = CompressedPage::new(
            Page::DataPage {
                buf: data,
                num_values: u32::try_from(rows).context("a page of 4 billion rows")?,
                encoding,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            buf.len(),
        );
        self.pages.push(DataPage {
            page,
            rows,
            nulls: rows - values,
            bounds,
        });
        self.page.def.clear();
        self.page.rows = 0;
        SCRATCH.set(buf);
        Ok(())
    }

    /// Writes the column chunk: its bytes (offsets from 0) and what the row group needs.
    ///
    /// # Errors
    /// Compressing or writing a page fails, or the chunk has no rows.
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult)> {
        self.flush_page()?;
        if self.pages.is_empty() {
            bail!("column {}: a column chunk without rows", self.descr.path());
        }
        // Sized for the pages and their headers, so that the chunk is not held at twice its
        // size by a doubled buffer until the row group is written.
        let bytes: usize = self.pages.iter().map(|p| p.page.data().len() + 64).sum();
        let mut sink =
            TrackedWrite::new(Vec::with_capacity(bytes + self.dictionary.page_size() + 64));
        let mut writer = SerializedPageWriter::new(&mut sink);
        // A chunk PLAIN from its start (no dictionary asked for) has no dictionary page.
        let (mut compressed, mut uncompressed) = (0i64, 0i64);
        let mut dictionary_offset = None;
        if self.encoded[0] > 0 {
            let plain = self.dictionary.plain();
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
            drop(plain);
            let spec = writer.write_page(dictionary_page)?;
            dictionary_offset = Some(spec.offset as i64);
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
        }
        let mut offsets = OffsetIndexBuilder::new();
        let mut index = ColumnIndexBuilder::new(Physical::BYTE_ARRAY);
        let (mut values, mut nulls, mut first) = (0u64, 0u64, None);
        let mut range: Option<(Vec<u8>, Vec<u8>)> = None;
        let (truncate, utf8) = (self.index_truncate, self.utf8);
        for page in std::mem::take(&mut self.pages) {
            let spec = writer.write_page(page.page)?;
            first.get_or_insert(spec.offset as i64);
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            offsets.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
            offsets.append_row_count(page.rows as i64);
            values += page.rows as u64;
            nulls += page.nulls as u64;
            match page.bounds {
                None => index.append(true, Vec::new(), Vec::new(), page.nulls as i64),
                Some((low, high)) => {
                    index.append(
                        false,
                        bounds::lower(&low, truncate, utf8).0,
                        bounds::upper(&high, truncate, utf8).0,
                        page.nulls as i64,
                    );
                    range = Some(match range {
                        None => (low, high),
                        Some((l, h)) => (l.min(low), h.max(high)),
                    });
                }
            }
        }
        writer.close()?;
        let mut page_stats = Vec::new();
        if dictionary_offset.is_some() {
            page_stats.push(PageEncodingStats {
                page_type: PageType::DICTIONARY_PAGE,
                encoding: Encoding::PLAIN,
                count: 1,
            });
        }
        for (encoding, count) in [Encoding::RLE_DICTIONARY, Encoding::PLAIN]
            .into_iter()
            .zip(self.encoded)
            .filter(|(_, count)| *count > 0)
        {
            page_stats.push(PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding,
                count,
            });
        }
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.compression)
            .set_encodings(if dictionary_offset.is_some() {
                vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY]
            } else {
                vec![Encoding::PLAIN, Encoding::RLE]
            })
            .set_num_values(values as i64)
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_data_page_offset(first.or(dictionary_offset).unwrap_or(0))
            .set_dictionary_page_offset(dictionary_offset)
            .set_page_encoding_stats(page_stats);
        if self.statistics != EnabledStatistics::None {
            let statistics = match range {
                Some((low, high)) => {
                    let (low, low_exact) = bounds::lower(&low, self.statistics_truncate, utf8);
                    let (high, high_exact) = bounds::upper(&high, self.statistics_truncate, utf8);
                    ValueStatistics::new(
                        Some(ByteArray::from(low)),
                        Some(ByteArray::from(high)),
                        None,
                        Some(nulls),
                        false,
                    )
                    .with_min_is_exact(low_exact)
                    .with_max_is_exact(high_exact)
                }
                None => ValueStatistics::new(None, None, None, Some(nulls), false),
            };
            metadata = metadata.set_statistics(Statistics::ByteArray(statistics));
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

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::basic::ZstdLevel;

    /// The thread's one zstd context, switched between levels, compresses each page as a
    /// context of its own would (so files do not depend on which columns a thread encoded
    /// before), and the pages decompress to their data.
    #[test]
    fn the_threads_zstd_context_compresses_as_a_fresh_one() {
        let pages: Vec<Vec<u8>> = (0..6u32)
            .map(|p| {
                (0..20_000u32)
                    .flat_map(|i| ((i * 7 + p) % (50 + p * 40)).to_le_bytes())
                    .collect()
            })
            .collect();
        let levels = [1, 9, 1, 3, 3, 1];
        let mut codecs: Vec<Codec> = [1, 9, 3]
            .map(|l| Codec::new(Compression::ZSTD(ZstdLevel::try_new(l).unwrap())).unwrap())
            .into();
        for (page, level) in pages.iter().zip(levels) {
            let codec = match level {
                1 => &mut codecs[0],
                9 => &mut codecs[1],
                _ => &mut codecs[2],
            };
            let got = codec.compress(page).unwrap();
            let fresh = zstd::bulk::compress(page, level).unwrap();
            assert_eq!(&got[..], &fresh[..], "level {level}");
            assert_eq!(zstd::bulk::decompress(&got, page.len()).unwrap(), *page);
        }
    }
}
