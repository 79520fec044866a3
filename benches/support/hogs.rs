//! Busy-loop processes beside a benchmark: `--load N` (or `cpus`, one per CPU) runs
//! them for the whole run, a laptop running a build.

use std::process::{Child, Command, Stdio};

/// Busy-loop processes that keep CPUs busy while the run measures; killed on drop.
pub struct Hogs(Vec<Child>);

impl Hogs {
    /// Starts `n` processes that spin forever at normal priority. Each dies with the
    /// bench (`PR_SET_PDEATHSIG`), also when it exits without dropping them.
    pub fn start(n: usize) -> Hogs {
        use std::os::unix::process::CommandExt;
        let hogs = (0..n)
            .map(|_| {
                let mut command = Command::new("sh");
                command
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null());
                // SAFETY: prctl is async-signal-safe and touches no memory of ours.
                unsafe {
                    command.pre_exec(|| {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        Ok(())
                    });
                }
                command.spawn().expect("starting a busy-loop process")
            })
            .collect();
        Hogs(hogs)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// The busy loops `--load` asks for in `args`: a number, `cpus` for one per CPU, or
/// none.
pub fn requested(args: &[String]) -> usize {
    let at = args.iter().position(|a| a == "--load");
    match at.and_then(|i| args.get(i + 1)).map(String::as_str) {
        None => 0,
        Some("cpus") => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) => n
            .parse()
            .expect("--load takes a number of processes or `cpus`"),
    }
}
