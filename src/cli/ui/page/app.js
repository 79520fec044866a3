// The octet-host inspector: serve's control protocol over HTTP (POST /api/control)
// and its output lines as server-sent events (GET /api/events). No build step: this
// file is embedded in the binary as it is.
"use strict";

const state = {
  entries: [],        // discover's entries
  started: {},        // extension name -> start reply
  status: {},         // extension name -> status entry
  selected: null,     // the extension shown in the middle
  calls: {},          // call_id -> {element, progress}
  nextCall: 1,
  traces: [],         // trace lines, newest last (bounded)
};
const MAX_ROWS = 2000;

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function append(list, item) {
  list.append(item);
  while (list.children.length > MAX_ROWS) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

async function control(line) {
  const response = await fetch("/api/control", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(line),
  });
  return response.json();
}

// Extensions.

async function refresh() {
  const found = await control({ op: "discover" });
  if (found.ok) state.entries = found.entries || [];
  const status = await control({ op: "status" });
  state.status = {};
  if (status.ok) for (const entry of status.extensions) state.status[entry.extension] = entry;
  renderExtensions(found);
  renderDetail();
}

function renderExtensions(found) {
  const list = document.getElementById("extensions");
  list.replaceChildren(...state.entries.map((entry) => {
    const status = state.status[entry.name];
    return el("li", { "data-extension": entry.name },
      el("a", { href: "#", onclick: (e) => { e.preventDefault(); select(entry.name); } }, entry.name),
      " ", el("span", { class: "state " + (status ? status.state : "") }, status ? status.state : "not started"),
      el("div", {},
        el("button", { onclick: () => start(entry.name) }, "Start"),
        el("button", { onclick: () => simple("stop", entry.name) }, "Stop"),
        el("button", { onclick: () => simple("reload", entry.name) }, "Reload")));
  }));
  const diagnostics = document.getElementById("manifest-diagnostics");
  diagnostics.replaceChildren(...((found && found.diagnostics) || []).map((d) =>
    el("li", {}, el("pre", {}, JSON.stringify(d)))));
}

async function start(name) {
  const line = { op: "start", extension: name };
  if (document.getElementById("bind-services").checked) line.services = ["composer", "session_entries"];
  const reply = await control(line);
  if (reply.ok) state.started[name] = reply;
  else note("start " + name + ": " + reply.error.code + ": " + reply.error.message);
  state.selected = name;
  await refresh();
}

async function simple(op, name) {
  const reply = await control({ op, extension: name });
  if (!reply.ok) note(op + " " + name + ": " + reply.error.code + ": " + reply.error.message);
  if (op === "reload" && reply.ok) state.started[name] = reply;
  await refresh();
}

function select(name) {
  state.selected = name;
  renderDetail();
}

// One extension: its state, tools (with forms), commands and hooks.

function renderDetail() {
  const name = state.selected;
  document.getElementById("detail-title").textContent = name || "Pick an extension";
  const status = state.status[name];
  document.getElementById("detail-status").replaceChildren(status ? el("pre", {},
    `state ${status.state}, generation ${status.generation}, restarts ${status.restart_attempts}, ` +
    `API ${status.api_version}\nfeatures: ${(status.features || []).join(", ")}`) : "");
  const started = state.started[name];
  const tools = document.getElementById("tools");
  const commands = document.getElementById("commands");
  const hooks = document.getElementById("hooks");
  if (!started || !status) {
    tools.replaceChildren(el("p", {}, name ? "Start it to see its tools." : ""));
    commands.replaceChildren();
    hooks.replaceChildren();
    return;
  }
  tools.replaceChildren(el("h3", {}, "Tools"), ...(started.tools || []).map((tool) => toolCard(name, tool)));
  commands.replaceChildren(el("h3", {}, "Commands"), ...(started.commands || []).map((command) => {
    const args = el("input", { placeholder: "arguments, space separated" });
    const commandName = typeof command === "string" ? command : command.name;
    return el("div", { class: "tool" }, el("b", {}, "/" + commandName), " ", args,
      el("button", { onclick: () => call(name, { op: "command", name: commandName,
        arguments: args.value.split(" ").filter((a) => a) }, "/" + commandName) }, "Run"));
  }));
  const payload = el("textarea", { rows: 3 }, "{}");
  const hook = el("input", { placeholder: "hook, such as before_prompt" });
  hooks.replaceChildren(el("h3", {}, "Hooks"), el("div", { class: "tool" }, hook, payload,
    el("button", { onclick: () => call(name, { op: "hook", hook: hook.value,
      payload: JSON.parse(payload.value || "{}") }, "hook " + hook.value) }, "Run hook")));
}

// A form for a JSON Schema: objects (fields, nested), arrays (items added and removed,
// each a form of the item schema), strings, numbers, booleans and enums; anything else
// is a JSON text box. The raw JSON editor beside it is the fallback, and the truth once
// edited.
function formFor(schema) {
  schema = schema || {};
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (schema.enum) {
    return el("select", { "data-kind": "enum" },
      ...schema.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
  }
  if (type === "object" || schema.properties) {
    const required = new Set(schema.required || []);
    return el("fieldset", { "data-kind": "object" },
      ...Object.entries(schema.properties || {}).map(([key, sub]) =>
        el("label", { "data-key": key }, key + (required.has(key) ? " *" : ""), " ", formFor(sub))));
  }
  if (type === "array") {
    const items = el("div", { class: "items" });
    const changed = (node) => node.dispatchEvent(new Event("input", { bubbles: true }));
    const add = el("button", { type: "button", class: "add-item", onclick: () => {
      const item = el("div", { class: "item" }, formFor(schema.items));
      item.append(el("button", { type: "button", class: "remove-item", onclick: () => {
        item.remove();
        changed(items);
      } }, "remove"));
      items.append(item);
      changed(items);
    } }, "add an item");
    return el("fieldset", { "data-kind": "array" }, items, add);
  }
  if (type === "boolean") return el("input", { type: "checkbox", "data-kind": "boolean" });
  if (type === "integer" || type === "number") {
    return el("input", { type: "number", "data-kind": "number", step: type === "integer" ? "1" : "any" });
  }
  if (type === "string") return el("input", { "data-kind": "string" });
  return el("textarea", { rows: 2, "data-kind": "json" });
}

// The value a form holds; `undefined` for an empty field, which is left out.
function readForm(control) {
  const child = (node) => node.querySelector(":scope > [data-kind]");
  switch (control.dataset.kind) {
    case "object": {
      const value = {};
      for (const field of control.querySelectorAll(":scope > label[data-key]")) {
        const v = readForm(child(field));
        if (v !== undefined) value[field.dataset.key] = v;
      }
      return value;
    }
    case "array":
      return [...control.querySelectorAll(":scope > .items > .item")]
        .map((item) => readForm(child(item)))
        .map((v) => (v === undefined ? null : v));
    case "boolean": return control.checked;
    case "number": return control.value === "" ? undefined : Number(control.value);
    case "enum": return JSON.parse(control.value);
    case "json": return control.value.trim() === "" ? undefined : JSON.parse(control.value);
    default: return control.value === "" ? undefined : control.value;
  }
}

function toolCard(extension, tool) {
  const form = formFor(tool.parameters || { type: "object" });
  const raw = el("textarea", { rows: 3, class: "raw" });
  let rawEdited = false;
  raw.addEventListener("input", () => { rawEdited = true; });
  form.addEventListener("input", () => { rawEdited = false; raw.value = JSON.stringify(readForm(form), null, 1); });
  return el("div", { class: "tool", "data-tool": tool.name },
    el("b", {}, tool.name), " ", el("span", {}, tool.description || ""),
    el("form", { onsubmit: (e) => e.preventDefault() }, form),
    el("details", {}, el("summary", {}, "raw JSON arguments"), raw),
    el("button", { class: "run", onclick: () => {
      let args;
      try { args = rawEdited ? JSON.parse(raw.value || "{}") : (readForm(form) || {}); }
      catch (error) { note("arguments: " + error); return; }
      call(extension, { op: "call", tool: tool.name, arguments: args }, tool.name);
    } }, "Call"));
}

// Calls: progress, cancellation and the result, live.

async function call(extension, line, label) {
  const callId = "page-" + Date.now() + "-" + state.nextCall++;
  const progress = el("ol", { class: "progress" });
  const result = el("div", { class: "result" });
  const cancel = el("button", { onclick: () => control({ op: "cancel", call_id: callId }) }, "Cancel");
  const item = el("li", { class: "call", "data-call": callId },
    el("b", {}, extension + " · " + label), " ", cancel, progress, result);
  append(document.getElementById("calls"), item);
  state.calls[callId] = { item, progress, result, cancel, extension };
  const reply = await control(Object.assign({ call_id: callId, extension }, line));
  if (!reply.ok) settle({ call_id: callId, ok: false, error: reply.error });
}

function settle(line) {
  const call = state.calls[line.call_id];
  if (!call) return;
  call.cancel.remove();
  call.item.classList.add(line.ok ? "ok" : "failed");
  if (!line.ok) {
    call.result.replaceChildren(el("pre", {}, line.error.code + ": " + line.error.message));
    return;
  }
  const output = line.output || {};
  const parts = [];
  for (const part of output.content || []) {
    if (part.type === "text") parts.push(el("pre", {}, part.text));
    else if (part.type === "image" || part.type === "audio") parts.push(media(call.extension, part));
    else parts.push(el("pre", {}, JSON.stringify(part)));
  }
  if (output.structured_content) parts.push(el("pre", {}, "structured: " + JSON.stringify(output.structured_content, null, 1)));
  if (!parts.length) parts.push(el("pre", {}, JSON.stringify(output, null, 1)));
  call.result.replaceChildren(...parts);
}

// An image or audio part: its artifact's bytes, asked of serve (`artifact`).
function media(extension, part) {
  const node = part.type === "image"
    ? el("img", { class: "artifact", alt: part.alt || part.artifact_id, "data-artifact": part.artifact_id })
    : el("audio", { controls: "", "data-artifact": part.artifact_id });
  control({ op: "artifact", extension, artifact_id: part.artifact_id }).then((reply) => {
    if (reply.ok) node.src = `data:${reply.mime_type};base64,${reply.data}`;
    else node.replaceWith(el("pre", {}, `${part.artifact_id}: ${reply.error.message}`));
  });
  return node;
}

// Questions from extensions.

function question(line) {
  const box = el("div", { class: "question", "data-request": line.request_id });
  const done = () => box.remove();
  if (line.type === "confirmation_request") {
    box.append(el("b", {}, line.extension + " asks: "), line.prompt || JSON.stringify(line),
      el("button", { onclick: () => control({ op: "answer_confirmation", request_id: line.request_id, confirmed: true }).then(done) }, "Yes"),
      el("button", { onclick: () => control({ op: "answer_confirmation", request_id: line.request_id, confirmed: false }).then(done) }, "No"));
  } else {
    const input = el("input", { type: line.secret ? "password" : "text" });
    box.append(el("b", {}, line.extension + " asks: "), line.prompt || "", input,
      el("button", { onclick: () => control({ op: "answer_input", request_id: line.request_id, value: input.value }).then(done) }, "Send"),
      el("button", { onclick: () => control({ op: "answer_input", request_id: line.request_id, value: null }).then(done) }, "Cancel"));
  }
  document.getElementById("questions").append(box);
}

// The services the page plays with plain defaults: a composer text box and a log of
// session entries.

let nextEntry = 1;

function serve(line) {
  const composer = document.getElementById("composer");
  const answer = (result) => control({ op: "service_answer", request_id: line.request_id, result });
  const refuse = (refusal, message) =>
    control({ op: "service_answer", request_id: line.request_id, refusal, message });
  const params = line.params || {};
  switch (line.method) {
    case "composer/get": return answer({ text: composer.value });
    case "composer/set": composer.value = params.text; return answer({});
    case "composer/insert": composer.value += params.text; return answer({});
    case "session/append_entry":
      if (params.session_leaf) return refuse("unavailable", "the page keeps no session tree");
      append(document.getElementById("entries"), el("li", {},
        `${line.extension}: ${params.entry_type} ${JSON.stringify(params.data)}`));
      return answer({ entry_id: "page-entry-" + nextEntry++ });
    default:
      return refuse("unsupported_feature", "the page does not serve " + line.method);
  }
}

// The live streams.

function traceRow(line) {
  const frame = line.frame;
  const method = frame && frame.method ? frame.method : (line.answers ? line.answers.method : "");
  const wantedExtension = document.getElementById("trace-extension").value;
  const wantedMethod = document.getElementById("trace-method").value;
  const row = el("li", { class: line.direction, "data-extension": line.extension, "data-method": method },
    `${line.at_ms.toFixed(1)} ms ${line.extension}#${line.generation} `,
    line.withheld ? "<withheld: may carry a secret>" : JSON.stringify(frame),
    line.answers ? el("span", { class: "latency" }, ` (answers ${line.answers.method} in ${line.answers.latency_ms.toFixed(2)} ms)`) : null);
  row.hidden = (wantedExtension && line.extension !== wantedExtension) || (wantedMethod && !method.includes(wantedMethod));
  append(document.getElementById("trace"), row);
}

function filterTrace() {
  const wantedExtension = document.getElementById("trace-extension").value;
  const wantedMethod = document.getElementById("trace-method").value;
  for (const row of document.getElementById("trace").children) {
    row.hidden = (wantedExtension && row.dataset.extension !== wantedExtension) ||
      (wantedMethod && !(row.dataset.method || "").includes(wantedMethod));
  }
}

function note(text) {
  append(document.getElementById("events"), el("li", {}, text));
}

function onLine(line) {
  switch (line.type) {
    case "trace": traceRow(line); break;
    case "result": settle(line); break;
    case "service_request": serve(line); break;
    case "confirmation_request":
    case "input_request": question(line); break;
    case "request_cancelled":
      for (const box of document.querySelectorAll(`[data-request="${line.request_id}"]`)) box.remove();
      break;
    case "event":
      if (line.event === "progress") {
        const call = state.calls[line.call_id];
        if (call) append(call.progress, el("li", { class: "progress-line" }, JSON.stringify(line.progress)));
      } else if (line.event === "diagnostic" && line.kind === "stderr") {
        append(document.getElementById("stderr"), el("li", {}, `${line.extension}#${line.generation}: ${line.line}`));
      } else {
        note(JSON.stringify(line));
        if (line.event === "state" || line.event === "tools_changed") refresh();
      }
      break;
    case "shutdown": document.getElementById("session").textContent = "serve has ended"; break;
    default: note(JSON.stringify(line));
  }
}

function connect() {
  const events = new EventSource("/api/events");
  events.onopen = () => { document.getElementById("session").textContent = "connected"; };
  events.onmessage = (message) => onLine(JSON.parse(message.data));
  events.onerror = () => { document.getElementById("session").textContent = "reconnecting…"; };
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("trace-extension").addEventListener("input", filterTrace);
  document.getElementById("trace-method").addEventListener("input", filterTrace);
  connect();
  refresh();
});
