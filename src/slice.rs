//! Short scheduler slices for the threads on a call's path, so that a hand-off wakes
//! its receiver at once on a machine whose CPUs are all busy.
//!
//! Linux's fair scheduler (EEVDF, 6.6 and later) gives each runnable thread a virtual
//! deadline one slice after it became eligible, and a thread that wakes up preempts
//! the running one only when its deadline is earlier. With the default slice (about
//! 3 ms on a 2-CPU machine) a host thread that wakes beside a build's compiler often
//! waits for the compiler's slice to end: a `tool/call` crosses four hand-offs, and an
//! SDK extension adds more, so a call took milliseconds on a loaded machine
//! (`benches/README.md`, "History", 2026-12-04). Since Linux 6.12 a thread may ask for a
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
//! changes its own slice before a wait, at most once per back-off period.
//!
//! An embedder's thread is never changed unasked, not even while it waits in
//! [`crate::host::PendingCall::wait`]. Giving it the short slice for each wait cost
//! more than it bought. The change and its undoing are two `sched_setattr` calls per
//! wait, and the undoing comes just after the wake-up, when the scheduler requeues the
//! thread with the default slice's later deadline, likely behind the busy work. With a
//! busy loop per core, depth-1 calls through an SDK extension took 520-604 µs with it
//! and 105-266 µs without (`benches/README.md`). An embedder may ask for the short
//! slice on a thread of its own for as long as it likes: [`PromptWakeups`].
//!
//! On other kernels and systems, and for threads that run under another policy (an
//! embedder's `SCHED_BATCH` or real-time thread), nothing changes.

use std::cell::Cell;
use std::marker::PhantomData;
use std::time::Duration;

/// The slice the runtime's threads ask for while the machine is oversubscribed.
pub(crate) const SHORT_SLICE: Duration = Duration::from_micros(100);

/// How the runtime follows the load on one of its threads.
#[derive(Clone, Copy, Debug)]
struct Own {
    /// Whether the thread has [`SHORT_SLICE`] now.
    short: bool,
    /// What the thread has while the machine is not oversubscribed: the default slice
    /// on a thread the runtime started, and on a thread it borrowed whatever that
    /// thread had when it was lent.
    base: Previous,
}

thread_local! {
    /// `None` on a thread the runtime does not own, which it never changes; for its
    /// own threads, how their slice follows the load.
    static OWN: Cell<Option<Own>> = const { Cell::new(None) };
}

/// The default slice, with threads and processes inheriting the thread's attributes.
const DEFAULT: Previous = Previous {
    slice: 0,
    reset_on_fork: ResetOnFork::Clear,
};

/// Marks the calling thread as one of the runtime's own, whose slice follows the load.
pub(crate) fn own_thread() {
    OWN.with(|own| {
        own.set(Some(Own {
            short: false,
            base: DEFAULT,
        }))
    });
}

/// Borrows the calling thread, an embedder's (the SDK's reader runs on the extension's
/// own thread): its slice follows the load like a runtime thread's until
/// [`release_thread`], which gives back the slice and reset-on-fork flag it has now.
#[cfg(feature = "sdk")]
pub(crate) fn borrow_thread() {
    let base = current().unwrap_or(DEFAULT);
    OWN.with(|own| own.set(Some(Own { short: false, base })));
}

/// Gives a thread lent by [`borrow_thread`] back as it was lent: the slice and flag it
/// had then, and no longer followed.
#[cfg(feature = "sdk")]
pub(crate) fn release_thread() {
    follow_load(false);
    OWN.with(|own| own.set(None));
}

/// Gives the calling thread, if it is the runtime's own, [`SHORT_SLICE`] while
/// `oversubscribed` and its base slice (the default one, or what a borrowed thread
/// had) otherwise.
pub(crate) fn follow_load(oversubscribed: bool) {
    OWN.with(|own| {
        if let Some(mut state) = own.get() {
            if state.short != oversubscribed {
                state.short = oversubscribed;
                own.set(Some(state));
                let _ = match oversubscribed {
                    true => set_slice(short_nanos(), ResetOnFork::Clear),
                    false => set_slice(state.base.slice, state.base.reset_on_fork),
                };
            }
        }
    });
}

/// The short scheduler slice for an embedder's own thread while this guard lives: a
/// thread that waits for calls now and then on a machine whose CPUs are all busy (an
/// editor's thread beside a build) then wakes at once when an answer arrives, instead
/// of waiting for a busy program's slice to end.
///
/// On Linux 6.12 and later, the calling thread asks for a 100 µs slice
/// (`sched_attr.sched_runtime` under `SCHED_OTHER`, no privilege needed): its
/// deadlines come sooner, so the scheduler lets it preempt on wake-up, and it runs no
/// longer at a time than that while others wait. Its share of the CPU is unchanged.
/// Dropping the guard gives the thread back the slice it had.
///
/// The short slice stays on this thread. Threads and processes it creates while the
/// guard lives (a host it builds, the extensions it starts) begin with the default
/// slice: the guard also sets `SCHED_FLAG_RESET_ON_FORK`; without it they would
/// inherit the short slice. The flag also starts them at nice 0 when this thread's
/// nice value is negative.
///
/// What it buys and costs, measured on the 2-core benchmark machine with a busy loop
/// per core (the eighth step of round 2, 2026-12-05, in the history of
/// `benches/README.md`; three runs each way; `cargo bench --bench table --
/// --prompt-wakeups`):
/// - Calls now and then through an SDK extension (one every 1.2 s): medians of
///   0.34-0.44 ms against 0.41-3.9 ms without it; in both, one call in ten or more
///   still waited 2.6-4 ms for a busy program's slice somewhere in the chain.
/// - 64 calls in flight from the thread: 1.5 to 4.5 times the calls per second.
/// - A steady stream of one call at a time: up to five times slower (SDK extension
///   128-420 µs a call against 69-110, bare extension 69-241 against 44-69), and on a
///   quiet machine up to 1.6 times, because the thread then preempts the runtime's
///   own threads on its CPU.
///
/// So it suits a thread that mostly sleeps and must answer a person quickly, not one
/// that calls in a tight loop. Nothing changes on other systems, on older kernels, for
/// a thread under another policy (`SCHED_BATCH`, real time), or on the runtime's own
/// threads (an SDK handler's worker), whose slice the runtime sets itself;
/// [`PromptWakeups::applied`] tells.
///
/// ```no_run
/// // On the thread that waits for the extensions' answers:
/// let _prompt = octet_host::host::PromptWakeups::for_this_thread();
/// ```
#[must_use = "the thread keeps the short slice only while the guard lives"]
#[derive(Debug)]
pub struct PromptWakeups {
    /// What the thread had, given back on drop; `None` when nothing was changed.
    previous: Option<Previous>,
    /// The slice belongs to the thread that asked: the guard may not leave it.
    _thread: PhantomData<*const ()>,
}

impl PromptWakeups {
    /// Gives the calling thread the short slice until the guard is dropped.
    pub fn for_this_thread() -> PromptWakeups {
        let own = OWN.with(Cell::get).is_some();
        PromptWakeups {
            previous: if own {
                None
            } else {
                set_slice(short_nanos(), ResetOnFork::Set)
            },
            _thread: PhantomData,
        }
    }

    /// True when the thread has the short slice: false on a system or kernel without
    /// one, for a thread under another policy, and on the runtime's own threads.
    pub fn applied(&self) -> bool {
        self.previous.is_some()
    }
}

impl Drop for PromptWakeups {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            let _ = set_slice(previous.slice, previous.reset_on_fork);
        }
    }
}

/// Whether threads and processes the thread creates start with the default slice
/// (`SCHED_FLAG_RESET_ON_FORK`) or with the thread's own (the kernel's default:
/// scheduling attributes are inherited).
#[derive(Clone, Copy, Debug, PartialEq)]
enum ResetOnFork {
    Set,
    Clear,
}

/// A thread's slice and its reset-on-fork flag before a change.
#[derive(Clone, Copy, Debug)]
struct Previous {
    /// In nanoseconds.
    slice: u64,
    reset_on_fork: ResetOnFork,
}

/// [`SHORT_SLICE`] in nanoseconds, as `sched_attr.sched_runtime` takes it.
fn short_nanos() -> u64 {
    SHORT_SLICE.as_nanos() as u64
}

/// `struct sched_attr` as of its first version (`SCHED_ATTR_SIZE_VER0`, 48 bytes).
#[cfg(target_os = "linux")]
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

/// The size of [`SchedAttr`] as the kernel takes it.
#[cfg(target_os = "linux")]
const SCHED_ATTR_SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;

/// The calling thread's scheduling attributes, when the kernel reports them.
#[cfg(target_os = "linux")]
fn read_attr() -> Option<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: the kernel writes at most `SCHED_ATTR_SIZE` bytes into `attr`, a plain
    // struct of that size; pid 0 is the calling thread.
    let read = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, SCHED_ATTR_SIZE, 0) };
    (read == 0).then_some(attr)
}

/// Asks for a slice of `nanos` (0: the default slice) for the calling thread, keeping
/// its policy and nice value, with `reset_on_fork` for what it creates; nothing is
/// asked of a thread under another policy. Best effort: a kernel that ignores or
/// refuses the request (before 6.12) leaves the thread as it was. What the thread had,
/// when the kernel took the request.
#[cfg(target_os = "linux")]
fn set_slice(nanos: u64, reset_on_fork: ResetOnFork) -> Option<Previous> {
    let mut attr = read_attr().filter(|a| a.sched_policy == libc::SCHED_OTHER as u32)?;
    let flag = libc::SCHED_FLAG_RESET_ON_FORK as u64;
    let previous = Previous::of(&attr);
    attr.size = SCHED_ATTR_SIZE;
    attr.sched_flags = match reset_on_fork {
        ResetOnFork::Set => flag,
        ResetOnFork::Clear => 0,
    };
    attr.sched_runtime = nanos;
    // SAFETY: `attr` is a valid `sched_attr` of `SCHED_ATTR_SIZE` bytes that the kernel
    // only reads.
    let set = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0) };
    (set == 0).then_some(previous)
}

/// Nothing to ask for on this system.
#[cfg(not(target_os = "linux"))]
fn set_slice(_nanos: u64, _reset_on_fork: ResetOnFork) -> Option<Previous> {
    None
}

/// The calling thread's slice and reset-on-fork flag, when the kernel reports them.
#[cfg(target_os = "linux")]
#[cfg_attr(not(feature = "sdk"), allow(dead_code))]
fn current() -> Option<Previous> {
    read_attr().map(|attr| Previous::of(&attr))
}

/// Nothing to read on this system.
#[cfg(not(target_os = "linux"))]
#[cfg_attr(not(feature = "sdk"), allow(dead_code))]
fn current() -> Option<Previous> {
    None
}

#[cfg(target_os = "linux")]
impl Previous {
    /// What `attr` says of the slice and the flag.
    fn of(attr: &SchedAttr) -> Previous {
        let flag = libc::SCHED_FLAG_RESET_ON_FORK as u64;
        Previous {
            slice: attr.sched_runtime,
            reset_on_fork: match attr.sched_flags & flag != 0 {
                true => ResetOnFork::Set,
                false => ResetOnFork::Clear,
            },
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Runs `test` on a thread of its own: a slice or a mark set there dies with it,
    /// whatever order the tests run in.
    fn on_fresh_thread(test: impl FnOnce() + Send + 'static) {
        std::thread::spawn(test).join().unwrap();
    }

    #[test]
    fn an_embedders_thread_is_never_changed() {
        on_fresh_thread(|| {
            follow_load(true);
            assert!(OWN.with(Cell::get).is_none());
        });
    }

    /// The calling thread's slice as the kernel reports it, in nanoseconds.
    fn slice_now() -> u64 {
        read_attr()
            .expect("sched_getattr reads the calling thread")
            .sched_runtime
    }

    #[test]
    fn prompt_wakeups_shorten_the_slice_and_give_the_old_one_back() {
        on_fresh_thread(|| {
            let before = slice_now();
            let prompt = PromptWakeups::for_this_thread();
            if prompt.applied() {
                assert_eq!(slice_now(), short_nanos());
            } else {
                // A kernel before 6.12 takes no slice of a thread's own.
                assert_eq!(slice_now(), before);
            }
            drop(prompt);
            assert_eq!(slice_now(), before);
        });
    }

    #[test]
    fn threads_created_under_prompt_wakeups_start_with_the_default_slice() {
        on_fresh_thread(|| {
            let before = slice_now();
            let prompt = PromptWakeups::for_this_thread();
            let spawned = std::thread::spawn(slice_now).join().unwrap();
            assert_eq!(spawned, before, "the short slice stays on its thread");
            drop(prompt);
            // And once it is gone, threads inherit the thread's slice as before.
            assert_eq!(std::thread::spawn(slice_now).join().unwrap(), before);
        });
    }

    #[test]
    fn prompt_wakeups_leave_the_runtimes_own_threads_alone() {
        on_fresh_thread(|| {
            own_thread();
            let before = slice_now();
            let prompt = PromptWakeups::for_this_thread();
            assert!(!prompt.applied());
            assert_eq!(slice_now(), before);
        });
    }

    /// A borrowed thread is given back with the slice and flag the embedder had set on
    /// it, whether or not the load changed its slice meanwhile.
    #[cfg(feature = "sdk")]
    #[test]
    fn a_borrowed_thread_gets_back_the_slice_it_had() {
        on_fresh_thread(|| {
            let two_ms = 2_000_000;
            if set_slice(two_ms, ResetOnFork::Set).is_none() {
                // A kernel before 6.12 takes no slice of a thread's own: nothing to
                // give back.
                return;
            }
            let had = current().unwrap();
            assert_eq!((had.slice, had.reset_on_fork), (two_ms, ResetOnFork::Set));
            for oversubscribed in [false, true] {
                borrow_thread();
                follow_load(oversubscribed);
                if oversubscribed {
                    assert_eq!(slice_now(), short_nanos());
                }
                follow_load(false);
                assert_eq!(slice_now(), two_ms, "the base slice while not loaded");
                follow_load(oversubscribed);
                release_thread();
                let now = current().unwrap();
                assert_eq!((now.slice, now.reset_on_fork), (two_ms, ResetOnFork::Set));
                assert!(OWN.with(Cell::get).is_none());
            }
        });
    }

    #[test]
    fn an_own_thread_keeps_its_policy_and_nice_value() {
        on_fresh_thread(|| {
            own_thread();
            // SAFETY: getpriority has no memory effects; 0 is the calling thread.
            let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            follow_load(true);
            assert_eq!(OWN.with(Cell::get).map(|o| o.short), Some(true));
            follow_load(false);
            assert_eq!(OWN.with(Cell::get).map(|o| o.short), Some(false));
            let after = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            assert_eq!(before, after);
            // SAFETY: as above.
            let policy = unsafe { libc::sched_getscheduler(0) };
            assert_eq!(policy, libc::SCHED_OTHER);
        });
    }
}
