//! API 0.3, the canonical wire (SUPPLEMENT "API 0.3 (canonical wire)"): the codec and
//! its closed envelopes, the `initialize` contract offer and every rule of the
//! selection, the SDK speaking 0.3 over real pipes, and the stdlib-only Python peer
//! `tests/fixtures/peer03.py` checked against the codec. The modules live in
//! `tests/api03/`.

#![cfg(unix)]

#[path = "api03/codec.rs"]
mod codec;
#[path = "api03/negotiation.rs"]
mod negotiation;
#[path = "api03/peer.rs"]
mod peer;
#[path = "api03/sdk.rs"]
mod sdk;
#[path = "api03/support.rs"]
mod support;
