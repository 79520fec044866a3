//! Whether the machine has more runnable threads than spinning can pay for.
//!
//! Spinning (`spin.rs`) pays while a CPU is free for the thread that will hand over
//! the next input. A busy fleet of extensions leaves none: each SDK extension is a
//! child with its own threads, each process limits only its own spinners, and with
//! ten or more extensions busy on the 2-core benchmark machine the spinning threads of
//! every process took turns with the work they waited for. Measured with every
//! thread of the host and of the children never spinning, against spinning as usual
//! (`benches/README.md`): 10 busy extensions 108-118k calls/s against 85-92k, 50
//! extensions 84-92k against 52-59k, 200 extensions 44-46k against 27-37k; one
//! extension 48-54k against 72-88k, so spinning must stay for the few.
//!
//! Linux counts the runnable threads of the whole machine (the fourth field of
//! `/proc/loadavg`, before the slash). One extension at depth 64 with its host kept
//! 3-10 runnable (median 4-5) on the benchmark machine, spinning threads included; a
//! busy fleet of 10 kept 12-38, and of 50, 37-178. More than [`limit`] means crowded.
//! Reading the count costs a few microseconds, so `spin.rs` looks at most once per
//! [`LOOK_EVERY`] per process.
//!
//! Elsewhere than on Linux the machine never counts as crowded.
//!
//! The same file-system view tells whether the CPUs stayed busy while this process
//! backed off from spinning because of slow yields and then waited ([`hardly_idle`]):
//! the machine's idle time (the `cpu` line of `/proc/stat`) then shows other
//! programs' work, since no thread of the process was spinning into it.

use std::sync::OnceLock;
use std::time::Duration;

/// How often a process looks at the machine's runnable threads at most.
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(10);

/// Runnable threads per CPU, and more, that a host and one busy extension may keep
/// (their spinners included) before the machine counts as crowded.
const RUNNABLE_PER_CPU: usize = 4;

/// Runnable threads the machine may have beyond [`RUNNABLE_PER_CPU`] per CPU.
const RUNNABLE_EXTRA: usize = 4;

/// The CPUs this process may run on, read once: on Linux the standard library reads
/// the affinity mask and the cgroup's quota each time it is asked.
pub(crate) fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The most runnable threads a machine that is not crowded has: 12 on two CPUs.
pub(crate) fn limit() -> usize {
    RUNNABLE_PER_CPU * cpus() + RUNNABLE_EXTRA
}

/// True when more threads than [`limit`] are runnable on the machine now.
pub(crate) fn crowded() -> bool {
    runnable_threads().is_some_and(|n| n > limit())
}

/// The machine's runnable threads now; `None` when the system does not say.
#[cfg(target_os = "linux")]
fn runnable_threads() -> Option<usize> {
    let mut text = [0u8; 128];
    parse_runnable(read_head("/proc/loadavg", &mut text)?)
}

/// The first bytes of the file at `path`, as many as one read into `text` gives: the
/// whole of `/proc/loadavg`, and the `cpu` line at the head of `/proc/stat`.
#[cfg(target_os = "linux")]
fn read_head<'a>(path: &str, text: &'a mut [u8]) -> Option<&'a [u8]> {
    use std::io::Read;
    let n = std::fs::File::open(path).ok()?.read(text).ok()?;
    Some(&text[..n])
}

/// The machine does not say on this system.
#[cfg(not(target_os = "linux"))]
fn runnable_threads() -> Option<usize> {
    None
}

/// The machine's idle time since boot, in clock ticks (`USER_HZ`, usually 100 a
/// second): the fourth number of `/proc/stat`'s `cpu` line. `None` when the system
/// does not say.
#[cfg(target_os = "linux")]
pub(crate) fn idle_ticks() -> Option<u64> {
    let mut text = [0u8; 256];
    parse_idle(read_head("/proc/stat", &mut text)?)
}

/// The system does not say.
#[cfg(not(target_os = "linux"))]
pub(crate) fn idle_ticks() -> Option<u64> {
    None
}

/// Idle time below this share of the CPUs' time means the CPUs were busy throughout.
const HARDLY_IDLE: f64 = 0.1;

/// True when `idle_ticks` of idle time over `elapsed` is less than a tenth of what
/// the CPUs could have idled: work kept them busy.
pub(crate) fn hardly_idle(idle_ticks: u64, elapsed: Duration) -> bool {
    let idle = idle_ticks as f64 / ticks_per_second();
    idle < HARDLY_IDLE * elapsed.as_secs_f64() * cpus() as f64
}

/// Clock ticks per second of `/proc/stat`.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// The idle ticks of a `/proc/stat` text: the fourth number of its first line,
/// `cpu  user nice system idle iowait ...`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_idle(text: &[u8]) -> Option<u64> {
    let line = text.split(|&b| b == b'\n').next()?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    if fields.next()? != b"cpu" {
        return None;
    }
    let idle = fields.nth(3)?;
    std::str::from_utf8(idle).ok()?.parse().ok()
}

/// The runnable count of a `/proc/loadavg` text such as `0.52 0.31 0.20 3/412 9876`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_runnable(text: &[u8]) -> Option<usize> {
    let field = text.split(|&b| b == b' ').nth(3)?;
    let running = field.split(|&b| b == b'/').next()?;
    std::str::from_utf8(running).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_runnable_count_before_the_slash() {
        assert_eq!(parse_runnable(b"0.52 0.31 0.20 3/412 9876\n"), Some(3));
        assert_eq!(parse_runnable(b"12.00 9.10 4.02 148/1930 77\n"), Some(148));
    }

    #[test]
    fn a_text_without_the_field_says_nothing() {
        assert_eq!(parse_runnable(b"0.52 0.31 0.20"), None);
        assert_eq!(parse_runnable(b"0.52 0.31 0.20 x/412 9876"), None);
        assert_eq!(parse_runnable(b""), None);
    }

    #[test]
    fn reads_the_idle_ticks_of_the_cpu_line() {
        let stat = b"cpu  4705 356 584 3699176 23 0 15 0 0 0\ncpu0 1393 280 284 1849 5 0 9 0 0 0\n";
        assert_eq!(parse_idle(stat), Some(3699176));
        assert_eq!(parse_idle(b"cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_idle(b"cpu  1 2 3\n"), None);
    }

    #[test]
    fn busy_cpus_are_hardly_idle() {
        let second = Duration::from_secs(1);
        assert!(hardly_idle(0, second));
        // Half of the CPUs' time idle.
        let half = (ticks_per_second() * cpus() as f64 / 2.0) as u64;
        assert!(!hardly_idle(half, second));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_reports_its_idle_time() {
        assert!(idle_ticks().is_some());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_counts_at_least_the_thread_asking() {
        assert!(runnable_threads().is_some_and(|n| n >= 1));
    }
}
