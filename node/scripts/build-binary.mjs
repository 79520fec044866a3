#!/usr/bin/env node
// Builds this crate's release binary and puts it into the platform package of this
// machine (node/npm/<platform>/bin/octet-host), creating that package from the
// linux-x64-gnu one when it is another platform.
//
// Usage: node node/scripts/build-binary.mjs [--debug | --print-platform]
// (--debug copies target/debug's binary instead, for a quick local loop;
// --print-platform prints the platform package's folder under node/npm and builds
// nothing).

import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const node = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(node, "..");
const debug = process.argv.includes("--debug");

function platform() {
  const arch = process.arch;
  if (process.platform === "linux") {
    const glibc = process.report?.getReport()?.header?.glibcVersionRuntime;
    const libc = glibc ? "gnu" : "musl";
    return { dir: `linux-${arch}-${libc}`, os: "linux", cpu: arch, libc: glibc ? "glibc" : "musl" };
  }
  if (process.platform === "darwin") return { dir: `darwin-${arch}`, os: "darwin", cpu: arch };
  throw new Error(`no platform package is defined for ${process.platform}-${arch}`);
}

const target = platform();
if (process.argv.includes("--print-platform")) {
  console.log(target.dir);
  process.exit(0);
}
const pkgDir = join(node, "npm", target.dir);
if (!existsSync(join(pkgDir, "package.json"))) {
  const template = JSON.parse(readFileSync(join(node, "npm", "linux-x64-gnu", "package.json"), "utf8"));
  template.name = `@octet-host/${target.dir}`;
  template.description = `The octet-host binary for ${target.dir}, installed by the octet-host package`;
  template.os = [target.os];
  template.cpu = [target.cpu];
  if (target.libc) template.libc = [target.libc];
  else delete template.libc;
  mkdirSync(pkgDir, { recursive: true });
  writeFileSync(join(pkgDir, "package.json"), JSON.stringify(template, null, 2) + "\n");
}
if (!debug) {
  execFileSync("cargo", ["build", "--release", "--bin", "octet-host"], { cwd: repo, stdio: "inherit" });
}
const built = join(repo, "target", debug ? "debug" : "release", "octet-host");
mkdirSync(join(pkgDir, "bin"), { recursive: true });
copyFileSync(built, join(pkgDir, "bin", "octet-host"));
chmodSync(join(pkgDir, "bin", "octet-host"), 0o755);
console.log(`${built} -> ${join(pkgDir, "bin", "octet-host")}`);
