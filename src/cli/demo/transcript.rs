//! The demo's transcript: printed as it happens, and recorded as JSON steps.

use serde_json::{json, Map, Value};

use crate::cli::output;

/// Width of a section header line.
const HEADER_WIDTH: usize = 64;

/// Prints the readable transcript (unless in JSON mode) and records every step.
pub(super) struct Transcript {
    json: bool,
    section: usize,
    steps: Vec<Value>,
    failed: usize,
}

impl Transcript {
    /// A transcript that prints text unless `json`.
    pub(super) fn new(json: bool) -> Transcript {
        Transcript {
            json,
            section: 0,
            steps: Vec::new(),
            failed: 0,
        }
    }

    /// Prints a line as it is.
    pub(super) fn line(&self, text: impl AsRef<str>) {
        if !self.json {
            output::print(text.as_ref());
        }
    }

    /// Prints a numbered section header.
    pub(super) fn section(&mut self, title: &str) {
        self.section += 1;
        let head = format!("── {}. {title} ", self.section);
        let fill = HEADER_WIDTH.saturating_sub(head.chars().count());
        self.line(format!("\n{head}{}", "─".repeat(fill)));
    }

    /// Prints an indented detail line (or block).
    pub(super) fn detail(&self, text: impl AsRef<str>) {
        self.line(output::indent(text.as_ref(), "  "));
    }

    /// Prints a request: `  → method target`.
    pub(super) fn request(&self, text: impl AsRef<str>) {
        self.line(format!("  → {}", text.as_ref()));
    }

    /// Prints an answer: `  ← first line`, further lines aligned under it.
    pub(super) fn answer(&self, text: impl AsRef<str>) {
        let mut lines = text.as_ref().lines();
        let first = lines.next().unwrap_or("");
        let mut block = format!("  ← {first}");
        for line in lines {
            block.push('\n');
            if !line.is_empty() {
                block.push_str("    ");
                block.push_str(line);
            }
        }
        self.line(block);
    }

    /// Prints a failure: `  ✗ text`.
    pub(super) fn failure(&self, text: impl AsRef<str>) {
        self.line(output::indent(text.as_ref(), "  ✗ "));
    }

    /// Records one step. `data` (an object) is merged into the step's JSON record.
    pub(super) fn record(&mut self, step: &str, ok: bool, data: Value) {
        let mut record = Map::new();
        record.insert("step".into(), json!(step));
        record.insert("ok".into(), json!(ok));
        if let Value::Object(data) = data {
            record.extend(data);
        }
        self.steps.push(Value::Object(record));
        if !ok {
            self.failed += 1;
        }
    }

    /// How many steps failed.
    pub(super) fn failed(&self) -> usize {
        self.failed
    }

    /// How many steps were recorded.
    pub(super) fn len(&self) -> usize {
        self.steps.len()
    }

    /// The recorded steps.
    pub(super) fn into_steps(self) -> Vec<Value> {
        self.steps
    }
}
