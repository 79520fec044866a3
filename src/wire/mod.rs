//! The wire: JSON-RPC 2.0 envelopes, request ids, error codes and LF framing.
//!
//! Everything here is pure data and codecs; no I/O.

#[doc(hidden)]
pub mod canonical;
// The codecs and the frame splitter are the transport's; public for the crate's
// tests, benches and fuzz targets, not for embedders.
#[doc(hidden)]
pub mod codec;
pub mod codes;
// Only the SDK's reader defers a request's context.
#[cfg(feature = "sdk")]
mod deferred;
mod envelope;
#[doc(hidden)]
pub mod frame;
pub mod id;
pub mod mapped;
pub mod message;
#[doc(hidden)]
pub mod salvage;

#[doc(hidden)]
pub use frame::{FrameSplitter, Split};
pub use id::{IdError, RequestId};
pub use message::{FrameError, ResponseError};
// The frame codec: for the crate's own tests, benches and fuzz targets.
#[doc(hidden)]
pub use message::{
    classify, decode, encode, encode_error, encode_notification, encode_request, encode_result,
    parse_json, EncodeError, Message, Notification, Request, Response,
};
