//! Measuring subjects side by side: warm-up, then interleaved rounds, medians.
//!
//! Every subject runs once per round, with the starting subject rotating, so a burst
//! of load from elsewhere on the machine hits all of them alike; the median over
//! rounds then discards the rounds it spoiled.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{BenchError, RoundTrip};
use crate::limits::MAX_FRAME_BYTES;
use crate::transport::reader::{split_and_decode, READ_BUFFER_BYTES};
use crate::transport::InboundFrame;
use crate::wire::codec::Codec;
use crate::wire::FrameSplitter;

/// How long to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Warm-up per subject (also sizes its rounds).
    pub warmup: Duration,
    /// Rounds per subject.
    pub rounds: usize,
    /// Target duration of one subject's round.
    pub round: Duration,
}

impl Plan {
    /// The full run: a few seconds per subject.
    pub fn full() -> Plan {
        Plan {
            warmup: Duration::from_millis(500),
            rounds: 10,
            round: Duration::from_millis(300),
        }
    }

    /// A smoke run: well under a second per subject.
    pub fn quick() -> Plan {
        Plan {
            warmup: Duration::from_millis(100),
            rounds: 3,
            round: Duration::from_millis(100),
        }
    }
}

/// One subject's rounds at one depth.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// The subject.
    pub name: String,
    /// Calls in flight.
    pub depth: usize,
    /// Calls per round.
    pub calls_per_round: u64,
    /// Time per call in each round.
    pub per_call: Vec<Duration>,
    /// CPU time of this process (the caller and, for the host, every host thread; not
    /// the child) per call in each round.
    pub cpu_per_call: Vec<Duration>,
}

impl Stats {
    /// The median time per call over the rounds.
    pub fn median(&self) -> Duration {
        median(&self.per_call)
    }

    /// The median CPU time of this process per call over the rounds.
    pub fn median_cpu(&self) -> Duration {
        median(&self.cpu_per_call)
    }

    /// Calls per second at the median.
    pub fn calls_per_second(&self) -> f64 {
        1.0 / self.median().as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "depth": self.depth,
            "median_us": self.median().as_secs_f64() * 1e6,
            "median_cpu_us": self.median_cpu().as_secs_f64() * 1e6,
            "calls_per_second": self.calls_per_second(),
            "calls_per_round": self.calls_per_round,
            "rounds": self.per_call.len(),
        })
    }
}

/// The median of `samples` (zero when empty).
pub fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

/// Measures every subject at `depth` following `plan`.
pub fn compare(
    subjects: &mut [&mut dyn RoundTrip],
    depth: usize,
    plan: Plan,
) -> Result<Vec<Stats>, BenchError> {
    compare_at_least(subjects, depth, plan, 1)
}

/// [`compare`] with at least `min_calls` calls per round: a busy fleet's round must
/// give each of its caller threads many calls, or the threads' start and the last
/// stragglers, not the host, set its time.
pub fn compare_at_least(
    subjects: &mut [&mut dyn RoundTrip],
    depth: usize,
    plan: Plan,
    min_calls: u64,
) -> Result<Vec<Stats>, BenchError> {
    let mut stats = Vec::with_capacity(subjects.len());
    for subject in subjects.iter_mut() {
        let per_call = warm_up(&mut **subject, depth, plan.warmup)?;
        let calls = (plan.round.as_secs_f64() / per_call.max(1e-9)).round() as u64;
        stats.push(Stats {
            name: subject.name().to_owned(),
            depth,
            calls_per_round: calls.max(depth as u64).max(min_calls),
            per_call: Vec::with_capacity(plan.rounds),
            cpu_per_call: Vec::with_capacity(plan.rounds),
        });
    }
    let count = subjects.len();
    for round in 0..plan.rounds {
        for k in 0..count {
            let i = (round + k) % count;
            let calls = stats[i].calls_per_round;
            let cpu_before = super::process_cpu_time()?;
            let elapsed = subjects[i].run(calls, depth)?;
            let cpu = super::process_cpu_time()?.saturating_sub(cpu_before);
            stats[i].per_call.push(Duration::from_secs_f64(
                elapsed.as_secs_f64() / calls as f64,
            ));
            stats[i]
                .cpu_per_call
                .push(Duration::from_secs_f64(cpu.as_secs_f64() / calls as f64));
        }
    }
    Ok(stats)
}

/// Runs growing batches for about `budget`; returns the last batch's seconds per call.
fn warm_up(subject: &mut dyn RoundTrip, depth: usize, budget: Duration) -> Result<f64, BenchError> {
    let start = Instant::now();
    let mut batch = (depth as u64).max(8);
    loop {
        let elapsed = subject.run(batch, depth)?;
        let per_call = elapsed.as_secs_f64() / batch as f64;
        if start.elapsed() >= budget {
            return Ok(per_call);
        }
        // Aim the next batch at a quarter of the budget.
        let target = (budget.as_secs_f64() / 4.0 / per_call.max(1e-9)) as u64;
        batch = target.clamp(batch, batch * 4);
    }
}

/// Frame decoding throughput: the reader thread's split-and-decode over a corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeStats {
    /// Corpus size.
    pub bytes: usize,
    /// Frames in the corpus.
    pub frames: usize,
    /// Time per pass over the corpus, per round.
    pub per_pass: Vec<Duration>,
}

impl DecodeStats {
    /// Megabytes (10^6 bytes) per second at the median.
    pub fn megabytes_per_second(&self) -> f64 {
        self.bytes as f64 / 1e6 / median(&self.per_pass).as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// Frames per second at the median.
    pub fn frames_per_second(&self) -> f64 {
        self.frames as f64 / median(&self.per_pass).as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// Realistic inbound frames (what extensions send the host), repeated up to about
/// `bytes`: echo results in both result shapes, progress, a notification, a
/// confirmation request and a 2 KiB tool result.
pub fn decode_corpus(bytes: usize) -> Vec<u8> {
    let text = super::echo_answer_text();
    let frames = [
        json!({"jsonrpc": "2.0", "id": 17, "result":
            {"content": [{"type": "text", "text": text}], "is_error": false}}),
        json!({"jsonrpc": "2.0", "id": 18, "result": {"content": text, "is_error": false}}),
        json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"request_id": 17,
            "sequence": 3, "event": {"kind": "status", "message": "step 3 of 20",
            "current": 3, "total": 20, "unit": "steps"}}}),
        json!({"jsonrpc": "2.0", "method": "notification", "params":
            {"level": "info", "title": "build", "message": "compiled 12 crates"}}),
        json!({"jsonrpc": "2.0", "id": "c-4", "method": "confirmation/request", "params":
            {"title": "Delete files?", "message": "3 files will be removed", "request_id": 19}}),
        json!({"jsonrpc": "2.0", "id": 20, "result": {"content": [{"type": "text",
            "text": "line of tool output\n".repeat(100)}], "is_error": false}}),
    ];
    let mut encoded = Vec::new();
    for frame in &frames {
        serde_json::to_writer(&mut encoded, frame).expect("a Value always encodes");
        encoded.push(b'\n');
    }
    let mut corpus = Vec::with_capacity(bytes + encoded.len());
    while corpus.len() < bytes {
        corpus.extend_from_slice(&encoded);
    }
    corpus
}

/// Splits and decodes `corpus` as the reader thread does for JSON-RPC generations
/// (reads of [`READ_BUFFER_BYTES`]); returns the number of messages.
pub fn decode_pass(corpus: &[u8]) -> usize {
    let mut splitter = FrameSplitter::new(MAX_FRAME_BYTES);
    corpus
        .chunks(READ_BUFFER_BYTES)
        .map(|chunk| {
            split_and_decode(&mut splitter, Codec::JsonRpc, chunk)
                .iter()
                .filter(|f| matches!(f, InboundFrame::Message(_)))
                .count()
        })
        .sum()
}

/// Measures [`decode_pass`] over a corpus of about `bytes`.
pub fn decode_throughput(bytes: usize, plan: Plan) -> DecodeStats {
    let corpus = decode_corpus(bytes);
    let frames = decode_pass(&corpus);
    let mut per_pass = Vec::with_capacity(plan.rounds);
    for _ in 0..plan.rounds {
        let start = Instant::now();
        let decoded = decode_pass(&corpus);
        per_pass.push(start.elapsed());
        assert_eq!(decoded, frames, "decoding is deterministic");
    }
    DecodeStats {
        bytes: corpus.len(),
        frames,
        per_pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subject whose calls take a fixed time each, without sleeping.
    struct Fixed {
        per_call: Duration,
        runs: usize,
    }

    impl RoundTrip for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn run(&mut self, calls: u64, _depth: usize) -> Result<Duration, BenchError> {
            self.runs += 1;
            Ok(self.per_call * calls as u32)
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(3), ms(1), ms(2)]), ms(2));
        assert_eq!(
            median(&[ms(4), ms(1), ms(2), ms(3)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn compare_runs_every_subject_once_per_round() {
        let mut a = Fixed {
            per_call: Duration::from_micros(10),
            runs: 0,
        };
        let plan = Plan {
            warmup: Duration::ZERO,
            rounds: 4,
            round: Duration::from_millis(1),
        };
        let stats = compare(&mut [&mut a], 1, plan).unwrap();
        assert_eq!(stats[0].per_call.len(), 4);
        assert_eq!(stats[0].calls_per_round, 100);
        assert_eq!(stats[0].median(), Duration::from_micros(10));
        assert_eq!(a.runs, 1 + 4, "one warm-up batch, then one run per round");
    }

    #[test]
    fn the_corpus_decodes_into_messages_only() {
        let corpus = decode_corpus(200_000);
        let lines = corpus.iter().filter(|&&b| b == b'\n').count();
        assert!(corpus.len() >= 200_000);
        assert_eq!(decode_pass(&corpus), lines);
    }
}
