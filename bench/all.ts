// `npm run bench`: every workload, side by side with pi's example subagent extension, into docs/BENCHMARKS.md.
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { cliLatency } from "./cli-latency.ts";
import { childStart } from "./child-start.ts";
import { fanout } from "./fanout.ts";
import { installRoutes } from "./install-routes.ts";
import { promptFootprint } from "./prompt-footprint.ts";
import { cost } from "./cost.ts";
import { REPO, ROUNDS } from "./lib.ts";
import { nudge } from "./nudge.ts";
import { scale } from "./scale.ts";
import { NODE24, PI_PACKAGE_DIRS } from "../test/support/pi-env.ts";
import { stream } from "./stream.ts";
import { updates } from "./updates.ts";

const sections: string[] = [];
for (const [name, run] of [
  ["child start", childStart],
  ["fan-out", fanout],
  ["install routes", installRoutes],
  ["stream ingest", stream],
  ["CLI latency", cliLatency],
  ["scale", scale],
  ["live updates", updates],
  ["prompt footprint", promptFootprint],
  ["corrective messages", nudge],
  ["cost", cost],
] as const) {
  process.stderr.write(`bench: ${name}…\n`);
  sections.push(await run());
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${process.platform}; Bun ${Bun.version}, Node ${execSync(`${NODE24} --version`).toString().trim()}, pi ${JSON.parse(readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8")).version}`;
const doc = [
  "# Benchmarks",
  "",
  `Produced by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} — ${machine}. ${ROUNDS} rounds where noted (BENCH_ROUNDS).`,
  "Every workload runs against the same scripted model server on 127.0.0.1, so the model costs nothing and what is",
  "measured is the runners: process start, transport, parsing, bookkeeping. pi's example subagent extension",
  "(`examples/extensions/subagent` of the installed pi) runs in a real parent pi on the same workloads; it starts",
  "its children with the parent's runtime, so in a Node pi they are Node processes. Machines here are noisy:",
  "compare ratios from one run, not absolute times across runs.",
  "",
  ...sections,
].join("\n");
mkdirSync(join(REPO, "docs"), { recursive: true });
writeFileSync(join(REPO, "docs", "BENCHMARKS.md"), `${doc}\n`);
console.log(doc);
