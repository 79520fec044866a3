#!/usr/bin/env python3
"""The browser test of `octet-host ui` (issue 50), as a person would use the page.

Starts `octet-host ui` over the SDK test extension, opens the printed URL in headless
Chromium and drives the page over the DevTools protocol (standard library only: a
small WebSocket client below): the page lists the extension, starts it, fills the
`progress` tool's form from its schema, runs the call, and the test sees its progress,
its result, the trace lines of that call and a stderr line. A request without the
token and one with a foreign `Origin` are refused. With `--screenshot FILE` it also
saves a picture of the page.

Usage: ui_browser.py OCTET_HOST_BINARY [--screenshot FILE]
Chromium: `chromium` on PATH, or $CHROMIUM.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

LIVENESS = 60.0
TOOLS = ["echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", "fail", "panic", "env", "events"]


class WebSocket:
    """A WebSocket client for one DevTools connection: text frames, client-masked."""

    def __init__(self, url: str) -> None:
        match = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert match, url
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=LIVENESS)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, "the DevTools socket closed during the handshake"
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text: str) -> None:
        payload = text.encode()
        header = bytearray([0x81])
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        elif len(payload) < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", len(payload))
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + mask + masked)

    def _read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            assert chunk, "the DevTools socket closed"
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack(">H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack(">Q", self._read(8))
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the DevTools socket closed")
            if opcode in (0x9, 0xA):
                continue
            message += payload
            if first & 0x80:
                return message.decode()


class Page:
    """One page over the DevTools protocol."""

    def __init__(self, socket_url: str) -> None:
        self.ws = WebSocket(socket_url)
        self.next_id = 0

    def command(self, method: str, **params: Any) -> Dict[str, Any]:
        self.next_id += 1
        wanted = self.next_id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.command(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, what: str, expression: str) -> Any:
        deadline = time.monotonic() + LIVENESS
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        shown = self.evaluate(
            "document.getElementById('calls').innerText.slice(-3000) + '\\n---\\n' +"
            " document.getElementById('events').innerText.slice(-1500)"
        )
        raise AssertionError(f"the page never showed {what}; it shows:\n{shown}")


def http_status(url: str, headers: Dict[str, str]) -> int:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=LIVENESS) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def manifest(
    root: Path,
    name: str,
    api: str,
    argv: List[str],
    tools: List[str],
    env: Optional[Dict[str, str]] = None,
    contributes: str = "",
) -> Path:
    """Writes `<root>/<name>/extension.toml` running `argv` and returns its directory."""
    directory = root / name
    directory.mkdir(parents=True)
    env_table = ", ".join(f"{key} = {json.dumps(value)}" for key, value in (env or {}).items())
    (directory / "extension.toml").write_text(
        f"""name = "{name}"
version = "0.1.0"
api_version = "{api}"

[entrypoint]
command = {json.dumps(argv[0])}
args = {json.dumps(argv[1:])}
env = {{ {env_table} }}

[contributes]
tools = {json.dumps(tools)}
{contributes}"""
    )
    return directory


def main(argv: List[str]) -> int:
    binary = os.path.abspath(argv[1])
    screenshot: Optional[str] = None
    if "--screenshot" in argv:
        screenshot = argv[argv.index("--screenshot") + 1]
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "no chromium on PATH (apt-get install chromium)"
    scratch = Path(tempfile.mkdtemp())
    extensions = scratch / "extensions"
    extension = manifest(
        extensions,
        "fixture",
        "0.4",
        [binary, "__extension", "test-extension"],
        TOOLS,
        contributes='commands = ["fixture"]\nhooks = ["before_prompt"]\ncontext = true\nui = ["status"]\n',
    )
    # The raw services peer (tests/fixtures/services_peer.py): its `ask` tool sends any
    # host request, so it tries the page's composer and session entries.
    script = Path(__file__).resolve().parent.parent / "fixtures" / "services_peer.py"
    peer = manifest(extensions, "peer", "0.2", [sys.executable, str(script)], ["ask", "answers", "seen"])
    # The raw peer (tests/fixtures/peer.py) with a tool whose parameters nest an object
    # and two arrays; it answers with the arguments it received.
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "done": {"type": "boolean"}},
                },
            },
        },
        "required": ["title"],
    }
    raw_peer = Path(__file__).resolve().parent.parent / "fixtures" / "peer.py"
    forms = manifest(
        extensions,
        "forms",
        "0.4",
        [sys.executable, str(raw_peer), "good"],
        ["record"],
        env={"OCTET_PEER_TOOLS": "record", "OCTET_PEER_TOOL_SCHEMA": json.dumps(schema)},
    )
    # The raw peer's services probe: its `probe` tool publishes a PNG artifact and answers
    # with an image part naming it.
    prober = manifest(
        extensions,
        "prober",
        "0.4",
        [sys.executable, str(raw_peer), "services-probe"],
        ["probe"],
        env={"OCTET_PEER_TOOLS": "probe"},
    )
    workspace = scratch / "workspace"
    workspace.mkdir()
    ui = subprocess.Popen(
        [
            binary,
            "ui",
            "--workspace",
            str(workspace),
            "--no-global",
            "--extension-dir",
            str(extension),
            "--extension-dir",
            str(peer),
            "--extension-dir",
            str(forms),
            "--extension-dir",
            str(prober),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    browser: Optional[subprocess.Popen[str]] = None
    try:
        assert ui.stdout is not None
        url = ui.stdout.readline().strip()
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32,})", url)
        assert match, f"the first line is the URL: {url!r}"
        port = match.group(1)
        origin = f"http://127.0.0.1:{port}"
        # Refused: no token, and a foreign Origin even with the token's URL.
        assert http_status(f"{origin}/", {}) == 401
        assert http_status(url, {"Origin": "http://attacker.example"}) == 403
        browser = subprocess.Popen(
            [
                chromium,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={scratch / 'profile'}",
                "--remote-debugging-port=0",
                "--window-size=1600,1000",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert browser.stderr is not None
        devtools = ""
        deadline = time.monotonic() + LIVENESS
        while time.monotonic() < deadline and not devtools:
            line = browser.stderr.readline()
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                devtools = found.group(1)
        assert devtools, "chromium printed no DevTools endpoint"
        debug_port = re.search(r"ws://[^:]+:(\d+)/", devtools)
        assert debug_port
        listing = ""
        target: Dict[str, Any] = {}
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{debug_port.group(1)}/json/list") as response:
                listing = response.read().decode()
            pages = [t for t in json.loads(listing) if t.get("type") == "page" and origin in t.get("url", "")]
            if pages:
                target = pages[0]
                break
            time.sleep(0.1)
        assert target, f"no page of ours in {listing}"
        page = Page(target["webSocketDebuggerUrl"])
        page.command("Runtime.enable")
        # The page lists the extension; starting it shows its tools.
        page.wait_for("the extension", "document.querySelector('#extensions li[data-extension=fixture]') !== null")
        page.evaluate("document.querySelector('#extensions li[data-extension=fixture] button').click()")
        page.wait_for("the progress tool", "document.querySelector('[data-tool=progress]') !== null")
        # Fill the tool's form (generated from its schema) and run the call.
        page.evaluate(
            """(() => {
              const card = document.querySelector('[data-tool=progress]');
              const steps = card.querySelector('label[data-key=steps] > [data-kind]');
              steps.value = '3';
              steps.dispatchEvent(new Event('input', {bubbles: true}));
              card.querySelector('button.run').click();
              return true;
            })()"""
        )
        text = page.wait_for(
            "the call's result",
            "(() => { const c = document.querySelector('.call.ok .result'); return c && c.textContent; })()",
        )
        assert "progress sent=3" in text, text
        progress = page.evaluate("document.querySelectorAll('.call.ok .progress-line').length")
        assert progress == 3, f"{progress} progress lines"
        page.wait_for(
            "the call's frames in the trace",
            "document.querySelectorAll('#trace li[data-method=\"tool/call\"]').length >= 2",
        )
        latency = page.evaluate("document.querySelector('#trace li.from_extension[data-method=\"tool/call\"] .latency').textContent")
        assert "answers tool/call in" in latency, latency
        # A stderr line: the crash tool says why before it exits.
        page.evaluate(
            "document.querySelector('[data-tool=crash] button.run').click(), true"
        )
        page.wait_for(
            "a stderr line",
            "[...document.querySelectorAll('#stderr li')].some(li => li.textContent.includes('crashing on purpose'))",
        )
        if screenshot:
            shot = page.command("Page.captureScreenshot", format="png")
            Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
        # The page's own services: the peer sets the composer and appends an entry. Its
        # `ask` tool shares its name with the fixture's, which is stopped first (tool
        # names are unique across the host).
        page.evaluate("document.querySelectorAll('#extensions li[data-extension=fixture] button')[1].click(), true")
        page.wait_for(
            "the fixture stopped",
            "document.querySelector('#extensions li[data-extension=fixture] .state').textContent === 'not started'",
        )
        page.evaluate("document.querySelector('#extensions li[data-extension=peer] button').click(), true")
        page.wait_for("the ask tool", "document.querySelector('[data-tool=ask]') !== null")
        requests = [
            {"id": "k1", "method": "composer/set", "params": {"text": "hello from the peer"}},
            {"id": "k2", "method": "session/append_entry", "params": {"entry_type": "bookmark", "data": {"line": 42}}},
        ]
        page.evaluate(
            """(() => {
              const card = document.querySelector('[data-tool=ask]');
              const raw = card.querySelector('textarea.raw');
              raw.value = %s;
              raw.dispatchEvent(new Event('input', {bubbles: true}));
              card.querySelector('button.run').click();
              return true;
            })()"""
            % json.dumps(json.dumps({"requests": requests}))
        )
        page.wait_for("the composer's text", "document.getElementById('composer').value === 'hello from the peer'")
        page.wait_for(
            "the session entry",
            "[...document.querySelectorAll('#entries li')].some(li => li.textContent.includes('bookmark'))",
        )
        # A form with a nested object and arrays of strings and of objects.
        page.evaluate("document.querySelector('#extensions li[data-extension=forms] button').click(), true")
        page.wait_for("the record tool", "document.querySelector('[data-tool=record]') !== null")
        page.evaluate(
            """(() => {
              const card = document.querySelector('[data-tool=record]');
              const field = (scope, key) => scope.querySelector(`:scope > label[data-key=${key}] > [data-kind]`);
              const set = (input, value) => {
                if (input.type === 'checkbox') input.checked = value; else input.value = value;
                input.dispatchEvent(new Event('input', {bubbles: true}));
              };
              const form = card.querySelector('form > [data-kind=object]');
              set(field(form, 'title'), 'T');
              set(field(field(form, 'point'), 'x'), '3');
              const tags = field(form, 'tags');
              tags.querySelector(':scope > .add-item').click();
              tags.querySelector(':scope > .add-item').click();
              const tagInputs = tags.querySelectorAll(':scope > .items > .item > [data-kind]');
              set(tagInputs[0], 'red');
              set(tagInputs[1], 'blue');
              const steps = field(form, 'steps');
              steps.querySelector(':scope > .add-item').click();
              const step = steps.querySelector(':scope > .items > .item > [data-kind]');
              set(field(step, 'name'), 'a');
              set(field(step, 'done'), true);
              card.querySelector('button.run').click();
              return true;
            })()"""
        )
        echoed = page.wait_for(
            "the record tool's answer",
            "(() => { const r = [...document.querySelectorAll('.call.ok .result')].pop();"
            " return r && r.textContent.includes('title') && r.textContent; })()",
        )
        assert echoed.strip() == (
            '{"point":{"x":3},"steps":[{"done":true,"name":"a"}],"tags":["red","blue"],"title":"T"}'
        ), echoed
        # An image part shows its artifact's bytes.
        page.evaluate("document.querySelector('#extensions li[data-extension=prober] button').click(), true")
        page.wait_for("the probe tool", "document.querySelector('[data-tool=probe]') !== null")
        page.evaluate("document.querySelector('[data-tool=probe] button.run').click(), true")
        src = page.wait_for(
            "the probe's image",
            "(() => { const i = document.querySelector('img.artifact'); return i && i.src; })()",
        )
        assert src.startswith("data:image/png;base64,iVBORw0KGgo"), src[:80]
        print(
            "ui_browser: the page listed, started, called with progress, traced, showed stderr"
            ", served the composer and session entries, filled nested forms and showed an image"
        )
        return 0
    finally:
        if browser is not None:
            browser.kill()
            browser.wait()
        ui.send_signal(signal.SIGINT)
        try:
            ui.wait(timeout=LIVENESS)
        except subprocess.TimeoutExpired:
            ui.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
