//! Unit tests of the output-schema subset: schema errors in `compile`, keyword semantics
//! and error reporting in `validate`, work bounds in `bounds`.

mod bounds;
mod compile;
mod validate;

use serde_json::Value;

use super::{check_output_schema, OutputSchema, SchemaError, ValidationError};

/// Compiles a schema the test expects to be accepted.
fn schema(value: Value) -> OutputSchema {
    check_output_schema(&value).unwrap_or_else(|e| panic!("schema {value} refused: {e}"))
}

/// The error a schema the test expects to be refused produces.
fn schema_error(value: Value) -> SchemaError {
    match check_output_schema(&value) {
        Ok(_) => panic!("schema {value} was accepted"),
        Err(e) => e,
    }
}

/// The error an instance the test expects to be rejected produces.
fn invalid(schema: &OutputSchema, instance: Value) -> ValidationError {
    match schema.validate(&instance) {
        Ok(()) => panic!("instance {instance} was accepted"),
        Err(e) => e,
    }
}

/// Parses JSON text, for numbers serde_json's `json!` cannot write.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}
