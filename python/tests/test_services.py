"""Every service kind bound as a Python object, against real extensions: the raw Wave-1
peer (API 0.2 and 0.4), the raw API 0.3 peer, and the brokers. Each request reaches
the bound object's method with the validated params, and its return value (or its
refusal) reaches the extension."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

from conftest import ask, eventually, peer03_extension, services_extension

import octet_host
from octet_host import (
    ActiveToolsService,
    AgentModelSelectionV1Service,
    AgentSessionLifetimeV1Service,
    AgentSessionsService,
    ApprovalsService,
    AutocompleteService,
    ComposerService,
    MessageInjectionService,
    PolicyService,
    ProviderAuthService,
    ProviderCatalogService,
    ProviderCredentialsService,
    Refusal,
    SecretsService,
    ServiceCall,
    SessionCompactionV1Service,
    SessionControlV1Service,
    SessionEntriesService,
    SessionLifecycleService,
    ShortcutsService,
    TerminalHandoffService,
)

SPAWN_POLICY = {
    "tools": ["read"],
    "max_depth": 1,
    "max_concurrent_children": 8,
    "max_turns": None,
    "max_tokens": None,
    "max_cost_microdollars": None,
    "max_output_bytes": 4096,
    "timeout_ms": None,
}


class Journal:
    """What the bound objects were asked, in order."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.lock = threading.Lock()

    def add(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)


class Composer(ComposerService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.text = "draft"

    def get(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"composer/get {call.extension}")
        return {"text": self.text}

    def set(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"composer/set {params['text']}")
        self.text = params["text"]

    def insert(self, params: Any, call: ServiceCall) -> None:
        raise Refusal("invalid_request", "a remote editor owns the composer")


class Shortcuts(ShortcutsService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def register(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"shortcut/register {params['id']} {params['key']}")


class Entries(SessionEntriesService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def append_entry(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"append {params['entry_type']} {json.dumps(params['data'])}")
        return {"entry_id": "entry-7"}

    def append_private(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(
            f"private {params['entry_type']} {len(params['session_leaf']['grant_id'])}"
        )
        return {"entry_id": "p1", "head": "p1"}

    def set_name(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"name {params['name']}")

    def set_label(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"label {params['entry_id']} {params['label']}")


class Messages(MessageInjectionService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def send_message(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"message {params['role']} {params['text']}")

    def send_user_message(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"user {params['text']}")


class Tools(ActiveToolsService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def set_active(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"active {','.join(params['names'])}")


class Terminal(TerminalHandoffService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def acquire(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add("acquire")
        return {"grant_id": "g-1", "columns": 80, "rows": 24}

    def release(self, params: Any, call: ServiceCall) -> None:
        self.journal.add("release")


class Completion(AutocompleteService):
    def register(self, params: Any, call: ServiceCall) -> Any:
        return {"accepted": True}


class Control(SessionControlV1Service):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def wait_for_idle(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add("wait_for_idle")
        return {"session_id": "s-1"}

    def create(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add("create")
        return {"session_id": "s-2"}

    def fork(self, params: Any, call: ServiceCall) -> Any:
        return {"session_id": "s-3"}

    def reload(self, params: Any, call: ServiceCall) -> Any:
        return {"session_id": "s-1"}

    def switch(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"switch {params['session_id']}")
        return {"session_id": params["session_id"]}


class Compaction(SessionCompactionV1Service):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def compact(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"compact independent={call.independent}")
        return {"entry_id": "c-1", "summary": "Shorter.", "first_kept": "e7"}


class Agents(AgentSessionsService):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def spawn(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"spawn {params['task_name']}")
        return {"agent_id": "child-1", "session": None}

    def message(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"message {params['target']}")
        return {"delivery": "steering"}

    def follow_up(self, params: Any, call: ServiceCall) -> Any:
        return {"delivery": "follow_up"}

    def interrupt(self, params: Any, call: ServiceCall) -> Any:
        return {"interrupt_requested": True}


class Models(AgentModelSelectionV1Service):
    def models(self, params: Any, call: ServiceCall) -> Any:
        return {
            "models": [
                {
                    "model": "m-1",
                    "provider": "acme",
                    "display_name": "M one",
                    "reasoning": [],
                    "context_window": 1000,
                    "max_output_tokens": 100,
                }
            ],
            "truncated": False,
        }


class Lifetime(AgentSessionLifetimeV1Service):
    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def stop(self, params: Any, call: ServiceCall) -> None:
        self.journal.add(f"stop {params['target']}")


class ReferenceAgents(AgentSessionsService):
    """Answers in the reference's own result shapes (sections 2.13-2.18)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def spawn(self, params: Any, call: ServiceCall) -> Any:
        return {
            "agent_id": "child-1",
            "agent_path": "/" + params["task_name"],
            "task_name": params["task_name"],
            "status": {"state": "pending"},
            "session": None,
        }

    def message(self, params: Any, call: ServiceCall) -> Any:
        return {"delivered_to": params["target"], "delivery": "queued"}

    def follow_up(self, params: Any, call: ServiceCall) -> Any:
        return {"agent_id": params["target"], "agent_path": "/survey", "delivery": "follow_up"}

    def interrupt(self, params: Any, call: ServiceCall) -> Any:
        self.journal.add(f"interrupt {params['target']}")
        return {
            "agent_id": params["target"],
            "agent_path": "/survey",
            "previous_status": "running",
            "interrupt_requested": True,
        }


def test_agent_sessions_alone_brings_its_companions_and_takes_reference_answers(
    workspace: Path, extensions: Path
) -> None:
    journal = Journal()
    peer = services_extension(extensions, "peer", "0.4")
    with octet_host.Host(workspace, [peer]) as host:
        started = host.start("peer", services={"agent_sessions": ReferenceAgents(journal)})
        for feature in (
            "agent_sessions",
            "agent_model_selection_v1",
            "agent_session_events_v1",
            "agent_session_lifetime_v1",
        ):
            assert feature in started["features"], started["features"]
        spawn = {"task_name": "survey", "message": "look", "policy": SPAWN_POLICY}
        report = ask(
            host,
            "peer",
            [
                {"id": "spawn", "method": "agent/spawn", "params": spawn},
                {"id": "models", "method": "agent/models", "params": {}},
            ],
        )
        assert report["spawn"]["result"]["agent_path"] == "/survey", report["spawn"]
        assert report["models"]["result"]["models"][0]["provider"] == "inherit", report
        host.agent_report({"agent_id": "child-1", "status": {"state": "running"}})
        later = ask(
            host,
            "peer",
            [
                {
                    "id": "message",
                    "method": "agent/message",
                    "params": {"target": "child-1", "message": "faster"},
                },
                {"id": "interrupt", "method": "agent/interrupt", "params": {"target": "child-1"}},
                {"id": "stop", "method": "agent/stop", "params": {"target": "child-1"}},
            ],
        )
        assert later["message"]["result"] == {"delivered_to": "child-1", "delivery": "queued"}
        assert later["interrupt"]["result"]["previous_status"] == "running", later
        assert later["stop"]["result"] == {"agent_id": "child-1", "shutdown_requested": True}
        # Without a lifetime service, the stop reached the object as an interrupt.
        assert eventually(lambda: journal.lines.count("interrupt child-1") == 2), journal.lines


def test_the_session_service_and_api04_kinds_are_served_by_python_objects(
    workspace: Path, extensions: Path
) -> None:
    journal = Journal()
    shortcuts = json.dumps([{"id": "open", "key": "ctrl+o", "description": "Open"}])
    peer = services_extension(
        extensions,
        "peer",
        "0.4",
        {"OCTET_PEER_SHORTCUTS": shortcuts, "OCTET_PEER_PRIVATE_APPENDS": "1"},
    )
    services: Dict[str, Any] = {
        "composer": Composer(journal),
        "shortcuts": Shortcuts(journal),
        "session_entries": Entries(journal),
        "message_injection": Messages(journal),
        "active_tools": Tools(journal),
        "terminal_handoff": Terminal(journal),
        "autocomplete": Completion(),
        "session_control_v1": Control(journal),
        "session_compaction_v1": Compaction(journal),
        "agent_sessions": Agents(journal),
        "agent_model_selection_v1": Models(),
        "agent_session_events_v1": None,
        "agent_session_lifetime_v1": Lifetime(journal),
    }
    with octet_host.Host(workspace, [peer]) as host:
        started = host.start("peer", services=services)
        for feature in (
            "composer",
            "shortcuts",
            "session_entries",
            "terminal_handoff",
            "session_control_v1",
            "agent_sessions",
        ):
            assert feature in started["features"], started["features"]
        assert "shortcut/register open ctrl+o" in journal.lines
        report = ask(
            host,
            "peer",
            [
                {"id": "get", "method": "composer/get", "params": {}},
                {"id": "set", "method": "composer/set", "params": {"text": "/review "}},
                {"id": "insert", "method": "composer/insert", "params": {"text": "x"}},
                {
                    "id": "append",
                    "method": "session/append_entry",
                    "params": {"entry_type": "bookmark", "data": {"line": 42}},
                },
                {"id": "name", "method": "session/set_name", "params": {"name": "Review"}},
                {
                    "id": "label",
                    "method": "session/set_label",
                    "params": {"entry_id": "entry-7", "label": "here"},
                },
                {
                    "id": "say",
                    "method": "session/send_message",
                    "params": {"role": "assistant", "text": "hi"},
                },
                {"id": "user", "method": "session/send_user_message", "params": {"text": "go"}},
                {"id": "active", "method": "tools/set_active", "params": {"names": ["ask"]}},
                {"id": "acquire", "method": "terminal/acquire", "params": {}},
                {"id": "release", "method": "terminal/release", "params": {}},
                {"id": "idle", "method": "session/wait_for_idle", "params": {}},
                {"id": "create", "method": "session/create", "params": {}},
                {"id": "switch", "method": "session/switch", "params": {"session_id": "s-9"}},
                {
                    "id": "spawn",
                    "method": "agent/spawn",
                    "params": {"task_name": "survey", "message": "look", "policy": SPAWN_POLICY},
                },
                {"id": "models", "method": "agent/models", "params": {}},
            ],
        )
        assert report["get"] == {"result": {"text": "draft"}}
        assert report["set"] == {"result": {}}
        assert report["insert"]["error"]["message"].startswith("invalid_request: a remote editor")
        assert report["append"] == {"result": {"entry_id": "entry-7"}}
        assert report["acquire"]["result"]["grant_id"] == "g-1"
        assert report["switch"] == {"result": {"session_id": "s-9"}}
        assert report["spawn"]["result"]["agent_id"] == "child-1", report["spawn"]
        assert report["models"]["result"]["models"][0]["model"] == "m-1", report["models"]
        host.agent_report({"agent_id": "child-1", "status": {"state": "running"}})
        sequence = host.agent_event("child-1", {"kind": "turn_started"})
        assert sequence >= 1
        later = ask(
            host,
            "peer",
            [
                {
                    "id": "message",
                    "method": "agent/message",
                    "params": {"target": "child-1", "message": "faster"},
                },
                {
                    "id": "follow",
                    "method": "agent/follow_up",
                    "params": {"target": "child-1", "message": "then this"},
                },
                {
                    "id": "events",
                    "method": "agent/events",
                    "params": {"target": "child-1", "after_sequence": 0, "timeout_ms": 1},
                },
                {"id": "interrupt", "method": "agent/interrupt", "params": {"target": "child-1"}},
                {"id": "stop", "method": "agent/stop", "params": {"target": "child-1"}},
            ],
        )
        assert later["message"]["result"]["delivery"] == "steering", later
        assert later["follow"]["result"]["delivery"] == "follow_up", later
        records = later["events"]["result"]["events"]
        assert [r["event"]["kind"] for r in records] == ["turn_started"], later["events"]
        assert later["interrupt"]["result"]["interrupt_requested"] is True, later
        assert later["stop"]["result"]["shutdown_requested"] is True, later
        # Compaction: only after its parent settled, on the issued owner.
        compact = ask(
            host,
            "peer",
            [
                {
                    "id": "compact",
                    "method": "session/compact",
                    "params": {},
                    "parent": "previous",
                    "owner": "issued",
                },
            ],
        )
        assert compact["compact"]["result"]["summary"] == "Shorter.", compact
        # The private lane of a model-turn hook reaches append_private.
        hook = host.hook(
            "peer", "model_turn_start", {"run_id": "run:1", "turn_index": 0, "timestamp_ms": 1}
        )
        assert hook["hook"] == "model_turn_start"
        host.notify("peer", "shortcut/trigger", {"id": "open"})
        host.agent_report(
            {"agent_id": "child-1", "status": {"state": "completed", "output": "done"}}
        )
    assert journal.lines[:2] == ["shortcut/register open ctrl+o", "composer/get peer"]
    for line in (
        "composer/set /review ",
        'append bookmark {"line": 42}',
        "name Review",
        "label entry-7 here",
        "message assistant hi",
        "user go",
        "active ask",
        "acquire",
        "release",
        "wait_for_idle",
        "create",
        "switch s-9",
        "spawn survey",
        "message child-1",
        "stop child-1",
        "compact independent=True",
        "private turn-note 64",
    ):
        assert line in journal.lines, (line, journal.lines)


class Auth(ProviderAuthService):
    def request(self, params: Any, call: ServiceCall) -> Any:
        return {"status": "ready", "lease": "lease-1"}

    def revoke(self, params: Any, call: ServiceCall) -> Any:
        return {"status": "revoked"}


class Catalog(ProviderCatalogService):
    def __init__(self) -> None:
        self.completed = threading.Event()

    def register(self, params: Any, call: ServiceCall) -> Any:
        return {
            "revision": 1,
            "provider_ids": [params["provider"]["id"]],
            "model_ids": [m["id"] for m in params["models"]],
        }

    def unregister(self, params: Any, call: ServiceCall) -> Any:
        return {"revision": 2, "provider_ids": [], "model_ids": []}

    def complete(self, params: Any, call: ServiceCall) -> None:
        self.completed.set()


class Lifecycle(SessionLifecycleService):
    def create(self, params: Any, call: ServiceCall) -> Any:
        return {"session_id": "s-new"}

    def switch(self, params: Any, call: ServiceCall) -> Any:
        return {"session_id": params["session_id"]}


def model(model_id: str) -> Dict[str, Any]:
    return {
        "id": model_id,
        "api_name": model_id,
        "protocol": "openai_chat",
        "context_window": 128000,
        "max_output_tokens": 4096,
        "capabilities": {
            "tools": True,
            "parallel_tool_calls": False,
            "structured_output": True,
            "reasoning": False,
        },
    }


def test_the_api03_kinds_are_served_by_python_objects(workspace: Path, extensions: Path) -> None:
    catalog = Catalog()
    with octet_host.Host(workspace, [peer03_extension(extensions)]) as host:
        started = host.start(
            "prov",
            services={
                "provider_auth": Auth(),
                "provider_catalog": catalog,
                "session_lifecycle": Lifecycle(),
            },
        )
        assert started["api_version"] == "0.3"
        registration = {
            "provider": {"id": "acme", "label": "Acme", "auth": {"kind": "oauth"}},
            "models": [model("fast")],
        }
        report = ask(
            host,
            "prov",
            [
                {
                    "id": "auth",
                    "method": "provider/auth/request",
                    "params": {"provider_id": "acme", "action": "authorize", "interactive": False},
                },
                {"id": "register", "method": "providers/register", "params": registration},
                {"id": "complete", "method": "providers/complete", "params": {}, "notify": True},
                {
                    "id": "unregister",
                    "method": "providers/unregister",
                    "params": {"provider_id": "acme"},
                },
                {"id": "create", "method": "session/create", "params": {}},
                {"id": "fork", "method": "session/fork", "params": {}},
                {"id": "switch", "method": "session/switch", "params": {"session_id": "s-9"}},
            ],
        )
        assert report["auth"] == {"result": {"lease": "lease-1", "status": "ready"}}
        assert report["register"]["result"]["model_ids"] == ["fast"]
        assert report["unregister"]["result"]["revision"] == 2
        assert report["create"] == {"result": {"session_id": "s-new"}}
        # A method the object does not define is refused by the Protocol's default body.
        assert report["fork"]["error"]["code"] == -32601, report["fork"]
        assert report["switch"] == {"result": {"session_id": "s-9"}}
        assert catalog.completed.wait(10)


PLANTED = "PLANTED-s3cret-7f1d2c"


class Policy(PolicyService):
    def evaluate(self, params: Any, call: ServiceCall) -> Any:
        assert params["intent"]["operation"] == "demo.publish"
        return {"decision": "ask"}


class Approvals(ApprovalsService):
    def approve(self, params: Any, call: ServiceCall) -> Any:
        return {"approved": True}


class Secrets(SecretsService):
    def get(self, params: Any, call: ServiceCall) -> Any:
        return {"value": PLANTED if params["name"] == "demo.token" else None}


class Credentials(ProviderCredentialsService):
    def credentials(self, params: Any, call: ServiceCall) -> Any:
        return {"credential": f"cred-for-{params['provider']}"}


def test_the_brokers_are_served_by_python_objects(workspace: Path, extensions: Path) -> None:
    vault = services_extension(
        extensions,
        "vault",
        "0.2",
        extra=('\n[capabilities]\nsecrets = ["demo.token"]\nprovider_credentials = true\n'),
    )
    events: List[Dict[str, Any]] = []
    with octet_host.Host(workspace, [vault]) as host:
        host.subscribe(events.append)
        host.start(
            "vault",
            services={
                "policy": Policy(),
                "approvals": Approvals(),
                "secrets": Secrets(),
                "provider_credentials": Credentials(),
            },
        )
        report = ask(
            host,
            "vault",
            [
                {
                    "id": "secret",
                    "method": "secret/get",
                    "params": {"name": "demo.token"},
                    "conceal": True,
                },
                {
                    "id": "credential",
                    "method": "provider/credentials",
                    "params": {"provider": "acme", "model": "rocket-1"},
                    "conceal": True,
                },
                {
                    "id": "policy",
                    "method": "policy/evaluate",
                    "params": {
                        "intent": {"kind": "external_side_effect", "operation": "demo.publish"}
                    },
                },
            ],
        )
    assert report["secret"]["concealed"]["value"] == len(PLANTED) + 2, report
    assert report["policy"]["result"]["decision"] == "ask"
    assert isinstance(report["policy"]["result"]["approval_token"], str)
    assert PLANTED not in json.dumps(events)


def test_a_request_of_an_unbound_kind_never_reaches_python(
    workspace: Path, extensions: Path
) -> None:
    journal = Journal()
    peer = services_extension(extensions, "peer", "0.2")
    with octet_host.Host(workspace, [peer]) as host:
        started = host.start("peer", services={"composer": Composer(journal)})
        assert "session_entries" not in started["features"]
        report = ask(
            host,
            "peer",
            [
                {
                    "id": "append",
                    "method": "session/append_entry",
                    "params": {"entry_type": "x", "data": {}},
                },
            ],
        )
    assert report["append"]["error"]["code"] == -32601, report
    assert journal.lines == []


def test_a_service_answer_can_be_sent_by_hand(workspace: Path, extensions: Path) -> None:
    """``service_answer`` as a method: a kind bound by name only (no object) is refused
    by the client; an embedder with its own loop can answer through the method."""
    peer = services_extension(extensions, "peer", "0.2")
    seen: List[Optional[str]] = []
    with octet_host.Host(workspace, [peer]) as host:
        host.subscribe(lambda e: seen.append(e.get("method")), "answer_refused")
        host.start("peer", services=["composer"])
        report = ask(host, "peer", [{"id": "get", "method": "composer/get", "params": {}}])
        assert report["get"]["error"]["message"].startswith("unsupported_feature"), report
        try:
            host.service_answer(999, result={})
        except octet_host.UnknownRequestId as error:
            assert error.code == "unknown_request_id"
        else:
            raise AssertionError("an unknown request id is refused")
