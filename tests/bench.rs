//! The benchmark subjects work end to end at a tiny scale (no timing is asserted).

use std::path::Path;

use octet_host::bench::floor::{FloorMode, FloorPeer};
use octet_host::bench::octet::Fleet;
use octet_host::bench::suite::standard_subjects;
use octet_host::bench::RoundTrip;

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_octet-host"))
}

#[test]
fn every_standard_subject_completes_its_calls_one_at_a_time_and_pipelined() {
    let mut subjects = standard_subjects(exe()).unwrap();
    let names: Vec<String> = subjects.iter().map(|s| s.name().to_owned()).collect();
    assert_eq!(
        names,
        [
            "floor_pipe",
            "floor_json",
            "floor_json 1cpu",
            "floor_shape",
            "octet_host sdk 0.1",
            "octet_host sdk 0.4",
            "octet_host bare 0.4"
        ]
    );
    for subject in &mut subjects {
        for (calls, depth) in [(3, 1), (40, 16), (5, 64)] {
            if let Err(e) = subject.run(calls, depth) {
                panic!("{}: {calls} calls at depth {depth}: {e}", subject.name());
            }
        }
    }
}

#[test]
fn the_pipe_floor_moves_a_line_of_about_120_bytes() {
    let peer = FloorPeer::spawn(exe(), FloorMode::Pipe).unwrap();
    let bytes = peer.line().len();
    assert!((110..=130).contains(&bytes), "{bytes} bytes");
}

/// The one-CPU floor pins its child and the measuring thread to one CPU for the run,
/// and gives the thread its CPUs back afterwards.
#[cfg(target_os = "linux")]
#[test]
fn the_one_cpu_floor_pins_both_ends_for_the_run_only() {
    let allowed = |path: &str| {
        let status = std::fs::read_to_string(path).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .expect("a Cpus_allowed_list line");
        line["Cpus_allowed_list:".len()..].trim().to_owned()
    };
    let before = allowed("/proc/thread-self/status");
    let mut peer = FloorPeer::spawn(exe(), FloorMode::JsonOneCpu).unwrap();
    peer.run(10, 1).unwrap();
    peer.run(10, 4).unwrap();
    assert_eq!(allowed("/proc/thread-self/status"), before);
    let child = allowed(&format!("/proc/{}/status", peer.child_id()));
    assert!(
        child.parse::<u32>().is_ok(),
        "the child runs on one CPU: {child}"
    );
}

#[test]
fn a_fleet_reports_memory_for_every_extension_and_spreads_calls() {
    let (mut fleet, memory) = Fleet::start(exe(), 3, 2, "0.4").unwrap();
    assert_eq!(memory.extensions, 3);
    assert!(memory.children.resident_kib > 0);
    assert!(memory.children.anonymous_kib > 0);
    assert!(memory.host_before.resident_kib > 0);
    assert_eq!(fleet.host().status().len(), 3);
    fleet.run(7, 2).unwrap();
}
