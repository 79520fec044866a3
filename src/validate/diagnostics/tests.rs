use serde_json::{json, Value};

use super::*;
use crate::limits::{MAX_DIAGNOSTICS, MAX_DIAGNOSTIC_SUMMARY_BYTES};
use crate::validate::content::{ArtifactResolver, VerifiedArtifact};
use crate::validate::ResultErrorKind;

const REVISION: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn workspace(path: &str) -> Value {
    json!({"source": {"kind": "workspace", "path": path, "revision": REVISION},
           "span": {"start_byte": 0, "end_byte": 1}})
}

fn full() -> Value {
    json!({
        "severity": "error",
        "code": "solver.nonconvergent",
        "message": "Operating point did not converge.\nTry a smaller step.",
        "primary": workspace("circuits/fixture.cir"),
        "related": [{"message": "defined here", "location": workspace("lib/models.lib")}],
        "fixes": [{"title": "Use 1k", "edits": [
            {"location": workspace("circuits/fixture.cir"), "replacement": ""}]}],
        "attachments": [{"kind": "artifact", "id": "artifact-1", "label": "plot"}]
    })
}

/// The rule `value`, as the only diagnostic, breaks, and where.
fn broken(value: Value) -> (String, ResultErrorKind) {
    let metadata = json!({ METADATA_KEY: [value] });
    let error = from_metadata(&metadata).expect_err("refused");
    (error.path().to_string(), error.kind().clone())
}

#[test]
fn a_full_record_round_trips_and_other_metadata_is_left_alone() {
    let metadata = json!({ METADATA_KEY: [full()], "cache": "miss" });
    let records = from_metadata(&metadata).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(to_value(&records), json!([full()]));
    assert!(from_metadata(&json!({"cache": {"anything": true}}))
        .unwrap()
        .is_empty());
}

#[test]
fn each_rule_is_named_with_its_field() {
    let rule = |r| ResultErrorKind::Diagnostic(r);
    let mut v = full();
    v["severity"] = json!("fatal");
    assert!(matches!(broken(v).1, ResultErrorKind::UnknownValue { .. }));
    let mut v = full();
    v["code"] = json!("9lives");
    assert_eq!(
        broken(v),
        (
            "octet_diagnostics_v1[0].code".into(),
            rule(DiagnosticRule::Code)
        )
    );
    let mut v = full();
    v["code"] = json!("a".repeat(129));
    assert_eq!(broken(v).1, rule(DiagnosticRule::Code));
    let mut v = full();
    v["message"] = json!("bell\u{7}");
    assert_eq!(broken(v).1, rule(DiagnosticRule::Text { max: 4096 }));
    let mut v = full();
    v["message"] = json!("");
    assert_eq!(broken(v).1, rule(DiagnosticRule::Text { max: 4096 }));
    let mut v = full();
    v["primary"] = Value::Null;
    assert_eq!(
        broken(v),
        (
            "octet_diagnostics_v1[0].primary".into(),
            rule(DiagnosticRule::NullMember)
        )
    );
    for path in [
        "../etc/passwd",
        "/abs",
        "a//b",
        "a/./b",
        "c:\\x",
        "a\\b",
        "",
    ] {
        let mut v = full();
        v["primary"] = workspace(path);
        assert_eq!(
            broken(v),
            (
                "octet_diagnostics_v1[0].primary.source.path".into(),
                rule(DiagnosticRule::WorkspacePath)
            ),
            "{path}"
        );
    }
    let mut v = full();
    v["primary"]["source"]["revision"] = json!(REVISION.to_uppercase());
    assert_eq!(broken(v).1, rule(DiagnosticRule::Revision));
    let mut v = full();
    v["primary"]["span"] = json!({"start_byte": 5, "end_byte": 4});
    assert_eq!(broken(v).1, rule(DiagnosticRule::Span));
    let mut v = full();
    v["primary"]["span"] = json!({"start_byte": 0, "end_byte": 1u64 << 53});
    assert_eq!(broken(v).1, rule(DiagnosticRule::Span));
    let mut v = full();
    v["primary"]["span"]["line"] = json!(3);
    assert!(matches!(broken(v).1, ResultErrorKind::UnknownMember { .. }));
    let mut v = full();
    v["fixes"][0]["edits"] = json!([]);
    assert_eq!(broken(v).1, rule(DiagnosticRule::NoEdits));
    let mut v = full();
    v["fixes"][0]["edits"][0]["location"] = json!({"source": {"kind": "artifact", "id": "artifact-1"}, "span": {"start_byte": 0, "end_byte": 0}});
    assert_eq!(
        broken(v),
        (
            "octet_diagnostics_v1[0].fixes[0].edits[0].location.source".into(),
            rule(DiagnosticRule::EditOutsideWorkspace)
        )
    );
    let mut v = full();
    v["related"] = json!(vec![
        json!({"message": "m", "location": workspace("a")});
        17
    ]);
    assert_eq!(broken(v).1, rule(DiagnosticRule::TooManyItems { max: 16 }));
    let mut v = full();
    v["attachments"] = json!([{"kind": "artifact", "id": "has space"}]);
    assert_eq!(broken(v).1, rule(DiagnosticRule::Id));
    let mut v = full();
    v["attachments"] = json!([{"kind": "artifact", "id": "a", "label": null}]);
    assert_eq!(broken(v).1, rule(DiagnosticRule::NullMember));
    let mut v = full();
    v["attachments"] = json!([{"kind": "file", "id": "a"}]);
    assert!(matches!(broken(v).1, ResultErrorKind::UnknownValue { .. }));
    let mut v = full();
    v["extra"] = json!(1);
    assert!(matches!(broken(v).1, ResultErrorKind::UnknownMember { .. }));
    let mut v = full();
    v.as_object_mut().unwrap().remove("message");
    assert_eq!(broken(v).1, ResultErrorKind::Missing);
}

#[test]
fn the_list_is_bounded_by_count_and_bytes() {
    let one = json!({"severity": "info", "code": "ok", "message": "ok"});
    let at_bound = json!({ METADATA_KEY: vec![one.clone(); MAX_DIAGNOSTICS] });
    assert_eq!(from_metadata(&at_bound).unwrap().len(), MAX_DIAGNOSTICS);
    let over = json!({ METADATA_KEY: vec![one; MAX_DIAGNOSTICS + 1] });
    assert_eq!(
        from_metadata(&over).unwrap_err().kind(),
        &ResultErrorKind::Diagnostic(DiagnosticRule::TooMany { count: 33 })
    );
    let big = json!({"severity": "info", "code": "ok", "message": "x".repeat(4000)});
    let large = json!({ METADATA_KEY: vec![big; 17] });
    assert!(matches!(
        from_metadata(&large).unwrap_err().kind(),
        ResultErrorKind::Diagnostic(DiagnosticRule::TooLarge { .. })
    ));
    assert!(from_metadata(&json!({ METADATA_KEY: null })).is_err());
    assert!(from_metadata(&json!({ METADATA_KEY: {} })).is_err());
}

struct Artifacts;

impl ArtifactResolver for Artifacts {
    fn resolve(&self, artifact_id: &str) -> Option<VerifiedArtifact> {
        (artifact_id == "artifact-1").then(|| VerifiedArtifact {
            mime_type: "image/png".into(),
            size_bytes: 10,
        })
    }
}

struct Blobs;

impl BlobResolver for Blobs {
    fn blob(&self, id: &str) -> Option<BlobStanding> {
        match id {
            "old" => Some(BlobStanding::Exported),
            "new" => Some(BlobStanding::Provisional),
            _ => None,
        }
    }
}

#[test]
fn references_must_name_the_hosts_own_records() {
    let path = Path::Root.key(METADATA_KEY);
    let check = |value: Value, is_error: bool| {
        let records = parse(&json!([value]), &path).unwrap();
        check_references(&records, &path, Some(&Artifacts), Some(&Blobs), is_error)
            .map_err(|e| (e.path().to_string(), e.kind().clone()))
    };
    assert!(check(full(), false).is_ok());
    let mut v = full();
    v["attachments"][0]["id"] = json!("artifact-2");
    assert_eq!(
        check(v, false).unwrap_err(),
        (
            "octet_diagnostics_v1[0].attachments[0]".into(),
            ResultErrorKind::Diagnostic(DiagnosticRule::UnknownArtifact {
                id: "artifact-2".into()
            })
        )
    );
    let blob = |id: &str| {
        json!({"severity": "info", "code": "b", "message": "m",
                                 "attachments": [{"kind": "blob", "id": id}]})
    };
    assert!(check(blob("old"), true).is_ok());
    assert!(check(blob("new"), false).is_ok());
    assert!(matches!(
        check(blob("new"), true).unwrap_err().1,
        ResultErrorKind::Diagnostic(DiagnosticRule::ProvisionalBlob { .. })
    ));
    assert!(matches!(
        check(blob("nobody"), false).unwrap_err().1,
        ResultErrorKind::Diagnostic(DiagnosticRule::UnknownBlob { .. })
    ));
    // A primary location in an artifact is checked like an attachment.
    let mut v = full();
    v["primary"] = json!({"source": {"kind": "artifact", "id": "forged"},
                          "span": {"start_byte": 0, "end_byte": 0}});
    assert!(matches!(
        check(v, false).unwrap_err().1,
        ResultErrorKind::Diagnostic(DiagnosticRule::UnknownArtifact { .. })
    ));
    // Without artifacts or bulk objects, nothing can be named.
    let records = parse(&json!([full()]), &path).unwrap();
    assert!(check_references(&records, &path, None, None, false).is_err());
}

#[test]
fn the_summary_is_the_first_eight_lines_within_4_kib() {
    let records: Vec<Diagnostic> = (0..9)
        .map(|n| Diagnostic::new(Severity::Warning, format!("w{n}"), "one\ttwo\nthree"))
        .collect();
    let text = summary(&records);
    assert_eq!(text.lines().count(), 8);
    assert!(text.starts_with("warning[w0]: one two three\n"));
    let long: Vec<Diagnostic> = (0..3)
        .map(|_| Diagnostic::new(Severity::Error, "long", "界".repeat(1365)))
        .collect();
    let text = summary(&long);
    assert!(text.len() <= MAX_DIAGNOSTIC_SUMMARY_BYTES);
    assert!(text.starts_with("error[long]: 界"));
}

#[test]
fn built_records_pass_the_hosts_checks_or_say_why_not() {
    let bytes = b"R1 a b 1x\n";
    let location = Location::in_workspace_file("fixture.cir", bytes, 7, 9);
    let diagnostic = Diagnostic::new(Severity::Error, "value.unit", "Unknown unit `x`.")
        .at(location.clone())
        .with_fix(
            "Use kilo-ohms",
            vec![Edit {
                location,
                replacement: "1k".into(),
            }],
        );
    assert!(validate(std::slice::from_ref(&diagnostic)).is_ok());
    let bad = Diagnostic::new(Severity::Hint, "", "m");
    let error = validate(&[diagnostic, bad]).unwrap_err();
    assert_eq!(error.path(), "octet_diagnostics_v1[1].code");
}
