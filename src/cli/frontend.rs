//! Asking the person at the terminal: confirmations and input requests from extensions
//! (sections 2.2 and 2.7). Used only when stdin is a terminal; otherwise the CLI keeps
//! the headless default, which denies confirmations and cancels input.

use std::io::{BufRead, IsTerminal, Write};
use std::os::fd::AsRawFd;

use parking_lot::Mutex;

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

/// Reads one line from stdin; `None` at EOF or on error.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}

/// Turns terminal echo off for as long as it lives (termios, as `stty -echo` does).
struct NoEcho {
    saved: Option<libc::termios>,
}

impl NoEcho {
    fn new() -> NoEcho {
        let fd = std::io::stdin().as_raw_fd();
        // SAFETY: tcgetattr/tcsetattr only read and write the termios struct we own.
        unsafe {
            let mut termios: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut termios) != 0 {
                return NoEcho { saved: None };
            }
            let saved = termios;
            termios.c_lflag &= !libc::ECHO;
            termios.c_lflag |= libc::ECHONL;
            if libc::tcsetattr(fd, libc::TCSANOW, &termios) != 0 {
                return NoEcho { saved: None };
            }
            NoEcho { saved: Some(saved) }
        }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restores the attributes read in `new`.
            unsafe {
                libc::tcsetattr(std::io::stdin().as_raw_fd(), libc::TCSANOW, saved);
            }
        }
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
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{} asks: {}", request.source, request.prompt);
        if let Some(detail) = &request.detail {
            let _ = writeln!(err, "  {detail}");
        }
        let hint = if request.default { "[Y/n]" } else { "[y/N]" };
        let warning = if request.destructive {
            " (destructive)"
        } else {
            ""
        };
        let _ = write!(err, "confirm{warning} {hint} ");
        let _ = err.flush();
        drop(err);
        match read_line().map(|l| l.trim().to_ascii_lowercase()) {
            Some(answer) if answer.is_empty() => request.default,
            Some(answer) => answer == "y" || answer == "yes",
            None => false,
        }
    }

    fn input(&self, request: InputRequest) -> Option<String> {
        let _turn = self.asking.lock();
        if request.cancelled.is_cancelled() {
            return None;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{} asks: {} ", request.source, request.prompt);
        let _ = err.flush();
        drop(err);
        let _quiet = request.secret.then(NoEcho::new);
        read_line()
    }
}
