// `subagents doctor [--json]`: one line per check, ✓ fine, ! worth knowing, ✗ broken (with its fix).
// Exit 0 when nothing is ✗, 1 otherwise, so scripts and CI can gate on it. Never prints a secret.
import { DOCTOR_FLAGS } from "../flags/command-flags.ts";
import * as path from "node:path";
import { parse } from "../flags/args.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import {
  childPiCheck,
  databaseCheck,
  extensionCheck,
  modelCheck,
  profilesCheck,
  settingsCheck,
  terminalCheck,
  versionCheck,
  type Check,
} from "../doctor/checks.ts";
import { cliContext } from "../engine.ts";
import { runnerCheck, sandboxCheck } from "../doctor/engines.ts";
import { runtimesCheck } from "../doctor/runtimes.ts";
import { worktreesCheck } from "../doctor/worktrees.ts";
import { applyCheck } from "../doctor/apply.ts";
import { modelsCheck } from "../doctor/models.ts";
import { schedulesCheck } from "../doctor/schedules.ts";
import { mcpCheck } from "../doctor/mcp.ts";
import { EXIT, UsageError } from "../errors.ts";

export const DOCTOR_HELP = `Usage: subagents doctor [--cwd DIR] [--json]

Checks the setup, one line each: ✓ fine, ! worth knowing, ✗ broken (followed by how to fix it).
  version     this executable, the pi inside it, the commit it was built from
  children    which pi sub-agents run
  model       pi's default model and whether its provider has credentials (never printed)
  models      every model the setup names (default, agents', fallbacks) against the children's pi --list-models
  database    the session database: writable, schema version, size, SQLite's integrity check
  extension   the pi extension in pi's agent dir, and whether it matches this binary (binary: which one
              sub-agents inside pi use)
  profiles    agent folders found, profile files with errors
  runtime     the CLI of each other harness agents run on (runtime: codex, ...): found on PATH, or what to install
  settings    the subagents section of settings.json
  sandbox     whether bubblewrap (or sandbox-exec) can start a sandbox here
  runner      where children run (subagents.runner) and whether docker or Slurm answers
  worktrees   how isolated tasks see a repository's ignored folders (node_modules, .venv): an overlay,
              copy-on-write clones or a copy, and which folders that is here
  apply       a \`subagents apply\` stopped midway in this repository: what it left, how to finish or undo it
  schedules   cron for \`subagents schedule\` (the crontab command, a running daemon) and each schedule's line
  mcp         \`subagents mcp\` starts and answers an MCP client's initialize and tools/list
  terminal    live-window support: terminal, colour, UTF-8

${optionsBlock(DOCTOR_FLAGS)}

Exit codes: 0 nothing broken, 1 at least one ✗, 2 usage error.`;

const MARK = { ok: "✓", warn: "!", fail: "✗" } as const;

export async function cmdDoctor(argv: string[]): Promise<number> {
  const { values, positionals } = parse("doctor", argv, parseOptions(DOCTOR_FLAGS));
  if (values.help) {
    console.log(DOCTOR_HELP);
    return EXIT.ok;
  }
  if (positionals.length)
    throw new UsageError(`doctor: unexpected argument "${positionals[0]}". See 'subagents doctor --help'.`);
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const ctx = cliContext(cwd);
  const checks: Check[] = [
    versionCheck(),
    childPiCheck(cwd),
    modelCheck(ctx, cwd),
    modelsCheck(ctx, cwd),
    databaseCheck(ctx),
    ...extensionCheck(ctx),
    profilesCheck(ctx, cwd),
    ...runtimesCheck(ctx, cwd),
    settingsCheck(ctx),
    sandboxCheck(ctx),
    await runnerCheck(ctx),
    // It tries a mount and a clone in the data folder: one this user cannot write is said, not a crash of doctor.
    await worktreesCheck(ctx, cwd).catch(
      (err): Check => ({
        name: "worktrees",
        status: "warn",
        detail: `cannot try how isolated tasks see ignored folders here: ${(err as Error).message}`,
      }),
    ),
    await applyCheck(cwd),
    schedulesCheck(ctx),
    mcpCheck(cwd),
    terminalCheck(process.env, process.stdout),
  ];
  const healthy = !checks.some((c) => c.status === "fail");
  if (values.json) {
    console.log(JSON.stringify({ ok: healthy, checks }));
  } else {
    for (const c of checks) {
      console.log(`${MARK[c.status]} ${c.name.padEnd(10)} ${c.detail}`);
      if (c.fix && c.status !== "ok") console.log(`  ${" ".repeat(10)} fix: ${c.fix}`);
    }
  }
  return healthy ? EXIT.ok : EXIT.taskFailed;
}
