//! API 0.3's host-driven capabilities (SUPPLEMENT "Methods in brief"): migration
//! (`migration.adapter.v1`) and provider streams (`provider_stream`). Each is usable
//! only on a 0.3 generation whose contract selected its capability; otherwise the call
//! fails with [`CallError::NotDeclared`] and nothing is sent.

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

use super::call::{CallError, CallOptions, PendingCall};
use super::extension::{ExtensionHandle, Extras};
use crate::dispatcher::{Command, HostRequest};
use crate::validate::host_driven::StreamAcceptance;
use crate::validate::host_driven::{self, MigrationDetection, MigrationImport, ProviderEvent};

use crate::limits::{MAX_SOURCE_ROOT_BYTES, PROVIDER_STREAM_QUEUE};

/// What `provider/stream` asks the extension to stream.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ProviderStreamRequest {
    /// The provider, as the extension registered it.
    pub provider_id: String,
    /// The model.
    pub model_id: String,
    /// The provider request, passed as it is.
    pub request: Value,
    /// A lease from `provider/auth/request`, when the provider needs one.
    pub authorization_lease: Option<String>,
}

impl ProviderStreamRequest {
    /// A request for `model_id` of `provider_id`.
    pub fn new(
        provider_id: impl Into<String>,
        model_id: impl Into<String>,
        request: Value,
    ) -> ProviderStreamRequest {
        ProviderStreamRequest {
            provider_id: provider_id.into(),
            model_id: model_id.into(),
            request,
            authorization_lease: None,
        }
    }
}

/// An open provider stream: its acceptance, then its events in order until a
/// `finished` or `error` event (after which the channel closes).
pub struct ProviderStream {
    /// The extension's answer to `provider/stream`.
    pub acceptance: StreamAcceptance,
    events: Receiver<ProviderEvent>,
    extension: String,
    commands: Sender<Command>,
}

impl ProviderStream {
    /// The stream's events, in order; the channel closes when the stream ends.
    pub fn events(&self) -> &Receiver<ProviderEvent> {
        &self.events
    }

    /// Ends the stream early: `provider/cancel` goes to the extension and the event
    /// channel closes. Dropping the stream does the same.
    pub fn cancel(&self) {
        let _ = self.commands.send(Command::CancelStream {
            extension: self.extension.clone(),
            stream_id: self.acceptance.stream_id.clone(),
        });
    }
}

impl Drop for ProviderStream {
    fn drop(&mut self) {
        // A stream that already ended is no longer open; the cancel then does nothing.
        self.cancel();
    }
}

impl std::fmt::Debug for ProviderStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderStream")
            .field("acceptance", &self.acceptance)
            .finish_non_exhaustive()
    }
}

fn check_root(source_root: &str) -> Result<(), CallError> {
    if source_root.len() > MAX_SOURCE_ROOT_BYTES {
        return Err(CallError::InvalidRequest {
            reason: format!(
                "source_root is {} bytes; at most {MAX_SOURCE_ROOT_BYTES}",
                source_root.len()
            ),
        });
    }
    Ok(())
}

impl ExtensionHandle {
    /// `migration/detect` (API 0.3, `migration.adapter.v1`): does `source_root` hold
    /// configuration the extension can import? The closed result model is validated.
    pub fn migration_detect(
        &self,
        source_root: &str,
        options: CallOptions,
    ) -> Result<MigrationDetection, CallError> {
        check_root(source_root)?;
        let request = HostRequest::MigrationDetect {
            source_root: source_root.to_string(),
        };
        self.v0_3_request(request, &options, host_driven::migration_detection)
            .wait()
    }

    /// `migration/import` (API 0.3, `migration.adapter.v1`): imports the models,
    /// skills and MCP servers of `config_paths` under `source_root`. The closed result
    /// model is validated (skill contents at most 128 KiB).
    pub fn migration_import(
        &self,
        source_root: &str,
        config_paths: Vec<String>,
        options: CallOptions,
    ) -> Result<MigrationImport, CallError> {
        check_root(source_root)?;
        let request = HostRequest::MigrationImport {
            source_root: source_root.to_string(),
            config_paths,
        };
        self.v0_3_request(request, &options, host_driven::migration_import)
            .wait()
    }

    /// `provider/stream` (API 0.3, `provider_stream`): opens a stream and waits for the
    /// extension to accept or refuse it. Its `provider/event`s then arrive in order on
    /// [`ProviderStream::events`], bounded ([`PROVIDER_STREAM_QUEUE`]); cancel it (or
    /// drop it) to send `provider/cancel`.
    pub fn provider_stream(
        &self,
        request: ProviderStreamRequest,
        options: CallOptions,
    ) -> Result<ProviderStream, CallError> {
        let stream_id = format!(
            "stream-{}",
            NEXT_STREAM.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let (sink, events) = crossbeam_channel::bounded(PROVIDER_STREAM_QUEUE);
        let wire = HostRequest::ProviderStream {
            stream_id: stream_id.clone(),
            provider_id: request.provider_id,
            model_id: request.model_id,
            request: request.request,
            authorization_lease: request.authorization_lease,
        };
        let expected = stream_id.clone();
        let mut failed = None;
        let acceptance = self
            .send_request(
                wire,
                &options,
                self.request_deadline(),
                Extras {
                    stream: Some(sink),
                    ..Extras::default()
                },
                move |reply| {
                    reply.and_then(|raw| {
                        host_driven::stream_acceptance(&raw.value, &expected)
                            .map_err(CallError::InvalidResult)
                    })
                },
            )
            .wait();
        let acceptance = acceptance.unwrap_or_else(|error| {
            // Closed on the host's side as the stream below is dropped.
            failed = Some(error);
            StreamAcceptance {
                stream_id,
                accepted: false,
                reason: None,
            }
        });
        let stream = ProviderStream {
            acceptance,
            events,
            extension: self.name().to_string(),
            commands: self.commands().clone(),
        };
        match failed {
            Some(error) => Err(error),
            None => {
                if !stream.acceptance.accepted {
                    stream.cancel();
                }
                Ok(stream)
            }
        }
    }

    fn v0_3_request<T: 'static>(
        &self,
        request: HostRequest,
        options: &CallOptions,
        validate: impl FnOnce(&Value) -> Result<T, crate::validate::ResultError> + Send + 'static,
    ) -> PendingCall<T> {
        self.send_request(
            request,
            options,
            self.request_deadline(),
            Extras::default(),
            move |reply| {
                reply.and_then(|raw| validate(&raw.value).map_err(CallError::InvalidResult))
            },
        )
    }
}

/// Stream ids are unique across the process, so no two streams ever share one.
static NEXT_STREAM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
