//! Criterion benches of inbound frame decoding: the reader thread's split + decode
//! over realistic frames, and splitting alone. `cargo bench --bench decode`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use octet_host::bench::measure::{decode_corpus, decode_pass};
use octet_host::limits::MAX_FRAME_BYTES;
use octet_host::transport::reader::READ_BUFFER_BYTES;
use octet_host::wire::{FrameSplitter, Split};

fn decode(c: &mut Criterion) {
    let corpus = decode_corpus(4 << 20);
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(corpus.len() as u64));
    group.bench_function("split_and_decode", |b| {
        b.iter(|| decode_pass(black_box(&corpus)))
    });
    group.bench_function("split_only", |b| {
        b.iter(|| {
            let mut splitter = FrameSplitter::new(MAX_FRAME_BYTES);
            let mut frames = 0usize;
            for chunk in black_box(&corpus).chunks(READ_BUFFER_BYTES) {
                splitter.push(chunk, |split| {
                    if let Split::Frame(frame) = split {
                        frames += black_box(frame).len();
                    }
                });
            }
            frames
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
