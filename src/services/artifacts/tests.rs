//! Publication, verification, quotas and owner isolation of the artifact store.

use std::fs;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::*;
use crate::limits::{
    MAX_ARTIFACTS_PER_GENERATION, MAX_ARTIFACT_BYTES, MAX_ARTIFACT_GENERATION_BYTES,
};
use crate::manifest::ApiVersion;
use crate::services::ResourceOwner;
use crate::validate::{
    tool_output, ArtifactResolver, MediaPolicy, OutputSchema, ResultErrorKind, ToolResultContext,
};
use crate::wire::codes::{INTERNAL_ERROR, INVALID_PARAMS, NO_OWNER};

const GENERATION: u64 = 3;

fn owner() -> ResourceOwner {
    ResourceOwner {
        session_id: "session".into(),
        extension_instance_id: "instance".into(),
        process_generation: GENERATION,
    }
}

fn store() -> ArtifactStore {
    ArtifactStore::new(GENERATION).unwrap()
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A sample of each media type: its signature followed by a few bytes.
fn sample(media_type: MediaType) -> Vec<u8> {
    let mut bytes = match media_type {
        MediaType::Png => b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec(),
        MediaType::Jpeg => vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F'],
        MediaType::Gif => b"GIF89a\x01\x00\x01\x00\x80\x00\x00".to_vec(),
        MediaType::Webp => b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00".to_vec(),
        MediaType::Wav => b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00".to_vec(),
        MediaType::Mpeg => b"ID3\x03\x00\x00\x00\x00\x00\x0a".to_vec(),
        MediaType::Flac => b"fLaC\x80\x00\x00\x22".to_vec(),
        MediaType::Opus => {
            let mut page = b"OggS\x00\x02".to_vec();
            page.extend_from_slice(&[0; 20]);
            page.extend_from_slice(&[1, 19]);
            page.extend_from_slice(b"OpusHead\x01\x02\x38\x01\x80\xbb\x00\x00\x00\x00\x00");
            page
        }
        MediaType::Aac => vec![0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC],
        MediaType::Mp4 => b"\x00\x00\x00\x18ftypM4A \x00\x00\x02\x00M4A mp42".to_vec(),
    };
    bytes.extend_from_slice(b"\x00payload");
    bytes
}

fn inline_params(mime_type: &str, bytes: &[u8]) -> Value {
    json!({
        "mime_type": mime_type,
        "size": bytes.len(),
        "sha256": sha(bytes),
        "data": {"encoding": "base64", "data": STANDARD.encode(bytes)}
    })
}

fn path_params(mime_type: &str, bytes: &[u8], path: &str) -> Value {
    json!({
        "mime_type": mime_type,
        "size": bytes.len(),
        "sha256": sha(bytes),
        "path": path
    })
}

fn no_scratch() -> &'static Path {
    Path::new("/nonexistent-scratch")
}

fn invalid(field: &'static str, reason: Rejection) -> ArtifactError {
    ArtifactError::InvalidParams { field, reason }
}

#[test]
fn every_media_type_publishes_and_resolves() {
    let mut store = store();
    for media_type in MediaType::ALL {
        let bytes = sample(media_type);
        let id = store
            .publish(
                &inline_params(media_type.as_str(), &bytes),
                no_scratch(),
                &owner(),
            )
            .unwrap_or_else(|e| panic!("{media_type}: {e}"));
        let artifact = store.resolve(id.as_str(), &owner()).unwrap();
        assert_eq!(artifact.id(), &id);
        assert_eq!(artifact.media_type(), media_type);
        assert_eq!(artifact.mime_type(), media_type.as_str());
        assert_eq!(artifact.size(), bytes.len() as u64);
        assert_eq!(artifact.sha256(), sha(&bytes));
        assert_eq!(&artifact.bytes()[..], &bytes[..]);
        assert_eq!(artifact.owner(), &owner());
    }
    assert_eq!(store.len(), MediaType::ALL.len());
}

#[test]
fn a_signature_of_another_type_is_refused() {
    let mut store = store();
    for declared in MediaType::ALL {
        for actual in MediaType::ALL.into_iter().filter(|t| *t != declared) {
            let error = store
                .publish(
                    &inline_params(declared.as_str(), &sample(actual)),
                    no_scratch(),
                    &owner(),
                )
                .unwrap_err();
            assert_eq!(
                error,
                invalid(
                    "mime_type",
                    Rejection::SignatureMismatch {
                        media_type: declared
                    }
                ),
                "{actual} bytes declared as {declared}"
            );
            assert_eq!(error.code(), INVALID_PARAMS);
        }
    }
    assert!(store.is_empty());
    assert_eq!(store.total_bytes(), 0);
}

#[test]
fn size_digest_and_mime_are_verified() {
    let mut store = store();
    let bytes = sample(MediaType::Png);
    let mut params = inline_params("image/png", &bytes);
    params["size"] = json!(bytes.len() + 1);
    assert_eq!(
        store.publish(&params, no_scratch(), &owner()),
        Err(invalid(
            "size",
            Rejection::SizeMismatch {
                declared: bytes.len() as u64 + 1,
                actual: bytes.len() as u64
            }
        ))
    );
    let mut params = inline_params("image/png", &bytes);
    params["sha256"] = json!(sha(b"other"));
    assert_eq!(
        store.publish(&params, no_scratch(), &owner()),
        Err(invalid("sha256", Rejection::DigestMismatch))
    );
    let mut params = inline_params("image/png", &bytes);
    params["sha256"] = json!(sha(&bytes).to_uppercase());
    assert_eq!(
        store.publish(&params, no_scratch(), &owner()),
        Err(invalid("sha256", Rejection::MalformedDigest))
    );
    for alias in ["image/jpg", "image/PNG", "image/png; charset=x"] {
        assert_eq!(
            store.publish(&inline_params(alias, &bytes), no_scratch(), &owner()),
            Err(invalid("mime_type", Rejection::NonCanonicalMimeType))
        );
    }
    assert!(store.is_empty());
}

#[test]
fn errors_never_show_the_data() {
    let mut store = store();
    let mut bytes = sample(MediaType::Png);
    bytes.extend_from_slice(b"TOP-SECRET-PAYLOAD");
    let encoded = STANDARD.encode(&bytes);
    let mut params = inline_params("image/jpeg", &bytes);
    let error = store.publish(&params, no_scratch(), &owner()).unwrap_err();
    params["mime_type"] = json!("image/png");
    params["size"] = json!(1);
    let size_error = store.publish(&params, no_scratch(), &owner()).unwrap_err();
    params["data"]["data"] = json!(format!("{encoded} "));
    let base64_error = store.publish(&params, no_scratch(), &owner()).unwrap_err();
    for error in [error, size_error, base64_error] {
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(!text.contains("TOP-SECRET"), "{text}");
            assert!(!text.contains(&encoded), "{text}");
            assert!(!text.contains(&encoded[..16]), "{text}");
        }
    }
}

#[test]
fn published_artifacts_do_not_show_their_bytes() {
    let mut store = store();
    let mut bytes = sample(MediaType::Gif);
    bytes.extend_from_slice(b"TOP-SECRET-PAYLOAD");
    let id = store
        .publish(&inline_params("image/gif", &bytes), no_scratch(), &owner())
        .unwrap();
    let artifact = store.resolve(id.as_str(), &owner()).unwrap();
    let debug = format!("{artifact:?} {store:?}");
    assert!(
        !debug.contains("TOP-SECRET") && !debug.contains("84, 79, 80"),
        "{debug}"
    );
}

#[test]
fn ids_are_opaque_and_never_reused() {
    let mut first = store();
    let mut second = store();
    let bytes = sample(MediaType::Flac);
    let params = inline_params("audio/flac", &bytes);
    let mut ids = std::collections::HashSet::new();
    for store in [&mut first, &mut second] {
        for _ in 0..8 {
            let id = store.publish(&params, no_scratch(), &owner()).unwrap();
            let hex = id.as_str().strip_prefix("artifact-").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert!(!hex.contains(&sha(&bytes)[..8]));
            assert_eq!(id.publish_result(), json!({"artifact_id": id.as_str()}));
            assert!(ids.insert(id));
        }
    }
    assert_eq!(ids.len(), 16);
    // The same id is not known to the other store even for the same owner.
    let id = first.publish(&params, no_scratch(), &owner()).unwrap();
    assert!(second.resolve(id.as_str(), &owner()).is_none());
}

#[test]
fn only_the_publishing_owner_resolves() {
    let mut store = store();
    let bytes = sample(MediaType::Wav);
    let id = store
        .publish(&inline_params("audio/wav", &bytes), no_scratch(), &owner())
        .unwrap();
    let other_session = ResourceOwner {
        session_id: "other".into(),
        ..owner()
    };
    let other_instance = ResourceOwner {
        extension_instance_id: "rebuilt".into(),
        ..owner()
    };
    let other_generation = ResourceOwner {
        process_generation: GENERATION + 1,
        ..owner()
    };
    assert!(store.resolve(id.as_str(), &owner()).is_some());
    for stranger in [&other_session, &other_instance, &other_generation] {
        assert!(store.resolve(id.as_str(), stranger).is_none());
        assert_eq!(store.owner_view(stranger).resolve(id.as_str()), None);
        assert!(store.owner_view(stranger).get(id.as_str()).is_none());
    }
    assert!(store.resolve("artifact-unknown", &owner()).is_none());
    // Another session of the same generation publishes into the same store.
    let theirs = store
        .publish(
            &inline_params("audio/wav", &bytes),
            no_scratch(),
            &other_session,
        )
        .unwrap();
    assert!(store.resolve(theirs.as_str(), &other_session).is_some());
    assert!(store.resolve(theirs.as_str(), &owner()).is_none());
    // An owner of another generation has no active context in this store.
    let error = store
        .publish(
            &inline_params("audio/wav", &bytes),
            no_scratch(),
            &other_generation,
        )
        .unwrap_err();
    assert_eq!(error, ArtifactError::NoActiveOwner);
    assert_eq!(error.code(), NO_OWNER);
}

#[test]
fn retiring_the_generation_drops_every_handle() {
    let mut store = store();
    let bytes = sample(MediaType::Opus);
    let id = store
        .publish(&inline_params("audio/opus", &bytes), no_scratch(), &owner())
        .unwrap();
    let kept = store.resolve(id.as_str(), &owner()).unwrap().clone();
    store.retire();
    assert!(store.is_retired());
    assert!(store.is_empty());
    assert_eq!(store.total_bytes(), 0);
    assert!(store.resolve(id.as_str(), &owner()).is_none());
    assert_eq!(store.owner_view(&owner()).resolve(id.as_str()), None);
    assert_eq!(
        store.publish(&inline_params("audio/opus", &bytes), no_scratch(), &owner()),
        Err(ArtifactError::NoActiveOwner)
    );
    // A clone taken before keeps its immutable bytes.
    assert_eq!(&kept.bytes()[..], &bytes[..]);
}

#[test]
fn count_quota() {
    let mut store = store();
    let bytes = sample(MediaType::Aac);
    let params = inline_params("audio/aac", &bytes);
    for _ in 0..MAX_ARTIFACTS_PER_GENERATION {
        store.publish(&params, no_scratch(), &owner()).unwrap();
    }
    let error = store.publish(&params, no_scratch(), &owner()).unwrap_err();
    assert_eq!(
        error,
        ArtifactError::QuotaExceeded {
            which: Quota::GenerationCount
        }
    );
    assert_eq!(error.code(), INVALID_PARAMS);
    assert_eq!(store.len(), MAX_ARTIFACTS_PER_GENERATION);
    // The quota is the generation's, whichever session publishes.
    let other = ResourceOwner {
        session_id: "other".into(),
        ..owner()
    };
    assert_eq!(
        store.publish(&params, no_scratch(), &other),
        Err(ArtifactError::QuotaExceeded {
            which: Quota::GenerationCount
        })
    );
}

#[test]
fn byte_quotas() {
    let scratch = tempfile::tempdir().unwrap();
    let mut bytes = sample(MediaType::Png);
    bytes.resize(usize::try_from(MAX_ARTIFACT_BYTES).unwrap(), 0);
    fs::write(scratch.path().join("big.png"), &bytes).unwrap();
    let params = path_params("image/png", &bytes, "big.png");
    let mut store = store();
    let mut published = 0;
    while store.total_bytes() + MAX_ARTIFACT_BYTES <= MAX_ARTIFACT_GENERATION_BYTES {
        store.publish(&params, scratch.path(), &owner()).unwrap();
        published += 1;
    }
    assert_eq!(published, 3);
    // Refused before any byte is read: the file need not even exist.
    let mut next = path_params("image/png", &bytes, "missing.png");
    next["size"] = json!(MAX_ARTIFACT_GENERATION_BYTES - store.total_bytes() + 1);
    let error = store.publish(&next, scratch.path(), &owner()).unwrap_err();
    assert_eq!(
        error,
        ArtifactError::QuotaExceeded {
            which: Quota::GenerationBytes
        }
    );
    assert_eq!(error.code(), INVALID_PARAMS);
    // What still fits is published.
    let rest = usize::try_from(MAX_ARTIFACT_GENERATION_BYTES - store.total_bytes()).unwrap();
    let small = &bytes[..rest];
    fs::write(scratch.path().join("rest.png"), small).unwrap();
    store
        .publish(
            &path_params("image/png", small, "rest.png"),
            scratch.path(),
            &owner(),
        )
        .unwrap();
    assert_eq!(store.total_bytes(), MAX_ARTIFACT_GENERATION_BYTES);
    // One artifact above 20 MiB is refused from its declared size.
    let mut fresh = ArtifactStore::new(GENERATION).unwrap();
    let mut huge = path_params("image/png", &bytes, "big.png");
    huge["size"] = json!(MAX_ARTIFACT_BYTES + 1);
    assert_eq!(
        fresh.publish(&huge, scratch.path(), &owner()),
        Err(ArtifactError::QuotaExceeded {
            which: Quota::ArtifactBytes
        })
    );
}

#[test]
fn a_longer_file_than_declared_is_read_only_one_byte_further() {
    let scratch = tempfile::tempdir().unwrap();
    let mut bytes = sample(MediaType::Jpeg);
    let declared = bytes.clone();
    bytes.extend_from_slice(&[0; 4096]);
    fs::write(scratch.path().join("a.jpg"), &bytes).unwrap();
    let mut store = store();
    assert_eq!(
        store.publish(
            &path_params("image/jpeg", &declared, "a.jpg"),
            scratch.path(),
            &owner()
        ),
        Err(invalid(
            "size",
            Rejection::SizeMismatch {
                declared: declared.len() as u64,
                actual: declared.len() as u64 + 1
            }
        ))
    );
}

#[test]
fn path_rejections_are_invalid_params() {
    let scratch = tempfile::tempdir().unwrap();
    let bytes = sample(MediaType::Png);
    fs::create_dir(scratch.path().join("dir")).unwrap();
    fs::write(scratch.path().join("dir/a.png"), &bytes).unwrap();
    std::os::unix::fs::symlink("dir", scratch.path().join("link")).unwrap();
    std::os::unix::fs::symlink("dir/a.png", scratch.path().join("final.png")).unwrap();
    let mut store = store();
    let cases = [
        ("../x", Rejection::ParentComponent),
        ("/etc/passwd", Rejection::AbsolutePath),
        ("dir/./a.png", Rejection::DotComponent),
        ("dir//a.png", Rejection::EmptyComponent),
        ("", Rejection::EmptyPath),
        ("link/a.png", Rejection::Symlink),
        ("final.png", Rejection::Symlink),
        ("dir", Rejection::NotARegularFile),
        ("missing.png", Rejection::NotFound),
    ];
    for (path, reason) in cases {
        let error = store
            .publish(
                &path_params("image/png", &bytes, path),
                scratch.path(),
                &owner(),
            )
            .unwrap_err();
        assert_eq!(error, invalid("path", reason), "{path:?}");
        assert_eq!(error.code(), INVALID_PARAMS);
    }
    let id = store
        .publish(
            &path_params("image/png", &bytes, "dir/a.png"),
            scratch.path(),
            &owner(),
        )
        .unwrap();
    assert_eq!(store.len(), 1);
    assert!(store.resolve(id.as_str(), &owner()).is_some());
}

#[test]
fn the_snapshot_does_not_change_with_the_file() {
    let scratch = tempfile::tempdir().unwrap();
    let bytes = sample(MediaType::Webp);
    let file = scratch.path().join("a.webp");
    fs::write(&file, &bytes).unwrap();
    let mut store = store();
    let id = store
        .publish(
            &path_params("image/webp", &bytes, "a.webp"),
            scratch.path(),
            &owner(),
        )
        .unwrap();
    fs::write(&file, b"changed").unwrap();
    fs::remove_file(&file).unwrap();
    let artifact = store.resolve(id.as_str(), &owner()).unwrap();
    assert_eq!(&artifact.bytes()[..], &bytes[..]);
}

#[test]
fn codes_and_messages() {
    assert_eq!(
        invalid("path", Rejection::Symlink).to_string(),
        "artifact/publish `path` goes through a symbolic link"
    );
    assert_eq!(
        ArtifactError::QuotaExceeded {
            which: Quota::GenerationCount
        }
        .to_string(),
        "artifact/publish exceeds the per-generation limit of 64 artifacts"
    );
    let io = ArtifactError::Io {
        kind: std::io::ErrorKind::OutOfMemory,
    };
    assert_eq!(io.code(), INTERNAL_ERROR);
    assert_eq!(
        invalid(
            "size",
            Rejection::SizeMismatch {
                declared: 4,
                actual: 5
            }
        )
        .to_string(),
        "artifact/publish `size` holds more than the declared 4 bytes"
    );
}

fn tool_result(parts: Value) -> Value {
    json!({"content": parts, "is_error": false})
}

fn validate(result: &Value, resolver: &dyn ArtifactResolver) -> Result<(), ResultErrorKind> {
    let ctx = ToolResultContext {
        api_version: ApiVersion::V0_2,
        output_schema: OutputSchema::NotDeclared,
        media: MediaPolicy::Artifacts(resolver),
    };
    tool_output(result, &ctx)
        .map(|_| ())
        .map_err(|error| error.kind().clone())
}

#[test]
fn tool_results_resolve_media_through_the_owner_view() {
    let mut store = store();
    let png = sample(MediaType::Png);
    let mp3 = sample(MediaType::Mpeg);
    let image = store
        .publish(&inline_params("image/png", &png), no_scratch(), &owner())
        .unwrap();
    let audio = store
        .publish(&inline_params("audio/mpeg", &mp3), no_scratch(), &owner())
        .unwrap();
    let owner = owner();
    let view = store.owner_view(&owner);
    let good = tool_result(json!([
        {"type": "text", "text": "see"},
        {"type": "image", "artifact_id": image.as_str(), "mime_type": "image/png"},
        {"type": "audio", "artifact_id": audio.as_str(), "mime_type": "audio/mpeg"}
    ]));
    assert_eq!(validate(&good, &view), Ok(()));
    // The MIME type must be the artifact's, and so of the part's kind.
    let wrong_mime = tool_result(json!([
        {"type": "text", "text": "see"},
        {"type": "image", "artifact_id": image.as_str(), "mime_type": "image/gif"}
    ]));
    assert!(matches!(
        validate(&wrong_mime, &view),
        Err(ResultErrorKind::ArtifactMimeMismatch { .. })
    ));
    let wrong_kind = tool_result(json!([
        {"type": "text", "text": "hear"},
        {"type": "audio", "artifact_id": image.as_str(), "mime_type": "image/png"}
    ]));
    assert!(matches!(
        validate(&wrong_kind, &view),
        Err(ResultErrorKind::MimeKindMismatch { .. })
    ));
    let audio_as_image = tool_result(json!([
        {"type": "text", "text": "see"},
        {"type": "image", "artifact_id": audio.as_str(), "mime_type": "image/png"}
    ]));
    assert!(matches!(
        validate(&audio_as_image, &view),
        Err(ResultErrorKind::ArtifactMimeMismatch { .. })
    ));
    // Another session's view does not know the ids.
    let stranger = ResourceOwner {
        session_id: "other".into(),
        ..owner.clone()
    };
    assert!(matches!(
        validate(&good, &store.owner_view(&stranger)),
        Err(ResultErrorKind::UnverifiedArtifact { .. })
    ));
}

#[test]
fn repeated_references_count_toward_the_result_media_bound() {
    let scratch = tempfile::tempdir().unwrap();
    let mut bytes = sample(MediaType::Png);
    bytes.resize(usize::try_from(MAX_ARTIFACT_BYTES).unwrap(), 0);
    fs::write(scratch.path().join("big.png"), &bytes).unwrap();
    let mut store = store();
    let id = store
        .publish(
            &path_params("image/png", &bytes, "big.png"),
            scratch.path(),
            &owner(),
        )
        .unwrap();
    let owner = owner();
    let view = store.owner_view(&owner);
    let part = json!({"type": "image", "artifact_id": id.as_str(), "mime_type": "image/png"});
    let three = tool_result(json!([{"type": "text", "text": "x"}, part, part, part]));
    assert_eq!(validate(&three, &view), Ok(()));
    let four = tool_result(json!([{"type": "text", "text": "x"}, part, part, part, part]));
    assert!(matches!(
        validate(&four, &view),
        Err(ResultErrorKind::MediaBytesExceeded { .. })
    ));
}
