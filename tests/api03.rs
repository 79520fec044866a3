//! API 0.3, the canonical wire (SUPPLEMENT "API 0.3 (canonical wire)"): the codec and
//! its closed envelopes, the `initialize` contract offer and every rule of the
//! selection. The modules live in `tests/api03/`.

#![cfg(unix)]

#[path = "api03/codec.rs"]
mod codec;
#[path = "api03/negotiation.rs"]
mod negotiation;
#[path = "api03/support.rs"]
mod support;
