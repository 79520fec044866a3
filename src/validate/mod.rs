//! Validation of results an extension returns: content parts, bounds, menus.
pub mod schema;
