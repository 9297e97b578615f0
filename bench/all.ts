// `npm run bench`: every workload, side by side with pi's example subagent extension, into docs/BENCHMARKS.md's
// region for the latest full run (bench/page.ts): the page's dated, hand-written sections stay as they are.
import { execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
import { withLatestRun } from "./page.ts";

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
const latest = [
  "## The latest full run of `npm run bench`",
  "",
  `${new Date().toISOString().slice(0, 10)} — ${machine}. ${ROUNDS} rounds where noted (BENCH_ROUNDS).`,
  "",
  ...sections,
].join("\n");
const file = join(REPO, "docs", "BENCHMARKS.md");
mkdirSync(join(REPO, "docs"), { recursive: true });
writeFileSync(file, withLatestRun(existsSync(file) ? readFileSync(file, "utf8") : "", latest));
console.log(latest);
