//! Why an output schema was refused ([`SchemaError`]) and why structured content failed
//! it ([`ValidationError`]).
//!
//! Paths are JSON Pointers (RFC 6901): `""` is the root, `/sources/0/url` names member
//! `url` of element 0 of member `sources`, and `~` and `/` in names are written `~0` and
//! `~1`. Schema paths point into the schema document; instance paths into the validated
//! value.

use std::fmt;

use serde_json::Number;

use super::keyword::{JsonType, Keyword};

/// An output schema outside the bounded subset of section 1.1. The host refuses the tool
/// definition that carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    /// A schema object uses a member that is not a supported keyword: arbitrary JSON
    /// Schema vocabulary (`$ref`, `patternProperties`, `format`, `$comment`, ...).
    UnsupportedKeyword {
        /// The member name, exactly as written.
        keyword: String,
        /// The schema object that uses it.
        path: String,
    },
    /// `$schema` names a dialect other than [`DRAFT_2020_12`](super::DRAFT_2020_12).
    UnsupportedDialect {
        /// The `$schema` value.
        dialect: String,
        /// The schema object that declares it.
        path: String,
    },
    /// A schema node is neither an object nor a boolean.
    NotASchema {
        /// Where the node is.
        path: String,
    },
    /// Schema nodes nest deeper than [`MAX_JSON_DEPTH`](crate::limits::MAX_JSON_DEPTH)
    /// levels (the root schema is level 1).
    TooDeep {
        /// The first schema node past the limit.
        path: String,
        /// The limit.
        limit: usize,
    },
    /// A property name in `properties` or `required` is longer than
    /// [`MAX_JSON_KEY_BYTES`](crate::limits::MAX_JSON_KEY_BYTES) UTF-8 bytes.
    PropertyNameTooLong {
        /// The keyword that names the property.
        keyword: Keyword,
        /// The schema object that uses the keyword.
        path: String,
        /// The name's length in bytes.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// A supported keyword has a value of the wrong shape.
    InvalidKeywordValue {
        /// The keyword.
        keyword: Keyword,
        /// The schema object that uses it.
        path: String,
        /// What the value must be.
        expected: Expected,
    },
    /// `type` names a type that does not exist.
    UnknownType {
        /// The schema object whose `type` it is.
        path: String,
        /// The unknown name.
        name: String,
    },
    /// A `type` array lists the same type twice.
    DuplicateType {
        /// The schema object whose `type` it is.
        path: String,
        /// The repeated type.
        name: JsonType,
    },
    /// A `required` array lists the same property twice.
    DuplicateRequired {
        /// The schema object whose `required` it is.
        path: String,
        /// The repeated name.
        name: String,
    },
}

/// The shape a keyword's value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A string (`$schema`, `title`, `description`).
    String,
    /// A boolean (`uniqueItems`).
    Boolean,
    /// A number (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`).
    Number,
    /// A non-negative integer, possibly written with a zero fraction such as `2.0`
    /// (`minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`,
    /// `maxProperties`).
    NonNegativeInteger,
    /// An array (`enum`, `examples`).
    Array,
    /// An array of strings (`required`).
    StringArray,
    /// A non-empty array of schemas (`allOf`, `anyOf`, `oneOf`).
    NonEmptySchemaArray,
    /// An object whose members are schemas (`properties`).
    SchemaObject,
    /// A type name or a non-empty array of type names (`type`).
    TypeNames,
}

impl Expected {
    fn describe(self) -> &'static str {
        match self {
            Expected::String => "a string",
            Expected::Boolean => "a boolean",
            Expected::Number => "a number",
            Expected::NonNegativeInteger => "a non-negative integer",
            Expected::Array => "an array",
            Expected::StringArray => "an array of strings",
            Expected::NonEmptySchemaArray => "a non-empty array of schemas",
            Expected::SchemaObject => "an object whose members are schemas",
            Expected::TypeNames => "a type name or a non-empty array of type names",
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Writes "the schema root" for `""` and the pointer otherwise.
struct Location<'a>(&'a str);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("the root")
        } else {
            f.write_str(self.0)
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::UnsupportedKeyword { keyword, path } => write!(
                f,
                "output schema at {} uses {keyword:?}, which is not in the supported keyword subset",
                Location(path)
            ),
            SchemaError::UnsupportedDialect { dialect, path } => write!(
                f,
                "output schema at {} declares $schema {dialect:?}; only {:?} is supported",
                Location(path),
                super::DRAFT_2020_12
            ),
            SchemaError::NotASchema { path } => write!(
                f,
                "output schema node at {} must be an object or a boolean",
                Location(path)
            ),
            SchemaError::TooDeep { path, limit } => write!(
                f,
                "output schema node at {} nests deeper than {limit} levels",
                Location(path)
            ),
            SchemaError::PropertyNameTooLong {
                keyword,
                path,
                bytes,
                limit,
            } => write!(
                f,
                "output schema at {} names a property of {bytes} bytes in {keyword}; \
                 the limit is {limit} bytes",
                Location(path)
            ),
            SchemaError::InvalidKeywordValue {
                keyword,
                path,
                expected,
            } => write!(
                f,
                "output schema at {}: {keyword} must be {expected}",
                Location(path)
            ),
            SchemaError::UnknownType { path, name } => write!(
                f,
                "output schema at {}: type {name:?} is not a JSON Schema type",
                Location(path)
            ),
            SchemaError::DuplicateType { path, name } => write!(
                f,
                "output schema at {}: type lists {name:?} more than once",
                Location(path)
            ),
            SchemaError::DuplicateRequired { path, name } => write!(
                f,
                "output schema at {}: required lists {name:?} more than once",
                Location(path)
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

/// Structured content that does not satisfy its output schema: the first failure found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// Where in the instance the failure is, as a JSON Pointer such as `/sources/0/url`.
    pub instance_path: String,
    /// What failed.
    pub kind: ValidationErrorKind,
}

/// The rule a value broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValidationErrorKind {
    /// The value reached a `false` schema. `via` is the keyword that led there
    /// (`properties`, `additionalProperties`, `items`, `allOf`), or `None` when the whole
    /// schema is `false`.
    FalseSchema {
        /// The applicator keyword that applied the `false` schema.
        via: Option<Keyword>,
    },
    /// `type`: the value has none of the allowed types.
    Type {
        /// The allowed types.
        expected: Vec<JsonType>,
        /// The value's own type (`integer` for integral numbers).
        found: JsonType,
    },
    /// `const`: the value differs from the constant.
    Const,
    /// `enum`: the value equals none of the listed values.
    Enum,
    /// `minimum`: the number is below the bound.
    Minimum {
        /// The bound.
        limit: Number,
    },
    /// `maximum`: the number is above the bound.
    Maximum {
        /// The bound.
        limit: Number,
    },
    /// `exclusiveMinimum`: the number is not above the bound.
    ExclusiveMinimum {
        /// The bound.
        limit: Number,
    },
    /// `exclusiveMaximum`: the number is not below the bound.
    ExclusiveMaximum {
        /// The bound.
        limit: Number,
    },
    /// `minLength`: the string has fewer code points than the bound.
    MinLength {
        /// The bound.
        limit: u64,
        /// The string's length in Unicode code points.
        length: u64,
    },
    /// `maxLength`: the string has more code points than the bound.
    MaxLength {
        /// The bound.
        limit: u64,
        /// The string's length in Unicode code points.
        length: u64,
    },
    /// `minItems`: the array has fewer elements than the bound.
    MinItems {
        /// The bound.
        limit: u64,
        /// The array's length.
        count: u64,
    },
    /// `maxItems`: the array has more elements than the bound.
    MaxItems {
        /// The bound.
        limit: u64,
        /// The array's length.
        count: u64,
    },
    /// `uniqueItems`: two elements are equal.
    UniqueItems {
        /// The earlier element's index.
        first: usize,
        /// The later element's index.
        second: usize,
    },
    /// `minProperties`: the object has fewer members than the bound.
    MinProperties {
        /// The bound.
        limit: u64,
        /// The object's member count.
        count: u64,
    },
    /// `maxProperties`: the object has more members than the bound.
    MaxProperties {
        /// The bound.
        limit: u64,
        /// The object's member count.
        count: u64,
    },
    /// `required`: a required member is missing.
    Required {
        /// The missing member.
        property: String,
    },
    /// `anyOf`: no subschema accepts the value.
    AnyOf,
    /// `oneOf`: no subschema accepts the value.
    OneOfNone,
    /// `oneOf`: more than one subschema accepts the value.
    OneOfMultiple {
        /// The first accepting subschema's index.
        first: usize,
        /// The second accepting subschema's index.
        second: usize,
    },
    /// The value nests containers deeper than
    /// [`MAX_JSON_DEPTH`](crate::limits::MAX_JSON_DEPTH) levels (the root container is
    /// level 1). Checked before any keyword.
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The value has more than [`MAX_JSON_NODES`](crate::limits::MAX_JSON_NODES) nodes
    /// (every value, containers and scalars, the root included). Checked before any
    /// keyword.
    TooManyNodes {
        /// The limit.
        limit: usize,
    },
}

impl ValidationError {
    /// The keyword that failed, or `None` for a wholly `false` schema and for the
    /// instance bounds.
    pub fn keyword(&self) -> Option<Keyword> {
        use ValidationErrorKind as K;
        match &self.kind {
            K::FalseSchema { via } => *via,
            K::Type { .. } => Some(Keyword::Type),
            K::Const => Some(Keyword::Const),
            K::Enum => Some(Keyword::Enum),
            K::Minimum { .. } => Some(Keyword::Minimum),
            K::Maximum { .. } => Some(Keyword::Maximum),
            K::ExclusiveMinimum { .. } => Some(Keyword::ExclusiveMinimum),
            K::ExclusiveMaximum { .. } => Some(Keyword::ExclusiveMaximum),
            K::MinLength { .. } => Some(Keyword::MinLength),
            K::MaxLength { .. } => Some(Keyword::MaxLength),
            K::MinItems { .. } => Some(Keyword::MinItems),
            K::MaxItems { .. } => Some(Keyword::MaxItems),
            K::UniqueItems { .. } => Some(Keyword::UniqueItems),
            K::MinProperties { .. } => Some(Keyword::MinProperties),
            K::MaxProperties { .. } => Some(Keyword::MaxProperties),
            K::Required { .. } => Some(Keyword::Required),
            K::AnyOf => Some(Keyword::AnyOf),
            K::OneOfNone | K::OneOfMultiple { .. } => Some(Keyword::OneOf),
            K::TooDeep { .. } | K::TooManyNodes { .. } => None,
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ValidationErrorKind as K;
        let at = Location(&self.instance_path);
        match &self.kind {
            K::FalseSchema { via: None } => {
                write!(
                    f,
                    "structured content at {at} is rejected: the output schema is false"
                )
            }
            K::FalseSchema { via: Some(keyword) } => write!(
                f,
                "structured content at {at} is not allowed by {keyword} (a false schema)"
            ),
            K::Type { expected, found } => {
                let names: Vec<&str> = expected.iter().map(|t| t.as_str()).collect();
                write!(
                    f,
                    "structured content at {at} is {found}, but type requires {}",
                    names.join(" or ")
                )
            }
            K::Const => write!(f, "structured content at {at} does not equal const"),
            K::Enum => write!(f, "structured content at {at} equals no value of enum"),
            K::Minimum { limit } => {
                write!(f, "structured content at {at} is less than minimum {limit}")
            }
            K::Maximum { limit } => {
                write!(
                    f,
                    "structured content at {at} is greater than maximum {limit}"
                )
            }
            K::ExclusiveMinimum { limit } => write!(
                f,
                "structured content at {at} is not greater than exclusiveMinimum {limit}"
            ),
            K::ExclusiveMaximum { limit } => write!(
                f,
                "structured content at {at} is not less than exclusiveMaximum {limit}"
            ),
            K::MinLength { limit, length } => write!(
                f,
                "structured content at {at} has {length} characters; minLength is {limit}"
            ),
            K::MaxLength { limit, length } => write!(
                f,
                "structured content at {at} has {length} characters; maxLength is {limit}"
            ),
            K::MinItems { limit, count } => write!(
                f,
                "structured content at {at} has {count} items; minItems is {limit}"
            ),
            K::MaxItems { limit, count } => write!(
                f,
                "structured content at {at} has {count} items; maxItems is {limit}"
            ),
            K::UniqueItems { first, second } => write!(
                f,
                "structured content at {at} repeats item {first} at index {second}, \
                 but uniqueItems is true"
            ),
            K::MinProperties { limit, count } => write!(
                f,
                "structured content at {at} has {count} properties; minProperties is {limit}"
            ),
            K::MaxProperties { limit, count } => write!(
                f,
                "structured content at {at} has {count} properties; maxProperties is {limit}"
            ),
            K::Required { property } => write!(
                f,
                "structured content at {at} lacks the required property {property:?}"
            ),
            K::AnyOf => write!(
                f,
                "structured content at {at} matches none of the anyOf subschemas"
            ),
            K::OneOfNone => write!(
                f,
                "structured content at {at} matches none of the oneOf subschemas"
            ),
            K::OneOfMultiple { first, second } => write!(
                f,
                "structured content at {at} matches oneOf subschemas {first} and {second}, \
                 but must match exactly one"
            ),
            K::TooDeep { limit } => write!(
                f,
                "structured content at {at} nests deeper than {limit} levels"
            ),
            K::TooManyNodes { limit } => {
                write!(f, "structured content has more than {limit} JSON nodes")
            }
        }
    }
}

impl std::error::Error for ValidationError {}
