//! A second, test-side Avro writer for what apache-avro's Writer never produces: arrays and maps
//! in several blocks, with negative counts carrying byte sizes; non-minimal (padded) varints;
//! decimals with redundant sign bytes; upper-case uuid strings; and blocks with many or few
//! records. Files from it are still read back by apache-avro as the oracle.

use apache_avro::types::Value;
use apache_avro::{Codec, Schema};

use crate::gen::{write_long, Rng};
use crate::oracle::{Model, TsUnit, S};

/// What the encoder may vary.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Split non-empty arrays/maps into several blocks, some with negative count + byte size.
    pub chunk_collections: bool,
    /// Pad some varints with redundant continuation bytes (still at most 10 bytes).
    pub pad_varints: bool,
    /// Sign-extend some decimals on bytes with redundant leading bytes.
    pub pad_decimals: bool,
    /// Write some uuid strings in upper case (RFC 4122: case-insensitive on input).
    pub upper_uuids: bool,
}

pub struct Encoder<'a> {
    pub rng: &'a mut Rng,
    pub model: &'a Model,
    pub style: Style,
}

impl Encoder<'_> {
    fn long(&mut self, out: &mut Vec<u8>, v: i64) {
        if !self.style.pad_varints || !self.rng.one_in(5) {
            write_long(out, v);
            return;
        }
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        let mut bytes = Vec::new();
        loop {
            bytes.push((z & 0x7f) as u8);
            z >>= 7;
            if z == 0 {
                break;
            }
        }
        // Pad with zero groups up to at most 10 bytes in all.
        let pad = self.rng.range(0, 10 - bytes.len());
        bytes.extend(std::iter::repeat_n(0u8, pad));
        let n = bytes.len();
        for (i, b) in bytes.iter().enumerate() {
            out.push(if i + 1 < n { b | 0x80 } else { *b });
        }
    }

    fn bytes(&mut self, out: &mut Vec<u8>, b: &[u8]) {
        self.long(out, b.len() as i64);
        out.extend_from_slice(b);
    }

    /// Encode `items` as an array/map body: blocks then a 0.
    fn blocks<T>(
        &mut self,
        out: &mut Vec<u8>,
        items: &[T],
        mut each: impl FnMut(&mut Self, &mut Vec<u8>, &T),
    ) {
        let mut i = 0;
        while i < items.len() {
            let n = if self.style.chunk_collections {
                self.rng.range(1, items.len() - i)
            } else {
                items.len() - i
            };
            let mut body = Vec::new();
            for it in &items[i..i + n] {
                each(self, &mut body, it);
            }
            if self.style.chunk_collections && self.rng.one_in(2) {
                self.long(out, -(n as i64));
                self.long(out, body.len() as i64);
            } else {
                self.long(out, n as i64);
            }
            out.extend_from_slice(&body);
            i += n;
        }
        self.long(out, 0);
    }

    pub fn value(&mut self, out: &mut Vec<u8>, s: &S, v: &Value) {
        let model = self.model;
        let s = model.resolve(s);
        match (s, v) {
            (S::Null, Value::Null) => {}
            (S::Boolean, Value::Boolean(b)) => out.push(*b as u8),
            (S::Int, Value::Int(i))
            | (S::Date, Value::Date(i))
            | (S::TimeMillis, Value::TimeMillis(i)) => self.long(out, *i as i64),
            (S::Long, Value::Long(i)) | (S::TimeMicros, Value::TimeMicros(i)) => self.long(out, *i),
            (S::Timestamp { unit, local }, v) => {
                let i = match (unit, local, v) {
                    (TsUnit::Millis, false, Value::TimestampMillis(i))
                    | (TsUnit::Micros, false, Value::TimestampMicros(i))
                    | (TsUnit::Nanos, false, Value::TimestampNanos(i))
                    | (TsUnit::Millis, true, Value::LocalTimestampMillis(i))
                    | (TsUnit::Micros, true, Value::LocalTimestampMicros(i))
                    | (TsUnit::Nanos, true, Value::LocalTimestampNanos(i)) => *i,
                    _ => panic!("{v:?} is not a {unit:?} timestamp"),
                };
                self.long(out, i)
            }
            (S::Float, Value::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (S::Double, Value::Double(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (S::Bytes, Value::Bytes(b)) => self.bytes(out, b),
            (S::String, Value::String(x)) => self.bytes(out, x.as_bytes()),
            (S::Fixed { .. }, Value::Fixed(_, b)) => out.extend_from_slice(b),
            (S::Enum { .. }, Value::Enum(i, _)) => self.long(out, *i as i64),
            (S::Union(branches), Value::Union(i, x)) => {
                self.long(out, *i as i64);
                self.value(out, &branches[*i as usize], x);
            }
            (S::Record { fields, .. }, Value::Record(vals)) => {
                for ((_, fs), (_, x)) in fields.iter().zip(vals) {
                    self.value(out, fs, x);
                }
            }
            (S::Array(items), Value::Array(xs)) => {
                self.blocks(out, xs, |e, o, x| e.value(o, items, x));
            }
            (S::Map(values), Value::Map(m)) => {
                let entries: Vec<(&String, &Value)> = m.iter().collect();
                self.blocks(out, &entries, |e, o, (k, x)| {
                    e.bytes(o, k.as_bytes());
                    e.value(o, values, x);
                });
            }
            (S::Decimal { fixed, .. }, Value::Decimal(d)) => {
                let raw: Vec<u8> = d.try_into().expect("decimal bytes");
                let neg = raw.first().is_some_and(|b| b & 0x80 != 0);
                let fill = if neg { 0xff } else { 0 };
                match fixed {
                    Some((_, size)) => {
                        assert!(raw.len() <= *size, "decimal wider than its fixed");
                        out.extend(std::iter::repeat_n(fill, size - raw.len()));
                        out.extend_from_slice(&raw);
                    }
                    None => {
                        let pad = if self.style.pad_decimals && self.rng.one_in(3) {
                            self.rng.range(1, 20)
                        } else {
                            0
                        };
                        let mut b = vec![fill; pad];
                        b.extend_from_slice(&raw);
                        self.bytes(out, &b);
                    }
                }
            }
            (S::Uuid { fixed: None }, Value::Uuid(u)) => {
                let mut text = u.hyphenated().to_string();
                if self.style.upper_uuids && self.rng.one_in(2) {
                    text = text.to_uppercase();
                }
                self.bytes(out, text.as_bytes());
            }
            (S::Uuid { fixed: Some(_) }, Value::Uuid(u)) => out.extend_from_slice(u.as_bytes()),
            (S::Duration { .. }, Value::Duration(d)) => {
                let b: [u8; 12] = (*d).into();
                out.extend_from_slice(&b);
            }
            (s, v) => panic!("encoder: {v:?} does not fit {s:?}"),
        }
    }
}

/// A container file of `values` encoded by [`Encoder`]: header taken from apache-avro (same
/// schema JSON and codec name), blocks of random record counts, each compressed by `codec`.
pub fn write_file_styled(
    rng: &mut Rng,
    schema: &Schema,
    model: &Model,
    values: &[Value],
    codec: Codec,
    style: Style,
) -> Vec<u8> {
    let w = apache_avro::Writer::with_codec(schema, Vec::new(), codec).unwrap();
    let mut file = w.into_inner().unwrap();
    let c = crate::oracle::Container::parse(&file).unwrap();
    let mut i = 0;
    while i < values.len() {
        let n = match rng.below(4) {
            0 => 1,
            1 => values.len() - i,
            _ => rng.range(1, values.len() - i),
        };
        let mut data = Vec::new();
        let mut enc = Encoder {
            rng: &mut *rng,
            model,
            style,
        };
        for v in &values[i..i + n] {
            enc.value(&mut data, &model.root, v);
        }
        codec.compress(&mut data).unwrap();
        write_long(&mut file, n as i64);
        write_long(&mut file, data.len() as i64);
        file.extend_from_slice(&data);
        file.extend_from_slice(&c.sync);
        i += n;
    }
    file
}
