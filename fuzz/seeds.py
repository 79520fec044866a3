#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/.

Seeds come from the wire protocol reference (frames of sections 1.1 to 1.7), the
manifest examples, the JSON parsing and JSON Schema conformance data in ../shared, and
hand-written edge cases. Run from anywhere: `python3 fuzz/seeds.py`. It clears and
rewrites the seven corpus directories; the total stays well under 1 MB.
"""

import hashlib
import json
import os
import shutil
import sys

FUZZ = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(FUZZ, "corpus")
SHARED = os.path.normpath(os.path.join(FUZZ, "..", "..", "shared", "conformance"))
PARSING = os.path.join(SHARED, "json-parsing", "test_parsing")
SCHEMA = os.path.join(SHARED, "json-schema", "draft2020-12")

TARGETS = [
    "frame_split",
    "initialize_result",
    "manifest",
    "tool_result",
    "menu",
    "schema",
    "canonical",
]


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def canonical(value):
    if value == "DEPTH_32":
        return b"[" * 32 + b"]" * 32
    return json.dumps(
        value, separators=(",", ":"), ensure_ascii=False, sort_keys=True
    ).encode()


class Corpus:
    def __init__(self, target):
        self.dir = os.path.join(CORPUS, target)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode()
        digest = hashlib.sha1(data).hexdigest()[:8]
        with open(os.path.join(self.dir, f"{name}-{digest}"), "wb") as f:
            f.write(data)


# --- Reference frames (section numbers of wire-protocol-reference.txt) ------------

CONTEXT = {"workspace": "/home/user/project", "execution_scope": None, "host": {}}

INIT_REQUEST_0_1 = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "api_version": "0.1",
        "octet_version": "0.8.0",
        "extension": {
            "name": "hello-world",
            "version": "0.1.0",
            "manifest_path": "/home/user/.octet/extensions/hello-world/extension.toml",
            "source": "global",
        },
        "workspace": "/home/user/project",
        "capabilities": {"filesystem": "none", "process": False, "network": False},
        "contributes": {
            "tools": ["hello_world"],
            "commands": ["hello"],
            "hooks": ["before_prompt", "after_response"],
            "ui": ["status"],
            "context": True,
            "tool_renderers": ["hello_world"],
            "notifications": True,
            "confirmations": False,
        },
        "host": {
            "session_id": None,
            "session_name": None,
            "model": "claude-sonnet-4-6",
            "reasoning": None,
            "active_skills": [],
        },
    },
}

HELLO_TOOL = {
    "name": "hello_world",
    "description": "Greet someone from an executable extension",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    },
}
GREET_TOOL = {
    "name": "greet",
    "description": "Greet everyone",
    "parameters": {"type": "object"},
}
HELLO_COMMAND = {
    "name": "hello",
    "description": "Show a greeting notification",
    "usage": "/hello [name]",
}

# The reference's API 0.1 result (section 1.1), plus the second tool the fuzz
# target's manifest declares.
INIT_RESULT_0_1_REFERENCE = {
    "api_version": "0.1",
    "tools": [HELLO_TOOL],
    "commands": [HELLO_COMMAND],
}
INIT_RESULT_0_1 = {
    "api_version": "0.1",
    "tools": [HELLO_TOOL, GREET_TOOL],
    "commands": [HELLO_COMMAND],
}

PROTOCOL_0_2 = {
    "version": "0.2",
    "features": [
        "request_cancellation",
        "content_parts",
        "request_progress",
        "artifacts",
        "lifecycle_events",
        "dynamic_tools",
        "runtime_commands",
    ],
    "limits": {"max_concurrent_requests": 4},
    "lifecycle_events": [
        "session/started",
        "session/settled",
        "turn/started",
        "turn/settled",
        "tool/started",
        "tool/settled",
    ],
}

SOURCES_SCHEMA = {
    "type": "object",
    "properties": {
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "url": {"type": "string"}},
                "required": ["title", "url"],
            },
        }
    },
    "required": ["sources"],
}

INIT_RESULT_0_2 = {
    "api_version": "0.2",
    "tools": [dict(HELLO_TOOL, output_schema=SOURCES_SCHEMA), GREET_TOOL],
    "commands": [HELLO_COMMAND],
    "protocol": PROTOCOL_0_2,
}
INIT_RESULT_0_2_MINIMAL = {
    "api_version": "0.2",
    "tools": [HELLO_TOOL, GREET_TOOL],
    "commands": [HELLO_COMMAND],
    "protocol": {"version": "0.2", "features": ["request_cancellation", "content_parts"]},
}
INIT_RESULT_0_4 = {
    "api_version": "0.4",
    "tools": [
        dict(
            HELLO_TOOL,
            prompt_snippet="Greets.",
            prompt_guidelines=["Use it for greetings.", "Never\tfor farewells."],
            composition={"mode": "only", "inline_budget": 16000},
            operation={"id": "circuit.open"},
        ),
        GREET_TOOL,
    ],
    "commands": [HELLO_COMMAND],
    "protocol": {
        "version": "0.4",
        "features": [
            "request_cancellation",
            "content_parts",
            "tool_prompt_metadata_v1",
            "tool_composition_v1",
            "operation_descriptors_v1",
            "agent_sessions",
            "agent_model_selection_v1",
            "session_control_v1",
            "session_compaction_v1",
            "policy_intents",
            "approvals",
            "secrets",
            "provider_credentials",
            "bulk_objects_v1",
        ],
        "limits": {"max_concurrent_requests": 2},
    },
}
INIT_RESULT_0_4_DYNAMIC = {
    "api_version": "0.4",
    "tools": [],
    "commands": [],
    "protocol": {
        "version": "0.4",
        "features": [
            "request_cancellation",
            "content_parts",
            "dynamic_tools",
            "runtime_commands",
            "lifecycle_events",
        ],
        "lifecycle_events": ["tool/started"],
    },
}

TOOL_RESULT_0_1 = {
    "content": "branch=main\nstate=clean\ncounts=staged:0,modified:0,untracked:0,ignored:0,conflicted:0",
    "is_error": False,
}
TOOL_RESULT_0_2 = {
    "content": [
        {"type": "text", "text": "Found 3 sources."},
        {
            "type": "image",
            "artifact_id": "artifact-opaque-id",
            "mime_type": "image/png",
            "alt": "Search result preview",
        },
    ],
    "structured_content": {"sources": [{"title": "Example", "url": "https://example.com"}]},
    "is_error": False,
    "metadata": {"cache": "miss"},
}
TOOL_RESULT_AUDIO = {
    "content": [
        {"type": "audio", "artifact_id": "audio-id", "mime_type": "audio/ogg", "transcript": "hi"},
        {"type": "image", "artifact_id": "big", "mime_type": "image/jpeg"},
        {"type": "image", "artifact_id": "big", "mime_type": "image/jpeg"},
        {"type": "text", "text": "two big images"},
    ],
    "structured_content": {"sources": []},
}
COMMAND_RESULT = {
    "text": "Checkpoint preview \u00b7 release-v2\nmain \u00b7 clean\n\n...",
    "notifications": [
        {
            "level": "info",
            "title": "Read-only checkpoint",
            "message": "No commit or filesystem mutation was performed.",
        }
    ],
    "context": [],
}
HOOK_RESULT = {
    "disposition": {"action": "continue"},
    "context": [
        {
            "label": "local-model-workflow",
            "content": "Local-model workflow is active...",
            "placement": "system_suffix",
        }
    ],
    "notifications": [],
}
HOOK_RESULT_DENY = {"disposition": {"action": "deny", "reason": "not now"}}
HOOK_RESULT_MODEL_TURN = {
    "disposition": {"action": "continue"},
    "notifications": [],
    "session_operation": {"action": "continue"},
}
HOOK_RESULT_CANCEL = {
    "disposition": {"action": "continue"},
    "session_operation": {"action": "replace_compaction"},
}
CONTEXT_RESULT = [
    {
        "label": "hello-world",
        "content": "The hello-world extension is active.",
        "placement": "system_suffix",
    },
    {"label": "default", "content": "prompt suffix by default"},
]
STATUS_RESULT = {
    "surface": "status",
    "text": "hello",
    "style_role": "extension.hello_world.status",
    "priority": 0,
}
STATUS_FOOTER = {"surface": "footer", "text": "f", "priority": -3}
RENDER_RESULT = {
    "segments": [
        {"text": "git \u00b7 clean", "style_role": "extension.git_tools.clean"},
        {"text": "\n", "style_role": None},
        {"text": "...", "style_role": "extension.git_tools.detail"},
    ]
}
NOTIFICATION_PARAMS = {"level": "warning", "title": None, "message": "disk almost full"}

MENU_RESULT = {
    "title": "Computer use",
    "status": {"state": "pending", "label": "Not set up"},
    "detail": "Set up installs Cua Driver and checks what your desktop needs.",
    "items": [
        {
            "id": "setup",
            "label": "Set up computer use",
            "command": "computer-use",
            "arguments": ["setup"],
            "recommended": True,
            "description": "Install the driver, then check permissions",
        },
        {
            "id": "jev",
            "label": "Jev (optional)",
            "items": [
                {
                    "id": "forget",
                    "label": "Forget stored API key",
                    "command": "computer-use",
                    "arguments": ["jev", "forget"],
                    "destructive": True,
                }
            ],
        },
    ],
}


def nested_menu(levels):
    items = [{"id": "leaf", "label": "Leaf", "command": "hello"}]
    for level in range(levels - 1):
        items = [{"id": f"sub{level}", "label": "Sub", "items": items, "recommended": True}]
    return {"title": "Deep", "items": items}


MENU_VARIANTS = [
    MENU_RESULT,
    {"title": "Empty", "items": []},
    {"title": "Nulls", "status": None, "detail": None, "items": [
        {"id": "a", "label": "A", "command": "hello", "arguments": None,
         "recommended": None, "destructive": None, "description": None}]},
    nested_menu(4),
    nested_menu(5),
    {"title": "Dup", "items": [
        {"id": "a", "label": "A", "command": "hello"},
        {"id": "a", "label": "B", "command": "checkpoint"}]},
    {"title": "Two recommended", "items": [
        {"id": "a", "label": "A", "command": "hello", "recommended": True},
        {"id": "b", "label": "B", "command": "checkpoint", "recommended": True}]},
    {"title": "Undeclared", "items": [{"id": "a", "label": "A", "command": "rm"}]},
    {"title": "Submenu args", "items": [
        {"id": "s", "label": "S", "items": [], "arguments": []}]},
    {"title": "Many", "items": [
        {"id": str(i), "label": "x", "command": "hello"} for i in range(40)]},
    {"title": "All states", "status": {"state": "ready", "label": "Ready"}, "items": [
        {"id": "e", "label": "", "command": "checkpoint", "arguments": ["", "\u2028"]}]},
]


def frames_of(messages):
    return b"".join(compact(m) + b"\n" for m in messages)


def response(request_id, result):
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


REFERENCE_FRAMES = [
    INIT_REQUEST_0_1,
    response(1, INIT_RESULT_0_1_REFERENCE),
    response(1, INIT_RESULT_0_2),
    {"jsonrpc": "2.0", "id": 2, "method": "tool/call", "params": {
        "name": "git_status",
        "arguments": {"include_ignored": False, "max_entries": 80},
        "catalog_revision": 2,
        "context": CONTEXT}},
    response(2, TOOL_RESULT_0_1),
    response(2, TOOL_RESULT_0_2),
    response(3, COMMAND_RESULT),
    response(4, HOOK_RESULT),
    response(5, CONTEXT_RESULT),
    response(6, STATUS_RESULT),
    response(7, MENU_RESULT),
    response(7, RENDER_RESULT),
    {"jsonrpc": "2.0", "id": 8, "method": "shutdown", "params": {}},
    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}},
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "cancelled"}},
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error", "data": [1]}},
    {"jsonrpc": "2.0", "id": "req-\u00e9", "method": "confirmation/request", "params": [1, 2]},
]

# --- Manifests ------------------------------------------------------------------

MANIFEST_0_1 = """\
name = "hello-world"
version = "0.1.0"
api_version = "0.1"

[entrypoint]
command = "hello-world"

[capabilities]
filesystem = "none"
process = false
network = false

[contributes]
tools = ["hello_world"]
commands = ["hello"]
hooks = ["before_prompt", "after_response"]
ui = ["status"]
context = true
tool_renderers = ["hello_world"]
notifications = true
confirmations = false
"""

MANIFEST_0_4 = """\
name = "hello-world"
version = "0.3.1-beta.1"
api_version = "0.4"
requires_octet = "=0.8.0"
description = "Greets people"

[entrypoint]
command = "bin/hello"
args = ["--serve", ""]
env = { RUST_LOG = "debug", EMPTY = "" }

[capabilities]
filesystem = "workspace"
process = true
network = true
secrets = ["api_token", "_x.y-z"]
environment = ["SSH_AUTH_SOCK"]
provider_credentials = true

[contributes]
tools = ["hello_world", "greet"]
commands = ["hello"]
tool_renderers = ["hello_world"]
hooks = ["before_prompt", "provider_retry", "model_turn_start", "model_turn_end"]
ui = ["footer", "status"]
context = true
notifications = true
confirmations = true
presentation = true
menu = true
"""

MANIFESTS = [
    MANIFEST_0_1,
    MANIFEST_0_4,
    'name = "computer-use"\nversion = "1.0.0"\napi_version = "0.2"\n'
    '[entrypoint]\ncommand = "cu"\n[contributes]\ncommands = ["computer-use"]\nmenu = true\n',
    'name = "canon"\nversion = "0.0.1"\napi_version = "0.3"\nrequires_octet = ">=0.7, <0.9"\n'
    "[entrypoint]\ncommand = '/usr/bin/env'\nargs = ['python3', '-u']\n",
    # Broken on purpose: each breaks one rule.
    'name = "x"\nversion = "1.0.0"\napi_version = 0.2\n',
    'name = "1bad"\nversion = "1.0.0"\napi_version = "0.1"\n[entrypoint]\ncommand = "x"\n',
    'name = "x"\nversion = "1.0"\napi_version = "0.1"\n[entrypoint]\ncommand = "x"\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.1"\n[entrypoint]\ncommand = "a\\u0007"\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.1"\n[entrypoint]\ncommand = "x"\n'
    '[capabilities]\nenvironment = ["SSH_AUTH_SOCK"]\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.2"\n[entrypoint]\ncommand = "x"\n'
    '[contributes]\nhooks = ["model_turn_end"]\nmenu = true\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.4"\nsurprise = 1\n[entrypoint]\ncommand = "x"\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.4"\n[entrypoint]\ncommand = "x"\n'
    '[entrypoint.env]\n"A=B" = "c"\n',
    'name = "x"\nversion = "1.0.0"\napi_version = "0.4"\n[entrypoint]\ncommand = "x"\n'
    '[contributes]\ntools = ["a", "a"]\nui = ["status", "sidebar"]\n',
    "[[entrypoint]]\ncommand = 1\n",
    'name = """multi\nline"""\n',
]

# --- Canonical frames -----------------------------------------------------------

CANONICAL_VALUES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"api_version": "0.3"}},
    {"jsonrpc": "2.0", "id": 8, "result": {"terminal": "shutdown"}},
    {"b": 1, "a": [True, False, None], "\u00e9": "\u2028\u2029/\x7f", "\uff61": 0, "\U0001f600": -1},
    {"ctl": "\x00\x01\x08\x09\x0a\x0c\x0d\x1f\"\\"},
    [2**53 - 1, -(2**53 - 1), 0, -1],
    "DEPTH_32",
    "top-level string",
    0,
    {},
]
NON_CANONICAL = [
    b'{"a":1, "b":2}',
    b'{"b":1,"a":2}',
    b'{"a":1,"a":1}',
    b"[1.0]",
    b"[1e2]",
    b"[-0]",
    b"[01]",
    b"[9007199254740992]",
    b'["\\u0041"]',
    b'["\\/"]',
    b'["\\u000A"]',
    b'["\\u000a"]',
    b'["\\ud83d\\ude00"]',
    b'"a"\r',
    b"",
    b" 1",
    b"[" * 33 + b"]" * 33,
    b'"\xff"',
    b'["\x01"]',
    b"tru",
]

# --- Conformance data -------------------------------------------------------------


def parsing_seeds(prefix, limit, max_bytes=200):
    names = sorted(
        n for n in os.listdir(PARSING)
        if n.startswith(prefix) and os.path.getsize(os.path.join(PARSING, n)) <= max_bytes
    )
    step = max(1, len(names) // limit)
    for name in names[::step][:limit]:
        with open(os.path.join(PARSING, name), "rb") as f:
            yield name[:-5], f.read()


def schema_seeds():
    """The first two groups of each keyword file: the schema with a valid instance for
    the first group, with an invalid one for the second."""
    for file in sorted(os.listdir(SCHEMA)):
        if not file.endswith(".json"):
            continue
        with open(os.path.join(SCHEMA, file)) as f:
            groups = json.load(f)
        for index, group in enumerate(groups[:2]):
            wanted = index == 0
            picks = [t for t in group["tests"] if t["valid"] == wanted] or group["tests"]
            yield f"{file[:-5]}-{index}", compact(group["schema"]) + b"\n" + compact(picks[0]["data"])


def main():
    if not os.path.isdir(PARSING) or not os.path.isdir(SCHEMA):
        sys.exit(f"conformance data not found under {SHARED}")
    corpora = {target: Corpus(target) for target in TARGETS}

    # frame_split: [small limit, k, k chunk lengths, stream...]
    frame_split = corpora["frame_split"]
    stream = frames_of(REFERENCE_FRAMES)
    frame_split.add("reference-oneshot", bytes([63, 0]) + stream)
    frame_split.add("reference-chunked", bytes([63, 3, 7, 1, 200]) + stream)
    frame_split.add("reference-small-limit", bytes([15, 2, 0, 5]) + stream)
    frame_split.add("crlf-u2028-blank", bytes([7, 1, 3]) + "a\r\nb\u2028c\n\n\n{}\n".encode())
    frame_split.add("oversized-resync", bytes([7, 2, 5, 5]) + b"ok\n1234567890abc\nnext\ntail")
    frame_split.add("exact-limit", bytes([3, 1, 1]) + b"abc\nabcd\nab\n")
    frame_split.add("bad-frames", bytes([63, 0]) + b"\n \nnull\n[]\n{}\n{\"jsonrpc\":\"1.0\"}\n"
                    b"{\"jsonrpc\":\"2.0\",\"id\":-1,\"result\":1}\n"
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}\n"
                    b"{\"jsonrpc\":\"2.0\",\"method\":1}\n"
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":3}\n")
    for name, data in parsing_seeds("y_", 10):
        frame_split.add(name, bytes([63, 0]) + data + b"\n")

    initialize = corpora["initialize_result"]
    for name, value in [
        ("reference-0.1", INIT_RESULT_0_1_REFERENCE),
        ("accepted-0.1", INIT_RESULT_0_1),
        ("accepted-0.2", INIT_RESULT_0_2),
        ("minimal-0.2", INIT_RESULT_0_2_MINIMAL),
        ("wide-0.4", INIT_RESULT_0_4),
        ("dynamic-0.4", INIT_RESULT_0_4_DYNAMIC),
        ("protocol-on-0.1", dict(INIT_RESULT_0_1, protocol=PROTOCOL_0_2)),
        ("duplicate-tool", dict(INIT_RESULT_0_1, tools=[HELLO_TOOL, HELLO_TOOL])),
    ]:
        initialize.add(name, json.dumps(value, indent=1, ensure_ascii=False))

    manifest = corpora["manifest"]
    for index, text in enumerate(MANIFESTS):
        manifest.add(f"manifest{index}", text)

    tool_result = corpora["tool_result"]
    for name, value in [
        ("tool-0.1", TOOL_RESULT_0_1),
        ("tool-0.2", TOOL_RESULT_0_2),
        ("tool-media", TOOL_RESULT_AUDIO),
        ("command", COMMAND_RESULT),
        ("hook", HOOK_RESULT),
        ("hook-deny", HOOK_RESULT_DENY),
        ("hook-model-turn", HOOK_RESULT_MODEL_TURN),
        ("hook-cancel", HOOK_RESULT_CANCEL),
        ("context", CONTEXT_RESULT),
        ("status", STATUS_RESULT),
        ("status-footer", STATUS_FOOTER),
        ("render", RENDER_RESULT),
        ("notification", NOTIFICATION_PARAMS),
        ("null", None),
    ]:
        tool_result.add(name, compact(value))
    for name, data in parsing_seeds("y_", 8):
        tool_result.add(name, data)

    menu = corpora["menu"]
    for index, value in enumerate(MENU_VARIANTS):
        menu.add(f"menu{index}", compact(value))

    schema = corpora["schema"]
    schema.add("sources", compact(SOURCES_SCHEMA) + b"\n" + compact(TOOL_RESULT_0_2["structured_content"]))
    schema.add("hello-parameters", compact(HELLO_TOOL["parameters"]) + b" " + compact({"name": 1}))
    for name, data in schema_seeds():
        schema.add(name, data)

    canonical_corpus = corpora["canonical"]
    for index, value in enumerate(CANONICAL_VALUES):
        canonical_corpus.add(f"canonical{index}", canonical(value))
    for index, data in enumerate(NON_CANONICAL):
        canonical_corpus.add(f"noncanonical{index}", data)
    for name, data in parsing_seeds("y_", 10):
        canonical_corpus.add(name, data)
    for name, data in parsing_seeds("n_", 14):
        canonical_corpus.add(name, data)

    total = 0
    for target in TARGETS:
        files = os.listdir(corpora[target].dir)
        size = sum(os.path.getsize(os.path.join(corpora[target].dir, n)) for n in files)
        total += size
        print(f"{target:18} {len(files):4} files {size:8} bytes")
    print(f"{'total':18} {'':4}       {total:8} bytes")


if __name__ == "__main__":
    main()
