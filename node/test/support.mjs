// Shared set-up of the Node client's tests: the installed package, extension manifests
// and waiting helpers.
//
// The tests import the installed `octet-host` (.ci/run packs the package and the
// platform package, installs both tarballs into a fresh project and runs these files
// from there). The extensions are real: the SDK's test extension (the installed binary
// re-invoked as `__extension test-extension`) and the repository's stdlib-only raw peers
// in tests/fixtures, found through OCTET_REPO.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { findBinary, Host } from "octet-host";

import { sdkManifest } from "./manifests.mjs";

/** The repository the raw peers come from. */
export const REPO = process.env.OCTET_REPO;
if (!REPO) {
  throw new Error("set OCTET_REPO to the octet-host repository (its tests/fixtures hold the raw peers)");
}
export const FIXTURES = join(REPO, "tests", "fixtures");
const PYTHON = process.env.PYTHON ?? "python3";

export { SDK_TOOLS } from "./manifests.mjs";

/** A fresh workspace and extensions directory, removed after the test. */
export function dirs(t) {
  const root = mkdtempSync(join(tmpdir(), "octet-node-"));
  const workspace = join(root, "workspace");
  const extensions = join(root, "extensions");
  mkdirSync(workspace);
  mkdirSync(extensions);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return { root, workspace, extensions };
}

function writeManifest(root, name, text) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "extension.toml"), text);
  return dir;
}

const tomlEnv = (env) =>
  Object.entries(env ?? {})
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join(", ");

/** The SDK test extension (API 0.4), as in docs/serve-protocol.md's transcript. */
export function sdkExtension(root, name = "fixture") {
  return writeManifest(root, name, sdkManifest(findBinary().path, name));
}

/** A manifest running tests/fixtures/SCRIPT with Python. */
export function rawPeer(root, name, api, script, tools, { args = [], env, extra = "", contributes = "" } = {}) {
  const argv = [join(FIXTURES, script), ...args];
  return writeManifest(
    root,
    name,
    `name = "${name}"
version = "0.1.0"
api_version = "${api}"

[entrypoint]
command = ${JSON.stringify(PYTHON)}
args = ${JSON.stringify(argv)}
env = { ${tomlEnv(env)} }
${extra}
[contributes]
tools = ${JSON.stringify(tools)}
${contributes}`,
  );
}

/** The raw Wave-1 peer: `ask` sends any host request and reports the answers. */
export function servicesExtension(root, name = "peer", api = "0.4", env, extra = "") {
  const hooks = api === "0.4" ? 'hooks = ["model_turn_start"]\n' : "";
  return rawPeer(root, name, api, "services_peer.py", ["ask", "answers", "seen"], { env, extra, contributes: hooks });
}

/** The raw API 0.3 peer with the optional capabilities in `select`. */
export function peer03Extension(root, name = "prov", select = "provider_auth,provider_catalog,session_lifecycle") {
  return rawPeer(root, name, "0.3", "peer03.py", ["ask", "seen"], {
    args: ["good"],
    env: { OCTET_PEER_TOOLS: "ask,seen", OCTET_PEER_SELECT: select },
  });
}

/** The raw peer with `echo` and `seen` (its `seen` reports the cancellations). */
export function echoPeer(root, name = "p") {
  return rawPeer(root, name, "0.4", "peer.py", ["echo", "seen"], { args: ["good"], env: { OCTET_PEER_TOOLS: "echo,seen" } });
}

/** The text of a tool output's first part. */
export const textOf = (output) => output.content[0].text;

/** Runs the peer's `ask` tool and returns its report of every answer. */
export async function ask(host, extension, requests, options = {}) {
  const output = await host.call(extension, "ask", { requests }, { timeoutMs: 60_000, ...options });
  return JSON.parse(textOf(output));
}

/** Whether `check()` holds within `timeoutMs` (polled). */
export async function eventually(check, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Boolean(await check());
}

/** Whether process `pid` runs (a zombie does not). */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/** A host over the raw Wave-1 peer of `api` (`peer`), closed after the test. */
export async function peerHost(t, api = "0.2") {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({ workspace, extensionDirs: [servicesExtension(extensions, "peer", api)] });
  t.after(() => host.close());
  return host;
}

/** A host over the SDK test extension, started as `fixture`, closed after the test. */
export async function fixtureHost(t, options = {}) {
  const { workspace, extensions } = dirs(t);
  const host = await Host.open({
    workspace,
    extensionDirs: [sdkExtension(extensions)],
    onConfirmation: () => true,
    onInput: () => "typed",
    ...options,
  });
  t.after(() => host.close());
  await host.start("fixture");
  return host;
}

// A rejection nobody handled fails the test file: the client must leave none.
process.on("unhandledRejection", (error) => {
  console.error("unhandled rejection:", error);
  process.exitCode = 1;
});
