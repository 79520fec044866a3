#!/usr/bin/env bash
# Builds octet-host and its platform package, packs both, installs the two tarballs
# into a fresh project with a pinned TypeScript, and runs the tests under Node's own
# test runner against the installed package (never the source tree); one of them
# type-checks the README's example with `tsc --strict` and runs it. What .ci/run runs.
#
# Usage: node/scripts/test-installed.sh [--debug]   (--debug: target/debug's binary)
set -euo pipefail
node_dir=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$node_dir/.." && pwd)
cd "$node_dir"

# The package needs Node.js 20 or later (package.json "engines").
node -e 'if (Number(process.versions.node.split(".")[0]) < 20) { console.error(`node/: Node.js ${process.versions.node} is older than 20, which the package needs`); process.exit(1); }'

# The package's own toolchain: TypeScript and @types/node at the exact versions its
# devDependencies pin. (No lock file: the platform packages it lists as optional
# dependencies are the tarballs built here, not yet in a registry.)
npm install --no-audit --no-fund --no-package-lock --omit=optional
node tools/generate.mjs --check
npx tsc -p tsconfig.json
node scripts/build-binary.mjs "$@"
platform=$(node scripts/build-binary.mjs --print-platform)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm pack --silent --pack-destination "$work" >/dev/null
(cd "npm/$platform" && npm pack --silent --pack-destination "$work" >/dev/null)
cd "$work"
mkdir project
cd project
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --no-audit --no-fund ../octet-host-*.tgz ../octet-host-"$platform"-*.tgz \
    typescript@5.9.3 @types/node@20.19.43
cp -r "$node_dir/test" test

# test/readme.test.mjs type-checks the README's example here with `tsc --strict` and
# runs it.
env -u OCTET_HOST_BIN OCTET_REPO="$repo" OCTET_NODE_README="$node_dir/README.md" \
    node --test --test-concurrency=2 test/*.test.mjs
