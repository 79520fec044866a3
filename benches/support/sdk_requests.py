#!/usr/bin/env python3
"""Writes what the benchmark table's host sends the SDK test extension, for counting
the child's instructions per request under callgrind (benches/README.md, history,
2026-12-05): the host's `initialize` for API 0.1 or 0.4, then COUNT `tool/call` frames of the
table's echo, each with the execution context the host builds (on 0.4 with its
`resource_owner`), as `strace` showed them.

    python3 benches/support/sdk_requests.py 0.4 20000 > requests.jsonl
    (cat requests.jsonl; sleep 8) | valgrind --tool=callgrind \\
        target/release/octet-host __extension test-extension > /dev/null

The same frames count the bare echo extension (`__bench-echo octet`, which ends at EOF);
`floor` writes what `floor_shape` sends the JSON echo child (`__bench-echo json`).
"""

import json
import sys

WORKSPACE = "/tmp/.tmpXIJFWs"
TOOLS = ["echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big",
         "fail", "panic", "env", "events"]
HOST = {"session_id": None, "session_name": None, "model": None, "reasoning": None,
        "active_skills": []}
OWNER = {"extension_instance_id": "7e58eb1258ecf1e549451a96", "process_generation": 1,
         "session_id": "session-7e58eb1258ecf1e549451a96"}


def frame(value):
    """One compact JSON line, as the host writes it."""
    return json.dumps(value, separators=(",", ":"))


def initialize(api):
    name = "sdk-" + api.replace(".", "-")
    contributes = {"tools": TOOLS, "commands": ["fixture"], "hooks": ["before_prompt"],
                   "ui": ["status"], "context": True, "tool_renderers": ["echo"],
                   "notifications": True, "confirmations": True}
    params = {"api_version": api, "octet_version": "0.8.0",
              "extension": {"name": name, "version": "0.1.0",
                            "manifest_path": "/tmp/.tmpwF9rs6/%s/extension.toml" % name,
                            "source": "explicit"},
              "workspace": WORKSPACE,
              "capabilities": {"filesystem": "none", "process": False, "network": False},
              "contributes": contributes, "host": HOST}
    if api == "0.4":
        contributes.update({"presentation": False, "menu": False})
        params["protocol"] = {
            "version": "0.4",
            "required_features": ["request_cancellation", "content_parts"],
            "optional_features": ["request_progress", "progress_decoration", "artifacts",
                                  "lifecycle_events", "policy_intents", "dynamic_tools",
                                  "runtime_commands", "tool_prompt_metadata_v1"],
            "limits": {"max_concurrent_requests": 64}}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def tool_call(api, request_id):
    # Members in sorted order, as the host serializes them.
    context = {"execution_scope": None, "host": dict(sorted(HOST.items()))}
    if api == "0.4":
        context["resource_owner"] = OWNER
    context["workspace"] = WORKSPACE
    return {"jsonrpc": "2.0", "id": request_id, "method": "tool/call",
            "params": {"arguments": {"text": "the quick brown fox jumps"},
                       "context": context, "name": "echo"}}


def floor_call(request_id):
    """What `floor_shape` sends the JSON echo child: the same call without a context."""
    return {"id": request_id, "jsonrpc": "2.0", "method": "tool/call",
            "params": {"arguments": {"text": "the quick brown fox jumps"}, "name": "echo"}}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("0.1", "0.4", "floor"):
        sys.exit("usage: sdk_requests.py 0.1|0.4|floor COUNT")
    api, count = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    if api == "floor":
        for request_id in range(count):
            out.write(frame(floor_call(request_id)) + "\n")
        return
    out.write(frame(initialize(api)) + "\n")
    for request_id in range(10, 10 + count):
        out.write(frame(tool_call(api, request_id)) + "\n")


if __name__ == "__main__":
    main()
