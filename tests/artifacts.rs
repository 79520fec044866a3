//! `artifact/publish` from a real scratch directory, end to end: publication by path,
//! verification, owner-bound resolution through the tool-result validator, and the
//! refusals of the no-follow path walk (section 2.8).

use std::ffi::CString;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use octet_host::limits::{MAX_ARTIFACT_PATH_BYTES, MAX_ARTIFACT_PATH_COMPONENTS};
use octet_host::manifest::ApiVersion;
use octet_host::services::artifacts::{ArtifactError, ArtifactStore, MediaType, Quota, Rejection};
use octet_host::services::ResourceOwner;
use octet_host::transport::ScratchDir;
use octet_host::validate::{
    tool_output, ContentPart, MediaPolicy, OutputSchema, ResultErrorKind, ToolResultContext,
};
use octet_host::wire::codes::INVALID_PARAMS;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const GENERATION: u64 = 7;

fn owner(session_id: &str) -> ResourceOwner {
    ResourceOwner {
        session_id: session_id.into(),
        extension_instance_id: "host-created-instance-fence".into(),
        process_generation: GENERATION,
    }
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tiny PNG: signature, IHDR of a 1x1 RGBA image, IEND (chunk CRCs are not checked).
fn png() -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(
        b"\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00",
    );
    bytes.extend_from_slice(&[0x1f, 0x15, 0xc4, 0x89]);
    bytes.extend_from_slice(b"\x00\x00\x00\x00IEND\xae\x42\x60\x82");
    bytes
}

/// A tiny WAV: RIFF header, fmt chunk, empty data chunk.
fn wav() -> Vec<u8> {
    let mut bytes = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00".to_vec();
    bytes.extend_from_slice(&[1, 0, 1, 0, 0x44, 0xac, 0, 0, 0x88, 0x58, 1, 0, 2, 0, 16, 0]);
    bytes.extend_from_slice(b"data\x00\x00\x00\x00");
    bytes
}

fn by_path(mime_type: &str, bytes: &[u8], path: &str) -> Value {
    json!({
        "parent_request_id": 2,
        "mime_type": mime_type,
        "size": bytes.len(),
        "sha256": sha(bytes),
        "path": path
    })
}

fn path_error(reason: Rejection) -> Result<(), ArtifactError> {
    Err(ArtifactError::InvalidParams {
        field: "path",
        reason,
    })
}

fn publish_outcome(
    store: &mut ArtifactStore,
    params: &Value,
    scratch: &Path,
) -> Result<(), ArtifactError> {
    store.publish(params, scratch, &owner("s")).map(|_| ())
}

#[test]
fn publish_by_path_then_reference_from_a_tool_result() {
    let scratch = ScratchDir::new().unwrap();
    fs::create_dir_all(scratch.path().join("screenshots/today")).unwrap();
    let image = png();
    let sound = wav();
    fs::write(scratch.path().join("screenshots/today/result.png"), &image).unwrap();
    fs::write(scratch.path().join("beep.wav"), &sound).unwrap();

    let mut store = ArtifactStore::new(GENERATION).unwrap();
    let publisher = owner("durable-session-owner");
    let image_id = store
        .publish(
            &by_path("image/png", &image, "screenshots/today/result.png"),
            scratch.path(),
            &publisher,
        )
        .unwrap();
    let sound_id = store
        .publish(
            &by_path("audio/wav", &sound, "beep.wav"),
            scratch.path(),
            &publisher,
        )
        .unwrap();
    let inline_id = store
        .publish(
            &json!({
                "mime_type": "image/png",
                "size": image.len(),
                "sha256": sha(&image),
                "data": {"encoding": "base64", "data": STANDARD.encode(&image)}
            }),
            scratch.path(),
            &publisher,
        )
        .unwrap();
    assert_ne!(image_id, inline_id);
    assert_eq!(
        image_id.publish_result(),
        json!({"artifact_id": image_id.as_str()})
    );

    // The scratch file may change or vanish: the artifact is a snapshot.
    fs::remove_dir_all(scratch.path().join("screenshots")).unwrap();

    let result = json!({
        "content": [
            {"type": "text", "text": "Found 3 sources."},
            {"type": "image", "artifact_id": image_id.as_str(), "mime_type": "image/png",
             "alt": "Search result preview"},
            {"type": "audio", "artifact_id": sound_id.as_str(), "mime_type": "audio/wav"},
            {"type": "image", "artifact_id": inline_id.as_str(), "mime_type": "image/png"}
        ],
        "is_error": false
    });
    let view = store.owner_view(&publisher);
    let ctx = ToolResultContext {
        api_version: ApiVersion::V0_2,
        output_schema: OutputSchema::NotDeclared,
        media: MediaPolicy::Artifacts(&view),
    };
    let output = tool_output(&result, &ctx).unwrap();
    let ContentPart::Image { artifact_id, .. } = &output.content[1] else {
        panic!("expected an image part: {:?}", output.content[1]);
    };
    let artifact = view.get(artifact_id).unwrap();
    assert_eq!(artifact.media_type(), MediaType::Png);
    assert_eq!(&artifact.bytes()[..], &image[..]);
    assert_eq!(artifact.sha256(), sha(&image));
    assert_eq!(
        &view.get(sound_id.as_str()).unwrap().bytes()[..],
        &sound[..]
    );

    // Another session that learned the ids sees unknown artifacts.
    let stranger = owner("someone-else");
    let stranger_view = store.owner_view(&stranger);
    let ctx = ToolResultContext {
        media: MediaPolicy::Artifacts(&stranger_view),
        ..ctx
    };
    let error = tool_output(&result, &ctx).unwrap_err();
    assert!(matches!(
        error.kind(),
        ResultErrorKind::UnverifiedArtifact { .. }
    ));
    assert_eq!(error.path(), "content[1].artifact_id");

    // After reload or settlement nothing resolves.
    store.retire();
    assert!(store.resolve(image_id.as_str(), &publisher).is_none());
    assert!(store
        .owner_view(&publisher)
        .get(sound_id.as_str())
        .is_none());
}

#[test]
fn the_path_walk_refuses_links_traversal_and_special_files() {
    let scratch = ScratchDir::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let image = png();
    fs::write(outside.path().join("outside.png"), &image).unwrap();
    fs::create_dir(scratch.path().join("real")).unwrap();
    fs::write(scratch.path().join("real/in.png"), &image).unwrap();
    symlink(outside.path(), scratch.path().join("escape")).unwrap();
    symlink("real", scratch.path().join("alias")).unwrap();
    symlink("real/in.png", scratch.path().join("linked.png")).unwrap();
    symlink(
        outside.path().join("outside.png"),
        scratch.path().join("real/out.png"),
    )
    .unwrap();
    let fifo = CString::new(scratch.path().join("pipe.png").to_str().unwrap()).unwrap();
    // SAFETY: `fifo` is a NUL-terminated path alive for the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    fs::create_dir(scratch.path().join("folder.png")).unwrap();

    let mut store = ArtifactStore::new(GENERATION).unwrap();
    let outside_path = outside.path().join("outside.png");
    let cases: Vec<(String, Rejection)> = vec![
        ("../outside.png".into(), Rejection::ParentComponent),
        ("real/../real/in.png".into(), Rejection::ParentComponent),
        (
            outside_path.to_str().unwrap().into(),
            Rejection::AbsolutePath,
        ),
        ("./real/in.png".into(), Rejection::DotComponent),
        ("real//in.png".into(), Rejection::EmptyComponent),
        ("escape/outside.png".into(), Rejection::Symlink),
        ("alias/in.png".into(), Rejection::Symlink),
        ("linked.png".into(), Rejection::Symlink),
        ("real/out.png".into(), Rejection::Symlink),
        ("pipe.png".into(), Rejection::NotARegularFile),
        ("folder.png".into(), Rejection::NotARegularFile),
        ("real/in.png/x".into(), Rejection::NotADirectory),
        ("real/none.png".into(), Rejection::NotFound),
    ];
    for (path, reason) in cases {
        let outcome = publish_outcome(
            &mut store,
            &by_path("image/png", &image, &path),
            scratch.path(),
        );
        assert_eq!(outcome, path_error(reason), "{path}");
    }
    assert!(store.is_empty());
    assert!(publish_outcome(
        &mut store,
        &by_path("image/png", &image, "real/in.png"),
        scratch.path()
    )
    .is_ok());
}

#[test]
fn path_length_and_depth_bounds() {
    let scratch = ScratchDir::new().unwrap();
    let image = png();
    // 64 nested directories' worth of components is the most a path may have.
    let deepest: Vec<&str> = vec!["d"; MAX_ARTIFACT_PATH_COMPONENTS - 1];
    let dir = scratch.path().join(deepest.join("/"));
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("f"), &image).unwrap();
    let mut store = ArtifactStore::new(GENERATION).unwrap();
    let at_limit = format!("{}/f", deepest.join("/"));
    assert!(publish_outcome(
        &mut store,
        &by_path("image/png", &image, &at_limit),
        scratch.path()
    )
    .is_ok());
    let too_deep = format!("d/{at_limit}");
    assert_eq!(
        publish_outcome(
            &mut store,
            &by_path("image/png", &image, &too_deep),
            scratch.path()
        ),
        path_error(Rejection::TooManyComponents)
    );
    let too_long = "x".repeat(MAX_ARTIFACT_PATH_BYTES + 1);
    assert_eq!(
        publish_outcome(
            &mut store,
            &by_path("image/png", &image, &too_long),
            scratch.path()
        ),
        path_error(Rejection::PathTooLong)
    );
    // Within 4096 bytes but a component longer than the file system allows.
    let long_name = "x".repeat(1000);
    assert_eq!(
        publish_outcome(
            &mut store,
            &by_path("image/png", &image, &long_name),
            scratch.path()
        ),
        path_error(Rejection::PathTooLong)
    );
}

#[test]
fn verification_of_file_contents() {
    let scratch = ScratchDir::new().unwrap();
    let image = png();
    fs::write(scratch.path().join("a.png"), &image).unwrap();
    let mut store = ArtifactStore::new(GENERATION).unwrap();
    // The file is larger than declared.
    let mut params = by_path("image/png", &image[..10], "a.png");
    params["sha256"] = json!(sha(&image));
    let error = store
        .publish(&params, scratch.path(), &owner("s"))
        .unwrap_err();
    assert_eq!(
        error,
        ArtifactError::InvalidParams {
            field: "size",
            reason: Rejection::SizeMismatch {
                declared: 10,
                actual: 11
            }
        }
    );
    assert_eq!(error.code(), INVALID_PARAMS);
    // The bytes are a PNG declared as JPEG.
    let mut params = by_path("image/png", &image, "a.png");
    params["mime_type"] = json!("image/jpeg");
    assert_eq!(
        store.publish(&params, scratch.path(), &owner("s")),
        Err(ArtifactError::InvalidParams {
            field: "mime_type",
            reason: Rejection::SignatureMismatch {
                media_type: MediaType::Jpeg
            }
        })
    );
    // Both sources at once.
    let mut params = by_path("image/png", &image, "a.png");
    params["data"] = json!({"encoding": "base64", "data": STANDARD.encode(&image)});
    assert_eq!(
        store.publish(&params, scratch.path(), &owner("s")),
        Err(ArtifactError::InvalidParams {
            field: "params",
            reason: Rejection::BothSources
        })
    );
    // An artifact over 20 MiB is refused from its declared size alone.
    let mut params = by_path("image/png", &image, "a.png");
    params["size"] = json!(20 * 1024 * 1024 + 1);
    assert_eq!(
        store.publish(&params, scratch.path(), &owner("s")),
        Err(ArtifactError::QuotaExceeded {
            which: Quota::ArtifactBytes
        })
    );
    assert!(store.is_empty());
}
