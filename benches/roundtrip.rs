//! Criterion benches of the round trips: every subject of `octet-host bench` plus the
//! `lsp-server` peer, at depth 1 (latency) and 64 in flight (throughput), and the busy
//! fleet of 50 extensions. `cargo bench --bench roundtrip [-- --quick]`.

#[path = "support/lsp_peer.rs"]
mod lsp_peer;

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use octet_host::bench::octet::Fleet;
use octet_host::bench::suite::standard_subjects;
use octet_host::bench::RoundTrip;

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_octet-host"))
}

fn roundtrip(c: &mut Criterion) {
    let mut subjects = standard_subjects(exe()).expect("starting the subjects");
    subjects.push(Box::new(
        lsp_peer::LspPeer::spawn(exe()).expect("starting the lsp-server peer"),
    ));
    for depth in [1, 64] {
        let mut group = c.benchmark_group(format!("depth{depth}"));
        group.throughput(Throughput::Elements(1));
        for subject in &mut subjects {
            let name = subject.name().replace(' ', "_");
            group.bench_function(name, |b| {
                b.iter_custom(|calls| subject.run(calls, depth).expect("round trips"))
            });
        }
        group.finish();
    }
}

fn fleet(c: &mut Criterion) {
    let (mut fleet, _memory) = Fleet::start(exe(), 50, 50, "0.4").expect("starting the fleet");
    let mut group = c.benchmark_group("fleet");
    group.throughput(Throughput::Elements(1));
    group.bench_function("busy_50x8", |b| {
        b.iter_custom(|calls| fleet.run(calls, 8).expect("fleet round trips"))
    });
    group.finish();
}

criterion_group!(benches, roundtrip, fleet);
criterion_main!(benches);
