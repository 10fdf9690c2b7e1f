//! Skipping projected-away values without decoding them: strings by length, fixed-size values
//! by size, arrays and maps by their block byte size when the writer recorded one.

use super::cursor::Cursor;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::varint::Kernel;
use std::sync::Arc;

/// How to skip one value of some type.
#[derive(Debug, Clone)]
pub(crate) enum Skip {
    /// A fixed number of bytes (null: 0, boolean: 1, float: 4, double: 8, fixed(n): n).
    Bytes(usize),
    /// One varint (int, long, enum).
    Varint,
    /// A length-prefixed byte string (bytes, string).
    Sized,
    /// An array of items.
    Array(Box<Skip>),
    /// A map of string keys to values.
    Map(Box<Skip>),
    /// The fields of a record in order (consecutive fixed sizes merged).
    Record(Vec<Skip>),
    /// One of the branches, selected by a varint.
    Union(Vec<Skip>),
    /// A recursive type cut at the configured depth.
    TooDeep(Arc<str>, usize),
    // The variants below appear only in the tree of a whole writer record built for checking
    // a block as it streams (`decode/stream.rs`), which also checks the values' validity;
    // skipping treats them as the plain variants above.
    /// A string (its UTF-8 is checked by the streaming check).
    Str,
    /// An `int` (checked to fit 32 bits).
    Int,
    /// A boolean (a byte 0 or 1).
    Boolean,
    /// An enum index below this many symbols.
    Enum(usize),
}

impl Skip {
    /// Merge adjacent fixed-size parts of a record.
    pub(crate) fn record(parts: Vec<Skip>) -> Skip {
        let mut out: Vec<Skip> = Vec::with_capacity(parts.len());
        for p in parts {
            match (out.last_mut(), p) {
                (_, Skip::Bytes(0)) => {}
                (Some(Skip::Bytes(a)), Skip::Bytes(b)) => *a += b,
                (_, Skip::Record(inner)) => out.extend(inner),
                (_, p) => out.push(p),
            }
        }
        match out.len() {
            0 => Skip::Bytes(0),
            1 => out.pop().expect("one element"),
            _ => Skip::Record(out),
        }
    }

    pub(crate) fn min_size(&self) -> usize {
        match self {
            Skip::Bytes(n) => *n,
            Skip::Record(parts) => parts.iter().map(Skip::min_size).sum(),
            Skip::Varint
            | Skip::Sized
            | Skip::Str
            | Skip::Int
            | Skip::Boolean
            | Skip::Enum(_)
            | Skip::Array(_)
            | Skip::Map(_)
            | Skip::Union(_)
            | Skip::TooDeep(..) => 1,
        }
    }

    pub(crate) fn skip<K: Kernel>(&self, c: &mut Cursor<'_, K>) -> Result<(), DecodeError> {
        match self {
            Skip::Bytes(n) => c.take(*n).map(drop),
            Skip::Boolean => c.take(1).map(drop),
            Skip::Varint | Skip::Int | Skip::Enum(_) => c.long().map(drop),
            Skip::Sized | Skip::Str => c.bytes().map(drop),
            Skip::Array(item) => skip_blocks(c, item.min_size(), |c| item.skip(c)),
            Skip::Map(value) => skip_blocks(c, 1 + value.min_size(), |c| {
                c.bytes()?;
                value.skip(c)
            }),
            Skip::Record(parts) => parts.iter().try_for_each(|p| p.skip(c)),
            Skip::Union(branches) => {
                let b = c.branch(branches.len())?;
                branches[b].skip(c)
            }
            Skip::TooDeep(name, depth) => Err(DecodeError::new(
                DecodeErrorKind::RecursionLimit {
                    type_name: name.to_string(),
                    depth: *depth,
                },
                c.pos,
            )),
        }
    }
}

fn skip_blocks<K: Kernel>(
    c: &mut Cursor<'_, K>,
    min_item_size: usize,
    mut item: impl FnMut(&mut Cursor<'_, K>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    while let Some((n, size)) = c.block_count_and_size()? {
        if let Some(size) = size {
            c.take(size)?;
            continue;
        }
        if min_item_size == 0 {
            // Items of zero bytes: nothing to skip, however many there are.
            continue;
        }
        if n > (c.remaining() / min_item_size) as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::TooLarge(format!(
                    "collection block of {n} items cannot fit in the {} bytes left",
                    c.remaining()
                )),
                c.pos,
            ));
        }
        for _ in 0..n {
            item(c)?;
        }
    }
    Ok(())
}
