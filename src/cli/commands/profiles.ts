// `subagents profiles`: every profile we can see from a directory as a compact table (name, source, model →
// what it runs on, tools, warnings), the names that are shadowed by another file, and a line per broken file.
// `--all` adds each profile's details and the .md files that are not agents; `--check` exits 1 on any broken
// file (for a collection's CI); `--json` prints one object per line.
import * as path from "node:path";
import { discoverProfiles, type Discovery } from "../../core/profiles/profile-discovery.ts";
import { readUserModels, resolveProfileModel, type UserModels } from "../../core/profiles/model-resolve.ts";
import type { Profile } from "../../core/profiles/profile.ts";
import { budgetLimits } from "../../core/budget.ts";
import { memoryFile } from "../../core/profiles/agent-memory.ts";
import { renderTable } from "../../ui/table.ts";
import { sanitizeLine, wrap } from "../../ui/text-width.ts";
import { plainStyle } from "../../ui/windows.ts";
import { parse } from "../flags/args.ts";
import { PROFILES_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { childPiLine, cliContext, type CliContext } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { PROFILES_HELP } from "../help.ts";

type Resolved = { written: string; runsOn: string; warning?: string };

/** What a profile's model means here (the CLI has no parent model: `inherit` is the user's default). */
function modelOf(p: Profile, ctx: CliContext, user: UserModels): Resolved {
  if (!p.model) {
    const written = p.provider ? `${p.provider}/default` : "default";
    return { written, runsOn: written };
  }
  const c = resolveProfileModel(p, p.model, { aliases: ctx.settings.modelAliases, user });
  return { written: p.model, runsOn: c.model ?? user.defaultModel ?? "default", warning: c.warning };
}

function toolsOf(p: Profile): string {
  if (p.noTools) return "none";
  if (p.tools) return p.tools.length ? p.tools.join(",") : "none";
  if (p.excludeTools) return `all-${p.excludeTools.join(",")}`;
  return "default";
}

function warningsOf(p: Profile, model: Resolved): string[] {
  return [...(model.warning ? [model.warning] : []), ...(p.warnings ?? [])];
}

/** A few words per warning for the table; `--all` shows them in full. */
function shortWarning(w: string): string {
  if (w.startsWith("front matter is not strict YAML")) return "lenient YAML";
  if (w.startsWith("tools not available here:")) return `${w.split(":")[1].split(",").length} tools missing`;
  if (w.startsWith("not supported here")) return `${w.split(":")[1].split(",").length} fields ignored`;
  if (w.startsWith("model ")) return "model fallback";
  return w.length > 24 ? `${w.slice(0, 23)}…` : w;
}

function terminalWidth(): number {
  const cols = process.stdout.columns || Number(process.env.COLUMNS) || 100;
  return Math.max(20, cols);
}

/** Whose file it is, short: a built-in is pi's. */
const harnessOf = (p: Profile) => (p.harness === "claude-code" ? "claude" : (p.harness ?? "pi"));

function printJson(list: Profile[], d: Discovery, ctx: CliContext, user: UserModels, all: boolean, cwd: string): void {
  for (const p of list) {
    const { systemPrompt, apiKey, warnings: _w, ...rest } = p;
    const model = modelOf(p, ctx, user);
    const memory = memoryFile(ctx.host, p, { agentDir: ctx.agentDir, cwd });
    console.log(
      JSON.stringify({
        type: "profile",
        ...rest,
        harness: p.harness ?? "pi",
        runtime: p.runtime ?? "pi",
        filePath: p.filePath ?? null,
        ...(memory ? { memoryFile: memory } : {}),
        runsOn: model.runsOn,
        warnings: warningsOf(p, model),
        hasApiKey: apiKey !== undefined,
        promptChars: systemPrompt.length,
      }),
    );
  }
  for (const s of d.shadowed) console.log(JSON.stringify({ type: "shadowed", ...s }));
  for (const x of d.diagnostics) console.log(JSON.stringify({ type: "diagnostic", ...x }));
  if (all) for (const s of d.skipped) console.log(JSON.stringify({ type: "skipped", ...s }));
}

function printTable(list: Profile[], d: Discovery, ctx: CliContext, user: UserModels, all: boolean, cwd: string): void {
  const width = terminalWidth();
  // The RUNTIME column only when an agent runs on another harness's CLI: otherwise it would always say "pi".
  const foreign = list.some((p) => p.runtime && p.runtime !== "pi");
  const rows = list.map((p) => {
    const m = modelOf(p, ctx, user);
    const model = m.written === m.runsOn ? m.written : `${m.written}→${m.runsOn}`;
    const warnings = warningsOf(p, m);
    const source = p.source + (d.shadowed.some((s) => s.name === p.name) ? "*" : "");
    return [
      p.name,
      source,
      harnessOf(p),
      ...(foreign ? [p.runtime ?? "pi"] : []),
      model,
      toolsOf(p),
      warnings.length ? `⚠ ${warnings.map(shortWarning).join(", ")}` : "",
    ].map(sanitizeLine);
  });
  const columns = [
    { header: "NAME", min: Math.min(20, Math.max(4, ...list.map((p) => p.name.length))), flex: true },
    { header: "SOURCE" },
    { header: "HARNESS" },
    ...(foreign ? [{ header: "RUNTIME" }] : []),
    { header: "MODEL", min: 7, flex: true },
    { header: "TOOLS", min: 7, flex: true },
    { header: "WARNINGS", min: 8, flex: true },
  ];
  for (const line of renderTable(columns, rows, { width, style: plainStyle })) console.log(line);
  if (all) {
    for (const p of list) {
      const m = modelOf(p, ctx, user);
      console.log("");
      for (const l of wrap(
        `${p.name} (${p.source}, ${harnessOf(p)}${p.runtime && p.runtime !== "pi" ? `, runs on ${p.runtime}` : ""}) ${p.filePath ?? "built in"}`,
        width,
      ))
        console.log(l);
      if (p.description)
        for (const l of wrap(`  ${sanitizeLine(p.description.replace(/\s+/g, " "))}`, width)) console.log(l);
      for (const w of warningsOf(p, m)) for (const l of wrap(`  ⚠ ${sanitizeLine(w)}`, width)) console.log(l);
      const budget = budgetLimits(p);
      if (budget) console.log(`  budget: ${budget}`);
      if (p.fallbackModels?.length) console.log(`  fallback models: ${p.fallbackModels.join(", ")}`);
      const memory = memoryFile(ctx.host, p, { agentDir: ctx.agentDir, cwd });
      if (memory)
        for (const l of wrap(
          `  memory (${p.memory}): ${memory}${ctx.host.stat(memory)?.isFile ? "" : " (not written yet)"}`,
          width,
        ))
          console.log(l);
    }
  }
  if (d.shadowed.length) {
    console.log("");
    for (const s of d.shadowed)
      for (const l of wrap(`* ${s.name}: ${s.file} is shadowed by ${s.by}`, width)) console.log(l);
  }
  if (all && d.skipped.length) {
    console.log("");
    for (const s of d.skipped) for (const l of wrap(`- not an agent (${s.reason}): ${s.file}`, width)) console.log(l);
  }
  for (const x of d.diagnostics)
    for (const l of wrap(`✗ ${x.file}: ${x.reason}`, width)) process.stderr.write(`${l}\n`);
  for (const l of wrap(`children run: ${childPiLine(cwd)}`, width)) process.stderr.write(`${l}\n`);
}

export function cmdProfiles(argv: string[]): number {
  const { values, positionals } = parse("profiles", argv, parseOptions(PROFILES_FLAGS));
  if (values.help) {
    console.log(PROFILES_HELP);
    return EXIT.ok;
  }
  if (positionals.length)
    throw new UsageError(`profiles: unexpected argument "${positionals[0]}". See 'subagents profiles --help'.`);
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const ctx = cliContext(cwd);
  const d = discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir });
  const user = readUserModels(ctx.host, ctx.agentDir);
  const list = [...d.profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
  const all = !!(values.all || values.verbose);
  if (values.json) printJson(list, d, ctx, user, all, cwd);
  else printTable(list, d, ctx, user, all, cwd);
  return values.check && d.diagnostics.length ? EXIT.taskFailed : EXIT.ok;
}
