// `subagents usage [--since 7d] [--by agent|day|folder]`: what sub-agents spent, from the session store — tokens
// (input, output, read from and written to the provider's cache), cost and wall time of the runs started in the
// window, one row per agent, day or working folder. The same figures a trace's invoke_agent spans carry.
import type { UsageBy, UsageRow } from "../../core/store/store-types.ts";
import { count, duration } from "../../ui/format.ts";
import { renderTable } from "../../ui/table.ts";
import { cliContext, openStore } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { noPositionals, parse, parseAge } from "../flags/args.ts";
import { USAGE_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { USAGE_HELP } from "../help.ts";
import { colorStyle, streamWidth } from "../terminal/style.ts";

const BY: UsageBy[] = ["agent", "day", "folder"];
const SUMMED = [
  "sessions",
  "runs",
  "failed",
  "input",
  "output",
  "cacheRead",
  "cacheWrite",
  "cost",
  "durationMs",
] as const;

export function cmdUsage(argv: string[]): number {
  const { values, positionals } = parse("usage", argv, parseOptions(USAGE_FLAGS));
  if (values.help) {
    console.log(USAGE_HELP);
    return EXIT.ok;
  }
  noPositionals("usage", positionals);
  const by = (values.by ?? "agent") as UsageBy;
  if (!BY.includes(by)) throw new UsageError(`usage: --by must be agent, day or folder (got "${values.by}").`);
  const window = values.since ?? "7d";
  const since = Date.now() - parseAge("usage", "since", window);
  const rows = openStore(cliContext(process.cwd())).usage({ since, by });
  if (values.json) {
    for (const r of rows) console.log(JSON.stringify({ type: "usage", by, ...r }));
    return EXIT.ok;
  }
  if (!rows.length) {
    console.log(`No sub-agent runs in the last ${window}.`);
    return EXIT.ok;
  }
  const style = colorStyle(process.stdout, values["no-color"]);
  const zero: UsageRow = {
    key: "total",
    sessions: 0,
    runs: 0,
    failed: 0,
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: 0,
    durationMs: 0,
  };
  const total = { ...zero };
  for (const r of rows) for (const k of SUMMED) total[k] += r[k];
  const cells = [...rows, total].map((r) => [
    r.key,
    String(r.runs),
    r.failed ? String(r.failed) : "-",
    count(r.input),
    count(r.output),
    count(r.cacheRead),
    `$${r.cost.toFixed(4)}`,
    duration(r.durationMs),
  ]);
  const lines = renderTable(
    [
      { header: by.toUpperCase(), flex: true, min: 8 },
      { header: "RUNS", right: true },
      { header: "FAILED", right: true },
      { header: "INPUT", right: true },
      { header: "OUTPUT", right: true },
      { header: "CACHE READ", right: true },
      { header: "COST", right: true },
      { header: "TIME", right: true },
    ],
    cells,
    { width: streamWidth(process.stdout), style },
  );
  console.log(lines.join("\n"));
  return EXIT.ok;
}
