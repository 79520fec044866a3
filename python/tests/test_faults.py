"""Faults end in a typed exception or event, with no call waiting forever and no
process left behind: handlers that raise or hang, cancellation, a crashing extension,
a killed host, a serve that writes lines the client cannot read, an unknown serve
protocol, a subscriber that raises."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import alive, ask, eventually, sdk_extension, services_extension

import octet_host
from octet_host import ComposerService, ServiceCall


class Raising(ComposerService):
    def get(self, params: Any, call: ServiceCall) -> Any:
        raise KeyError("the composer's buffer went away")


def test_a_handler_that_raises_is_a_typed_refusal_and_an_event(
    workspace: Path, extensions: Path
) -> None:
    events: List[Dict[str, Any]] = []
    with octet_host.Host(workspace, [services_extension(extensions, "peer", "0.2")]) as host:
        host.subscribe(events.append, "handler_error")
        host.start("peer", services={"composer": Raising()})
        report = ask(
            host,
            "peer",
            [
                {"id": "get", "method": "composer/get", "params": {}},
                {"id": "again", "method": "composer/get", "params": {}},
            ],
        )
        # `unavailable` reaches the extension as -32603 with the message in data.reason.
        for key in ("get", "again"):
            assert report[key]["error"]["code"] == -32603, report
        assert eventually(lambda: len(events) == 2)
    assert "KeyError" in events[0]["message"] and events[0]["method"] == "composer/get"


class Hanging(ComposerService):
    def __init__(self) -> None:
        self.calls: List[ServiceCall] = []
        self.release = threading.Event()

    def get(self, params: Any, call: ServiceCall) -> Any:
        self.calls.append(call)
        if len(self.calls) == 1:
            self.release.wait(60)
        return {"text": "late" if len(self.calls) == 1 else "prompt"}


def test_a_handler_that_hangs_meets_the_deadline_and_is_withdrawn(
    workspace: Path, extensions: Path
) -> None:
    hanging = Hanging()
    with octet_host.Host(
        workspace, [services_extension(extensions, "peer", "0.2")], workers=2
    ) as host:
        host.start("peer", services={"composer": hanging})
        with pytest.raises(octet_host.DeadlineExceeded):
            ask(
                host,
                "peer",
                [{"id": "get", "method": "composer/get", "params": {}}],
                timeout=1.0,
            )
        assert hanging.calls[0].withdrawn.wait(20), "serve withdrew the request"
        assert hanging.calls[0].withdrawn_reason == "no_longer_wanted"
        # The other worker serves the next request while the first still hangs.
        report = ask(host, "peer", [{"id": "get2", "method": "composer/get", "params": {}}])
        assert report["get2"] == {"result": {"text": "prompt"}}
        hanging.release.set()
        assert host.status()[0]["state"] == "ready"


def test_a_request_withdrawn_while_every_worker_hangs_is_never_served(
    workspace: Path, extensions: Path
) -> None:
    hanging = Hanging()
    with octet_host.Host(
        workspace, [services_extension(extensions, "peer", "0.2")], workers=1
    ) as host:
        host.start("peer", services={"composer": hanging})
        first = host.submit(
            "call",
            "peer",
            tool="ask",
            timeout=60.0,
            arguments={"requests": [{"id": "a", "method": "composer/get", "params": {}}]},
        )
        assert eventually(lambda: len(hanging.calls) == 1)
        # The only worker hangs: the second request waits for it, meets its call's
        # deadline and is withdrawn; the host answers everything else meanwhile.
        with pytest.raises(octet_host.DeadlineExceeded):
            ask(host, "peer", [{"id": "b", "method": "composer/get", "params": {}}], 1.0)
        assert host.status()[0]["state"] == "ready"
        hanging.release.set()
        assert first.result()["is_error"] is False
        time.sleep(0.5)
    assert len(hanging.calls) == 1, "the withdrawn request never reached the handler"


def test_cancelling_a_call_withdraws_its_service_request(
    workspace: Path, extensions: Path
) -> None:
    hanging = Hanging()
    with octet_host.Host(workspace, [services_extension(extensions, "peer", "0.2")]) as host:
        host.start("peer", services={"composer": hanging})
        pending = host.submit(
            "call",
            "peer",
            tool="ask",
            arguments={"requests": [{"id": "get", "method": "composer/get", "params": {}}]},
        )
        assert eventually(lambda: bool(hanging.calls))
        pending.cancel()
        with pytest.raises(octet_host.Cancelled):
            pending.result()
        assert hanging.calls[0].withdrawn.wait(20)
        hanging.release.set()


def test_an_extension_that_crashes_mid_call(fixture_host: octet_host.Host) -> None:
    with pytest.raises(octet_host.TransportLost):
        fixture_host.call("fixture", "crash")
    # The host and the client go on; the supervisor restarts the extension.
    assert eventually(
        lambda: any(s["state"] == "ready" and s["generation"] >= 2 for s in fixture_host.status()),
        30,
    )
    assert fixture_host.call("fixture", "echo", {"after": "crash"})["is_error"] is False


def test_a_killed_host_fails_every_waiting_call_and_leaves_no_process(
    workspace: Path, extensions: Path
) -> None:
    events: List[Dict[str, Any]] = []
    host = octet_host.Host(workspace, [sdk_extension(extensions)])
    host.subscribe(events.append, "host_lost")
    started = host.start("fixture")
    pending = host.submit("call", "fixture", tool="sleep", arguments={"ms": 60_000})
    # A second thread waits for the same call; it must end with HostLost too. (An
    # assertion failing on that thread would not fail the test, so it records.)
    seen: List[BaseException] = []

    def wait_too() -> None:
        try:
            pending.result()
        except BaseException as error:
            seen.append(error)

    waiting = threading.Thread(target=wait_too)
    os.kill(host.pid, signal.SIGKILL)
    waiting.start()
    with pytest.raises(octet_host.HostLost) as lost:
        pending.result(timeout=30)
    assert lost.value.exit_status == -signal.SIGKILL
    waiting.join(30)
    assert not waiting.is_alive()
    assert len(seen) == 1 and isinstance(seen[0], octet_host.HostLost), seen
    with pytest.raises(octet_host.HostLost):
        host.call("fixture", "echo")
    # serve's guardian ends the extension's process group.
    extension = started["pid"]
    assert extension is not None
    assert eventually(lambda: not alive(extension), 20), "the extension outlived serve"
    assert eventually(lambda: len(events) == 1)
    assert host.close() is None


def test_closing_leaves_no_process(workspace: Path, extensions: Path) -> None:
    with octet_host.Host(workspace, [sdk_extension(extensions)]) as host:
        pid = host.start("fixture")["pid"]
        assert pid is not None
        serve = host.pid
    assert not alive(serve)
    assert eventually(lambda: not alive(pid), 10)


FAKE_SERVE = r"""
import json, sys
version = int(sys.argv[1])
print(json.dumps({"type": "ready", "serve_protocol": version, "version": "9", "octet_version": "9",
                  "workspace": "/", "session_id": "s"}), flush=True)
for raw in sys.stdin:
    line = json.loads(raw)
    if line.get("op") == "status":
        print("this is not json", flush=True)
        print("[1, 2]", flush=True)
        print(json.dumps({"type": "reply", "id": line["id"], "ok": True, "extensions": []}),
              flush=True)
    elif line.get("op") == "call":
        sys.exit(3)
    elif line.get("op") == "shutdown" and version == 2:
        break  # a serve that never answers shutdown nor ends at EOF
if version == 2:
    import time
    time.sleep(120)
"""


def fake_serve(tmp_path: Path, version: int) -> str:
    script = tmp_path / "fake-serve"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.argv[1:] = ['{version}']\n" + FAKE_SERVE
    )
    script.chmod(0o755)
    return str(script)


def test_lines_the_client_cannot_read_are_events_and_lose_nothing(tmp_path: Path) -> None:
    events: List[Dict[str, Any]] = []
    with octet_host.Host(tmp_path, binary=fake_serve(tmp_path, 1)) as host:
        host.subscribe(events.append, "protocol_error")
        assert host.status() == []
        assert eventually(lambda: len(events) == 2)
        # The fake exits on a call: the call fails with HostLost, not a hang.
        with pytest.raises(octet_host.HostLost) as lost:
            host.call("x", "y")
        assert lost.value.exit_status == 3
    assert "not JSON" in events[0]["message"] and "not an object" in events[1]["message"]


def test_a_serve_that_does_not_shut_down_is_killed_by_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake speaks "protocol 2" only to tell this scenario apart; accept it here.
    import octet_host._core as core

    monkeypatch.setattr(core, "SUPPORTED_SERVE_PROTOCOLS", (1, 2))
    host = octet_host.Host(tmp_path, binary=fake_serve(tmp_path, 2), shutdown_timeout=1)
    pid = host.pid
    started = time.monotonic()
    assert host.close() is None, "no report came"
    assert not alive(pid)
    assert time.monotonic() - started < 20


def test_an_unknown_serve_protocol_is_refused(tmp_path: Path) -> None:
    with pytest.raises(octet_host.UnsupportedServeProtocol) as refused:
        octet_host.Host(tmp_path, binary=fake_serve(tmp_path, 99))
    assert refused.value.version == 99
    assert "serve protocol 99" in str(refused.value)


def test_a_binary_that_is_not_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCTET_HOST_BIN", str(tmp_path / "missing"))
    with pytest.raises(octet_host.BinaryNotFound) as missing:
        octet_host.Host(tmp_path)
    assert "OCTET_HOST_BIN" in str(missing.value)


def test_a_subscriber_that_raises_is_reported_and_the_rest_goes_on(
    fixture_host: octet_host.Host,
) -> None:
    errors: List[Dict[str, Any]] = []
    progress: List[int] = []

    def broken(event: Dict[str, Any]) -> None:
        raise RuntimeError("the UI is gone")

    fixture_host.subscribe(broken, "progress")
    fixture_host.subscribe(errors.append, "callback_error")
    fixture_host.subscribe(lambda e: progress.append(e["sequence"]), "progress")
    fixture_host.call("fixture", "progress", {"steps": 3})
    assert eventually(lambda: len(errors) == 3 and len(progress) == 3)
    assert "RuntimeError: the UI is gone" in errors[0]["message"]


def test_a_question_callback_that_raises_denies(workspace: Path, extensions: Path) -> None:
    def broken(question: Dict[str, Any]) -> bool:
        raise ValueError("no terminal")

    with octet_host.Host(workspace, [sdk_extension(extensions)], on_confirmation=broken) as host:
        host.start("fixture")
        out = host.call("fixture", "confirm", {"prompt": "Delete?"})
    assert out["content"][0]["text"] != "confirmed"


def test_stderr_lines_reach_their_subscribers(workspace: Path, extensions: Path) -> None:
    lines: List[str] = []
    with octet_host.Host(workspace, [sdk_extension(extensions)]) as host:
        host.subscribe(lambda e: lines.append(e["line"]), "stderr")
        host.start("fixture")
        with pytest.raises(octet_host.ServeError):
            host.call("fixture", "panic")
        assert eventually(lambda: any("panic" in line for line in lines))
    assert json.dumps(lines)
