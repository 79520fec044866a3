//! The CLI's terminal handoff (section 2.24): the CLI owns the foreground terminal, and
//! cedes it to an extension that asks with `terminal/acquire`.
//!
//! Ceding means what a shell does for a foreground job: the CLI saves the terminal's
//! settings (`tcgetattr`), hides its progress output, and makes the extension's process
//! group the terminal's foreground group (`tcsetpgrp`), so that the extension may read
//! the keyboard without being stopped by `SIGTTIN`. Taking it back restores both: the
//! saved settings (whatever raw mode the extension left) and the CLI's own foreground
//! group. That happens on `terminal/release`, when the holder's generation ends (the
//! host's [`HostEvent::TerminalGrantLost`](crate::host::HostEvent)), on a signal, and
//! when the CLI exits. While a process group that is not the foreground one calls
//! `tcsetpgrp`, the kernel sends it `SIGTTOU`; the CLI ignores that signal around the
//! call, as shells do.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::host::ExtensionHost;
use crate::services::bound::{
    NoParams, Refusal, Reply, ServiceCall, TerminalGrant, TerminalService,
};

/// True while an extension holds the terminal: the CLI draws no progress.
static HANDED_OFF: AtomicBool = AtomicBool::new(false);

/// The CLI's terminal, once one was bound.
static BOUND: OnceLock<Arc<Tty>> = OnceLock::new();

/// True while an extension holds the terminal.
pub(crate) fn handed_off() -> bool {
    HANDED_OFF.load(Ordering::Acquire)
}

/// Takes the terminal back, if an extension holds it: the saved settings and the
/// CLI's foreground group. Safe to call from any thread, any number of times.
pub(crate) fn restore_now() {
    if let Some(tty) = BOUND.get() {
        tty.restore();
    }
}

/// The controlling terminal and what the CLI saved of it.
pub(crate) struct Tty {
    fd: OwnedFd,
    /// The settings saved when the terminal was ceded, and the grant.
    ceded: Mutex<Option<(libc::termios, String)>>,
    grants: AtomicU64,
    /// The host, to find the holder's process group.
    host: OnceLock<std::sync::Weak<ExtensionHost>>,
}

impl Tty {
    /// The controlling terminal, when stdin is one.
    pub(crate) fn if_interactive() -> Option<Arc<Tty>> {
        use std::io::IsTerminal;
        if !std::io::stdin().is_terminal() {
            return None;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let tty = Arc::new(Tty {
            fd: file.into(),
            ceded: Mutex::new(None),
            grants: AtomicU64::new(0),
            host: OnceLock::new(),
        });
        BOUND.set(tty.clone()).ok()?;
        Some(tty)
    }

    /// Tells the terminal which host it serves, once built.
    pub(crate) fn attach(&self, host: &Arc<ExtensionHost>) {
        let _ = self.host.set(Arc::downgrade(host));
    }

    /// The process group of `call`'s generation (its pid: each extension leads its own).
    fn holder_group(&self, call: &ServiceCall) -> Option<libc::pid_t> {
        let host = self.host.get()?.upgrade()?;
        let status = host.status().into_iter().find(|s| {
            s.extension == call.source.extension && s.generation == call.source.generation
        })?;
        libc::pid_t::try_from(status.pid?).ok()
    }

    /// Makes `group` the terminal's foreground group.
    fn foreground(&self, group: libc::pid_t) -> bool {
        // SAFETY: a plain syscall on an open descriptor.
        without_sigttou(|| unsafe { libc::tcsetpgrp(self.fd.as_raw_fd(), group) } == 0)
    }

    /// The terminal's size, when the kernel knows it.
    fn size(&self) -> (u16, u16) {
        // SAFETY: TIOCGWINSZ fills the winsize it is given.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let known = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) } == 0;
        match known && size.ws_col > 0 {
            true => (size.ws_col, size.ws_row),
            false => (80, 24),
        }
    }

    /// Takes the terminal back, if it was ceded.
    fn restore(&self) {
        let Some((saved, _grant)) = self.ceded.lock().take() else {
            return;
        };
        // The CLI's group first, then its settings: from a background group the
        // settings call would raise SIGTTOU too.
        // SAFETY: getpgrp cannot fail; `saved` came from tcgetattr on the same
        // descriptor.
        self.foreground(unsafe { libc::getpgrp() });
        without_sigttou(|| unsafe { libc::tcsetattr(self.fd.as_raw_fd(), libc::TCSANOW, &saved) });
        HANDED_OFF.store(false, Ordering::Release);
    }
}

/// Runs `call` with `SIGTTOU` ignored, as shells do around terminal calls made from a
/// background process group, and puts the previous action back.
fn without_sigttou<R>(call: impl FnOnce() -> R) -> R {
    // SAFETY: the previous action is restored before returning.
    let previous = unsafe { libc::signal(libc::SIGTTOU, libc::SIG_IGN) };
    let result = call();
    // SAFETY: puts back what `signal` returned above.
    unsafe { libc::signal(libc::SIGTTOU, previous) };
    result
}

impl TerminalService for Arc<Tty> {
    fn acquire(&self, call: ServiceCall, _: NoParams, reply: Reply<TerminalGrant>) {
        let mut ceded = self.ceded.lock();
        if ceded.is_some() {
            return reply.refuse(Refusal::InvalidRequest.because("the terminal is already ceded"));
        }
        // SAFETY: tcgetattr fills the termios it is given.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(self.fd.as_raw_fd(), &mut saved) } != 0 {
            return reply.refuse(
                Refusal::NotForegroundOwner.because("the CLI has no foreground terminal to cede"),
            );
        }
        let Some(group) = self.holder_group(&call) else {
            return reply
                .refuse(Refusal::NotForegroundOwner.because("the extension has no process"));
        };
        // The progress view stops drawing (and clears its bar) once it sees this.
        HANDED_OFF.store(true, Ordering::Release);
        if !self.foreground(group) {
            HANDED_OFF.store(false, Ordering::Release);
            return reply.refuse(
                Refusal::NotForegroundOwner.because("the CLI is not the terminal's foreground job"),
            );
        }
        let n = self.grants.fetch_add(1, Ordering::Relaxed) + 1;
        let grant_id = format!("cli-tty-{n}");
        *ceded = Some((saved, grant_id.clone()));
        drop(ceded);
        let (columns, rows) = self.size();
        reply.ok(TerminalGrant {
            grant_id,
            columns,
            rows,
        });
    }

    fn release(&self, _call: ServiceCall, _: NoParams, reply: Reply<()>) {
        self.restore();
        reply.ok(());
    }
}
