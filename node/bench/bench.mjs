#!/usr/bin/env node
// A call through the Node client (`Host.call`) against the same call as raw serve lines
// from Node.
//
// Usage: node node/bench/bench.mjs [--calls N] [--rounds R] [--load]
//
// Both sides drive one `octet-host serve` each over the SDK test extension (API 0.4, the
// binary re-invoked as `__extension test-extension`) and call its `echo` tool:
// - raw: `call` lines written to serve's stdin, its stdout split into lines and each
//   parsed to find its `result`;
// - client: `host.call`.
// Depth 1 times each call from its line written to its result read; depth 64 keeps 64
// calls in flight and divides the batch's time by its calls. Each depth runs N calls
// per round, R rounds alternating raw and client; the medians and 90th percentiles of
// each side are printed in microseconds with the client/raw ratio of the medians. With
// `--load` a busy loop runs on every core meanwhile (separate processes). The client is
// the built package (`node/dist`, `npm run build`); the binary is found as the client
// finds it (`OCTET_HOST_BIN` first).

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

import { findBinary, Host } from "../dist/index.js";
import { sdkManifest } from "../test/manifests.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const CALLS = option("--calls", 400);
const ROUNDS = option("--rounds", 5);
const LOAD = args.includes("--load");
const DEPTH = 64;

const binary = findBinary().path;
const root = mkdtempSync(join(tmpdir(), "octet-node-bench-"));
const workspace = join(root, "workspace");
const extension = join(root, "extensions", "fixture");
mkdirSync(workspace, { recursive: true });
mkdirSync(extension, { recursive: true });
writeFileSync(join(extension, "extension.toml"), sdkManifest(binary));
const serveArgs = ["--workspace", workspace, "--extension-dir", extension, "--no-global", "serve"];

/** serve driven by hand: lines written, results found by parsing each line. */
class Raw {
  constructor() {
    this.child = spawn(binary, serveArgs, { stdio: ["pipe", "pipe", "inherit"] });
    this.child.stdout.setEncoding("utf8");
    this.rest = "";
    this.waiting = new Map();
    this.nextId = 1;
    this.readyLine = new Promise((resolve) => (this.onReady = resolve));
    this.child.stdout.on("data", (chunk) => {
      this.rest += chunk;
      let start = 0;
      for (let nl = this.rest.indexOf("\n"); nl !== -1; nl = this.rest.indexOf("\n", start)) {
        const line = JSON.parse(this.rest.slice(start, nl));
        start = nl + 1;
        if (line.type === "ready") this.onReady();
        const key = line.type === "result" ? `c${line.call_id}` : line.type === "reply" ? `r${line.id}` : undefined;
        const resolve = key && this.waiting.get(key);
        if (resolve) {
          this.waiting.delete(key);
          resolve(line);
        }
      }
      this.rest = this.rest.slice(start);
    });
  }
  send(line, key) {
    return new Promise((resolve) => {
      this.waiting.set(key, resolve);
      this.child.stdin.write(JSON.stringify(line) + "\n");
    });
  }
  async start() {
    await this.readyLine;
    await this.send({ op: "start", id: 0, extension: "fixture" }, "r0");
  }
  call(n) {
    const id = this.nextId++;
    return this.send({ op: "call", call_id: id, extension: "fixture", tool: "echo", arguments: { n } }, `c${id}`);
  }
  async close() {
    await this.send({ op: "shutdown", id: -1 }, "r-1");
    await new Promise((resolve) => this.child.once("close", resolve));
  }
}

async function depth1(call) {
  const times = [];
  for (let n = 0; n < CALLS; n++) {
    const started = performance.now();
    await call(n);
    times.push((performance.now() - started) * 1000);
  }
  return times;
}

async function depth64(call) {
  const times = [];
  let n = 0;
  while (n < CALLS) {
    const batch = Math.min(DEPTH, CALLS - n);
    const started = performance.now();
    await Promise.all(Array.from({ length: batch }, () => call(n++)));
    times.push(((performance.now() - started) * 1000) / batch);
  }
  return times;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

async function main() {
  const busy = LOAD ? cpus().map(() => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" })) : [];
  const raw = new Raw();
  await raw.start();
  const host = await Host.open({ workspace, extensionDirs: [extension] });
  await host.start("fixture");
  const rawCall = (n) => raw.call(n);
  const clientCall = (n) => host.call("fixture", "echo", { n });
  // Warm up both.
  await depth1(rawCall);
  await depth1(clientCall);
  const results = { 1: { raw: [], client: [] }, [DEPTH]: { raw: [], client: [] } };
  for (let round = 0; round < ROUNDS; round++) {
    results[1].raw.push(...(await depth1(rawCall)));
    results[1].client.push(...(await depth1(clientCall)));
    results[DEPTH].raw.push(...(await depth64(rawCall)));
    results[DEPTH].client.push(...(await depth64(clientCall)));
  }
  await host.close();
  await raw.close();
  for (const child of busy) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
  console.log(`${LOAD ? "loaded" : "quiet"}, ${ROUNDS} rounds of ${CALLS} calls, µs: median (90th percentile)`);
  console.log("| | raw lines | client | client / raw |");
  console.log("|---|---:|---:|---:|");
  for (const depth of [1, DEPTH]) {
    const { raw: r, client: c } = results[depth];
    const [rm, cm] = [quantile(r, 0.5), quantile(c, 0.5)];
    const fmt = (v) => Math.round(v).toString();
    console.log(
      `| ${LOAD ? "loaded" : "quiet"}, depth ${depth} | ${fmt(rm)} (${fmt(quantile(r, 0.9))}) | ${fmt(cm)} (${fmt(quantile(c, 0.9))}) | ${(cm / rm).toFixed(2)} |`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
