//! The wire: JSON-RPC 2.0 envelopes, request ids, error codes and LF framing.
//!
//! Everything here is pure data and codecs; no I/O.

pub mod canonical;
pub mod codec;
pub mod codes;
mod envelope;
pub mod frame;
pub mod id;
pub mod message;
pub mod salvage;

pub use frame::{FrameSplitter, Split};
pub use id::{IdError, RequestId};
pub use message::{
    classify, decode, encode, encode_error, encode_notification, encode_request, encode_result,
    parse_json, EncodeError, FrameError, Message, Notification, Request, Response, ResponseError,
};
