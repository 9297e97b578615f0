// `subagents schedule add|list|rm|run`: unattended runs on the machine's own scheduler (the user's crontab). The
// definition lives in <agentDir>/schedules/NAME.json; the crontab line, tagged `# subagents:NAME`, only calls
// `subagents schedule run NAME --from-cron` with where to find it (schedule/fire.ts runs it).
import * as fs from "node:fs";
import * as path from "node:path";
import { cronProblem as cronExprProblem, normalCron } from "../../core/schedule/cron-expr.ts";
import {
  type CronLine,
  formatLine,
  lineProblem,
  ourLines,
  renderLine,
  withLine,
  withoutLine,
} from "../../core/schedule/crontab-lines.ts";
import { argsProblem, scheduleEnv, SCHEDULE_VERSION, type ScheduleDefinition } from "../../core/schedule/definition.ts";
import { scheduleNameProblem } from "../../core/schedule/names.ts";
import type { Store } from "../../core/store/store.ts";
import { selfCommand } from "../self-command.ts";
import { cliContext, dbPath, openStore, type CliContext } from "../engine.ts";
import { ConfigError, EXIT, UsageError } from "../errors.ts";
import { parse } from "../flags/args.ts";
import { SCHEDULE_ADD_FLAGS, SCHEDULE_LIST_FLAGS, SCHEDULE_RUN_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { cronProblem, readCrontab, writeCrontab } from "../schedule/crontab.ts";
import { definitionFile, listDefinitions, logFile, readDefinition, writeDefinition } from "../schedule/files.ts";
import { fireSchedule } from "../schedule/fire.ts";
import { SCHEDULE_ADD_HELP, SCHEDULE_HELP, SCHEDULE_LIST_HELP, SCHEDULE_RM_HELP, SCHEDULE_RUN_HELP } from "../help.ts";

export async function cmdSchedule(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "-h" || sub === "--help") {
    console.log(SCHEDULE_HELP);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  if (sub === "add") return scheduleAdd(rest);
  if (sub === "list" || sub === "ls") return scheduleList(rest);
  if (sub === "rm" || sub === "remove") return scheduleRm(rest);
  if (sub === "run") return scheduleRun(rest);
  throw new UsageError(`schedule: unknown subcommand "${sub}" (add, list, rm, run). See 'subagents schedule --help'.`);
}

function checkName(command: string, name: string | undefined): string {
  if (!name)
    throw new UsageError(`schedule ${command}: name the schedule. See 'subagents schedule ${command} --help'.`);
  const problem = scheduleNameProblem(name);
  if (problem) throw new UsageError(`schedule ${command}: ${problem}.`);
  return name;
}

function scheduleAdd(argv: string[]): number {
  const dash = argv.indexOf("--");
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const args = dash < 0 ? [] : argv.slice(dash + 1);
  const { values, positionals } = parse("schedule add", own, parseOptions(SCHEDULE_ADD_FLAGS));
  if (values.help) {
    console.log(SCHEDULE_ADD_HELP);
    return EXIT.ok;
  }
  const name = checkName("add", positionals[0]);
  if (positionals.length > 1)
    throw new UsageError(
      `schedule add: unexpected "${positionals[1]}": the subagents arguments go after "--" (schedule add ${name} --cron "0 3 * * *" -- run reviewer "…").`,
    );
  if (values.cron === undefined)
    throw new UsageError(`schedule add: --cron "EXPR" is required (e.g. --cron "0 3 * * *": every day at 03:00).`);
  const cronError = cronExprProblem(values.cron);
  if (cronError) throw new UsageError(`schedule add: --cron: ${cronError}.`);
  const argError = argsProblem(args);
  if (argError) throw new UsageError(`schedule add: ${argError}.`);
  const cwd = path.resolve(values.cwd ?? process.cwd());
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`schedule add: --cwd ${cwd} is not a directory.`);
  const cron = cronProblem();
  if (cron) throw new ConfigError(`schedule add: ${cron.detail}. Fix: ${cron.fix}.`);
  const ctx = cliContext(cwd);
  const table = readCrontab();
  if (readDefinition(ctx.agentDir, name) || ourLines(table).has(name))
    throw new UsageError(
      `schedule add: a schedule "${name}" exists already; remove it first (subagents schedule rm ${name}).`,
    );
  const kept = scheduleEnv(process.env);
  // Where the definition and the database are, as absolute paths: the run finds the same ones from cron.
  const where = { PI_CODING_AGENT_DIR: path.resolve(ctx.agentDir), SUBAGENTS_DB: path.resolve(dbPath(ctx)) };
  const def: ScheduleDefinition = {
    version: SCHEDULE_VERSION,
    name,
    cron: normalCron(values.cron),
    args,
    cwd,
    // This executable as cron must call it: by absolute path (cron's PATH is /usr/bin:/bin).
    command: selfCommand(),
    env: { ...kept.env, ...where },
    createdAt: Date.now(),
  };
  const cronLine = lineOf(ctx, def);
  const problem = lineProblem(cronLine);
  if (problem) throw new UsageError(`schedule add: ${problem}; nothing was written.`);
  writeDefinition(ctx.agentDir, def);
  const line = renderLine(cronLine);
  try {
    writeCrontab(withLine(table, name, line));
  } catch (err) {
    fs.rmSync(definitionFile(ctx.agentDir, name), { force: true });
    throw err;
  }
  console.log(`schedule ${name} added: ${def.cron}, in ${cwd}: subagents ${args.join(" ")}`);
  console.log(
    `  its runs are recorded under "${name}" (subagents sessions); what they print goes to ${logFile(ctx.agentDir, name)}`,
  );
  console.log(`  try it now: subagents schedule run ${name}`);
  if (kept.secret.length)
    console.log(
      `  not kept (the names look secret): ${kept.secret.join(", ")} — keep provider keys in pi's auth.json or models.json, which the run reads`,
    );
  return EXIT.ok;
}

/** The crontab line of a schedule: only where its definition and database are, then our executable. */
function lineOf(ctx: CliContext, def: ScheduleDefinition): CronLine {
  const env = { PI_CODING_AGENT_DIR: def.env.PI_CODING_AGENT_DIR ?? "", SUBAGENTS_DB: def.env.SUBAGENTS_DB ?? "" };
  return { name: def.name, cron: def.cron, command: def.command, env, log: logFile(ctx.agentDir, def.name) };
}

type ListRow = {
  name: string;
  cron: string;
  cwd?: string;
  args?: string[];
  inCrontab: boolean;
  definition: boolean;
  problem?: string;
  last?: ReturnType<Store["lastOfSchedule"]>;
};

function scheduleList(argv: string[]): number {
  const { values, positionals } = parse("schedule list", argv, parseOptions(SCHEDULE_LIST_FLAGS));
  if (values.help) {
    console.log(SCHEDULE_LIST_HELP);
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`schedule list: unexpected argument "${positionals[0]}".`);
  const ctx = cliContext(process.cwd());
  const { defs, broken } = listDefinitions(ctx.agentDir);
  const cron = cronProblem();
  let lines = new Map<string, string>();
  let tableError: string | undefined;
  try {
    lines = ourLines(readCrontab());
  } catch (err) {
    tableError = (err as Error).message;
  }
  const store = lastRuns(ctx);
  const rows: ListRow[] = defs.map((d) => ({
    name: d.name,
    cron: d.cron,
    cwd: d.cwd,
    args: d.args,
    inCrontab: lines.has(d.name),
    definition: true,
    last: store?.lastOfSchedule(d.name) ?? null,
  }));
  for (const b of broken)
    rows.push({ name: b.name, cron: "?", inCrontab: lines.has(b.name), definition: false, problem: b.why });
  for (const name of lines.keys())
    if (!rows.some((r) => r.name === name))
      rows.push({
        name,
        cron: lines.get(name)!.split(/\s+/).slice(0, 5).join(" "),
        inCrontab: true,
        definition: false,
        problem: `no definition file (${definitionFile(ctx.agentDir, name)}); its runs fail: subagents schedule rm ${name}`,
      });
  for (const r of rows)
    if (r.definition && !r.inCrontab && !r.problem)
      r.problem = tableError
        ? `crontab unreadable: ${tableError}`
        : `not in the crontab: it never runs (subagents schedule rm ${r.name}, then add it again)`;
  if (values.json) {
    for (const r of rows) console.log(JSON.stringify({ type: "schedule", ...r }));
    if (cron) console.log(JSON.stringify({ type: "cron", ok: false, detail: cron.detail, fix: cron.fix }));
    return EXIT.ok;
  }
  if (cron) console.log(`! ${cron.detail}\n  fix: ${cron.fix}`);
  if (!rows.length) {
    console.log('No schedules. Add one with: subagents schedule add NAME --cron "0 3 * * *" -- run AGENT "task"');
    return EXIT.ok;
  }
  for (const r of rows) {
    const last = r.last
      ? `last: ${r.last.errorCode === "SKIPPED" ? "skipped" : r.last.status} ${new Date(r.last.updatedAt).toISOString()} (session ${r.last.id})`
      : "not run yet";
    console.log(`${r.name}  ${r.cron}  ${r.args ? `subagents ${r.args.join(" ")}` : ""}`);
    if (r.cwd) console.log(`  in ${r.cwd} · ${last}`);
    if (r.problem) console.log(`  ! ${r.problem}`);
  }
  return EXIT.ok;
}

/** The store for last runs, or null when there is none yet (listing must not create it). */
function lastRuns(ctx: CliContext): Store | null {
  if (!fs.existsSync(dbPath(ctx))) return null;
  try {
    return openStore(ctx);
  } catch {
    return null;
  }
}

function scheduleRm(argv: string[]): number {
  const { values, positionals } = parse("schedule rm", argv, {});
  if (values.help) {
    console.log(SCHEDULE_RM_HELP);
    return EXIT.ok;
  }
  const name = checkName("rm", positionals[0]);
  const ctx = cliContext(process.cwd());
  const table = readCrontab();
  const file = definitionFile(ctx.agentDir, name);
  const inTable = ourLines(table).has(name);
  if (!inTable && !fs.existsSync(file))
    throw new UsageError(`schedule rm: no schedule "${name}" (subagents schedule list shows them).`);
  // What add wrote, rendered again: a line an older version wrote with a line break in it spans several lines.
  let written: string | undefined;
  try {
    const def = readDefinition(ctx.agentDir, name);
    if (def) written = formatLine(lineOf(ctx, def));
  } catch {
    // a broken definition: the tagged line alone goes
  }
  // The crontab first: a line without its definition would fail every time it fires.
  const without = withoutLine(table, name, written);
  if (without !== table) writeCrontab(without);
  fs.rmSync(file, { force: true });
  console.log(
    `schedule ${name} removed (its runs stay in the session store; its log ${logFile(ctx.agentDir, name)} is kept)`,
  );
  return EXIT.ok;
}

async function scheduleRun(argv: string[]): Promise<number> {
  const { values, positionals } = parse("schedule run", argv, parseOptions(SCHEDULE_RUN_FLAGS));
  if (values.help) {
    console.log(SCHEDULE_RUN_HELP);
    return EXIT.ok;
  }
  const name = checkName("run", positionals[0]);
  const ctx = cliContext(process.cwd());
  const def = readDefinition(ctx.agentDir, name);
  if (!def)
    throw new UsageError(
      `schedule run: no schedule "${name}" in ${path.dirname(definitionFile(ctx.agentDir, name))} (subagents schedule list shows them).`,
    );
  return fireSchedule(def, ctx.agentDir, !!values["from-cron"]);
}
