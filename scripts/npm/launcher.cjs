#!/usr/bin/env node
// `subagents` from npm: runs the executable from the optional package for this platform (esbuild-style:
// npm installs only the one whose os/cpu match). Exit code and signals pass through unchanged.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const names = {
  "linux-x64": "linux-x64",
  "linux-arm64": "linux-arm64",
  "darwin-x64": "darwin-x64",
  "darwin-arm64": "darwin-arm64",
  "win32-x64": "windows-x64",
};
const platform = names[`${process.platform}-${process.arch}`];
if (!platform) {
  console.error(
    `subagents: no executable for ${process.platform}-${process.arch}. Supported: linux, macOS (x64, arm64), Windows x64.`,
  );
  process.exit(2);
}
const pkg = `subagents-${platform}`;
let exe;
try {
  exe = path.join(
    path.dirname(require.resolve(`${pkg}/package.json`)),
    "bin",
    process.platform === "win32" ? "subagents.exe" : "subagents",
  );
} catch {
  console.error(
    `subagents: the package ${pkg} is missing. It is an optional dependency: reinstall without --no-optional / --omit=optional.`,
  );
  process.exit(2);
}
const r = spawnSync(exe, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  console.error(`subagents: cannot run ${exe}: ${r.error.message}`);
  process.exit(2);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status ?? 1);
