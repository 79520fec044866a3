// Every service kind bound as a JavaScript object, against real extensions: the raw
// Wave-1 peer (API 0.2 and 0.4), the raw API 0.3 peer, and the brokers. Each request
// reaches the bound object's method with the validated params, and its return value
// (or its refusal) reaches the extension.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Host, Refusal } from "octet-host";

import { ask, dirs, eventually, peer03Extension, peerHost, servicesExtension } from "./support.mjs";

const SPAWN_POLICY = {
  tools: ["read"],
  max_depth: 1,
  max_concurrent_children: 8,
  max_turns: null,
  max_tokens: null,
  max_cost_microdollars: null,
  max_output_bytes: 4096,
  timeout_ms: null,
};

test("the session services and the API 0.4 kinds are served by objects", async (t) => {
  const { workspace, extensions } = dirs(t);
  const journal = [];
  const note = (line) => void journal.push(line);
  const shortcuts = JSON.stringify([{ id: "open", key: "ctrl+o", description: "Open" }]);
  const peer = servicesExtension(extensions, "peer", "0.4", { OCTET_PEER_SHORTCUTS: shortcuts, OCTET_PEER_PRIVATE_APPENDS: "1" });
  let text = "draft";
  const services = {
    composer: {
      get: (params, call) => {
        note(`composer/get ${call.extension}`);
        return { text };
      },
      set: async (params) => {
        note(`composer/set ${params.text}`);
        text = params.text;
      },
      insert: () => {
        throw new Refusal("invalid_request", "a remote editor owns the composer");
      },
    },
    shortcuts: { register: (params) => note(`shortcut/register ${params.id} ${params.key}`) },
    session_entries: {
      appendEntry: (params) => {
        note(`append ${params.entry_type} ${JSON.stringify(params.data)}`);
        return { entry_id: "entry-7" };
      },
      appendPrivate: (params) => {
        note(`private ${params.entry_type} ${params.session_leaf.grant_id.length}`);
        return { entry_id: "p1", head: "p1" };
      },
      setName: (params) => note(`name ${params.name}`),
      setLabel: (params) => note(`label ${params.entry_id} ${params.label}`),
    },
    message_injection: {
      sendMessage: (params) => note(`message ${params.role} ${params.text}`),
      sendUserMessage: (params) => note(`user ${params.text}`),
    },
    active_tools: { setActive: (params) => note(`active ${params.names.join(",")}`) },
    terminal_handoff: {
      acquire: () => {
        note("acquire");
        return { grant_id: "g-1", columns: 80, rows: 24 };
      },
      release: () => note("release"),
    },
    autocomplete: { register: () => ({ accepted: true }) },
    session_control_v1: {
      waitForIdle: () => {
        note("wait_for_idle");
        return { session_id: "s-1" };
      },
      create: () => {
        note("create");
        return { session_id: "s-2" };
      },
      fork: () => ({ session_id: "s-3" }),
      reload: () => ({ session_id: "s-1" }),
      switch: (params) => {
        note(`switch ${params.session_id}`);
        return { session_id: params.session_id };
      },
    },
    session_compaction_v1: {
      compact: (params, call) => {
        note(`compact independent=${call.independent}`);
        return { entry_id: "c-1", summary: "Shorter.", first_kept: "e7" };
      },
    },
    agent_sessions: {
      spawn: (params) => {
        note(`spawn ${params.task_name}`);
        return { agent_id: "child-1", session: null };
      },
      message: (params) => {
        note(`message ${params.target}`);
        return { delivery: "steering" };
      },
      followUp: () => ({ delivery: "follow_up" }),
      interrupt: () => ({ interrupt_requested: true }),
    },
    agent_model_selection_v1: {
      models: async () => ({
        models: [{ model: "m-1", provider: "acme", display_name: "M one", reasoning: [], context_window: 1000, max_output_tokens: 100 }],
        truncated: false,
      }),
    },
    agent_session_events_v1: {},
    agent_session_lifetime_v1: { stop: (params) => note(`stop ${params.target}`) },
  };
  const host = await Host.open({ workspace, extensionDirs: [peer] });
  t.after(() => host.close());
  const started = await host.start("peer", { services });
  for (const feature of ["composer", "shortcuts", "session_entries", "terminal_handoff", "session_control_v1", "agent_sessions"]) {
    assert.ok(started.features.includes(feature), started.features.join());
  }
  assert.ok(journal.includes("shortcut/register open ctrl+o"));
  const report = await ask(host, "peer", [
    { id: "get", method: "composer/get", params: {} },
    { id: "set", method: "composer/set", params: { text: "/review " } },
    { id: "insert", method: "composer/insert", params: { text: "x" } },
    { id: "append", method: "session/append_entry", params: { entry_type: "bookmark", data: { line: 42 } } },
    { id: "name", method: "session/set_name", params: { name: "Review" } },
    { id: "label", method: "session/set_label", params: { entry_id: "entry-7", label: "here" } },
    { id: "say", method: "session/send_message", params: { role: "assistant", text: "hi" } },
    { id: "user", method: "session/send_user_message", params: { text: "go" } },
    { id: "active", method: "tools/set_active", params: { names: ["ask"] } },
    { id: "acquire", method: "terminal/acquire", params: {} },
    { id: "release", method: "terminal/release", params: {} },
    { id: "idle", method: "session/wait_for_idle", params: {} },
    { id: "create", method: "session/create", params: {} },
    { id: "switch", method: "session/switch", params: { session_id: "s-9" } },
    { id: "spawn", method: "agent/spawn", params: { task_name: "survey", message: "look", policy: SPAWN_POLICY } },
    { id: "models", method: "agent/models", params: {} },
  ]);
  assert.deepEqual(report.get, { result: { text: "draft" } });
  assert.deepEqual(report.set, { result: {} });
  assert.ok(report.insert.error.message.startsWith("invalid_request: a remote editor"), JSON.stringify(report.insert));
  assert.deepEqual(report.append, { result: { entry_id: "entry-7" } });
  assert.equal(report.acquire.result.grant_id, "g-1");
  assert.deepEqual(report.switch, { result: { session_id: "s-9" } });
  assert.equal(report.spawn.result.agent_id, "child-1", JSON.stringify(report.spawn));
  assert.equal(report.models.result.models[0].model, "m-1");
  await host.agentReport({ report: { agent_id: "child-1", status: { state: "running" } } });
  const { sequence } = await host.agentEvent({ agent_id: "child-1", event: { kind: "turn_started" } });
  assert.ok(sequence >= 1);
  const later = await ask(host, "peer", [
    { id: "message", method: "agent/message", params: { target: "child-1", message: "faster" } },
    { id: "follow", method: "agent/follow_up", params: { target: "child-1", message: "then this" } },
    { id: "events", method: "agent/events", params: { target: "child-1", after_sequence: 0, timeout_ms: 1 } },
    { id: "interrupt", method: "agent/interrupt", params: { target: "child-1" } },
    { id: "stop", method: "agent/stop", params: { target: "child-1" } },
  ]);
  assert.equal(later.message.result.delivery, "steering", JSON.stringify(later));
  assert.equal(later.follow.result.delivery, "follow_up");
  assert.deepEqual(
    later.events.result.events.map((r) => r.event.kind),
    ["turn_started"],
  );
  assert.equal(later.interrupt.result.interrupt_requested, true);
  assert.equal(later.stop.result.shutdown_requested, true);
  // Compaction: only after its parent settled, on the issued owner.
  const compact = await ask(host, "peer", [{ id: "compact", method: "session/compact", params: {}, parent: "previous", owner: "issued" }]);
  assert.equal(compact.compact.result.summary, "Shorter.", JSON.stringify(compact));
  // The private lane of a model-turn hook reaches appendPrivate.
  const hook = await host.hook("peer", "model_turn_start", { run_id: "run:1", turn_index: 0, timestamp_ms: 1 });
  assert.equal(hook.hook, "model_turn_start");
  await host.agentReport({ report: { agent_id: "child-1", status: { state: "completed", output: "done" } } });
  assert.deepEqual(journal.slice(0, 2), ["shortcut/register open ctrl+o", "composer/get peer"]);
  for (const line of [
    "composer/set /review ",
    'append bookmark {"line":42}',
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
    "compact independent=true",
    "private turn-note 64",
  ]) {
    assert.ok(journal.includes(line), `${line} in ${JSON.stringify(journal)}`);
  }
});

const model = (id) => ({
  id,
  api_name: id,
  protocol: "openai_chat",
  context_window: 128000,
  max_output_tokens: 4096,
  capabilities: { tools: true, parallel_tool_calls: false, structured_output: true, reasoning: false },
});

test("the API 0.3 kinds are served by objects", async (t) => {
  const { workspace, extensions } = dirs(t);
  let completed = false;
  const host = await Host.open({ workspace, extensionDirs: [peer03Extension(extensions)] });
  t.after(() => host.close());
  const started = await host.start("prov", {
    services: {
      provider_auth: {
        request: () => ({ status: "ready", lease: "lease-1" }),
        revoke: () => ({ status: "revoked" }),
      },
      provider_catalog: {
        register: (params) => ({ revision: 1, provider_ids: [params.provider.id], model_ids: params.models.map((m) => m.id) }),
        unregister: () => ({ revision: 2, provider_ids: [], model_ids: [] }),
        complete: () => {
          completed = true;
        },
      },
      session_lifecycle: {
        create: () => ({ session_id: "s-new" }),
        switch: (params) => ({ session_id: params.session_id }),
      },
    },
  });
  assert.equal(started.api_version, "0.3");
  const registration = { provider: { id: "acme", label: "Acme", auth: { kind: "oauth" } }, models: [model("fast")] };
  const report = await ask(host, "prov", [
    { id: "auth", method: "provider/auth/request", params: { provider_id: "acme", action: "authorize", interactive: false } },
    { id: "register", method: "providers/register", params: registration },
    { id: "complete", method: "providers/complete", params: {}, notify: true },
    { id: "unregister", method: "providers/unregister", params: { provider_id: "acme" } },
    { id: "create", method: "session/create", params: {} },
    { id: "fork", method: "session/fork", params: {} },
    { id: "switch", method: "session/switch", params: { session_id: "s-9" } },
  ]);
  assert.deepEqual(report.auth, { result: { lease: "lease-1", status: "ready" } });
  assert.deepEqual(report.register.result.model_ids, ["fast"]);
  assert.equal(report.unregister.result.revision, 2);
  assert.deepEqual(report.create, { result: { session_id: "s-new" } });
  // A method the object does not define is refused as unsupported.
  assert.equal(report.fork.error.code, -32601, JSON.stringify(report.fork));
  assert.deepEqual(report.switch, { result: { session_id: "s-9" } });
  assert.ok(await eventually(() => completed));
});

const PLANTED = "PLANTED-s3cret-7f1d2c";

test("the brokers are served by objects", async (t) => {
  const { workspace, extensions } = dirs(t);
  const vault = servicesExtension(extensions, "vault", "0.2", undefined, '\n[capabilities]\nsecrets = ["demo.token"]\nprovider_credentials = true\n');
  const host = await Host.open({ workspace, extensionDirs: [vault] });
  t.after(() => host.close());
  const events = [];
  host.on("*", (event) => events.push(event));
  await host.start("vault", {
    services: {
      policy: {
        evaluate: (params) => {
          assert.equal(params.intent.operation, "demo.publish");
          return { decision: "ask" };
        },
      },
      approvals: { approve: () => ({ approved: true }) },
      secrets: { get: (params) => ({ value: params.name === "demo.token" ? PLANTED : null }) },
      provider_credentials: { credentials: (params) => ({ credential: `cred-for-${params.provider}` }) },
    },
  });
  const report = await ask(host, "vault", [
    { id: "secret", method: "secret/get", params: { name: "demo.token" }, conceal: true },
    { id: "credential", method: "provider/credentials", params: { provider: "acme", model: "rocket-1" }, conceal: true },
    { id: "policy", method: "policy/evaluate", params: { intent: { kind: "external_side_effect", operation: "demo.publish" } } },
  ]);
  assert.equal(report.secret.concealed.value, PLANTED.length + 2, JSON.stringify(report));
  assert.equal(report.policy.result.decision, "ask");
  assert.equal(typeof report.policy.result.approval_token, "string");
  assert.ok(!JSON.stringify(events).includes(PLANTED));
});

test("a request of a kind not bound never reaches an object", async (t) => {
  const journal = [];
  const host = await peerHost(t);
  const started = await host.start("peer", { services: { composer: { get: () => (journal.push("get"), { text: "" }) } } });
  assert.ok(!started.features.includes("session_entries"));
  const report = await ask(host, "peer", [{ id: "append", method: "session/append_entry", params: { entry_type: "x", data: {} } }]);
  assert.equal(report.append.error.code, -32601, JSON.stringify(report));
  assert.deepEqual(journal, []);
});
