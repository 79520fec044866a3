#!/usr/bin/env python3
"""Calls now and then through `octet-host serve`, as a sidecar's client makes them.

Usage: serve_gaps.py OCTET_HOST CALLS GAP_MS [serve flags...]

Writes an SDK test-extension manifest (API 0.4) into a temporary directory, starts
`OCTET_HOST serve` on it, starts the extension, then sends CALLS `echo` calls, one
at a time, each after a pause of GAP_MS, and prints each call's round trip (from the
control line written to its `result` line read) and their median and 90th
percentile in milliseconds. Standard library only.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    exe, calls, gap_ms = os.path.abspath(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    flags = sys.argv[4:]
    with tempfile.TemporaryDirectory() as root:
        ext = os.path.join(root, "echo")
        os.mkdir(ext)
        with open(os.path.join(ext, "extension.toml"), "w") as f:
            f.write(
                'name = "echo"\nversion = "0.1.0"\napi_version = "0.4"\n\n'
                f'[entrypoint]\ncommand = {json.dumps(exe)}\n'
                'args = ["__extension", "test-extension"]\n\n'
                # What the test extension declares (src/bench/octet.rs).
                '[contributes]\ntools = ["echo", "sleep", "progress", "confirm", "ask", '
                '"notify", "crash", "big", "fail", "panic", "env", "events"]\n'
                'commands = ["fixture"]\nhooks = ["before_prompt"]\ncontext = true\n'
                'ui = ["status"]\ntool_renderers = ["echo"]\nnotifications = true\n'
                'confirmations = true\n'
            )
        serve = subprocess.Popen(
            [exe, "serve", "--workspace", root, "--extension-dir", ext, "--no-global", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        lines = serve.stdout

        def send(line):
            serve.stdin.write((json.dumps(line) + "\n").encode())

        def until(kind, key=None, value=None):
            while True:
                raw = lines.readline()
                if not raw:
                    raise SystemExit("serve closed its output")
                line = json.loads(raw)
                if line.get("type") == kind and (key is None or line.get(key) == value):
                    return line

        until("ready")
        send({"op": "start", "id": 0, "extension": "echo"})
        reply = until("reply", "id", 0)
        if not reply.get("ok"):
            raise SystemExit(f"start failed: {reply}")
        took = []
        for n in range(calls):
            time.sleep(gap_ms / 1000)
            started = time.perf_counter()
            send({"op": "call", "id": n + 1, "call_id": n, "extension": "echo",
                  "tool": "echo", "arguments": {"n": n}})
            result = until("result", "call_id", n)
            took.append((time.perf_counter() - started) * 1000)
            if not result.get("ok"):
                raise SystemExit(f"call failed: {result}")
        send({"op": "shutdown", "id": calls + 1})
        serve.stdin.close()
        serve.wait(timeout=30)
        took_sorted = sorted(took)
        p90 = took_sorted[min(len(took) - 1, int(len(took) * 0.9))]
        print(" ".join(f"{t:.2f}" for t in took))
        print(f"median {statistics.median(took):.2f} ms, p90 {p90:.2f} ms over {calls} calls")


if __name__ == "__main__":
    main()
