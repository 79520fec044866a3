//! The typed-diagnostics profile (`metadata.octet_diagnostics_v1`) on arbitrary JSON.
//!
//! The input is one JSON document (inputs that are not JSON are skipped), read both as
//! a result's whole `metadata` and as the diagnostics list itself. Every accepted list
//! is then checked for authority against one known artifact and two blobs, once for a
//! successful and once for a failed call.
//!
//! Invariants: nothing panics, nor does any error's `Display`; an accepted list holds
//! at most 32 records within 64 KiB, serializes back to a value that is accepted again
//! as the same records, passes `validate`, and projects to a summary of at most eight
//! lines and 4 KiB; the authority check never admits an unknown artifact or blob, nor a
//! provisional blob in a failed call.

#![no_main]

use libfuzzer_sys::fuzz_target;
use octet_host::limits::{MAX_DIAGNOSTICS, MAX_DIAGNOSTICS_BYTES, MAX_DIAGNOSTIC_SUMMARY_BYTES};
use octet_host::validate::diagnostics::{
    self, AttachmentKind, BlobResolver, BlobStanding, Diagnostic, Source, METADATA_KEY,
};
use octet_host::validate::{ArtifactResolver, VerifiedArtifact};
use serde_json::{json, Value};

struct Artifacts;

impl ArtifactResolver for Artifacts {
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
        (artifact_id == "artifact-1").then(|| VerifiedArtifact {
            mime_type: "image/png".into(),
            size_bytes: 1,
        })
    }
}

struct Blobs;

impl BlobResolver for Blobs {
    fn blob(&self, id: &str) -> Option<BlobStanding> {
        match id {
            "blob-old" => Some(BlobStanding::Exported),
            "blob-new" => Some(BlobStanding::Provisional),
            _ => None,
        }
    }
}

/// Every (kind, id) a record names.
fn named(records: &[Diagnostic]) -> Vec<(AttachmentKind, String)> {
    let mut out = Vec::new();
    for record in records {
        let sources = record
            .primary
            .iter()
            .chain(record.related.iter().map(|r| &r.location));
        for location in sources {
            match &location.source {
                Source::Artifact { id } => out.push((AttachmentKind::Artifact, id.clone())),
                Source::Blob { id } => out.push((AttachmentKind::Blob, id.clone())),
                Source::Workspace { .. } => {}
            }
        }
        for attachment in &record.attachments {
            out.push((attachment.kind, attachment.id.clone()));
        }
    }
    out
}

fn accepted(records: &[Diagnostic]) {
    assert!(records.len() <= MAX_DIAGNOSTICS);
    let value = diagnostics::to_value(records);
    assert!(serde_json::to_vec(&value).unwrap().len() <= MAX_DIAGNOSTICS_BYTES);
    let again = diagnostics::from_metadata(&json!({ METADATA_KEY: value }))
        .expect("a serialized list is accepted again");
    assert_eq!(again, records);
    diagnostics::validate(records).expect("accepted records validate");
    let summary = diagnostics::summary(records);
    assert!(summary.len() <= MAX_DIAGNOSTIC_SUMMARY_BYTES);
    assert!(summary.lines().count() <= 8);
    for is_error in [false, true] {
        let verdict =
            diagnostics::check_authority(records, Some(&Artifacts), Some(&Blobs), is_error);
        if let Err(error) = &verdict {
            let _ = error.to_string();
        }
        let all_known = named(records).iter().all(|(kind, id)| match kind {
            AttachmentKind::Artifact => id == "artifact-1",
            AttachmentKind::Blob => id == "blob-old" || (id == "blob-new" && !is_error),
        });
        assert_eq!(verdict.is_ok(), all_known, "{records:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for metadata in [value.clone(), json!({ METADATA_KEY: value })] {
        match diagnostics::from_metadata(&metadata) {
            Ok(records) => accepted(&records),
            Err(error) => {
                let _ = error.to_string();
                let _ = error.path();
            }
        }
    }
});
