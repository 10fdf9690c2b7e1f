//! The Avro schema model (specification 1.12): parsing, validation, named types, logical types,
//! Parsing Canonical Form and fingerprints.
//!
//! A [`Schema`] is a tree of [`Node`]s whose named types (records, enums, fixed) live in one table
//! and are referenced by index, so recursive and reused types are represented without copying.

mod canonical;
mod merge;
mod parse;

pub use canonical::{rabin_fingerprint, Fingerprint};
pub use merge::MergeError;

/// The metadata key under which the Avro schema of the batches is kept in the Arrow schema (the
/// writer's schema, or the reader's when one resolves it).
pub const AVRO_SCHEMA_KEY: &str = "avro.schema";

use serde_json::Value as Json;
use std::fmt;

/// What kind of problem a [`SchemaError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// The text is not JSON.
    InvalidJson,
    /// JSON that is not a schema: a missing or mistyped attribute (`"type"`, `"fields"`,
    /// `"items"`, `"size"`, ...), a union inside a union.
    Malformed,
    /// An invalid name, namespace, alias, field name or enum symbol.
    InvalidName,
    /// A name defined twice, two fields or symbols with one name, a type twice in a union.
    DuplicateName,
    /// A reference to a type that is neither primitive nor defined before.
    UnknownType,
    /// A default value that does not match its type.
    InvalidDefault,
}

/// One step of the JSON path to a schema error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathSegment {
    /// An object attribute (`fields`, `type`, `items`, `values`).
    Key(&'static str),
    /// An array position (a record field, a union branch).
    Index(usize),
}

impl PathSegment {
    pub(crate) fn key(key: &'static str) -> Self {
        PathSegment::Key(key)
    }
}

/// A parse or validation error in an Avro schema: its kind, the message, and the JSON path
/// of the type it is about (`$.fields[2].type.items`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    kind: SchemaErrorKind,
    message: String,
    /// Innermost first.
    path_rev: Vec<PathSegment>,
}

impl SchemaError {
    pub(crate) fn new(kind: SchemaErrorKind, message: impl Into<String>) -> Self {
        SchemaError {
            kind,
            message: message.into(),
            path_rev: Vec::new(),
        }
    }

    /// Prepend `segment` to the path (errors travel outwards).
    pub(crate) fn at(mut self, segment: PathSegment) -> Self {
        self.path_rev.push(segment);
        self
    }

    /// What kind of problem it is.
    pub fn kind(&self) -> SchemaErrorKind {
        self.kind
    }

    /// The problem, without the "invalid Avro schema" prefix or the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON path of the type the error is about, from the root `$`
    /// (`$.fields[2].type.items`; `$` for the root or when not known).
    pub fn path(&self) -> String {
        let mut path = String::from("$");
        for segment in self.path_rev.iter().rev() {
            match segment {
                PathSegment::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                PathSegment::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        path
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid Avro schema: {}", self.message)?;
        if !self.path_rev.is_empty() {
            write!(f, " (at {})", self.path())?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaError {}

/// A parsed and validated Avro schema.
///
/// ```
/// use avrow_engine::schema::Schema;
/// let schema = Schema::parse(r#"{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}"#)?;
/// assert_eq!(schema.canonical_form(), r#"{"name":"r","type":"record","fields":[{"name":"a","type":"long"}]}"#);
/// # Ok::<(), avrow_engine::schema::SchemaError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    root: Node,
    named: Vec<NamedType>,
    json: String,
}

impl Schema {
    /// Parse and validate a schema from its JSON text.
    ///
    /// # Errors
    /// A [`SchemaError`] naming the first problem found.
    pub fn parse(json: &str) -> Result<Schema, SchemaError> {
        Self::parse_with(json, false)
    }

    /// Parse a file's writer schema: as [`Schema::parse`], except that a field default that
    /// does not match its type is dropped (the field then has none) instead of an error. A
    /// writer's defaults are never used to read its own data, and writers that did not check
    /// them (a `"default": null` on a `string` field) made files a reader must still read.
    ///
    /// # Errors
    /// A [`SchemaError`] naming the first problem found but a default.
    pub fn parse_writer(json: &str) -> Result<Schema, SchemaError> {
        Self::parse_with(json, true)
    }

    fn parse_with(json: &str, drop_bad_defaults: bool) -> Result<Schema, SchemaError> {
        let value: Json = serde_json::from_str(json).map_err(|e| {
            SchemaError::new(
                SchemaErrorKind::InvalidJson,
                format!("schema is not valid JSON: {e}"),
            )
        })?;
        let (root, named) = parse::parse(&value, drop_bad_defaults)?;
        Ok(Schema {
            root,
            named,
            json: json.to_string(),
        })
    }

    /// The root type.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The named type with index `index` (see [`Node::Named`]).
    pub fn named(&self, index: usize) -> &NamedType {
        &self.named[index]
    }

    /// All named types, in definition order.
    pub fn named_types(&self) -> &[NamedType] {
        &self.named
    }

    /// Look up a named type by full name.
    pub fn lookup(&self, full_name: &str) -> Option<(usize, &NamedType)> {
        self.named
            .iter()
            .enumerate()
            .find(|(_, n)| n.name.full() == full_name)
    }

    /// The JSON text this schema was parsed from.
    pub fn json(&self) -> &str {
        &self.json
    }
}

/// One type in a schema tree.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Node {
    /// A primitive type, possibly annotated with a (valid) logical type.
    Primitive(Primitive, Option<LogicalType>),
    /// An array with the given item type.
    Array(Box<Node>),
    /// A map with string keys and the given value type.
    Map(Box<Node>),
    /// A union of the given branches (never nested, no duplicates).
    Union(Vec<Node>),
    /// A reference to the named type at this index of [`Schema::named_types`].
    Named(usize),
}

/// The Avro primitive types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Primitive {
    /// `null`
    Null,
    /// `boolean`
    Boolean,
    /// `int` (32-bit)
    Int,
    /// `long` (64-bit)
    Long,
    /// `float` (32-bit IEEE 754)
    Float,
    /// `double` (64-bit IEEE 754)
    Double,
    /// `bytes`
    Bytes,
    /// `string` (UTF-8)
    String,
}

impl Primitive {
    /// The type's name in schema JSON.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Null => "null",
            Primitive::Boolean => "boolean",
            Primitive::Int => "int",
            Primitive::Long => "long",
            Primitive::Float => "float",
            Primitive::Double => "double",
            Primitive::Bytes => "bytes",
            Primitive::String => "string",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Primitive> {
        Some(match name {
            "null" => Primitive::Null,
            "boolean" => Primitive::Boolean,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "bytes" => Primitive::Bytes,
            "string" => Primitive::String,
            _ => return None,
        })
    }
}

/// The Avro logical types avrow understands. Unknown or invalid logical types are dropped at
/// parse time (the spec says to fall back to the underlying type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogicalType {
    /// `decimal` on `bytes` or `fixed`.
    Decimal {
        /// Maximum number of digits.
        precision: usize,
        /// Digits after the decimal point.
        scale: usize,
    },
    /// `uuid` on `string` or `fixed(16)`.
    Uuid,
    /// `date` on `int`: days since the Unix epoch.
    Date,
    /// `time-millis` on `int`.
    TimeMillis,
    /// `time-micros` on `long`.
    TimeMicros,
    /// `timestamp-millis` on `long` (UTC).
    TimestampMillis,
    /// `timestamp-micros` on `long` (UTC).
    TimestampMicros,
    /// `timestamp-nanos` on `long` (UTC).
    TimestampNanos,
    /// `local-timestamp-millis` on `long` (no time zone).
    LocalTimestampMillis,
    /// `local-timestamp-micros` on `long` (no time zone).
    LocalTimestampMicros,
    /// `local-timestamp-nanos` on `long` (no time zone).
    LocalTimestampNanos,
    /// `duration` on `fixed(12)`: months, days, milliseconds as little-endian u32.
    Duration,
}

impl LogicalType {
    /// The `logicalType` attribute's value.
    pub fn name(self) -> &'static str {
        match self {
            LogicalType::Decimal { .. } => "decimal",
            LogicalType::Uuid => "uuid",
            LogicalType::Date => "date",
            LogicalType::TimeMillis => "time-millis",
            LogicalType::TimeMicros => "time-micros",
            LogicalType::TimestampMillis => "timestamp-millis",
            LogicalType::TimestampMicros => "timestamp-micros",
            LogicalType::TimestampNanos => "timestamp-nanos",
            LogicalType::LocalTimestampMillis => "local-timestamp-millis",
            LogicalType::LocalTimestampMicros => "local-timestamp-micros",
            LogicalType::LocalTimestampNanos => "local-timestamp-nanos",
            LogicalType::Duration => "duration",
        }
    }

    /// For times and timestamps: what they measure (0 time of day, 1 UTC timestamp, 2 local
    /// timestamp) and their unit as digits after the second (3 millis, 6 micros, 9 nanos).
    /// Values of one kind in two units are the same values scaled.
    pub(crate) fn time_unit(self) -> Option<(u8, u32)> {
        use LogicalType::*;
        Some(match self {
            TimeMillis => (0, 3),
            TimeMicros => (0, 6),
            TimestampMillis => (1, 3),
            TimestampMicros => (1, 6),
            TimestampNanos => (1, 9),
            LocalTimestampMillis => (2, 3),
            LocalTimestampMicros => (2, 6),
            LocalTimestampNanos => (2, 9),
            _ => return None,
        })
    }
}

/// A full name: namespace plus name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FullName {
    name: String,
    namespace: Option<String>,
}

impl FullName {
    pub(crate) fn new(name: String, namespace: Option<String>) -> Self {
        FullName {
            name,
            namespace: namespace.filter(|n| !n.is_empty()),
        }
    }

    /// The unqualified name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// `namespace.name`, or `name` in the null namespace.
    pub fn full(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

impl fmt::Display for FullName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A record, enum or fixed type definition.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedType {
    /// The full name.
    pub name: FullName,
    /// Alternative full names.
    pub aliases: Vec<FullName>,
    /// Documentation, if any.
    pub doc: Option<String>,
    /// What kind of named type this is.
    pub def: NamedDef,
}

/// The body of a named type.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NamedDef {
    /// A record (or `error`).
    Record(Record),
    /// An enumeration.
    Enum(Enum),
    /// A fixed-size byte string.
    Fixed(Fixed),
}

/// A record's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The fields in order.
    pub fields: Vec<Field>,
    /// Declared with `"type": "error"`.
    pub is_error: bool,
}

/// One field of a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// The field type.
    pub ty: Node,
    /// The default value (validated against the type), if any.
    pub default: Option<Json>,
    /// Sort order.
    pub order: SortOrder,
    /// Alternative names.
    pub aliases: Vec<String>,
    /// Documentation, if any.
    pub doc: Option<String>,
}

/// A field's sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SortOrder {
    /// `ascending` (the default)
    #[default]
    Ascending,
    /// `descending`
    Descending,
    /// `ignore`
    Ignore,
}

/// An enum's symbols.
#[derive(Debug, Clone, PartialEq)]
pub struct Enum {
    /// Symbols in order; the encoded value is the index.
    pub symbols: Vec<String>,
    /// Default symbol for schema resolution.
    pub default: Option<String>,
}

/// A fixed type.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    /// Size in bytes.
    pub size: usize,
    /// Logical type (decimal, uuid, duration), if valid.
    pub logical: Option<LogicalType>,
}
