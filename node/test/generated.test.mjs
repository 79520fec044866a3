// The checked-in generated types are what the schema gives: the generator runs in
// check mode against the repository's schema and fails on any difference.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { OPS, SERVICE_KINDS } from "octet-host";

import { REPO } from "./support.mjs";

test("the generated types are up to date with the schema", () => {
  const run = spawnSync(process.execPath, [join(REPO, "node", "tools", "generate.mjs"), "--check"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
});

test("the installed package carries the schema's operations and service kinds", () => {
  assert.ok(OPS.includes("call") && OPS.includes("service_answer"), OPS.join());
  assert.equal(SERVICE_KINDS.composer.methods[0].method, "composer/get");
  assert.equal(SERVICE_KINDS.policy.broker, true);
});
