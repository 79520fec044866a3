//! `validate::schema::OutputSchema` (the bounded `output_schema` subset of section 1.1).
//!
//! The input holds two JSON documents one after the other, the schema and the instance
//! (separated by whitespace when needed, as in `{"type":"object"} {"a":1}`); inputs
//! that do not start with two JSON documents are skipped.
//!
//! Invariants: compiling and validating never panic, nor do the errors' `Display`;
//! validation is deterministic and `is_valid` agrees with `validate`. The schema is also
//! validated against itself as an instance. Run with a `-timeout` (see the README): the
//! compiled schema and the instance bounds must keep every validation fast.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::validate::schema::OutputSchema;
use serde_json::Value;

fn validate(schema: &OutputSchema, instance: &Value) {
    let first = schema.validate(instance);
    assert_eq!(schema.is_valid(instance), first.is_ok());
    if let Err(error) = &first {
        let _ = error.to_string();
        let _ = error.keyword();
    }
    assert_eq!(
        schema.validate(instance),
        first,
        "validation is not deterministic"
    );
}

fuzz_target!(|data: &[u8]| {
    let mut documents = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
    let (Some(Ok(schema)), Some(Ok(instance))) = (documents.next(), documents.next()) else {
        return;
    };
    match OutputSchema::compile(&schema) {
        Ok(compiled) => {
            validate(&compiled, &instance);
            validate(&compiled, &schema);
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
});
