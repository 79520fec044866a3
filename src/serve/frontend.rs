//! The interactive frontend `serve` installs: each confirmation or input request from an
//! extension becomes a `confirmation_request` / `input_request` line, and the host's
//! frontend thread waits until the client answers with `answer_confirmation` /
//! `answer_input`, the question is no longer wanted, or the client's input closes.

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_channel::Sender;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::control::Secret;
use super::error::{ErrorCode, ServeError};
use super::io::Emitter;
use crate::host::{CancelFlag, ConfirmationRequest, Frontend, GenerationRef, InputRequest};

/// An answer from the client.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `answer_confirmation`.
    Confirmed(bool),
    /// `answer_input`; `None` cancels.
    Input(Option<Secret>),
}

/// The kind of a pending question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QuestionKind {
    Confirmation,
    Input,
}

/// A question waiting for the client.
struct Pending {
    kind: QuestionKind,
    answer: Sender<Answer>,
}

/// Every pending question, and whether new ones can still be asked.
#[derive(Default)]
struct Questions {
    next_id: u64,
    pending: HashMap<u64, Pending>,
    closed: bool,
}

/// The frontend shared by the host's frontend threads and the control loop.
pub(crate) struct ServeFrontend {
    out: Emitter,
    questions: Mutex<Questions>,
}

/// Why a question ended without an answer, as sent in `request_cancelled`.
#[derive(Clone, Copy)]
pub(crate) enum CancelCause {
    /// The host no longer wants the answer (the call settled, the extension cancelled
    /// the request, or its generation ended).
    NoLongerWanted,
    /// `serve` is shutting down (the `shutdown` operation, or the end of its input).
    Shutdown,
}

impl CancelCause {
    fn as_str(self) -> &'static str {
        match self {
            CancelCause::NoLongerWanted => "no_longer_wanted",
            CancelCause::Shutdown => "shutdown",
        }
    }
}

impl ServeFrontend {
    /// A frontend writing its questions through `out`.
    pub fn new(out: Emitter) -> Arc<ServeFrontend> {
        Arc::new(ServeFrontend {
            out,
            questions: Mutex::new(Questions {
                next_id: 1,
                ..Questions::default()
            }),
        })
    }

    /// Delivers the client's answer to question `request_id`.
    pub fn answer(&self, request_id: u64, answer: Answer) -> Result<(), ServeError> {
        let mut questions = self.questions.lock();
        let Some(pending) = questions.pending.get(&request_id) else {
            return Err(ServeError::new(
                ErrorCode::UnknownRequestId,
                format!("no question {request_id} is waiting for an answer"),
            ));
        };
        let kind = match answer {
            Answer::Confirmed(_) => QuestionKind::Confirmation,
            Answer::Input(_) => QuestionKind::Input,
        };
        if pending.kind != kind {
            let expected = match pending.kind {
                QuestionKind::Confirmation => "answer_confirmation",
                QuestionKind::Input => "answer_input",
            };
            return Err(ServeError::new(
                ErrorCode::RequestKindMismatch,
                format!("question {request_id} is answered with {expected}"),
            ));
        }
        let pending = questions
            .pending
            .remove(&request_id)
            .expect("the question was just found");
        // The channel has room for the one answer, so this never blocks; a waiter that
        // gave up in the meantime simply never reads it.
        let _ = pending.answer.try_send(answer);
        Ok(())
    }

    /// A fresh request id for a line that waits for the client (a question or a
    /// `service_request`), or `None` once serve is closing.
    pub fn next_request_id(&self) -> Option<u64> {
        let mut questions = self.questions.lock();
        if questions.closed {
            return None;
        }
        let request_id = questions.next_id;
        questions.next_id += 1;
        Some(request_id)
    }

    /// Stops asking: every pending question ends (denied or cancelled) with a
    /// `request_cancelled` line written before this returns, and new questions are
    /// answered at once without a line.
    pub fn close(&self) {
        // The lock is not held while the lines are written: the dispatcher takes it for
        // a request id (`next_request_id`) and must never wait for serve's output.
        let mut ids: Vec<u64> = {
            let mut questions = self.questions.lock();
            questions.closed = true;
            questions.pending.drain().map(|(id, _)| id).collect()
        };
        ids.sort_unstable();
        for request_id in ids {
            self.out
                .emit(cancelled_line(request_id, CancelCause::Shutdown));
        }
    }

    /// Asks the client and waits for the answer, or `None` when the question ended
    /// without one.
    fn ask(
        &self,
        kind: QuestionKind,
        source: &GenerationRef,
        fields: Value,
        cancelled: &CancelFlag,
    ) -> Option<Answer> {
        let (answer, answers) = crossbeam_channel::bounded(1);
        let request_id = {
            let mut questions = self.questions.lock();
            if questions.closed {
                return None;
            }
            let request_id = questions.next_id;
            questions.next_id += 1;
            questions
                .pending
                .insert(request_id, Pending { kind, answer });
            request_id
        };
        let mut line = Map::new();
        let type_name = match kind {
            QuestionKind::Confirmation => "confirmation_request",
            QuestionKind::Input => "input_request",
        };
        line.insert("type".into(), type_name.into());
        line.insert("request_id".into(), request_id.into());
        source.insert_into(&mut line);
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        self.out.emit(Value::Object(line));
        crossbeam_channel::select! {
            recv(answers) -> answer => match answer {
                Ok(answer) => return Some(answer),
                // `close` dropped the question and already wrote its line.
                Err(_) => return None,
            },
            recv(cancelled.receiver()) -> _ => {}
        }
        let removed = self.questions.lock().pending.remove(&request_id).is_some();
        if !removed {
            // The client's answer was accepted just before the question ended: it is in
            // the channel, and the client was told it was taken. The host ignores it if
            // it is no longer wanted.
            if let Ok(answer) = answers.try_recv() {
                return Some(answer);
            }
        }
        self.out
            .emit(cancelled_line(request_id, CancelCause::NoLongerWanted));
        None
    }
}

/// `{"type": "request_cancelled", "request_id": .., "reason": ..}`.
pub(crate) fn cancelled_line(request_id: u64, cause: CancelCause) -> Value {
    json!({"type": "request_cancelled", "request_id": request_id, "reason": cause.as_str()})
}

/// The [`Frontend`] the host is built with: a handle on the shared [`ServeFrontend`],
/// and whether the client answers questions at all (not when it declared itself
/// headless: questions are then denied or cancelled at once, never sent).
pub(crate) struct FrontendHandle(pub Arc<ServeFrontend>, pub bool);

impl Frontend for FrontendHandle {
    fn is_interactive(&self) -> bool {
        self.1
    }

    fn confirm(&self, request: ConfirmationRequest) -> bool {
        let fields = json!({
            "prompt": request.prompt,
            "detail": request.detail,
            "destructive": request.destructive,
            "default": request.default,
        });
        match self.0.ask(
            QuestionKind::Confirmation,
            &request.source,
            fields,
            &request.cancelled,
        ) {
            Some(Answer::Confirmed(confirmed)) => confirmed,
            _ => false,
        }
    }

    fn input(&self, request: InputRequest) -> Option<String> {
        let fields = json!({"prompt": request.prompt, "secret": request.secret});
        match self.0.ask(
            QuestionKind::Input,
            &request.source,
            fields,
            &request.cancelled,
        ) {
            Some(Answer::Input(value)) => value.map(Secret::into_inner),
            _ => None,
        }
    }
}
