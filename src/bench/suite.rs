//! The whole run behind `octet-host bench`: every subject at depth 1 and at the
//! pipeline depth, frame decoding, memory per idle extension and a busy fleet, with
//! the results as a Markdown table (the one `benches/README.md` records) or JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::floor::{FloorMode, FloorPeer};
use super::measure::{compare, compare_at_least, decode_throughput, DecodeStats, Plan, Stats};
use super::octet::{EchoChild, ExtensionSpec, Fleet, FleetMemory, OctetFixture, OctetPeer};
use super::shape::ShapePeer;
use super::{BenchError, RoundTrip};

/// The JSON floor pinned to one CPU: the cheapest placement of the same exchange
/// (see [`FloorMode::JsonOneCpu`]).
pub const FLOOR_JSON_ONE_CPU: &str = "floor_json 1cpu";

/// The host's own thread shape with no protocol work (see [`ShapePeer`]): the limit of
/// the architecture, and what the goals are measured against (issue 19).
pub const FLOOR_SHAPE: &str = "floor_shape";

/// The references every subject is compared with, in the table's column order.
const REFERENCES: [&str; 4] = [FLOOR_SHAPE, FLOOR_JSON_ONE_CPU, LSP_SERVER, RMCP];

/// The peer subject's name (added by `benches/table.rs`).
pub const LSP_SERVER: &str = "lsp_server";

/// The second peer's name, `rmcp` over its stdio child-process transport (added by
/// `benches/table.rs`).
pub const RMCP: &str = "rmcp";

/// The peers the host must beat by 2x on both measures.
const PEERS: [&str; 2] = [LSP_SERVER, RMCP];

/// Goal: host latency at depth 1 at most this many times [`FLOOR_SHAPE`]'s.
pub const LATENCY_GOAL: f64 = 1.25;

/// Goal: host throughput at the pipeline depth at least this fraction of
/// [`FLOOR_SHAPE`]'s.
pub const THROUGHPUT_GOAL: f64 = 0.8;

/// What to run.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// The crate's binary: every child is this binary in a hidden mode.
    pub exe: PathBuf,
    /// How long to measure.
    pub plan: Plan,
    /// Calls in flight for the throughput table.
    pub depth: usize,
    /// SDK extensions started for the idle-memory measurement.
    pub idle_extensions: usize,
    /// How many of those the busy fleet drives at once.
    pub busy_extensions: usize,
    /// Calls in flight per busy extension.
    pub busy_in_flight: usize,
    /// Size of the frame-decoding corpus.
    pub decode_bytes: usize,
    /// The busy-fleet sizes of the scaling curve (those above `idle_extensions` are
    /// left out; `busy_extensions` is always one).
    pub scaling: Vec<usize>,
}

impl SuiteOptions {
    /// The defaults: 64 in flight, 200 idle extensions, 50 busy ones, and the scaling
    /// curve of issue 19 (1, 10, 50, 100 and 200 busy extensions).
    pub fn new(exe: PathBuf, quick: bool) -> SuiteOptions {
        SuiteOptions {
            exe,
            plan: if quick { Plan::quick() } else { Plan::full() },
            depth: 64,
            idle_extensions: 200,
            busy_extensions: 50,
            busy_in_flight: 8,
            decode_bytes: if quick { 2 << 20 } else { 16 << 20 },
            scaling: vec![1, 10, 50, 100, 200],
        }
    }
}

/// The floors and the host subjects: the host on the SDK echo extension on API 0.1
/// and 0.4, and on the bare echo on API 0.4.
pub fn standard_subjects(exe: &Path) -> Result<Vec<Box<dyn RoundTrip>>, BenchError> {
    let mut subjects: Vec<Box<dyn RoundTrip>> = vec![
        Box::new(FloorPeer::spawn(exe, FloorMode::Pipe)?),
        Box::new(FloorPeer::spawn(exe, FloorMode::Json)?),
        Box::new(FloorPeer::spawn(exe, FloorMode::JsonOneCpu)?),
        Box::new(ShapePeer::spawn(exe)?),
    ];
    let hosted = [
        ("sdk-0-1", "0.1", EchoChild::Sdk),
        ("sdk-0-4", "0.4", EchoChild::Sdk),
        ("bare-0-4", "0.4", EchoChild::Bare),
    ];
    let specs: Vec<ExtensionSpec> = hosted
        .iter()
        .map(|&(name, api, child)| ExtensionSpec {
            name: name.to_owned(),
            api,
            child,
        })
        .collect();
    let fixture = Arc::new(OctetFixture::new(exe, &specs)?);
    for spec in &specs {
        let label = format!("octet_host {} {}", spec.child.as_str(), spec.api);
        subjects.push(Box::new(OctetPeer::start(&fixture, &spec.name, label)?));
    }
    Ok(subjects)
}

/// Everything one run measured.
#[derive(Clone, Debug)]
pub struct SuiteReport {
    /// What ran.
    pub options: SuiteOptions,
    /// Every subject at depth 1.
    pub latency: Vec<Stats>,
    /// Every subject at the pipeline depth.
    pub throughput: Vec<Stats>,
    /// Frame decoding.
    pub decode: DecodeStats,
    /// Memory of the idle fleet.
    pub memory: FleetMemory,
    /// The busy fleet of `busy_extensions`.
    pub busy: Stats,
    /// The scaling curve, by fleet size.
    pub scaling: Vec<ScalingPoint>,
}

/// One point of the scaling curve: a busy fleet of `extensions`.
#[derive(Clone, Debug)]
pub struct ScalingPoint {
    /// Busy extensions, each with `busy_in_flight` calls in flight.
    pub extensions: usize,
    /// Its calls per second and host CPU per call.
    pub stats: Stats,
    /// The dispatcher thread's share of the host process's CPU time while it ran
    /// (`None` where threads' CPU time cannot be read).
    pub dispatcher_share: Option<f64>,
}

impl ScalingPoint {
    fn to_json(&self) -> Value {
        json!({
            "extensions": self.extensions,
            "calls_per_second": self.stats.calls_per_second(),
            "host_cpu_us_per_call": self.stats.median_cpu().as_secs_f64() * 1e6,
            "dispatcher_cpu_share": self.dispatcher_share,
        })
    }
}

/// Each caller thread of a scaling-curve round sends at least this many times its
/// calls in flight.
const CALLS_PER_CALLER: u64 = 32;

/// Rounds per scaling-curve point at most (each is long: see [`CALLS_PER_CALLER`]).
const SCALING_ROUNDS: usize = 5;

/// The dispatcher thread's name as Linux keeps it (15 bytes of `octet-dispatcher`).
const DISPATCHER_THREAD: &str = "octet-dispatche";

/// Measures the busy fleet at each size of `sizes`, with `in_flight` calls each.
fn scaling_curve(
    fleet: &mut Fleet,
    sizes: &[usize],
    in_flight: usize,
    plan: Plan,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<ScalingPoint>, BenchError> {
    let mut points = Vec::with_capacity(sizes.len());
    for &extensions in sizes {
        progress(&format!(
            "{extensions} busy extensions, {in_flight} calls in flight each"
        ));
        fleet.set_busy(extensions);
        let dispatcher_before = super::thread_cpu_time(DISPATCHER_THREAD)?;
        let process_before = super::process_cpu_time()?;
        // Every caller thread gets at least CALLS_PER_CALLER rounds of its pipeline;
        // a few long rounds replace many short ones.
        let min_calls = (extensions * in_flight) as u64 * CALLS_PER_CALLER;
        let plan = Plan {
            rounds: plan.rounds.min(SCALING_ROUNDS),
            ..plan
        };
        let stats = compare_at_least(&mut [fleet], in_flight, plan, min_calls)?.remove(0);
        let process = super::process_cpu_time()?.saturating_sub(process_before);
        let dispatcher_after = super::thread_cpu_time(DISPATCHER_THREAD)?;
        let dispatcher_share = match (dispatcher_before, dispatcher_after) {
            (Some(before), Some(after)) if !process.is_zero() => {
                Some(after.saturating_sub(before).as_secs_f64() / process.as_secs_f64())
            }
            _ => None,
        };
        points.push(ScalingPoint {
            extensions,
            stats,
            dispatcher_share,
        });
    }
    Ok(points)
}

/// Runs everything: the standard subjects plus `extra` ones (such as the
/// `lsp-server` peer), reporting each step to `progress`.
pub fn run(
    options: &SuiteOptions,
    extra: Vec<Box<dyn RoundTrip>>,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteReport, BenchError> {
    let plan = options.plan;
    let (latency, throughput) = {
        progress("starting the subjects");
        let mut subjects = standard_subjects(&options.exe)?;
        subjects.extend(extra);
        let mut refs: Vec<&mut dyn RoundTrip> = Vec::with_capacity(subjects.len());
        for subject in &mut subjects {
            refs.push(subject.as_mut());
        }
        progress("depth 1 (latency)");
        let latency = compare(&mut refs, 1, plan)?;
        progress(&format!("depth {} (throughput)", options.depth));
        let throughput = compare(&mut refs, options.depth, plan)?;
        (latency, throughput)
    };
    progress("frame decoding");
    let decode = decode_throughput(options.decode_bytes, plan);
    progress(&format!(
        "starting {} idle extensions",
        options.idle_extensions
    ));
    let (mut fleet, memory) = Fleet::start(
        &options.exe,
        options.idle_extensions,
        options.busy_extensions,
        "0.4",
    )?;
    let mut sizes: Vec<usize> = options
        .scaling
        .iter()
        .copied()
        .chain([options.busy_extensions])
        .filter(|&n| n >= 1 && n <= memory.extensions)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let scaling = scaling_curve(&mut fleet, &sizes, options.busy_in_flight, plan, progress)?;
    let busy_extensions = options.busy_extensions.clamp(1, memory.extensions);
    let busy = scaling
        .iter()
        .find(|point| point.extensions == busy_extensions)
        .expect("the busy fleet's size is on the curve")
        .stats
        .clone();
    progress("shutting the fleet down");
    fleet.host().shutdown();
    Ok(SuiteReport {
        options: options.clone(),
        latency,
        throughput,
        decode,
        memory,
        busy,
        scaling,
    })
}

fn find<'a>(stats: &'a [Stats], name: &str) -> Option<&'a Stats> {
    stats.iter().find(|s| s.name == name)
}

/// `subject`'s latency over `reference`'s (lower is better).
fn latency_ratio(stats: &[Stats], subject: &Stats, reference: &str) -> Option<f64> {
    let reference = find(stats, reference)?;
    Some(subject.median().as_secs_f64() / reference.median().as_secs_f64())
}

/// `subject`'s throughput over `reference`'s (higher is better).
fn throughput_ratio(stats: &[Stats], subject: &Stats, reference: &str) -> Option<f64> {
    let reference = find(stats, reference)?;
    Some(subject.calls_per_second() / reference.calls_per_second())
}

fn ratio_cell(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "–".to_owned(), |r| format!("{r:.2}×"))
}

impl SuiteReport {
    /// The results as Markdown: the subjects table, the goals and the other items.
    pub fn markdown(&self) -> String {
        let depth = self.options.depth;
        let mut out = String::new();
        let over = |what: &str| {
            REFERENCES
                .iter()
                .map(|r| format!(" {what} ÷ {r} |"))
                .collect::<String>()
        };
        let _ = writeln!(
            out,
            "| subject | depth 1: µs/call | CPU µs/call |{} depth {depth}: calls/s | CPU µs/call |{}",
            over("µs"),
            over("calls/s"),
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|{}---:|---:|{}",
            "---:|".repeat(REFERENCES.len()),
            "---:|".repeat(REFERENCES.len())
        );
        for latency in &self.latency {
            let throughput = find(&self.throughput, &latency.name);
            let mut row = format!(
                "| {} | {:.1} | {:.1} |",
                latency.name,
                latency.median().as_secs_f64() * 1e6,
                latency.median_cpu().as_secs_f64() * 1e6
            );
            for reference in REFERENCES {
                let ratio = latency_ratio(&self.latency, latency, reference);
                let _ = write!(row, " {} |", ratio_cell(ratio));
            }
            let _ = write!(
                row,
                " {} | {} |",
                throughput.map_or_else(
                    || "–".to_owned(),
                    |t| format!("{:.0}", t.calls_per_second())
                ),
                throughput.map_or_else(
                    || "–".to_owned(),
                    |t| format!("{:.1}", t.median_cpu().as_secs_f64() * 1e6)
                )
            );
            for reference in REFERENCES {
                let ratio =
                    throughput.and_then(|t| throughput_ratio(&self.throughput, t, reference));
                let _ = write!(row, " {} |", ratio_cell(ratio));
            }
            let _ = writeln!(out, "{row}");
        }
        let _ = writeln!(out);
        for line in self.goal_lines() {
            let _ = writeln!(out, "- {line}");
        }
        let _ = writeln!(out);
        let memory = &self.memory;
        let mib = |kib: u64| kib as f64 / 1024.0;
        let _ = writeln!(
            out,
            "- frame decode (reader split + decode, 64 KiB reads): {:.0} MB/s, {:.0} frames/s \
             over {:.1} MB",
            self.decode.megabytes_per_second(),
            self.decode.frames_per_second(),
            self.decode.bytes as f64 / 1e6,
        );
        let _ = writeln!(
            out,
            "- idle memory, {} SDK extensions (API 0.4): host RSS +{:.1} MiB ({:.1} → {:.1}); \
             children VmRSS sum {:.1} MiB, RssAnon sum {:.1} MiB; \
             ≈ {:.0} KiB per extension (host growth + child private memory); \
             host CPU while they idle: {:.1} ms per second",
            memory.extensions,
            mib(memory
                .host_after
                .resident_kib
                .saturating_sub(memory.host_before.resident_kib)),
            mib(memory.host_before.resident_kib),
            mib(memory.host_after.resident_kib),
            mib(memory.children.resident_kib),
            mib(memory.children.anonymous_kib),
            memory.per_extension_kib(),
            memory.host_idle_cpu_per_second.as_secs_f64() * 1e3,
        );
        let _ = writeln!(
            out,
            "- busy fleet, {} SDK extensions (API 0.4) × {} calls in flight, one caller thread \
             each: {:.0} calls/s",
            self.options.busy_extensions.min(memory.extensions),
            self.options.busy_in_flight,
            self.busy.calls_per_second(),
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| busy extensions ({} calls in flight each) | calls/s | host CPU µs/call | dispatcher's share of host CPU |",
            self.options.busy_in_flight
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|");
        for point in &self.scaling {
            let _ = writeln!(
                out,
                "| {} | {:.0} | {:.1} | {} |",
                point.extensions,
                point.stats.calls_per_second(),
                point.stats.median_cpu().as_secs_f64() * 1e6,
                point
                    .dispatcher_share
                    .map_or_else(|| "–".to_owned(), |s| format!("{:.0}%", s * 100.0)),
            );
        }
        out
    }

    /// One line per host subject and goal, saying whether it was met.
    fn goal_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let verdict = |met: bool| if met { "met" } else { "missed" };
        for latency in self
            .latency
            .iter()
            .filter(|s| s.name.starts_with("octet_host"))
        {
            let name = &latency.name;
            if let Some(r) = latency_ratio(&self.latency, latency, FLOOR_SHAPE) {
                lines.push(format!(
                    "{name}: depth-1 latency {r:.2}× {FLOOR_SHAPE} (goal ≤ {LATENCY_GOAL}×: {})",
                    verdict(r <= LATENCY_GOAL)
                ));
            }
            for peer in PEERS {
                if let Some(r) = latency_ratio(&self.latency, latency, peer) {
                    lines.push(format!(
                        "{name}: depth-1 latency {r:.2}× {peer} (goal ≤ 0.5×: {})",
                        verdict(r <= 0.5)
                    ));
                }
            }
            let Some(throughput) = find(&self.throughput, name) else {
                continue;
            };
            if let Some(r) = throughput_ratio(&self.throughput, throughput, FLOOR_SHAPE) {
                lines.push(format!(
                    "{name}: depth-{} throughput {r:.2}× {FLOOR_SHAPE} (goal ≥ {THROUGHPUT_GOAL}×: {})",
                    self.options.depth,
                    verdict(r >= THROUGHPUT_GOAL)
                ));
            }
            for peer in PEERS {
                if let Some(r) = throughput_ratio(&self.throughput, throughput, peer) {
                    lines.push(format!(
                        "{name}: depth-{} throughput {r:.2}× {peer} (goal ≥ 2×: {})",
                        self.options.depth,
                        verdict(r >= 2.0)
                    ));
                }
            }
        }
        lines
    }

    /// The results as one JSON document.
    pub fn to_json(&self) -> Value {
        let memory = &self.memory;
        let rss =
            |r: super::Rss| json!({"vm_rss_kib": r.resident_kib, "rss_anon_kib": r.anonymous_kib});
        json!({
            "plan": {
                "warmup_ms": self.options.plan.warmup.as_millis() as u64,
                "rounds": self.options.plan.rounds,
                "round_ms": self.options.plan.round.as_millis() as u64,
            },
            "latency": self.latency.iter().map(Stats::to_json).collect::<Vec<_>>(),
            "throughput": self.throughput.iter().map(Stats::to_json).collect::<Vec<_>>(),
            "decode": {
                "bytes": self.decode.bytes,
                "frames": self.decode.frames,
                "megabytes_per_second": self.decode.megabytes_per_second(),
                "frames_per_second": self.decode.frames_per_second(),
            },
            "idle_memory": {
                "extensions": memory.extensions,
                "host_before": rss(memory.host_before),
                "host_after": rss(memory.host_after),
                "children": rss(memory.children),
                "per_extension_kib": memory.per_extension_kib(),
                "host_idle_cpu_ms_per_second": memory.host_idle_cpu_per_second.as_secs_f64() * 1e3,
            },
            "busy_fleet": {
                "extensions": self.options.busy_extensions.min(memory.extensions),
                "in_flight_each": self.options.busy_in_flight,
                "calls_per_second": self.busy.calls_per_second(),
            },
            "scaling": self.scaling.iter().map(ScalingPoint::to_json).collect::<Vec<_>>(),
            "goals": self.goal_lines(),
        })
    }
}
