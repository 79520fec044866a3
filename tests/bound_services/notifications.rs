//! Message updates: coalesced in order, lone deltas sent after 50 ms.

use octet_host::host::{BoundNotification, NotifyError};
use octet_host::services::bound::Refusal;
use serde_json::{json, Value};

use super::world::{seen_until, world};

#[test]
fn message_updates_are_coalesced_in_order() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    // 100 ten-byte deltas handed over at once: one batch at 64 deltas, the rest when
    // the message settles (or its 50 ms pass first). Timing never changes the first.
    let deltas: Vec<String> = (0..100).map(|i| format!("{i:09} ")).collect();
    ext.notify(BoundNotification::MessageDeltas {
        message_id: "m1".into(),
        deltas,
    })
    .unwrap();
    ext.message_settled("m1").unwrap();
    // A 5,000-byte delta goes out in a batch of its own, never split.
    ext.message_delta("m2", &"x".repeat(5000)).unwrap();
    ext.message_settled("m2").unwrap();
    // Three 2,000-byte deltas: the third passes 4,096 bytes, so all three go at once.
    ext.notify(BoundNotification::MessageDeltas {
        message_id: "m4".into(),
        deltas: vec!["y".repeat(2000); 3],
    })
    .unwrap();
    let too_many = BoundNotification::MessageDeltas {
        message_id: "m3".into(),
        deltas: vec!["x".into(); 1025],
    };
    match ext.notify(too_many) {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::BoundsExceeded),
        other => panic!("{other:?}"),
    }
    let deltas = |seen: &Value| -> u64 {
        let batches = seen["notifications"].as_array().unwrap();
        batches
            .iter()
            .map(|b| b["params"]["deltas"].as_u64().unwrap())
            .sum()
    };
    let seen = seen_until(&ext, "104 deltas", |seen| deltas(seen) >= 104);
    let batches = seen["notifications"].as_array().unwrap().clone();
    let m1: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m1")
        .collect();
    assert!(m1.len() >= 2, "{batches:?}");
    assert_eq!(m1[0]["params"]["deltas"], json!(64));
    let text: String = m1
        .iter()
        .map(|b| b["params"]["delta"].as_str().unwrap())
        .collect();
    let expected: String = (0..100).map(|i| format!("{i:09} ")).collect();
    assert_eq!(text, expected);
    let m2: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m2")
        .collect();
    assert_eq!(m2.len(), 1);
    assert_eq!(m2[0]["params"]["delta"].as_str().unwrap().len(), 5000);
    let m4: Vec<&Value> = batches
        .iter()
        .filter(|b| b["params"]["message_id"] == "m4")
        .collect();
    assert_eq!(m4.len(), 1, "{batches:?}");
    assert_eq!(m4[0]["params"]["deltas"], json!(3));
    assert!(batches.iter().all(|b| b["method"] == "message/updated"));
}

#[test]
fn lone_deltas_go_out_after_50_ms_without_a_settle() {
    let w = world(true, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    ext.message_delta("m", "hello").unwrap();
    let seen = seen_until(&ext, "a batch", |seen| {
        !seen["notifications"].as_array().unwrap().is_empty()
    });
    assert_eq!(
        seen["notifications"][0]["params"],
        json!({"message_id": "m", "delta": "hello", "deltas": 1})
    );
}

#[test]
fn message_updates_need_the_negotiated_feature() {
    let w = world(false, "0.2", "");
    let ext = w.host.start("peer").unwrap();
    match ext.message_delta("m", "x") {
        Err(NotifyError::Refused(r)) => assert_eq!(r.refusal, Refusal::UnsupportedFeature),
        other => panic!("{other:?}"),
    }
}
