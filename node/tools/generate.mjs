#!/usr/bin/env node
// Generates node/src/generated.ts from docs/serve-protocol.schema.json.
//
// Usage: node node/tools/generate.mjs [--check]. With --check it writes nothing and
// exits 1 when the checked-in module differs from what the schema gives (.ci/run runs
// it so). Node.js standard library only.
//
// The module holds, all from the schema:
// - an interface per output line (the root `oneOf`) and the union `OutputLine`;
// - an interface per control line (`$defs.control_line`), the map `ControlLines` and
//   the tuple `OPS`;
// - an interface per operation's reply members (`$defs.replies`) and per call op's
//   output (`$defs.call_outputs`), with the maps `Replies` and `CallOutputs`;
// - per service kind (`$defs.service_kinds`): interfaces of each method's params and
//   result, an interface with one optional method per request, the map `Services`
//   that `start` takes, and the dispatch table `SERVICE_KINDS`;
// - `ERROR_CODES`: each error code serve sends (`$defs.error_codes`) and the name of the
//   error class the client rejects with (errors.ts turns the names into its table);
// - `Operations`, a base class with one typed method per operation the client does
//   not wrap by hand (the `Host` class wraps the calls, start, stop and reload).

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const SCHEMA = join(HERE, "..", "..", "docs", "serve-protocol.schema.json");
const OUTPUT = join(HERE, "..", "src", "generated.ts");

/** The operations `Host` wraps by hand: the calls (AbortSignal, progress), start
 * (services), stop and reload (by name) and shutdown (`close`). */
const WRAPPED = new Set([
  "call", "command", "hook", "context", "status_collect", "render", "menu", "menu_action",
  "start", "stop", "reload", "shutdown",
]);

const camel = (name) =>
  name.replace(/[/_]+(.)/g, (_, c) => c.toUpperCase()).replace(/^./, (c) => c.toUpperCase());
const lowerCamel = (name) => {
  const c = camel(name);
  return c[0].toLowerCase() + c.slice(1);
};

/** Named interfaces met while generating (titled nested objects), emitted first. */
const NESTED = new Map();

function quote(key) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
}

function doc(text, indent = "") {
  const clean = String(text).replace(/\*\//g, "*\\/").trim();
  return `${indent}/** ${clean.split("\n").join(`\n${indent} * `)} */`;
}

/** The TypeScript type of a JSON Schema. */
function tsType(schema, indent = "") {
  if (schema === true || schema === undefined || Object.keys(schema).length === 0) return "Json";
  if (schema.type === "object" && schema.title && schema.properties) {
    const name = camel(schema.title);
    if (!NESTED.has(name)) {
      NESTED.set(name, []);
      NESTED.set(name, iface(name, schema, `\`${schema.title}\`.`));
    }
    return name;
  }
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.anyOf) return union(schema.anyOf.map((s) => tsType(s, indent)));
  if (schema.oneOf) return union(schema.oneOf.map((s) => tsType(s, indent)));
  const t = schema.type;
  if (Array.isArray(t)) return union(t.map((one) => tsType({ ...schema, type: one }, indent)));
  switch (t) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const items = schema.items ? tsType(schema.items, indent) : "Json";
      return /[ |]/.test(items) && !items.startsWith("{") ? `Array<${items}>` : `${items}[]`;
    }
    case "object": {
      const props = schema.properties ?? {};
      if (Object.keys(props).length === 0) return "{ [key: string]: Json }";
      const required = new Set(schema.required ?? []);
      const inner = indent + "  ";
      const members = Object.entries(props).map(
        ([k, v]) => `${inner}${quote(k)}${required.has(k) ? "" : "?"}: ${tsType(v, inner)};`,
      );
      return `{\n${members.join("\n")}\n${indent}}`;
    }
    default:
      return "Json";
  }
}

function union(kinds) {
  const unique = [...new Set(kinds)];
  return unique.length === 1 ? unique[0] : unique.join(" | ");
}

/** An interface for an object schema; `omit` members are left out. */
function iface(name, schema, description, omit = []) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const out = [doc(description), `export interface ${name} {`];
  for (const [key, value] of Object.entries(props)) {
    if (omit.includes(key)) continue;
    if (value && value.description) out.push(doc(value.description, "  "));
    out.push(`  ${quote(key)}${required.has(key) ? "" : "?"}: ${tsType(value, "  ")};`);
  }
  out.push("}", "");
  return out;
}

export function generate(schema) {
  const out = [
    "// Generated by node/tools/generate.mjs from docs/serve-protocol.schema.json.",
    "// Do not edit: change the schema (or the method table it is held to) and run",
    "// `node node/tools/generate.mjs`.",
    "/* eslint-disable */",
    "",
    'import type { ServiceCall } from "./service-call.js";',
    "",
    "/** Any JSON value. */",
    "export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };",
    "",
  ];
  const body = [];

  const lines = [];
  for (const line of schema.oneOf) {
    const name = camel(line.title) + "Line";
    lines.push(name);
    body.push(...iface(name, line, line.description ?? `The \`${line.title}\` output line.`));
  }
  body.push("/** Every line serve writes. */");
  body.push(`export type OutputLine = ${lines.join(" | ")};`, "");

  const control = schema.$defs.control_line.oneOf;
  const ops = control.map((c) => c.properties.op.const);
  for (const c of control) {
    const desc = `The \`${c.title}\` control line: ${c.description ?? ""}`;
    body.push(...iface(camel(c.title) + "Control", c, desc));
  }
  body.push("/** Every operation serve accepts, in the schema's order. */");
  body.push(`export const OPS = [${ops.map((o) => JSON.stringify(o)).join(", ")}] as const;`, "");
  body.push("/** An operation's name. */", "export type Op = (typeof OPS)[number];", "");
  body.push("/** The control line of each operation. */", "export interface ControlLines {");
  for (const c of control) body.push(`  ${c.title}: ${camel(c.title)}Control;`);
  body.push("}", "");

  const replies = schema.$defs.replies.properties;
  for (const [op, reply] of Object.entries(replies)) {
    const desc = reply.description ?? `The members of a successful \`${op}\` reply.`;
    body.push(...iface(camel(op) + "Reply", { ...reply, title: undefined }, desc));
  }
  body.push("/** The members of each operation's successful reply (`{}` for none). */");
  body.push("export interface Replies {");
  for (const op of ops) {
    body.push(`  ${op}: ${op in replies ? camel(op) + "Reply" : "{}"};`);
  }
  body.push("}", "");

  const outputs = schema.$defs.call_outputs.properties;
  for (const [op, output] of Object.entries(outputs)) {
    body.push(
      ...iface(camel(output.title), { ...output, title: undefined }, `The output of a successful \`${op}\` result.`),
    );
  }
  body.push("/** The output of each call op's successful result. */");
  body.push("export interface CallOutputs {");
  for (const [op, output] of Object.entries(outputs)) body.push(`  ${op}: ${camel(output.title)};`);
  body.push("}", "");

  const kinds = schema.$defs.service_kinds["x-kinds"];
  const table = [];
  body.push(
    "/** What a service method returns: the result, or a promise of it. Throw `Refusal`",
    " * to refuse the request with a contract name. */",
    "export type Answer<T> = T | Promise<T>;",
    "",
  );
  for (const kind of kinds) {
    const stemOf = (m) => camel(kind.kind) + camel(m.fn);
    for (const m of kind.methods) {
      body.push(...iface(`${stemOf(m)}Params`, m.params, `The params of \`${m.method}\`.`));
      if (Object.keys(m.result.properties ?? {}).length) {
        body.push(...iface(`${stemOf(m)}Result`, m.result, `The result of \`${m.method}\`.`));
      }
    }
    const cls = camel(kind.kind) + "Service";
    body.push(doc(
      `\`${kind.kind}\`: ${kind.description}\n\nBind an object with some of these methods; a method it lacks is refused as\n\`unsupported_feature\`. Each gets the validated params and the request's\n\`ServiceCall\`, and returns the result (or a promise of it) or throws \`Refusal\`.`,
    ));
    body.push(`export interface ${cls} {`);
    if (kind.methods.length === 0) body.push("  // The runtime answers this kind's requests itself.");
    for (const m of kind.methods) {
      let result = Object.keys(m.result.properties ?? {}).length ? `${stemOf(m)}Result` : "Record<string, never> | void";
      if (m.result.properties && Object.keys(m.result.properties).length && !(m.result.required ?? []).length) {
        result = `${result} | void`;
      }
      if (m.notification) result = "void";
      const note = m.notification ? "; a notification: its return value is not sent" : "";
      body.push(doc(`\`${m.method}\` (API ${m.apis.join(", ")})${note}.`, "  "));
      body.push(`  ${lowerCamel(m.fn)}?(params: ${stemOf(m)}Params, call: ServiceCall): Answer<${result}>;`);
    }
    body.push("}", "");
    const rows = kind.methods.map(
      (m) =>
        `      { method: ${JSON.stringify(m.method)}, fn: ${JSON.stringify(lowerCamel(m.fn))}, apis: ${JSON.stringify(m.apis)}, notification: ${m.notification}, marker: ${JSON.stringify(m.marker ?? null)} },`,
    );
    table.push(`  ${kind.kind}: {`, `    broker: ${kind.broker},`, "    methods: [", ...rows, "    ],", "  },");
  }
  // Every name a `start` may bind (the schema's `start.services`): a kind takes its
  // object, or null to bind it with none; a frontend feature without a service takes null.
  const start = control.find((c) => c.title === "start");
  const kindNames = new Set(kinds.map((kind) => kind.kind));
  body.push(
    "/** The services a `start` binds, by name: a kind's object (or null to bind the kind",
    " * with none), or null for a frontend feature without a service (`terminal_input`). */",
  );
  body.push("export interface Services {");
  for (const name of start.properties.services.items.enum) {
    body.push(`  ${name}?: ${kindNames.has(name) ? `${camel(name)}Service | null` : "null"};`);
  }
  body.push("}", "");
  body.push(
    "/** A service kind's name. */",
    `export type ServiceKind = ${kinds.map((kind) => JSON.stringify(kind.kind)).join(" | ")};`,
    "",
  );
  body.push(
    "/** One method of a kind: its wire method, the service object's method, the API",
    " * versions, whether it is a notification, and its marker. */",
    "export interface MethodRow {",
    "  readonly method: string;",
    "  readonly fn: string;",
    "  readonly apis: readonly string[];",
    "  readonly notification: boolean;",
    "  readonly marker: string | null;",
    "}",
    "",
    "/** Every kind a `start` binds: whether it is a broker, and its methods. */",
    "export const SERVICE_KINDS: { readonly [K in ServiceKind]: { readonly broker: boolean; readonly methods: readonly MethodRow[] } } = {",
    ...table,
    "};",
    "",
  );

  const codes = schema.$defs.error_codes["x-codes"];
  body.push(
    "/** Each error code serve sends and the name of the error class it rejects with. */",
    "export const ERROR_CODES = {",
    ...codes.map((row) => `  ${row.code}: ${JSON.stringify(row.class)},`),
    "} as const;",
    "",
    "/** An error code serve sends. */",
    "export type ErrorCode = keyof typeof ERROR_CODES;",
    "",
  );
  body.push(
    "/** The members of an operation's control line that a method takes: all but `op`",
    " * and `id`, which the client sets. */",
    'export type Members<O extends Op> = Omit<ControlLines[O], "op" | "id">;',
    "",
    "/** One typed method per operation `Host` does not wrap by hand. */",
    "export abstract class Operations {",
    "  /** Sends the control line of `op` and resolves with its reply's members. */",
    "  protected abstract request<O extends Op>(op: O, members: Members<O>): Promise<Replies[O]>;",
    "",
  );
  for (const c of control) {
    if (WRAPPED.has(c.title)) continue;
    const required = (c.required ?? []).filter((k) => k !== "op" && k !== "id");
    const def = required.length ? "" : " = {}";
    body.push(doc(`\`${c.title}\`: ${c.description ?? ""}`, "  "));
    body.push(
      `  ${lowerCamel(c.title)}(members: Members<${JSON.stringify(c.title)}>${def}): Promise<Replies[${JSON.stringify(c.title)}]> {`,
      `    return this.request(${JSON.stringify(c.title)}, members);`,
      "  }",
      "",
    );
  }
  body.push("}", "");

  for (const lines of NESTED.values()) out.push(...lines);
  out.push(...body);
  return out.join("\n");
}

function main() {
  const check = process.argv.includes("--check");
  const text = generate(JSON.parse(readFileSync(SCHEMA, "utf8")));
  if (check) {
    let current = "";
    try {
      current = readFileSync(OUTPUT, "utf8");
    } catch {
      // Missing counts as different.
    }
    if (current !== text) {
      console.error(
        "node/src/generated.ts differs from what docs/serve-protocol.schema.json gives; " +
          "run `node node/tools/generate.mjs` and commit the result",
      );
      process.exit(1);
    }
    return;
  }
  writeFileSync(OUTPUT, text);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
