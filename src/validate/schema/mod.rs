//! The bounded `output_schema` subset of JSON Schema (section 1.1) and validation of
//! `structured_content` against it (section 1.2).
//!
//! An API 0.2 tool definition may carry an `output_schema`. [`check_output_schema`]
//! (or [`OutputSchema::compile`]) checks it once, when the tool is registered, and yields
//! an [`OutputSchema`] whose [`validate`](OutputSchema::validate) checks each result's
//! structured content.
//!
//! # The subset
//!
//! The keywords are the 26 of [`Keyword::ALL`], with draft 2020-12 semantics. Any other
//! member of a schema object, at any depth the walk reaches (`properties{*}`,
//! `additionalProperties`, `items`, `allOf`/`anyOf`/`oneOf[*]`), is rejected with
//! [`SchemaError::UnsupportedKeyword`], and a `$schema` other than [`DRAFT_2020_12`] with
//! [`SchemaError::UnsupportedDialect`]. The values of `enum`, `const`, `default`,
//! `examples`, `required` and `type` are data, and property names are names: `$ref` as a
//! property name is fine. Keyword values of the wrong shape are rejected with typed
//! errors; counts such as `minLength` may be written `2.0`. Unsupported vocabulary takes
//! precedence: it is searched for across the whole schema before any value is checked.
//!
//! # Decisions where the reference is silent or loose
//!
//! - **Boolean schemas.** Section 1.1 says "schema nodes must be objects", but the
//!   JSON Schema conformance data this crate follows requires `true` and `false` to be
//!   accepted as subschemas and as the whole schema. They carry no keyword, so they are
//!   accepted everywhere a schema may appear. (Tool-definition parsing separately
//!   requires the `output_schema` member itself to be an object.)
//! - **Nesting.** "Nesting is capped at 32" counts schema nodes: the root schema is level
//!   1 and each subschema one level below its parent, so at most
//!   [`MAX_JSON_DEPTH`](crate::limits::MAX_JSON_DEPTH) levels. Data under `enum`,
//!   `const`, `default` and `examples` is not a schema node and is not counted.
//! - **Property names.** The 256-byte bound
//!   ([`MAX_JSON_KEY_BYTES`](crate::limits::MAX_JSON_KEY_BYTES)) applies to names under
//!   `properties` and to the names listed in `required`.
//! - **Meta-schema rules.** As the 2020-12 meta-schema requires, `type` arrays and
//!   `required` arrays hold distinct entries, `type` arrays and `allOf`/`anyOf`/`oneOf`
//!   are non-empty, and `examples` is an array. `$schema` is accepted on any schema object
//!   as long as it names 2020-12.
//! - **Instance bounds.** Validation first checks the structured-content bounds of
//!   section 1.2: at most 32 container levels (the root container is level 1) and at
//!   most [`MAX_JSON_NODES`](crate::limits::MAX_JSON_NODES) nodes. Together with the
//!   compiled schema's size this bounds the work of one validation; see `eval.rs`.
//! - **Numbers.** serde_json is built without `arbitrary_precision`, so integers beyond
//!   64 bits and all fractions are doubles. They count as integers when integral, and
//!   every comparison between an integer and a double is exact (no rounding of the
//!   integer). Digits beyond a double's precision are lost by the parser, which the
//!   conformance data's high-precision cases tolerate.

mod compile;
mod equal;
mod error;
mod eval;
mod keyword;
mod number;
mod pointer;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub use error::{Expected, SchemaError, ValidationError, ValidationErrorKind};
pub use keyword::{JsonType, Keyword, DRAFT_2020_12};

/// A checked `output_schema`, ready to validate structured content.
#[derive(Clone, Debug)]
pub struct OutputSchema {
    root: compile::Node,
}

impl OutputSchema {
    /// Checks `schema` against the supported subset and compiles it.
    pub fn compile(schema: &Value) -> Result<OutputSchema, SchemaError> {
        Ok(OutputSchema {
            root: compile::compile(schema)?,
        })
    }

    /// Validates `instance` (a result's `structured_content`), reporting the first
    /// failure with its instance path and keyword.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        eval::validate(&self.root, instance)
    }

    /// Whether `instance` satisfies the schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validate(instance).is_ok()
    }
}

/// Checks a tool definition's `output_schema` (section 1.1) and compiles it for
/// validating that tool's structured content. The same as [`OutputSchema::compile`].
pub fn check_output_schema(schema: &Value) -> Result<OutputSchema, SchemaError> {
    OutputSchema::compile(schema)
}
