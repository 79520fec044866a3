//! The extension side: write an octet extension in Rust.
