//! Parsing Canonical Form and schema fingerprints (CRC-64-AVRO "Rabin", MD5, SHA-256).

use super::{LogicalType, NamedDef, Node, Schema};
use md5::{Digest, Md5};
use sha2::Sha256;

/// A schema fingerprint algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fingerprint {
    /// CRC-64-AVRO (8 bytes, little-endian as in single-object encoding).
    Rabin,
    /// MD5 (16 bytes).
    Md5,
    /// SHA-256 (32 bytes).
    Sha256,
}

impl Fingerprint {
    /// Parse `rabin`, `md5` or `sha256`.
    pub fn from_name(name: &str) -> Option<Fingerprint> {
        match name.to_ascii_lowercase().as_str() {
            "rabin" | "crc-64-avro" | "crc64" => Some(Fingerprint::Rabin),
            "md5" => Some(Fingerprint::Md5),
            "sha256" | "sha-256" => Some(Fingerprint::Sha256),
            _ => None,
        }
    }
}

const EMPTY64: u64 = 0xc15d_213a_a4d7_a795;

const fn rabin_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut fp = i as u64;
        let mut j = 0;
        while j < 8 {
            fp = (fp >> 1) ^ (EMPTY64 & (fp & 1).wrapping_neg());
            j += 1;
        }
        table[i] = fp;
        i += 1;
    }
    table
}

static RABIN: [u64; 256] = rabin_table();

/// The CRC-64-AVRO fingerprint of `data`.
pub fn rabin_fingerprint(data: &[u8]) -> u64 {
    data.iter().fold(EMPTY64, |fp, &b| {
        (fp >> 8) ^ RABIN[((fp ^ u64::from(b)) & 0xff) as usize]
    })
}

impl Schema {
    /// The schema's Parsing Canonical Form: full names, only the attributes that matter for
    /// reading, in the canonical order, no whitespace, each named type written out once.
    pub fn canonical_form(&self) -> String {
        let mut out = String::new();
        let mut written = vec![false; self.named.len()];
        self.write_canonical(&self.root, &mut out, &mut written, false);
        out
    }

    /// The Parsing Canonical Form with every (valid) logical type kept on its type, as
    /// `{"type":"long","logicalType":"timestamp-millis"}` (decimals with their precision and
    /// scale): two schemas with equal forms decode to the same Arrow types and values, which
    /// equal canonical forms alone do not promise (a `long` read as milliseconds or
    /// microseconds).
    pub fn canonical_form_with_logical_types(&self) -> String {
        let mut out = String::new();
        let mut written = vec![false; self.named.len()];
        self.write_canonical(&self.root, &mut out, &mut written, true);
        out
    }

    /// The fingerprint of the Parsing Canonical Form.
    pub fn fingerprint(&self, algorithm: Fingerprint) -> Vec<u8> {
        let pcf = self.canonical_form();
        match algorithm {
            Fingerprint::Rabin => rabin_fingerprint(pcf.as_bytes()).to_le_bytes().to_vec(),
            Fingerprint::Md5 => Md5::digest(pcf.as_bytes()).to_vec(),
            Fingerprint::Sha256 => Sha256::digest(pcf.as_bytes()).to_vec(),
        }
    }

    fn write_canonical(&self, node: &Node, out: &mut String, written: &mut [bool], logical: bool) {
        let quote = |s: &str| serde_json::to_string(s).expect("strings always serialize");
        match node {
            Node::Primitive(p, Some(l)) if logical => {
                out.push_str(r#"{"type":""#);
                out.push_str(p.name());
                out.push('"');
                write_logical(*l, out);
                out.push('}');
            }
            Node::Primitive(p, _) => {
                out.push('"');
                out.push_str(p.name());
                out.push('"');
            }
            Node::Array(items) => {
                out.push_str(r#"{"type":"array","items":"#);
                self.write_canonical(items, out, written, logical);
                out.push('}');
            }
            Node::Map(values) => {
                out.push_str(r#"{"type":"map","values":"#);
                self.write_canonical(values, out, written, logical);
                out.push('}');
            }
            Node::Union(branches) => {
                out.push('[');
                for (i, b) in branches.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_canonical(b, out, written, logical);
                }
                out.push(']');
            }
            Node::Named(i) => {
                let named = &self.named[*i];
                let name = quote(&named.name.full());
                if written[*i] {
                    out.push_str(&name);
                    return;
                }
                written[*i] = true;
                out.push_str(r#"{"name":"#);
                out.push_str(&name);
                match &named.def {
                    NamedDef::Record(r) => {
                        out.push_str(r#","type":"record","fields":["#);
                        for (k, f) in r.fields.iter().enumerate() {
                            if k > 0 {
                                out.push(',');
                            }
                            out.push_str(r#"{"name":"#);
                            out.push_str(&quote(&f.name));
                            out.push_str(r#","type":"#);
                            self.write_canonical(&f.ty, out, written, logical);
                            out.push('}');
                        }
                        out.push_str("]}");
                    }
                    NamedDef::Enum(e) => {
                        out.push_str(r#","type":"enum","symbols":["#);
                        for (k, s) in e.symbols.iter().enumerate() {
                            if k > 0 {
                                out.push(',');
                            }
                            out.push_str(&quote(s));
                        }
                        out.push_str("]}");
                    }
                    NamedDef::Fixed(f) => {
                        out.push_str(&format!(r#","type":"fixed","size":{}"#, f.size));
                        if let Some(l) = f.logical.filter(|_| logical) {
                            write_logical(l, out);
                        }
                        out.push('}');
                    }
                }
            }
        }
    }
}

/// `,"logicalType":"…"` and a decimal's precision and scale.
fn write_logical(l: LogicalType, out: &mut String) {
    out.push_str(r#","logicalType":""#);
    out.push_str(l.name());
    out.push('"');
    if let LogicalType::Decimal { precision, scale } = l {
        out.push_str(&format!(r#","precision":{precision},"scale":{scale}"#));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_with_logical_types_keeps_what_the_canonical_form_drops() {
        let schema = Schema::parse(
            r#"{"type":"record","name":"r","fields":[
                {"name":"t","type":{"type":"long","logicalType":"timestamp-millis"},"doc":"x"},
                {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
                {"name":"f","type":{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}},
                {"name":"n","type":"int"}]}"#,
        )
        .unwrap();
        assert_eq!(
            schema.canonical_form(),
            r#"{"name":"r","type":"record","fields":[{"name":"t","type":"long"},{"name":"d","type":"bytes"},{"name":"f","type":{"name":"U","type":"fixed","size":16}},{"name":"n","type":"int"}]}"#
        );
        assert_eq!(
            schema.canonical_form_with_logical_types(),
            r#"{"name":"r","type":"record","fields":[{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"f","type":{"name":"U","type":"fixed","size":16,"logicalType":"uuid"}},{"name":"n","type":"int"}]}"#
        );
    }

    // Published values from the Avro specification's test suite (share/test/data/schema-tests.txt).
    #[test]
    fn rabin_known_values() {
        let cases: &[(&str, i64)] = &[
            (r#""null""#, 7195948357588979594),
            (r#""boolean""#, -6970731678124411036),
            (r#""int""#, 8247732601305521295),
            (r#""long""#, -3434872931120570953),
            (r#""string""#, -8142146995180207161),
            (
                r#"{"name":"foo","type":"fixed","size":15}"#,
                1756455273707447556,
            ),
            (
                r#"{"name":"PigValue","type":"record","fields":[{"name":"value","type":["null","int","long","PigValue"]}]}"#,
                -1759257747318642341,
            ),
        ];
        for (pcf, expected) in cases {
            assert_eq!(rabin_fingerprint(pcf.as_bytes()) as i64, *expected, "{pcf}");
        }
    }

    #[test]
    fn canonical_form_strips_and_orders() {
        let s = Schema::parse(
            r#"{"namespace":"x","type":"record","name":"R","doc":"d","fields":[
              {"type":{"type":"int","logicalType":"date"},"name":"a","default":1,"doc":"z"},
              {"name":"b","type":{"type":"enum","symbols":["A","B"],"name":"E","aliases":["q"]}},
              {"name":"c","type":["null","E",{"type":"array","items":{"type":"map","values":"R"}}]},
              {"name":"d","type":{"type":"fixed","size":4,"name":"y.F"}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            s.canonical_form(),
            r#"{"name":"x.R","type":"record","fields":[{"name":"a","type":"int"},{"name":"b","type":{"name":"x.E","type":"enum","symbols":["A","B"]}},{"name":"c","type":["null","x.E",{"type":"array","items":{"type":"map","values":"x.R"}}]},{"name":"d","type":{"name":"y.F","type":"fixed","size":4}}]}"#
        );
        assert_eq!(s.fingerprint(Fingerprint::Md5).len(), 16);
        assert_eq!(s.fingerprint(Fingerprint::Sha256).len(), 32);
    }
}
