//! Spawning runs on the host's launcher thread, never on the dispatcher: many starts at
//! once all succeed (a duplicate is refused as already running), and an extension
//! already running answers its calls throughout. Through the library and `serve`.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use octet_host::host::{CallOptions, StartError};
use serde_json::json;
use support::serve_harness::Serve;
use support::*;

const FLEET: usize = 12;

#[test]
fn concurrent_starts_all_succeed_while_a_bystander_keeps_answering() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut dirs = vec![peer_extension(
        root.path(),
        "bystander",
        "0.2",
        &["good"],
        &["echo"],
    )];
    for i in 0..FLEET {
        dirs.push(peer_extension(
            root.path(),
            &format!("fleet-{i}"),
            "0.2",
            &["good"],
            &[&format!("echo{i}")],
        ));
    }
    let host = Arc::new(host(workspace.path(), &dirs));
    let bystander = host.start("bystander").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let caller = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut calls = 0;
            while !done.load(Ordering::Acquire) {
                let out = bystander
                    .call_tool("echo", json!({"n": calls}), CallOptions::default())
                    .expect("the bystander answers while others start");
                assert_eq!(out.text(), format!("{{\"n\":{calls}}}"));
                calls += 1;
            }
            calls
        })
    };
    // Every fleet member once, and fleet-0 a second time at once.
    let starters: Vec<_> = (0..FLEET)
        .map(|i| format!("fleet-{i}"))
        .chain(std::iter::once("fleet-0".to_string()))
        .map(|name| {
            let host = host.clone();
            std::thread::spawn(move || (name.clone(), host.start(&name)))
        })
        .collect();
    let outcomes: Vec<_> = starters.into_iter().map(|s| s.join().unwrap()).collect();
    done.store(true, Ordering::Release);
    assert!(caller.join().unwrap() > 0);
    let refused: Vec<_> = outcomes.iter().filter(|(_, r)| r.is_err()).collect();
    assert_eq!(refused.len(), 1, "{outcomes:?}");
    assert!(
        matches!(&refused[0], (name, Err(StartError::AlreadyRunning { extension })) if name == "fleet-0" && extension == "fleet-0"),
        "{outcomes:?}"
    );
    for (name, started) in outcomes.iter().filter(|(_, r)| r.is_ok()) {
        let i: usize = name.trim_start_matches("fleet-").parse().unwrap();
        let out = started
            .as_ref()
            .unwrap()
            .call_tool(&format!("echo{i}"), json!({"i": i}), CallOptions::default())
            .unwrap();
        assert_eq!(out.text(), format!("{{\"i\":{i}}}"));
    }
}

#[test]
fn serve_starts_many_extensions_at_once() {
    let root = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..FLEET)
        .map(|i| {
            peer_extension(
                root.path(),
                &format!("fleet-{i}"),
                "0.2",
                &["good"],
                &[&format!("echo{i}")],
            )
        })
        .collect();
    let mut serve = Serve::over(workspace, root, dirs);
    for i in 0..FLEET {
        serve.send(json!({"id": i, "op": "start", "extension": format!("fleet-{i}")}));
    }
    for i in 0..FLEET {
        let reply = serve.reply(json!(i));
        assert_eq!(reply["ok"], true, "{reply}");
    }
    serve.close_input().unwrap();
}
