//! The dispatcher: one thread that owns all protocol state.
