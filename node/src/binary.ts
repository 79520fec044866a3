/**
 * Where the `octet-host` binary comes from: `OCTET_HOST_BIN` when set, else the
 * platform package npm installed beside this one (`@octet-host/linux-x64-gnu`, ...,
 * chosen through `optionalDependencies`), else `octet-host` on `PATH`.
 */

import { accessSync, constants, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";

import { BinaryNotFound } from "./errors.js";

/** The binary a host runs, and how it was found. */
export interface FoundBinary {
  /** Its absolute path. */
  readonly path: string;
  /** Where it came from: `"option"`, `"OCTET_HOST_BIN"`, the platform package's name,
   * or `"PATH"`. */
  readonly source: string;
}

/** The platform package for this machine, or `undefined` where none is built. */
export function platformPackage(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string | undefined {
  if (platform === "linux") {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    const libc = report?.header?.glibcVersionRuntime ? "gnu" : "musl";
    return `@octet-host/linux-${arch}-${libc}`;
  }
  if (platform === "darwin") return `@octet-host/darwin-${arch}`;
  return undefined;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds the binary: `explicit` (the `binary` option), `OCTET_HOST_BIN`, the platform
 * package, then `PATH`. Throws `BinaryNotFound` naming every place it looked. */
export function findBinary(explicit?: string): FoundBinary {
  if (explicit) {
    if (!executable(explicit)) throw new BinaryNotFound(`the binary option names ${explicit}, which is not an executable file`);
    return { path: explicit, source: "option" };
  }
  const fromEnv = process.env.OCTET_HOST_BIN;
  if (fromEnv) {
    if (!executable(fromEnv)) {
      throw new BinaryNotFound(`OCTET_HOST_BIN names ${fromEnv}, which is not an executable file`);
    }
    return { path: fromEnv, source: "OCTET_HOST_BIN" };
  }
  const tried: string[] = [];
  const pkg = platformPackage();
  if (pkg) {
    try {
      const require = createRequire(import.meta.url);
      const manifest = require.resolve(`${pkg}/package.json`);
      const path = join(dirname(manifest), "bin", "octet-host");
      if (executable(path)) return { path, source: pkg };
      tried.push(`${pkg} is installed but holds no executable bin/octet-host`);
    } catch {
      tried.push(`${pkg} is not installed (npm installs it with octet-host unless optional dependencies are omitted)`);
    }
  } else {
    tried.push(`no platform package is built for ${process.platform}-${process.arch}`);
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, "octet-host");
    if (existsSync(path) && executable(path)) return { path, source: "PATH" };
  }
  tried.push("no octet-host on PATH");
  throw new BinaryNotFound(
    `no octet-host binary found: ${tried.join("; ")}. Set OCTET_HOST_BIN to the binary, ` +
      "or install it (cargo install --path . in the octet-host repository)",
  );
}
