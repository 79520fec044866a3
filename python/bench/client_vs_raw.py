#!/usr/bin/env python3
"""A call through ``octet_host.Host`` against the same call as raw serve lines.

Usage: client_vs_raw.py [--calls N] [--rounds R] [--load] [--caller-wakeups]

Both sides drive one ``octet-host serve`` over the SDK test extension (API 0.4, the
binary re-invoked as ``__extension test-extension``) and call its ``echo`` tool:
- raw: one thread writes the ``call`` line and reads lines until its ``result``;
- client: ``Host.call`` (depth 1), and ``Host.submit`` of 64 calls then their results
  (depth 64), through the reader thread.
Each depth runs N calls per round, R rounds alternating raw and client. At depth 1
each call is timed from its line written to its result read, as
benches/support/serve_gaps.py times them; at depth 64 each batch's time is divided by
its 64 calls. The median and 90th percentile of each side are printed in
microseconds, with the client/raw ratio of the medians. With
``--load`` a busy loop runs on every core meanwhile (separate processes); with
``--caller-wakeups`` the calling thread of both sides asks for the short scheduler
slice (``octet_host.prompt_wakeups()``). Standard
library and the installed ``octet_host`` only; the binary is the package's own, or
``OCTET_HOST_BIN``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time
from typing import Any, Dict, List

import octet_host

TOOLS = (
    '["echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", '
    '"fail", "panic", "env", "events"]'
)


def manifest(root: str, exe: str) -> str:
    ext = os.path.join(root, "echo")
    os.makedirs(ext, exist_ok=True)
    with open(os.path.join(ext, "extension.toml"), "w") as f:
        f.write(
            'name = "echo"\nversion = "0.1.0"\napi_version = "0.4"\n\n'
            f"[entrypoint]\ncommand = {json.dumps(exe)}\n"
            'args = ["__extension", "test-extension"]\n\n'
            f"[contributes]\ntools = {TOOLS}\n"
            'commands = ["fixture"]\nhooks = ["before_prompt"]\ncontext = true\n'
            'ui = ["status"]\ntool_renderers = ["echo"]\nnotifications = true\n'
            "confirmations = true\n"
        )
    return ext


class Raw:
    """serve driven by hand: write a line, read until the answer."""

    def __init__(self, exe: str, root: str, ext: str) -> None:
        self.proc = subprocess.Popen(
            [exe, "serve", "--workspace", root, "--extension-dir", ext, "--no-global"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        assert self.proc.stdin and self.proc.stdout
        self.stdin = self.proc.stdin.fileno()
        self.lines = self.proc.stdout
        self.n = 0
        self.until("ready")
        self.send({"op": "start", "id": "s", "extension": "echo"})
        assert self.until("reply")["ok"]

    def send(self, line: Dict[str, Any]) -> None:
        os.write(self.stdin, (json.dumps(line) + "\n").encode())

    def until(self, kind: str) -> Dict[str, Any]:
        while True:
            line: Dict[str, Any] = json.loads(self.lines.readline())
            if line.get("type") == kind:
                return line

    def calls(self, count: int, depth: int) -> List[float]:
        """Each call's time (depth 1), or each batch's time per call (depth N)."""
        took: List[float] = []
        done = 0
        while done < count:
            batch = min(depth, count - done)
            started = time.perf_counter()
            for _ in range(batch):
                self.n += 1
                self.send(
                    {
                        "op": "call",
                        "id": self.n,
                        "call_id": self.n,
                        "extension": "echo",
                        "tool": "echo",
                        "arguments": {"n": self.n},
                    }
                )
            for _ in range(batch):
                assert self.until("result")["ok"]
            took.append((time.perf_counter() - started) / batch)
            done += batch
        return took

    def close(self) -> None:
        self.send({"op": "shutdown", "id": "end"})
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)


def client_calls(host: octet_host.Host, count: int, depth: int) -> List[float]:
    """As :meth:`Raw.calls`, through the client."""
    took: List[float] = []
    done = 0
    while done < count:
        batch = min(depth, count - done)
        started = time.perf_counter()
        if batch == 1:
            host.call("echo", "echo", {"n": done})
        else:
            pending = [
                host.submit("call", "echo", tool="echo", arguments={"n": done + i})
                for i in range(batch)
            ]
            for p in pending:
                p.result()
        took.append((time.perf_counter() - started) / batch)
        done += batch
    return took


def percentiles(took: List[float]) -> "tuple[float, float]":
    """The median and the 90th percentile, in microseconds."""
    ordered = sorted(took)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.9)] * 1e6


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--load", action="store_true")
    parser.add_argument(
        "--caller-wakeups",
        action="store_true",
        help="the calling thread asks for the short slice (both sides)",
    )
    args = parser.parse_args()
    if args.caller_wakeups and not octet_host.prompt_wakeups():
        raise SystemExit("this kernel gives a thread no slice of its own")
    exe = octet_host.find_binary()
    loads: List[multiprocessing.Process] = []
    if args.load:
        for _ in range(os.cpu_count() or 1):
            p = multiprocessing.Process(target=spin, daemon=True)
            p.start()
            loads.append(p)
    try:
        with tempfile.TemporaryDirectory() as root:
            ext = manifest(root, exe)
            raw = Raw(exe, root, ext)
            with octet_host.Host(root, [ext], binary=exe) as host:
                host.start("echo")
                raw.calls(200, 1)
                client_calls(host, 200, 1)
                for depth in (1, 64):
                    r: List[float] = []
                    c: List[float] = []
                    for _ in range(args.rounds):
                        r += raw.calls(args.calls, depth)
                        c += client_calls(host, args.calls, depth)
                    mode = ("loaded" if args.load else "quiet") + (
                        ", caller wake-ups" if args.caller_wakeups else ""
                    )
                    rm, rp = percentiles(r)
                    cm, cp = percentiles(c)
                    print(
                        f"{mode} depth {depth}: raw {rm:.0f} us (p90 {rp:.0f}), "
                        f"client {cm:.0f} us (p90 {cp:.0f}) a call, client/raw {cm / rm:.2f}"
                    )
            raw.close()
    finally:
        for p in loads:
            p.terminate()


if __name__ == "__main__":
    main()
