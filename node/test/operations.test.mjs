// Every serve operation through the installed client, against real extensions.

import assert from "node:assert/strict";
import { test } from "node:test";

import * as octet from "octet-host";
import { Host, OPS } from "octet-host";

import { ask, dirs, echoPeer, eventually, fixtureHost, rawPeer, sdkExtension, servicesExtension, textOf } from "./support.mjs";

const camel = (op) => op.replace(/_(.)/g, (_, c) => c.toUpperCase());

test("every operation of the schema is a method", () => {
  for (const op of OPS) {
    assert.equal(typeof Host.prototype[camel(op)], "function", op);
  }
});

test("the session operations", async (t) => {
  const { workspace, extensions } = dirs(t);
  sdkExtension(extensions);
  const host = await Host.open({ workspace, extensionDirs: [`${extensions}/fixture`] });
  assert.equal(host.ready.serve_protocol, 1);
  assert.ok(host.binary.source.startsWith("@octet-host/") || host.binary.source === "OCTET_HOST_BIN", host.binary.source);
  const found = await host.discover();
  assert.deepEqual(
    found.entries.map((e) => e.name),
    ["fixture"],
  );
  const started = await host.start("fixture");
  assert.equal(started.generation, 1);
  assert.equal(started.api_version, "0.4");
  const tools = started.tools.map((tool) => tool.name);
  assert.ok(tools.includes("echo") && tools.includes("sleep"), tools);
  const { extensions: statuses } = await host.status();
  assert.equal(statuses.length, 1);
  assert.equal(statuses[0].state, "ready");
  assert.equal(statuses[0].pid, started.pid);
  const reloaded = await host.reload("fixture");
  assert.equal(reloaded.generation, 2);
  const report = await host.stop("fixture");
  assert.equal(report.extensions[0].final_state, "stopped");
  assert.deepEqual((await host.status()).extensions, []);
  await assert.rejects(host.start("nothing-here"), (error) => {
    assert.ok(error instanceof octet.StartError);
    assert.equal(error.code, "unknown_extension");
    assert.ok(error.fix.includes("fixture"), error.fix);
    return true;
  });
  await host.start("fixture");
  const closed = await host.close();
  assert.equal(closed.extensions[0].acknowledged, true);
  assert.equal(host.report, closed);
  // Once closed, every operation rejects at once.
  await assert.rejects(host.status(), octet.HostLost);
});

test("the calls", async (t) => {
  const host = await fixtureHost(t);
  const out = await host.call("fixture", "echo", { a: 1 });
  assert.deepEqual(JSON.parse(textOf(out)), { a: 1 });
  assert.equal((await host.command("fixture", "fixture", ["a", "b"])).text, "fixture: a b");
  assert.equal((await host.hook("fixture", "before_prompt", { prompt: "hi" })).hook, "before_prompt");
  assert.ok("contributions" in (await host.context("fixture", "hi")));
  assert.ok("contribution" in (await host.statusCollect("fixture", "status")));
  const rendered = await host.render("fixture", "echo", { a: 1 }, "the output");
  assert.ok(rendered.segments.length > 0, JSON.stringify(rendered));
  const menu = await host.menu("fixture");
  const actions = menu.menu.items.filter((item) => item.command);
  assert.ok(actions.length > 0, JSON.stringify(menu));
  assert.ok((await host.menuAction("fixture", actions[0])).text.startsWith("fixture:"));
  await assert.rejects(host.call("fixture", "no_such_tool"), octet.NotDeclared);
  await assert.rejects(host.call("elsewhere", "echo"), octet.NotStarted);
  await assert.rejects(host.call("fixture", "fail"), (error) => {
    assert.ok(error instanceof octet.RemoteError);
    assert.equal(typeof error.rpcCode, "number");
    return true;
  });
});

test("progress reaches the callback in order before the result", async (t) => {
  const host = await fixtureHost(t);
  const seen = [];
  const out = await host.call("fixture", "progress", { steps: 5 }, { onProgress: (event) => seen.push(event.sequence) });
  assert.equal(textOf(out), "progress sent=5");
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
});

test("questions are answered by the callbacks", async (t) => {
  const { workspace, extensions } = dirs(t);
  const asked = [];
  const host = await Host.open({
    workspace,
    extensionDirs: [sdkExtension(extensions)],
    onConfirmation: async (question) => {
      asked.push(question);
      return question.prompt === "Delete the cache?";
    },
    onInput: () => "typed",
  });
  t.after(() => host.close());
  await host.start("fixture");
  const yes = await host.call("fixture", "confirm", { prompt: "Delete the cache?" });
  const no = await host.call("fixture", "confirm", { prompt: "Something else?" });
  const typed = await host.call("fixture", "ask", { prompt: "Name?" });
  assert.equal(textOf(yes), "confirmed");
  assert.notEqual(textOf(no), "confirmed");
  assert.ok(textOf(typed).includes("typed"));
  assert.deepEqual(
    asked.map((q) => q.prompt),
    ["Delete the cache?", "Something else?"],
  );
  // The same answers by hand are refused once the question is gone.
  await assert.rejects(host.answerConfirmation({ request_id: asked[0].request_id, confirmed: true }), octet.UnknownRequestId);
  await assert.rejects(host.answerInput({ request_id: asked[0].request_id, value: "late" }), octet.UnknownRequestId);
});

test("aborting the signal cancels the call on the extension", async (t) => {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({ workspace, extensionDirs: [echoPeer(extensions)] });
  t.after(() => host.close());
  await host.start("p");
  const cancels = async (count) => {
    let seen = [];
    await eventually(async () => {
      seen = JSON.parse(textOf(await host.call("p", "seen"))).cancels;
      return seen.length >= count;
    });
    return seen;
  };
  const controller = new AbortController();
  const pending = host.call("p", "echo", { wait_cancel: true }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(pending, (error) => {
    assert.ok(error instanceof octet.Cancelled);
    assert.equal(error.error.reason, "user");
    return true;
  });
  assert.equal((await cancels(1)).length, 1);
  // `AbortSignal.timeout` the same way.
  await assert.rejects(host.call("p", "echo", { wait_cancel: true }, { signal: AbortSignal.timeout(300) }), octet.Cancelled);
  assert.equal((await cancels(2)).length, 2);
  // An aborted signal sends nothing.
  await assert.rejects(host.call("p", "echo", {}, { signal: AbortSignal.abort() }), octet.Cancelled);
  assert.equal((await host.status()).extensions[0].pending, 0);
});

test("a deadline", async (t) => {
  const host = await fixtureHost(t);
  await assert.rejects(host.call("fixture", "sleep", { ms: 60_000 }, { timeoutMs: 200 }), (error) => {
    assert.ok(error instanceof octet.DeadlineExceeded);
    assert.equal(error.error.after_ms, 200);
    return true;
  });
});

test("calls in flight settle each with its own result", async (t) => {
  const host = await fixtureHost(t);
  const outs = await Promise.all(Array.from({ length: 64 }, (_, n) => host.call("fixture", "echo", { n })));
  assert.deepEqual(
    outs.map((out) => JSON.parse(textOf(out)).n),
    Array.from({ length: 64 }, (_, n) => n),
  );
});

test("events are an async iterator that ends with the host, and listeners", async (t) => {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({ workspace, extensionDirs: [sdkExtension(extensions)] });
  const kinds = [];
  const listened = [];
  host.on("progress", (event) => listened.push(event.sequence));
  const iterating = (async () => {
    for await (const event of host.events()) kinds.push(event.event);
  })();
  await host.start("fixture");
  await host.call("fixture", "progress", { steps: 2 });
  await host.close();
  await iterating;
  assert.equal(kinds.filter((k) => k === "progress").length, 2, kinds.join());
  assert.ok(kinds.includes("state") && kinds.includes("tools_changed"), kinds.join());
  assert.deepEqual(listened, [1, 2]);
});

test("notifications, autocomplete, lifecycle and the terminal", async (t) => {
  const { workspace, extensions } = dirs(t);
  const completion = JSON.stringify({ prefix: "/re", items: [{ value: "/review", label: "review", description: null }] });
  const shortcuts = JSON.stringify([{ id: "open", key: "ctrl+o", description: "Open" }]);
  const peer = servicesExtension(extensions, "peer", "0.2", { OCTET_PEER_COMPLETION: completion, OCTET_PEER_SHORTCUTS: shortcuts });
  const host = await Host.open({ workspace, extensionDirs: [peer] });
  t.after(() => host.close());
  const journal = [];
  await host.start("peer", {
    services: {
      message_injection: { sendMessage: () => {}, sendUserMessage: () => {} },
      terminal_handoff: {
        acquire: () => ({ grant_id: "g-1", columns: 80, rows: 24 }),
        release: () => journal.push("release"),
      },
      autocomplete: { register: () => ({ accepted: true }) },
      shortcuts: { register: (params) => void journal.push(`shortcut ${params.id}`) },
      // A frontend feature without a service: bound by name alone.
      terminal_input: null,
    },
  });
  await ask(host, "peer", [{ id: "reg", method: "ui/autocomplete/register", params: { revision: 1 }, parent: "none" }]);
  const answered = await host.autocomplete({ text: "/re", cursor: 3, revision: 1 });
  assert.equal(answered.claimed_by, "peer");
  assert.equal(answered.items[0].value, "/review");
  await host.messageDelta({ extension: "peer", message_id: "m1", delta: "Hello, " });
  await host.messageDelta({ extension: "peer", message_id: "m1", deltas: ["wor", "ld"] });
  await host.messageSettled({ extension: "peer", message_id: "m1" });
  await host.notify({ extension: "peer", method: "shortcut/trigger", params: { id: "open" } });
  await assert.rejects(host.notify({ extension: "peer", method: "shortcut/trigger", params: { id: "close" } }), (error) => {
    assert.ok(error instanceof octet.NotificationRefused);
    assert.equal(error.error.refusal, "invalid_request");
    return true;
  });
  const grant = await ask(host, "peer", [{ id: "t", method: "terminal/acquire", params: {} }]);
  assert.equal(grant.t.result.grant_id, "g-1");
  await host.terminalRevoke({ extension: "peer", reason: "the editor needs it back" });
  await host.notify({ extension: "peer", method: "ui/terminal-input", params: { data: "ls\n" } });
  await host.lifecycle({ event: "session/started", session_id: host.ready.session_id });
  const seen = JSON.parse(textOf(await host.call("peer", "seen")));
  assert.ok(seen.offered.includes("terminal_input"), seen.offered.join());
  const methods = seen.notifications.map((n) => n.method);
  for (const method of ["message/updated", "shortcut/trigger", "terminal/grant-lost", "ui/terminal-input", "session/started"]) {
    assert.ok(methods.includes(method), methods.join());
  }
  const text = seen.notifications
    .filter((n) => n.method === "message/updated")
    .map((n) => n.params.delta)
    .join("");
  assert.equal(text, "Hello, world");
  assert.ok(journal.includes("shortcut open"), journal.join());
});

test("the operations that refuse name their cause with a typed error", async (t) => {
  const host = await fixtureHost(t);
  await assert.rejects(host.agentReport({ report: { agent_id: "nobody", status: { state: "running" } } }), octet.ReportRefused);
  await assert.rejects(host.agentEvent({ agent_id: "nobody", event: { kind: "turn_started" } }), octet.ReportRefused);
  await assert.rejects(host.artifact({ extension: "fixture", artifact_id: "art-none" }), (error) => {
    assert.ok(error instanceof octet.ControlLineError);
    assert.equal(error.error.field, "artifact_id");
    return true;
  });
  await assert.rejects(host.getApplicableOperations({ arguments: { resource: {} } }), (error) => {
    assert.ok(error instanceof octet.DiscoveryRefused);
    assert.equal(error.error.reason, "not_enabled");
    return true;
  });
  await assert.rejects(host.cancel({ call_id: 12345 }), octet.UnknownCallId);
  await assert.rejects(host.serviceAnswer({ request_id: 999, result: {} }), octet.UnknownRequestId);
});

test("the wire trace comes as trace events", async (t) => {
  const host = await fixtureHost(t, { wireTrace: true });
  const frames = [];
  host.on("trace", (line) => frames.push(line));
  await host.call("fixture", "echo", { traced: true });
  assert.ok(await eventually(() => frames.some((f) => f.direction === "from_extension" && JSON.stringify(f.frame).includes("traced"))));
  assert.ok(frames.some((f) => f.direction === "to_extension" && f.frame?.method === "tool/call"));
});

test("the runtime options reach serve", async (t) => {
  const { workspace, extensions } = dirs(t);
  const peer = servicesExtension(extensions, "composer", "0.4");
  const target = rawPeer(extensions, "target", "0.4", "peer.py", ["echo"], { args: ["good"], env: { OCTET_PEER_TOOLS: "echo" } });
  const host = await Host.open({ workspace, extensionDirs: [peer, target], toolComposition: true, compositionTimeoutMs: 2500 });
  t.after(() => host.close());
  await host.start("target");
  const started = await host.start("composer");
  assert.ok(started.features.includes("tool_composition_v1"), started.features.join());
  const report = await ask(host, "composer", [{ id: "ctx", method: "composition/context", params: {} }]);
  assert.equal(report.ctx.result.limits.timeout_ms, 2500);
});
