//! Short scheduler slices for the threads on a call's path, so that a hand-off wakes
//! its receiver at once on a machine whose CPUs are all busy.
//!
//! Linux's fair scheduler (EEVDF, 6.6 and later) gives each runnable thread a virtual
//! deadline one slice after it became eligible, and a thread that wakes up preempts
//! the running one only when its deadline is earlier. With the default slice (about
//! 3 ms on a 2-CPU machine) a host thread that wakes beside a build's compiler often
//! waits for the compiler's slice to end: a `tool/call` crosses four hand-offs, and an
//! SDK extension adds more, so a call took milliseconds on a loaded machine
//! (`benches/README.md`, "Loaded machine"). Since Linux 6.12 a thread may ask for a
//! shorter slice of its own (`sched_attr.sched_runtime` under `SCHED_OTHER`; no
//! privilege needed, 0.1 ms to 100 ms): its deadlines come sooner, so it preempts on
//! wake-up, and it runs no longer at a time than it asked for. Its share of the CPU
//! over time is unchanged; only when it runs changes.
//!
//! On a quiet machine the short slice costs: the host's threads then wake each other
//! by preempting, and a depth-1 call through an SDK extension took about twice as
//! long. So the runtime's own threads (the dispatcher, every reader and writer, the
//! SDK's threads, never an embedder's) follow the load: they ask for [`SHORT_SLICE`]
//! while the process backs off from spinning because the machine is oversubscribed
//! (`spin.rs`), and for the default slice again once it no longer does. Each thread
//! changes its own slice before a wait, at most once per back-off period. An
//! embedder's thread blocked in [`crate::host::PendingCall::wait`] has the short slice
//! only for that wait, and only on an oversubscribed machine ([`ShortWhileWaiting`]).
//!
//! On other kernels and systems, and for threads that run under another policy (an
//! embedder's `SCHED_BATCH` or real-time thread), nothing changes.

use std::cell::Cell;
use std::time::Duration;

/// The slice the runtime's threads ask for while the machine is oversubscribed.
pub(crate) const SHORT_SLICE: Duration = Duration::from_micros(100);

thread_local! {
    /// `None` on a thread the runtime does not own, which it never changes; for its
    /// own threads, whether the slice is short now.
    static OWN: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Marks the calling thread as one of the runtime's own, whose slice follows the load.
pub(crate) fn own_thread() {
    OWN.with(|own| own.set(Some(false)));
}

/// While it lives, an embedder's thread that waits for a call has [`SHORT_SLICE`] on
/// an oversubscribed machine, so that the answer wakes it at once; dropped, the thread
/// has the slice it had before again (the default, or one the embedder chose).
/// Nothing changes on a quiet machine, or for the runtime's own threads (they follow
/// the load anyway).
pub(crate) struct ShortWhileWaiting {
    /// The slice to restore, in nanoseconds (0: the default), when it was changed.
    previous: Option<u64>,
}

impl ShortWhileWaiting {
    /// Starts the wait; `oversubscribed` is whether the process backs off from
    /// spinning now (`spin.rs`).
    pub(crate) fn begin(oversubscribed: bool) -> ShortWhileWaiting {
        let borrowed = OWN.with(Cell::get).is_none();
        let previous = (borrowed && oversubscribed)
            .then(|| set_slice(short_nanos()))
            .flatten();
        ShortWhileWaiting { previous }
    }
}

impl Drop for ShortWhileWaiting {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            set_slice(previous);
        }
    }
}

/// Gives a thread the runtime borrowed (the SDK's reader runs on the extension's own
/// thread) back as it was: the default slice, and no longer followed.
#[cfg(feature = "sdk")]
pub(crate) fn release_thread() {
    follow_load(false);
    OWN.with(|own| own.set(None));
}

/// Gives the calling thread, if it is the runtime's own, [`SHORT_SLICE`] while
/// `oversubscribed` and the default slice otherwise.
pub(crate) fn follow_load(oversubscribed: bool) {
    OWN.with(|own| {
        if let Some(short) = own.get() {
            if short != oversubscribed {
                own.set(Some(oversubscribed));
                set_slice(if oversubscribed { short_nanos() } else { 0 });
            }
        }
    });
}

/// [`SHORT_SLICE`] in nanoseconds, as `sched_attr.sched_runtime` takes it.
fn short_nanos() -> u64 {
    SHORT_SLICE.as_nanos() as u64
}

/// Asks for a slice of `nanos` (0: the default slice) for the calling thread, keeping
/// its policy and nice value, and returns the slice it had (0: the default); `None`
/// when nothing was asked (another policy, or a kernel that does not know the call).
/// Best effort: a kernel that ignores or refuses the request leaves the thread as it
/// was.
#[cfg(target_os = "linux")]
fn set_slice(nanos: u64) -> Option<u64> {
    /// `struct sched_attr` as of its first version (`SCHED_ATTR_SIZE_VER0`, 48 bytes).
    #[repr(C)]
    #[derive(Default)]
    struct SchedAttr {
        size: u32,
        sched_policy: u32,
        sched_flags: u64,
        sched_nice: i32,
        sched_priority: u32,
        sched_runtime: u64,
        sched_deadline: u64,
        sched_period: u64,
    }
    const SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;
    let mut attr = SchedAttr::default();
    // SAFETY: the kernel writes at most `SIZE` bytes into `attr`, a plain struct of
    // that size; pid 0 is the calling thread.
    let read = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, SIZE, 0) };
    if read != 0 || attr.sched_policy != libc::SCHED_OTHER as u32 {
        return None;
    }
    let previous = attr.sched_runtime;
    attr.size = SIZE;
    attr.sched_flags = 0;
    attr.sched_runtime = nanos;
    // SAFETY: `attr` is a valid `sched_attr` of `SIZE` bytes that the kernel only reads.
    unsafe {
        libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0);
    }
    Some(previous)
}

/// Nothing to ask for on this system.
#[cfg(not(target_os = "linux"))]
fn set_slice(_nanos: u64) -> Option<u64> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn an_embedders_thread_is_never_changed() {
        std::thread::spawn(|| {
            follow_load(true);
            assert_eq!(OWN.with(Cell::get), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_wait_gives_an_embedders_thread_its_own_slice_back() {
        std::thread::spawn(|| {
            // The embedder's choice: 2 ms (a kernel before 6.12 keeps the default).
            set_slice(2_000_000);
            // Asking again for the same changes nothing and reads what the thread has.
            let chosen = set_slice(2_000_000);
            drop(ShortWhileWaiting::begin(true));
            assert_eq!(set_slice(chosen.unwrap_or(0)), chosen);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_own_thread_keeps_its_policy_and_nice_value() {
        std::thread::spawn(|| {
            own_thread();
            // SAFETY: getpriority has no memory effects; 0 is the calling thread.
            let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            follow_load(true);
            assert_eq!(OWN.with(Cell::get), Some(true));
            follow_load(false);
            assert_eq!(OWN.with(Cell::get), Some(false));
            let after = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            assert_eq!(before, after);
            // SAFETY: as above.
            let policy = unsafe { libc::sched_getscheduler(0) };
            assert_eq!(policy, libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }
}
