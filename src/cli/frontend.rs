//! Asking the person at the terminal: confirmations and input requests from extensions
//! (sections 2.2 and 2.7), with `console` for the terminal (secret input without
//! echo). Used only when stdin is a terminal; otherwise the CLI keeps the headless
//! default, which denies confirmations and cancels input. `--yes` answers
//! confirmations yes without asking; `--no-input` never asks at all.
//!
//! A progress bar is suspended while a question is on the screen, so it cannot draw
//! over the prompt.

use std::io::IsTerminal;

use console::Term;
use parking_lot::Mutex;

use super::progress;
use crate::host::{ConfirmationRequest, Frontend, InputRequest};

/// A frontend on the controlling terminal. One question at a time.
pub(crate) struct TerminalFrontend {
    asking: Mutex<()>,
}

impl TerminalFrontend {
    /// A terminal frontend when stdin is a terminal.
    pub(crate) fn if_interactive() -> Option<TerminalFrontend> {
        std::io::stdin().is_terminal().then(|| TerminalFrontend {
            asking: Mutex::new(()),
        })
    }
}

impl Frontend for TerminalFrontend {
    fn is_interactive(&self) -> bool {
        true
    }

    fn confirm(&self, request: ConfirmationRequest) -> bool {
        let _turn = self.asking.lock();
        if request.cancelled.is_cancelled() {
            return false;
        }
        progress::suspended(|| {
            let term = Term::stderr();
            let _ = term.write_line(&format!("{} asks: {}", request.source, request.prompt));
            if let Some(detail) = &request.detail {
                let _ = term.write_line(&format!("  {detail}"));
            }
            let hint = if request.default { "[Y/n]" } else { "[y/N]" };
            let warning = if request.destructive {
                " (destructive)"
            } else {
                ""
            };
            let _ = term.write_str(&format!("confirm{warning} {hint} "));
            match term.read_line().map(|l| l.trim().to_ascii_lowercase()) {
                Ok(answer) if answer.is_empty() => request.default,
                Ok(answer) => answer == "y" || answer == "yes",
                Err(_) => false,
            }
        })
    }

    fn input(&self, request: InputRequest) -> Option<String> {
        let _turn = self.asking.lock();
        if request.cancelled.is_cancelled() {
            return None;
        }
        progress::suspended(|| {
            let term = Term::stderr();
            let _ = term.write_str(&format!("{} asks: {} ", request.source, request.prompt));
            let line = match request.secret {
                true => term.read_secure_line(),
                false => term.read_line(),
            };
            line.ok()
        })
    }
}

/// `--yes`: confirmations are answered yes without asking (each is noted on stderr);
/// input is asked on the terminal when there is one, and cancelled otherwise.
pub(crate) struct YesFrontend {
    terminal: Option<TerminalFrontend>,
}

impl YesFrontend {
    /// Answers yes, asking input on the terminal when stdin is one.
    pub(crate) fn new() -> YesFrontend {
        YesFrontend {
            terminal: TerminalFrontend::if_interactive(),
        }
    }
}

impl Frontend for YesFrontend {
    fn is_interactive(&self) -> bool {
        true
    }

    fn confirm(&self, request: ConfirmationRequest) -> bool {
        progress::suspended(|| {
            let _ = Term::stderr().write_line(&format!(
                "{} asks: {} (yes, by --yes)",
                request.source, request.prompt
            ));
        });
        true
    }

    fn input(&self, request: InputRequest) -> Option<String> {
        self.terminal.as_ref().and_then(|t| t.input(request))
    }
}
