//! The supported keyword subset of section 1.1 and the type names of `type`.

use std::fmt;

/// The only `$schema` value accepted: the draft 2020-12 meta-schema. Any other value names
/// a foreign dialect or vocabulary and is rejected.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// One keyword of the supported subset (section 1.1). Any other member of a schema
/// object is rejected with [`SchemaError::UnsupportedKeyword`](super::SchemaError).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Keyword {
    /// `$schema`: the dialect, which must be [`DRAFT_2020_12`].
    Schema,
    /// `title`: an annotation string.
    Title,
    /// `description`: an annotation string.
    Description,
    /// `default`: an annotation value, never validated.
    Default,
    /// `examples`: an annotation array, never validated.
    Examples,
    /// `type`: one type name or a non-empty array of distinct type names.
    Type,
    /// `properties`: subschemas for named members of an object.
    Properties,
    /// `required`: member names an object must have.
    Required,
    /// `additionalProperties`: the subschema for members not named in `properties`.
    AdditionalProperties,
    /// `items`: the subschema for every element of an array.
    Items,
    /// `enum`: the instance must equal one of the listed values.
    Enum,
    /// `const`: the instance must equal the value.
    Const,
    /// `allOf`: every subschema must accept the instance.
    AllOf,
    /// `anyOf`: at least one subschema must accept the instance.
    AnyOf,
    /// `oneOf`: exactly one subschema must accept the instance.
    OneOf,
    /// `minimum`: inclusive lower bound of a number.
    Minimum,
    /// `maximum`: inclusive upper bound of a number.
    Maximum,
    /// `exclusiveMinimum`: exclusive lower bound of a number.
    ExclusiveMinimum,
    /// `exclusiveMaximum`: exclusive upper bound of a number.
    ExclusiveMaximum,
    /// `minLength`: fewest Unicode code points in a string.
    MinLength,
    /// `maxLength`: most Unicode code points in a string.
    MaxLength,
    /// `minItems`: fewest elements in an array.
    MinItems,
    /// `maxItems`: most elements in an array.
    MaxItems,
    /// `uniqueItems`: whether the elements of an array must be pairwise distinct.
    UniqueItems,
    /// `minProperties`: fewest members in an object.
    MinProperties,
    /// `maxProperties`: most members in an object.
    MaxProperties,
}

impl Keyword {
    /// Every supported keyword, in the order section 1.1 lists them.
    pub const ALL: [Keyword; 26] = [
        Keyword::Schema,
        Keyword::Title,
        Keyword::Description,
        Keyword::Default,
        Keyword::Examples,
        Keyword::Type,
        Keyword::Properties,
        Keyword::Required,
        Keyword::AdditionalProperties,
        Keyword::Items,
        Keyword::Enum,
        Keyword::Const,
        Keyword::AllOf,
        Keyword::AnyOf,
        Keyword::OneOf,
        Keyword::Minimum,
        Keyword::Maximum,
        Keyword::ExclusiveMinimum,
        Keyword::ExclusiveMaximum,
        Keyword::MinLength,
        Keyword::MaxLength,
        Keyword::MinItems,
        Keyword::MaxItems,
        Keyword::UniqueItems,
        Keyword::MinProperties,
        Keyword::MaxProperties,
    ];

    /// The keyword as it is spelled in a schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Schema => "$schema",
            Keyword::Title => "title",
            Keyword::Description => "description",
            Keyword::Default => "default",
            Keyword::Examples => "examples",
            Keyword::Type => "type",
            Keyword::Properties => "properties",
            Keyword::Required => "required",
            Keyword::AdditionalProperties => "additionalProperties",
            Keyword::Items => "items",
            Keyword::Enum => "enum",
            Keyword::Const => "const",
            Keyword::AllOf => "allOf",
            Keyword::AnyOf => "anyOf",
            Keyword::OneOf => "oneOf",
            Keyword::Minimum => "minimum",
            Keyword::Maximum => "maximum",
            Keyword::ExclusiveMinimum => "exclusiveMinimum",
            Keyword::ExclusiveMaximum => "exclusiveMaximum",
            Keyword::MinLength => "minLength",
            Keyword::MaxLength => "maxLength",
            Keyword::MinItems => "minItems",
            Keyword::MaxItems => "maxItems",
            Keyword::UniqueItems => "uniqueItems",
            Keyword::MinProperties => "minProperties",
            Keyword::MaxProperties => "maxProperties",
        }
    }

    /// The supported keyword spelled `name`, or `None` when `name` is outside the subset.
    /// Matching is exact and case-sensitive, as in JSON Schema.
    pub fn from_name(name: &str) -> Option<Keyword> {
        Keyword::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One of the seven JSON Schema type names `type` may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `boolean`.
    Boolean,
    /// `object`.
    Object,
    /// `array`.
    Array,
    /// `number`: any JSON number, integers included.
    Number,
    /// `string`.
    String,
    /// `integer`: a number with no fractional part, such as `1` or `1.0`.
    Integer,
}

impl JsonType {
    /// Every type name.
    pub const ALL: [JsonType; 7] = [
        JsonType::Null,
        JsonType::Boolean,
        JsonType::Object,
        JsonType::Array,
        JsonType::Number,
        JsonType::String,
        JsonType::Integer,
    ];

    /// The type name as it is spelled in a schema.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Integer => "integer",
        }
    }

    /// The type spelled `name`, or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
