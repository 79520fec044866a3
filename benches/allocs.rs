//! Heap allocations per call, counted by a global allocator in this process: the
//! caller side only (the host's dispatcher, reader and writer threads included; the
//! children are other processes). Per call = allocations during a run / calls.
//! `cargo bench --bench allocs [-- --quick]`.

#[path = "support/lsp_peer.rs"]
mod lsp_peer;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use octet_host::bench::suite::standard_subjects;

/// Counts allocations (reallocations included) and requested bytes.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

fn count(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        eprintln!("run with `cargo bench --bench allocs [-- --quick]`");
        return;
    }
    let calls: u64 = if args.iter().any(|a| a == "--quick") {
        2_000
    } else {
        20_000
    };
    let exe = Path::new(env!("CARGO_BIN_EXE_octet-host"));
    let mut subjects = standard_subjects(exe).expect("starting the subjects");
    subjects.push(Box::new(
        lsp_peer::LspPeer::spawn(exe).expect("starting the lsp-server peer"),
    ));
    println!("| subject | depth | allocations/call | bytes allocated/call |");
    println!("|---|---:|---:|---:|");
    for depth in [1, 64] {
        for subject in &mut subjects {
            // Warm up: lazily grown buffers and pools reach their steady size.
            subject.run(calls / 10, depth).expect("warm-up");
            let (allocations, bytes) = (
                ALLOCATIONS.load(Ordering::Relaxed),
                BYTES.load(Ordering::Relaxed),
            );
            subject.run(calls, depth).expect("round trips");
            let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
            let bytes = BYTES.load(Ordering::Relaxed) - bytes;
            println!(
                "| {} | {depth} | {:.1} | {:.0} |",
                subject.name(),
                allocations as f64 / calls as f64,
                bytes as f64 / calls as f64,
            );
        }
    }
}
