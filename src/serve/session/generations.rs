//! Starting, reloading and stopping an extension's generations, each on a thread of
//! its own (an `initialize` or a shutdown sequence may take seconds, and the control
//! loop must keep answering meanwhile), and the bindings a start names.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{reply_error_line, reply_ok_line, Session};
use crate::host::StartOptions;
use crate::serve::control::ClientId;
use crate::serve::encode;
use crate::serve::error::{ErrorCode, ServeError};
use crate::serve::services::ServeServices;

impl Session {
    /// Starts on a thread of its own: `initialize` may take seconds, and the control
    /// loop must keep answering meanwhile.
    pub(super) fn start(
        &mut self,
        id: Option<&ClientId>,
        extension: String,
        startup_timeout: Option<std::time::Duration>,
        services: Vec<crate::serve::bindings::ServeBinding>,
    ) {
        // A start of an extension that is already starting gets that start's outcome
        // (not `already_running` while it may still fail).
        if let Some(waiting) = self.starting.lock().get_mut(&extension) {
            waiting.push(id.cloned());
            return;
        }
        self.starting.lock().insert(extension.clone(), Vec::new());
        let name = extension.clone();
        let host = self.host.clone();
        let started = self.started.clone();
        let starting = self.starting.clone();
        let out = self.out.clone();
        let reply_to = id.cloned();
        // The client answers exactly the services it named, and only those are
        // offered; a start that names none keeps what an earlier start bound (a
        // reload reviving a parked extension).
        let options = StartOptions {
            startup_timeout,
            services: (!services.is_empty()).then(|| bind(&self.services, &services)),
        };
        let spawned = self.spawn(id, "octet-serve-start", move || {
            let line = |id: Option<&ClientId>, outcome: &Result<Value, ServeError>| match outcome {
                Ok(info) => reply_ok_line(id, info.clone()),
                Err(error) => reply_error_line(id, error),
            };
            let outcome = match host.start_with(&extension, options) {
                Ok(handle) => {
                    let info = encode::started(handle.info());
                    started.lock().insert(extension.clone(), handle);
                    Ok(info)
                }
                Err(error) => Err(ServeError::from(&error)),
            };
            // The start is over before anyone hears of it: a start or reload the
            // client sends on reading this reply is a new one, never a waiter that
            // gets this outcome again.
            let waiting = starting.lock().remove(&extension).unwrap_or_default();
            out.emit(line(reply_to.as_ref(), &outcome));
            for id in waiting {
                out.emit(line(id.as_ref(), &outcome));
            }
        });
        if !spawned {
            self.starting.lock().remove(&name);
        }
    }

    /// Reloads candidate-first on a thread of its own (section 5): the current
    /// generation keeps serving until the new one is ready, and the session's handle
    /// routes to the new one from then on.
    pub(super) fn reload(&mut self, id: Option<&ClientId>, extension: String) {
        if !self.started.lock().contains_key(&extension) {
            // A first start that failed is parked as generation 0; a reload is the
            // manual generation change that revives it (section 5).
            let parked = self
                .host
                .status()
                .iter()
                .any(|s| s.extension == extension && s.parked.is_some());
            match parked {
                true => self.start(id, extension, None, Vec::new()),
                false => self.reply_error(id, not_started(&extension)),
            }
            return;
        }
        let host = self.host.clone();
        let out = self.out.clone();
        let reply_to = id.cloned();
        self.spawn(id, "octet-serve-reload", move || {
            let id = reply_to;
            let line = match host.reload(&extension) {
                Ok(info) => reply_ok_line(id.as_ref(), encode::started(&info)),
                Err(error) => reply_error_line(id.as_ref(), &ServeError::from(&error)),
            };
            out.emit(line);
        });
    }

    /// Stops on a thread of its own (the bounded shutdown sequence of section 1.8).
    pub(super) fn stop(&mut self, id: Option<&ClientId>, extension: String) {
        let Some(handle) = self.started.lock().remove(&extension) else {
            self.reply_error(id, not_started(&extension));
            return;
        };
        let out = self.out.clone();
        let reply_to = id.cloned();
        self.spawn(id, "octet-serve-stop", move || {
            let id = reply_to;
            let report = handle.shutdown().unwrap_or_default();
            out.emit(reply_ok_line(
                id.as_ref(),
                json!({"report": report.to_value()}),
            ));
        });
    }

    /// Runs `body` on a named thread (a start, stop or reload: at most a few per
    /// extension). When no thread can be started, the operation is refused with an
    /// `io_error` reply rather than run on the control loop, which must never wait.
    /// True when the thread started.
    pub(super) fn spawn(
        &mut self,
        id: Option<&ClientId>,
        name: &str,
        body: impl FnOnce() + Send + 'static,
    ) -> bool {
        self.threads.retain(|thread| !thread.is_finished());
        match std::thread::Builder::new().name(name.into()).spawn(body) {
            Ok(thread) => {
                self.threads.push(thread);
                true
            }
            Err(error) => {
                self.reply_error(
                    id,
                    ServeError::new(
                        ErrorCode::IoError,
                        format!("cannot start a thread for this operation: {error}"),
                    ),
                );
                false
            }
        }
    }
}

pub(super) fn not_started(extension: &str) -> ServeError {
    ServeError::new(
        ErrorCode::NotStarted,
        format!("extension `{extension}` is not started in this session"),
    )
    .with("extension", extension)
}

/// Bindings that forward the named services to the client: request services through
/// the service lines, brokers through their forwarders.
fn bind(
    services: &Arc<ServeServices>,
    named: &[crate::serve::bindings::ServeBinding],
) -> crate::services::bound::ServiceBindings {
    use crate::negotiation::Feature;
    use crate::serve::bindings::ServeBinding;
    named.iter().fold(
        crate::services::bound::ServiceBindings::new(),
        |bindings, binding| match binding {
            ServeBinding::Kind(kind) => services.bind_kind(bindings, *kind),
            ServeBinding::Broker(broker) => {
                crate::serve::brokers::bind(bindings, *broker, services)
            }
            ServeBinding::Frontend(Feature::AutocompleteEditV1) => bindings.autocomplete_edit(),
            ServeBinding::Frontend(Feature::TerminalInput) => bindings.terminal_input(),
            ServeBinding::Frontend(_) => bindings,
        },
    )
}
