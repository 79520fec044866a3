//! [`Extension::run`] and [`Extension::serve`]: the SDK's entry points, which pick the
//! API version and hand the extension to the reader loop.

use std::io::{Read, Write};

use super::serve;
use crate::manifest::ApiVersion;
use crate::sdk::error::RunError;
use crate::sdk::extension::{Extension, API_VERSION_ENV};

impl Extension {
    /// Speaks the protocol on stdin and stdout until `shutdown` or stdin EOF.
    ///
    /// Returns an error when `OCTET_EXTENSION_API_VERSION` is invalid or stdin fails;
    /// transport loss (EOF) is a normal return.
    pub fn run(self) -> Result<(), RunError> {
        self.serve(std::io::stdin(), std::io::stdout())
    }

    /// Like [`Extension::run`], over any byte streams: `input` carries host frames,
    /// `output` receives the extension's frames (owned by one writer thread).
    pub fn serve<R, W>(self, input: R, output: W) -> Result<(), RunError>
    where
        R: Read,
        W: Write + Send + 'static,
    {
        let configured = match self.api_version {
            Some(v) => Some(v),
            None => match std::env::var(API_VERSION_ENV) {
                Ok(text) => match ApiVersion::parse(&text) {
                    Some(v) => Some(v),
                    None => return Err(RunError::InvalidApiVersion(text)),
                },
                Err(_) => None,
            },
        };
        serve(self, configured, input, output)
    }
}
