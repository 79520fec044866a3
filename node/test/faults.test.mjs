// Faults end in a typed rejection or event, with no promise left pending forever, no
// unhandled rejection and no process left behind: handlers that throw or hang,
// cancellation, a crashing extension, a killed host, a serve that writes lines the
// client cannot read, an unknown serve protocol, a listener that throws.

import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import * as octet from "octet-host";
import { Host } from "octet-host";

import { alive, ask, dirs, eventually, fixtureHost, peerHost, sdkExtension } from "./support.mjs";

test("a handler that throws is a typed refusal and an event", async (t) => {
  const host = await peerHost(t);
  const errors = [];
  host.on("handler_error", (event) => errors.push(event));
  await host.start("peer", {
    services: {
      composer: {
        get: () => {
          throw new RangeError("the composer's buffer went away");
        },
      },
    },
  });
  const report = await ask(host, "peer", [
    { id: "get", method: "composer/get", params: {} },
    { id: "again", method: "composer/get", params: {} },
  ]);
  // `unavailable` reaches the extension as -32603.
  assert.equal(report.get.error.code, -32603, JSON.stringify(report));
  assert.equal(report.again.error.code, -32603);
  assert.ok(await eventually(() => errors.length === 2));
  assert.ok(errors[0].message.includes("RangeError"), errors[0].message);
  assert.equal(errors[0].method, "composer/get");
});

/** Starts the raw peer with a composer whose `get` is `answer(call, calls)`; the
 * calls it was asked, in order. */
async function composerAnswering(host, answer) {
  const calls = [];
  await host.start("peer", {
    services: {
      composer: {
        get: (params, call) => {
          calls.push(call);
          return answer(call, calls);
        },
      },
    },
  });
  return calls;
}

test("a handler that never settles meets the deadline and is withdrawn", async (t) => {
  const host = await peerHost(t);
  // The first never settles; the next answer at once.
  const calls = await composerAnswering(host, (call, calls) => (calls.length === 1 ? new Promise(() => {}) : { text: "prompt" }));
  await assert.rejects(ask(host, "peer", [{ id: "get", method: "composer/get", params: {} }], { timeoutMs: 1000 }), octet.DeadlineExceeded);
  assert.ok(await eventually(() => calls[0].withdrawn.aborted), "serve withdrew the request");
  const report = await ask(host, "peer", [{ id: "get2", method: "composer/get", params: {} }]);
  assert.deepEqual(report.get2, { result: { text: "prompt" } });
  assert.equal((await host.status()).extensions[0].state, "ready");
});

test("aborting a call withdraws its service request", async (t) => {
  const host = await peerHost(t);
  const calls = await composerAnswering(
    host,
    (call) => new Promise((resolve) => call.withdrawn.addEventListener("abort", () => resolve({ text: "late" }))),
  );
  const controller = new AbortController();
  const pending = ask(host, "peer", [{ id: "get", method: "composer/get", params: {} }], { signal: controller.signal });
  assert.ok(await eventually(() => calls.length === 1));
  controller.abort();
  await assert.rejects(pending, octet.Cancelled);
  assert.ok(await eventually(() => calls[0].withdrawn.aborted));
});

test("an extension that crashes mid-call", async (t) => {
  const host = await fixtureHost(t);
  await assert.rejects(host.call("fixture", "crash"), octet.TransportLost);
  // The host and the client go on; the supervisor restarts the extension.
  assert.ok(
    await eventually(async () => (await host.status()).extensions.some((s) => s.state === "ready" && s.generation >= 2), 30_000),
  );
  assert.equal((await host.call("fixture", "echo", { after: "crash" })).is_error, false);
});

test("a killed host rejects every pending promise and leaves no process", async (t) => {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({ workspace, extensionDirs: [sdkExtension(extensions)] });
  const lost = [];
  host.on("host_lost", (event) => lost.push(event));
  const started = await host.start("fixture");
  const pending = host.call("fixture", "sleep", { ms: 60_000 });
  const iterating = (async () => {
    const kinds = [];
    for await (const event of host.events()) kinds.push(event.event);
    return kinds;
  })();
  process.kill(host.pid, "SIGKILL");
  await assert.rejects(pending, (error) => {
    assert.ok(error instanceof octet.HostLost);
    assert.ok(error.message.includes("SIGKILL"), error.message);
    return true;
  });
  await assert.rejects(host.call("fixture", "echo"), octet.HostLost);
  assert.deepEqual(await iterating, ["host_lost"]);
  assert.equal(lost.length, 1);
  // serve's guardian ends the extension's process group.
  assert.ok(await eventually(() => !alive(started.pid)), "the extension outlived serve");
  assert.equal(await host.close(), undefined);
});

test("closing leaves no process", async (t) => {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({ workspace, extensionDirs: [sdkExtension(extensions)] });
  const { pid } = await host.start("fixture");
  await host.close();
  assert.ok(!alive(host.pid));
  assert.ok(await eventually(() => !alive(pid), 10_000));
});

const FAKE_SERVE = String.raw`
import json, sys, time
version, mode = int(sys.argv[1]), sys.argv[2]
print(json.dumps({"type": "ready", "serve_protocol": version, "version": "9", "octet_version": "9",
                  "workspace": "/", "session_id": "s"}), flush=True)
for raw in sys.stdin:
    line = json.loads(raw)
    if line.get("op") == "status":
        print("this is not json", flush=True)
        print("[1, 2]", flush=True)
        print(json.dumps({"type": "reply", "id": line["id"], "ok": True, "extensions": []}), flush=True)
    elif line.get("op") == "call":
        sys.exit(3)
    elif line.get("op") == "shutdown" and mode == "hang":
        break
if mode == "hang":
    time.sleep(120)
`;

function fakeServe(root, version, mode = "lines") {
  const script = join(root, `fake-serve-${version}-${mode}`);
  writeFileSync(script, `#!/usr/bin/env python3\nimport sys\nsys.argv[1:] = ["${version}", "${mode}"]\n${FAKE_SERVE}`);
  chmodSync(script, 0o755);
  return script;
}

test("lines the client cannot read are events and lose nothing", async (t) => {
  const { root, workspace } = dirs(t);
  const host = await Host.open({ workspace, binary: fakeServe(root, 1) });
  const errors = [];
  host.on("protocol_error", (event) => errors.push(event));
  assert.deepEqual(await host.status(), { extensions: [] });
  assert.equal(errors.length, 2);
  assert.ok(errors[0].message.includes("not a JSON object"), errors[0].message);
  assert.equal(errors[1].line, "[1, 2]");
  // The fake exits on a call: the call rejects with HostLost, not a hang.
  await assert.rejects(host.call("x", "y"), (error) => {
    assert.ok(error instanceof octet.HostLost);
    assert.ok(error.message.includes("exit status 3"), error.message);
    return true;
  });
  await host.close();
});

test("a serve that does not shut down is killed by pid", async (t) => {
  const { root, workspace } = dirs(t);
  const host = await Host.open({ workspace, binary: fakeServe(root, 1, "hang"), shutdownTimeoutMs: 1000 });
  const started = Date.now();
  assert.equal(await host.close(), undefined, "no report came");
  assert.ok(!alive(host.pid));
  assert.ok(Date.now() - started < 20_000);
});

test("an unknown serve protocol is refused", async (t) => {
  const { root, workspace } = dirs(t);
  await assert.rejects(Host.open({ workspace, binary: fakeServe(root, 99) }), (error) => {
    assert.ok(error instanceof octet.UnsupportedServeProtocol);
    assert.equal(error.serveProtocol, 99);
    assert.ok(error.message.includes("serve protocol 99"));
    return true;
  });
});

test("a binary that is not there", async (t) => {
  const { root, workspace } = dirs(t);
  const before = process.env.OCTET_HOST_BIN;
  process.env.OCTET_HOST_BIN = join(root, "missing");
  t.after(() => {
    if (before === undefined) delete process.env.OCTET_HOST_BIN;
    else process.env.OCTET_HOST_BIN = before;
  });
  await assert.rejects(Host.open({ workspace }), (error) => {
    assert.ok(error instanceof octet.BinaryNotFound);
    assert.ok(error.message.includes("OCTET_HOST_BIN"), error.message);
    return true;
  });
});

test("a listener that throws is reported and the rest goes on", async (t) => {
  const host = await fixtureHost(t);
  const errors = [];
  const progress = [];
  host.on("progress", () => {
    throw new Error("the UI is gone");
  });
  host.on("handler_error", (event) => errors.push(event));
  host.on("progress", (event) => progress.push(event.sequence));
  const seen = [];
  await host.call("fixture", "progress", { steps: 3 }, {
    onProgress: (event) => {
      seen.push(event.sequence);
      if (event.sequence === 2) throw new Error("the bar is gone");
    },
  });
  assert.deepEqual(progress, [1, 2, 3]);
  assert.deepEqual(seen, [1, 2, 3]);
  assert.equal(errors.filter((e) => e.handler === "listener").length, 3);
  assert.equal(errors.filter((e) => e.handler === "progress").length, 1);
  assert.ok(errors[0].message.includes("the UI is gone"), errors[0].message);
});

test("a question callback that throws denies", async (t) => {
  const host = await fixtureHost(t, {
    onConfirmation: () => {
      throw new Error("no terminal");
    },
  });
  const out = await host.call("fixture", "confirm", { prompt: "Delete?" });
  assert.notEqual(out.content[0].text, "confirmed");
});

test("stderr lines reach their listeners", async (t) => {
  const host = await fixtureHost(t);
  const lines = [];
  host.on("stderr", (event) => lines.push(event.line));
  await assert.rejects(host.call("fixture", "panic"), octet.ServeError);
  assert.ok(await eventually(() => lines.some((line) => line.includes("panic"))), lines.join("\n"));
});
