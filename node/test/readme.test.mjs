// The README's example is type-checked with `tsc --strict` against the installed
// package and runs against a real extension.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { dirs, sdkExtension } from "./support.mjs";

const README = process.env.OCTET_NODE_README ?? join(process.env.OCTET_REPO ?? "", "node", "README.md");

test("the README's example type-checks and runs", (t) => {
  const blocks = [...readFileSync(README, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)];
  assert.equal(blocks.length, 1, "the README has one TypeScript example");
  // Compiled inside this project, so that `octet-host` is the installed package.
  const out = join(process.cwd(), "readme-example");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "example.ts"), blocks[0][1]);
  const tsc = join(process.cwd(), "node_modules", ".bin", "tsc");
  execFileSync(
    tsc,
    ["--strict", "--target", "ES2022", "--lib", "ES2022,ESNext.Disposable", "--module", "NodeNext",
     "--moduleResolution", "NodeNext", "--types", "node", "--outDir", out, join(out, "example.ts")],
    { stdio: "inherit" },
  );
  writeFileSync(join(out, "package.json"), JSON.stringify({ type: "module" }));
  const { workspace, extensions } = dirs(t);
  mkdirSync(join(workspace, "extensions"));
  sdkExtension(join(workspace, "extensions"), "hello");
  void extensions;
  const printed = execFileSync(process.execPath, [join(out, "example.js")], { cwd: workspace, encoding: "utf8" });
  assert.match(printed, /progress 1\nprogress 2\nprogress 3\n/);
  assert.match(printed, /progress sent=3/);
});
