//! Row generators, one per benchmark shape, plus the shared word lists they draw from.
//!
//! Each generator keeps one row and overwrites it in place for every record (strings are cleared
//! and refilled, vectors keep their capacity), and each row type implements `serde::Serialize`
//! positionally (`serialize_tuple_struct`) in schema field order, which apache-avro's schema-aware
//! serializer encodes straight into its block buffer.

pub(crate) mod counters;
pub(crate) mod order;
pub(crate) mod telemetry;
pub(crate) mod wide;

use serde::Serialize;

use crate::rng::Rng;

/// A seeded source of rows for one shape.
pub(crate) trait RowGenerator {
    /// The row type, serializable against the shape's schema.
    type Row: Serialize;

    /// Builds the generator, drawing any fixed population (devices, hosts...) from `rng`.
    fn new(rng: &mut Rng) -> Self;

    /// Produces the next row.
    fn next_row(&mut self, rng: &mut Rng) -> &Self::Row;
}

/// Given names for people.
pub(crate) const FIRST_NAMES: &[&str] = &[
    "Ada",
    "Mohammed",
    "Olivia",
    "Liam",
    "Sofia",
    "Noah",
    "Mei",
    "Ethan",
    "Aisha",
    "Lucas",
    "Yuki",
    "Mateo",
    "Chloe",
    "Ivan",
    "Priya",
    "Jonathan",
    "Fatima",
    "Elena",
    "Kwame",
    "Isabella",
    "Alexander",
    "Zoe",
    "Hiroshi",
    "Amara",
    "Christopher",
    "Nadia",
    "Tom",
    "Ines",
    "Oluwaseun",
    "Freya",
    "Bjorn",
    "Camille",
    "Diego",
    "Hannah",
    "Rafael",
    "Anastasia",
    "Li",
    "Margaret",
    "Sebastian",
    "Jo",
];

/// Family names for people.
pub(crate) const LAST_NAMES: &[&str] = &[
    "Smith",
    "Garcia",
    "Nguyen",
    "Okafor",
    "Johansson",
    "Kowalski",
    "Rossi",
    "Tanaka",
    "Muller",
    "Dubois",
    "Patel",
    "Hernandez",
    "O'Brien",
    "Kim",
    "Silva",
    "Ivanova",
    "Abdullah",
    "Schmidt",
    "Van der Berg",
    "Lee",
    "Martinez-Lopez",
    "Chen",
    "Wright",
    "Haddad",
    "Fitzgerald",
    "Papadopoulos",
    "Novak",
    "Sato",
    "Andersen",
    "Ng",
    "Castellanos",
    "Wojcik",
    "Mensah",
    "Cohen",
    "Takahashi-Reyes",
    "Brown",
    "Al-Sayed",
    "Lindqvist",
    "Moreau",
    "Zhou",
];

/// First words of company names.
pub(crate) const COMPANY_WORDS: &[&str] = &[
    "Northwind",
    "Blue Harbor",
    "Acme",
    "Silverline",
    "Greenfield",
    "Apex",
    "Redwood",
    "Quantum",
    "Harbor & Pine",
    "Summit",
    "Lakeside",
    "Ironclad",
    "Brightwater",
    "Cedar Ridge",
    "Atlas",
];

/// Company name suffixes.
pub(crate) const COMPANY_SUFFIXES: &[&str] = &[
    "Traders",
    "Logistics GmbH",
    "Supply Co.",
    "Inc.",
    "Ltd",
    "Holdings",
    "Outfitters",
    "S.A.",
    "Labs",
    "Partners LLP",
];

/// Upper-case letters and digits, for codes.
pub(crate) const ALNUM_UPPER: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";

/// Lower-case hexadecimal digits.
pub(crate) const HEX: &[u8] = b"0123456789abcdef";

/// Appends a realistic customer name: a person ("Maria J. Gonzalez") or a company.
pub(crate) fn push_customer(s: &mut String, rng: &mut Rng) {
    if rng.chance(0.78) {
        s.push_str(rng.pick(FIRST_NAMES));
        s.push(' ');
        if rng.chance(0.2) {
            s.push(char::from(rng.pick(&ALNUM_UPPER[..24])));
            s.push_str(". ");
        }
        s.push_str(rng.pick(LAST_NAMES));
    } else {
        s.push_str(rng.pick(COMPANY_WORDS));
        s.push(' ');
        s.push_str(rng.pick(COMPANY_SUFFIXES));
    }
}
