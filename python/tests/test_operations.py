"""Every serve operation through the client, against real extensions."""

from __future__ import annotations

import base64
import inspect
import json
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import (
    ask,
    eventually,
    raw_peer,
    resource_extension,
    sdk_extension,
    services_extension,
)
from test_services import Completion, Journal, Messages, Shortcuts, Terminal

import octet_host
import octet_host.aio
from octet_host import OPS


def test_every_operation_of_the_schema_is_a_method_of_both_apis() -> None:
    for op in OPS:
        sync = getattr(octet_host.Host, op)
        aio = getattr(octet_host.aio.Host, op)
        assert callable(sync) and callable(aio), op
        assert not inspect.iscoroutinefunction(sync), op
        assert inspect.iscoroutinefunction(aio), op


def test_the_session_operations(workspace: Path, extensions: Path) -> None:
    sdk_extension(extensions)
    with octet_host.Host(workspace, [extensions / "fixture"]) as host:
        assert host.ready["serve_protocol"] == 1
        found = host.discover()
        assert [e["name"] for e in found["entries"]] == ["fixture"]
        started = host.start("fixture")
        assert started["generation"] == 1 and started["api_version"] == "0.4"
        assert {t["name"] for t in started["tools"]} >= {"echo", "sleep"}
        (status,) = host.status()
        assert status["state"] == "ready" and status["pid"] == started["pid"]
        reloaded = host.reload("fixture")
        assert reloaded["generation"] == 2
        report = host.stop("fixture")
        assert report["extensions"][0]["final_state"] == "stopped"
        assert host.status() == []
        with pytest.raises(octet_host.StartError) as failed:
            host.start("nothing-here")
        assert failed.value.code == "unknown_extension"
        assert "fixture" in failed.value.fix
        host.start("fixture")
        report = host.shutdown()
    assert report["extensions"][0]["acknowledged"] is True
    assert host.report == report


def test_the_calls(fixture_host: octet_host.Host) -> None:
    host = fixture_host
    out = host.call("fixture", "echo", {"a": 1})
    assert json.loads(out["content"][0]["text"]) == {"a": 1}
    assert host.command("fixture", "fixture", ["a", "b"])["text"] == "fixture: a b"
    hook = host.hook("fixture", "before_prompt", {"prompt": "hi"})
    assert hook["hook"] == "before_prompt"
    assert "contributions" in host.context("fixture", "hi")
    assert "contribution" in host.status_collect("fixture", "status")
    rendered = host.render("fixture", "echo", "the output", arguments={"a": 1})
    assert rendered["segments"], rendered
    menu = host.menu("fixture")
    assert menu["menu"]["items"] is not None
    actions = [i for i in menu["menu"]["items"] if i.get("command")]
    assert actions, menu
    assert host.menu_action("fixture", actions[0])["text"].startswith("fixture:")
    with pytest.raises(octet_host.NotDeclared):
        host.call("fixture", "no_such_tool")
    with pytest.raises(octet_host.NotStarted):
        host.call("elsewhere", "echo")
    with pytest.raises(octet_host.RemoteError) as remote:
        host.call("fixture", "fail")
    assert remote.value.rpc_code is not None


def test_progress_reaches_the_callback_in_order_before_the_result(
    fixture_host: octet_host.Host,
) -> None:
    seen: List[int] = []

    class Bar:
        total = None
        n = 0.0
        descriptions: List[str] = []

        def update(self, n: float = 1) -> None:
            self.n += n

        def set_description(self, desc: Any = None, refresh: bool = True) -> None:
            self.descriptions.append(str(desc))

    bar = Bar()
    drive = octet_host.progress_bar(bar)  # type: ignore[arg-type]

    def progress(event: Dict[str, Any]) -> None:
        seen.append(event["sequence"])
        drive(event)

    out = fixture_host.call("fixture", "progress", {"steps": 5}, progress=progress)
    assert out["content"][0]["text"] == "progress sent=5"
    assert seen == [1, 2, 3, 4, 5]
    assert bar.total == 5 and bar.n == 5
    assert bar.descriptions[-1] == "step 5 of 5"


def test_questions_are_answered_by_the_callbacks(workspace: Path, extensions: Path) -> None:
    asked: List[Dict[str, Any]] = []

    def confirm(question: Dict[str, Any]) -> bool:
        asked.append(question)
        return bool(question["prompt"] == "Delete the cache?")

    with octet_host.Host(
        workspace, [sdk_extension(extensions)], on_confirmation=confirm, on_input=lambda q: "typed"
    ) as host:
        host.start("fixture")
        yes = host.call("fixture", "confirm", {"prompt": "Delete the cache?"})
        no = host.call("fixture", "confirm", {"prompt": "Something else?"})
        typed = host.call("fixture", "ask", {"prompt": "Name?"})
        # The same answers by hand are refused once the question is gone.
        with pytest.raises(octet_host.UnknownRequestId):
            host.answer_confirmation(asked[0]["request_id"], True)
        with pytest.raises(octet_host.UnknownRequestId):
            host.answer_input(asked[0]["request_id"], "late")
    assert yes["content"][0]["text"] == "confirmed"
    assert no["content"][0]["text"] != "confirmed"
    assert "typed" in typed["content"][0]["text"]
    assert [q["prompt"] for q in asked] == ["Delete the cache?", "Something else?"]


def test_cancel(fixture_host: octet_host.Host) -> None:
    pending = fixture_host.submit("call", "fixture", tool="sleep", arguments={"ms": 60_000})
    pending.cancel()
    with pytest.raises(octet_host.Cancelled) as cancelled:
        pending.result()
    assert cancelled.value.details["reason"] == "user"
    with pytest.raises(octet_host.UnknownCallId):
        fixture_host.cancel(pending.call_id)


def test_a_deadline(fixture_host: octet_host.Host) -> None:
    with pytest.raises(octet_host.DeadlineExceeded) as late:
        fixture_host.call("fixture", "sleep", {"ms": 60_000}, timeout=0.2)
    assert late.value.details["after_ms"] == 200


def test_calls_in_flight_settle_each_with_its_own_result(fixture_host: octet_host.Host) -> None:
    pending = [
        fixture_host.submit("call", "fixture", tool="echo", arguments={"n": n}) for n in range(64)
    ]
    values = [json.loads(p.result()["content"][0]["text"])["n"] for p in pending]
    assert values == list(range(64))


def test_calls_from_many_threads(fixture_host: octet_host.Host) -> None:
    errors: List[BaseException] = []

    def worker(k: int) -> None:
        try:
            for n in range(50):
                out = fixture_host.call("fixture", "echo", {"k": k, "n": n})
                assert json.loads(out["content"][0]["text"]) == {"k": k, "n": n}
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []


def test_notifications_autocomplete_lifecycle_and_terminal(
    workspace: Path, extensions: Path
) -> None:
    completion = json.dumps(
        {"prefix": "/re", "items": [{"value": "/review", "label": "review", "description": None}]}
    )
    shortcuts = json.dumps([{"id": "open", "key": "ctrl+o", "description": "Open"}])
    peer = services_extension(
        extensions,
        "peer",
        "0.2",
        {"OCTET_PEER_COMPLETION": completion, "OCTET_PEER_SHORTCUTS": shortcuts},
    )
    events: List[Dict[str, Any]] = []
    journal = Journal()
    with octet_host.Host(workspace, [peer]) as host:
        host.subscribe(events.append)
        host.start(
            "peer",
            services={
                "message_injection": Messages(journal),
                "terminal_handoff": Terminal(journal),
                "terminal_input": None,
                "autocomplete": Completion(),
                "shortcuts": Shortcuts(journal),
            },
        )
        ask(
            host,
            "peer",
            [
                {
                    "id": "reg",
                    "method": "ui/autocomplete/register",
                    "params": {"revision": 1},
                    "parent": "none",
                }
            ],
        )
        answered = host.autocomplete("/re", 3, 1)
        assert answered["claimed_by"] == "peer", answered
        assert answered["items"][0]["value"] == "/review"
        host.message_delta("peer", "m1", "Hello, ")
        host.message_delta("peer", "m1", deltas=["wor", "ld"])
        host.message_settled("peer", "m1")
        host.notify("peer", "shortcut/trigger", {"id": "open"})
        with pytest.raises(octet_host.NotificationRefused) as refused:
            host.notify("peer", "shortcut/trigger", {"id": "close"})
        assert refused.value.details["refusal"] == "invalid_request"
        grant = ask(host, "peer", [{"id": "t", "method": "terminal/acquire", "params": {}}])
        assert grant["t"]["result"]["grant_id"] == "g-1", grant
        host.terminal_revoke("peer", "the editor needs it back")
        host.lifecycle("session/started", session_id=host.ready["session_id"])
        seen = json.loads(host.call("peer", "seen")["content"][0]["text"])
    methods = [n["method"] for n in seen["notifications"]]
    assert "message/updated" in methods and "shortcut/trigger" in methods, methods
    assert "terminal/grant-lost" in methods and "session/started" in methods, methods
    text = "".join(
        n["params"]["delta"] for n in seen["notifications"] if n["method"] == "message/updated"
    )
    assert text == "Hello, world"
    assert any(e.get("event") == "tools_changed" for e in events)


def test_get_applicable_operations(workspace: Path, extensions: Path) -> None:
    resource_extension(extensions)
    with octet_host.Host(
        workspace, [extensions / "circuits"], resource_refs=True, operation_discovery=True
    ) as host:
        host.start("circuits")
        made = host.call("circuits", "make", {"name": "adder"})
        resource = made["structured_content"]["circuit"]
        found = host.get_applicable_operations({"resource": resource})
        assert found["operations"], found
        assert all(op["extension"] == "circuits" for op in found["operations"])
        with pytest.raises(octet_host.DiscoveryRefused) as refused:
            host.get_applicable_operations(
                {"resource": {"$resource": "res-none", "type": "Circuit"}}
            )
        assert refused.value.details["reason"] == "resource_unavailable"


def test_the_tool_composition_option_offers_composition(
    workspace: Path, extensions: Path, tmp_path: Path
) -> None:
    composer = services_extension(extensions, "composer", "0.4")
    store = tmp_path / "store"
    with octet_host.Host(workspace, [composer]) as host:
        plain = host.start("composer")
        assert "tool_composition_v1" not in plain["features"], plain["features"]
    with octet_host.Host(
        workspace,
        [composer],
        tool_composition=True,
        composition_store=store,
        composition_timeout=2.5,
    ) as host:
        started = host.start("composer")
        assert "tool_composition_v1" in started["features"], started["features"]
        report = ask(
            host,
            "composer",
            [
                {"id": "ctx", "method": "composition/context", "params": {}},
                {
                    "id": "store",
                    "method": "composition/store",
                    "params": {"set": {"answer": 42}, "delete": []},
                },
            ],
        )
        names = [tool["name"] for tool in report["ctx"]["result"]["tools"]]
        assert "seen" in names, report
        assert report["ctx"]["result"]["limits"]["timeout_ms"] == 2500, report
        assert report["store"] == {"result": {}}, report
    # The store was written where the option said.
    assert any(store.iterdir()), list(store.iterdir())


def test_the_bulk_storage_option_offers_bulk_objects(
    workspace: Path, extensions: Path, tmp_path: Path
) -> None:
    peer = services_extension(extensions, "peer", "0.4")
    storage = tmp_path / "bulk"
    with octet_host.Host(workspace, [peer], bulk_storage=storage) as host:
        started = host.start("peer")
        assert "bulk_objects_v1" in started["features"], started["features"]
        report = ask(
            host,
            "peer",
            [
                {
                    "id": "write",
                    "method": "bulk/write",
                    "params": {
                        "profile": "local-file.v1",
                        "capacity": 16,
                        "media_type": "text/plain",
                    },
                }
            ],
        )
        ticket = report["write"]["result"]
        assert ticket["profile"] == "local-file.v1", report
        assert (storage / "transfer" / ticket["locator"]).exists(), ticket


def test_events_are_an_iterator(fixture_host: octet_host.Host) -> None:
    fixture_host.call("fixture", "progress", {"steps": 2})
    kinds = [e["event"] for e in fixture_host.events(timeout=0.5)]
    assert "state" in kinds and kinds.count("progress") == 2, kinds


def test_a_subscriber_may_call_the_host(fixture_host: octet_host.Host) -> None:
    """A call made on the event thread, progress callback included, settles (it cannot
    wait behind the subscriber that makes it)."""
    host = fixture_host
    outcome: List[Any] = []

    def on_progress(event: Dict[str, Any]) -> None:
        if event.get("call_id") == "outer" and not outcome:
            seen: List[Dict[str, Any]] = []
            out = host.call("fixture", "progress", {"steps": 2}, progress=seen.append)
            outcome.append(out["content"][0]["text"])

    host.subscribe(on_progress, "progress")
    host.submit("call", "fixture", call_id="outer", tool="progress", arguments={"steps": 1})
    assert eventually(lambda: bool(outcome), 60)
    assert outcome == ["progress sent=2"]


def test_the_wire_trace_comes_as_events(workspace: Path, extensions: Path) -> None:
    sdk_extension(extensions)
    with octet_host.Host(workspace, [extensions / "fixture"], wire_trace=True) as host:
        host.start("fixture")
        host.call("fixture", "echo", {"x": 1})
        traces = [e for e in host.events(timeout=0.5) if e["event"] == "trace"]
        methods = [t["frame"].get("method") for t in traces if isinstance(t["frame"], dict)]
        assert "initialize" in methods and "tool/call" in methods, methods
        answers = [t["answers"]["method"] for t in traces if "answers" in t]
        assert "tool/call" in answers, answers


def test_an_image_part_s_artifact_is_read_by_its_id(workspace: Path, extensions: Path) -> None:
    prober = raw_peer(
        extensions,
        "prober",
        "0.4",
        "peer.py",
        ["probe"],
        args=["services-probe"],
        env={"OCTET_PEER_TOOLS": "probe"},
    )
    with octet_host.Host(workspace, [prober]) as host:
        host.start("prober")
        out = host.call("prober", "probe")
        image = out["content"][1]
        assert image["type"] == "image"
        artifact = host.artifact("prober", image["artifact_id"])
        assert artifact["mime_type"] == "image/png"
        assert base64.b64decode(artifact["data"])[:8] == b"\x89PNG\r\n\x1a\n"
        with pytest.raises(octet_host.ServeError) as unknown:
            host.artifact("prober", "artifact-made-up")
        assert unknown.value.code == "invalid_value"
