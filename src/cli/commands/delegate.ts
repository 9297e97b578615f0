// `subagents delegate "task" ["task" …]`: several sub-agents in parallel, with live windows on a terminal,
// one plain line per state change otherwise, or JSONL with --json; each task's output is printed at the end.
import * as fs from "node:fs";
import { parse as parseYaml } from "yaml";
import type { CallRequest } from "../../core/call/request.ts";
import { delegateFlow } from "../../core/call/tools/delegate.ts";
import { MAX_TASKS, type DelegateParams } from "../../core/delegate-input.ts";
import { DEFAULT_AGENT } from "../../core/run/task-types.ts";
import type { FileSpec } from "../../core/files.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import { parse, positiveNumber, requireProfile, workingFolder } from "../flags/args.ts";
import { DELEGATE_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { startBackground } from "../background/start.ts";
import { totalCostFlag } from "../flags/budget-flags.ts";
import { callDefaults, cliFront, refusalError } from "../flags/call-flags.ts";
import { buildEngine, cliContext, type CliContext } from "../engine.ts";
import { ConfigError, EXIT, UsageError } from "../errors.ts";
import { terminalConsent } from "../terminal/ask.ts";
import { DELEGATE_HELP } from "../help.ts";
import { runLive } from "./delegate-live.ts";

function readTasksFile(source: string): unknown {
  let text: string;
  try {
    text = source === "-" ? fs.readFileSync(0, "utf8") : fs.readFileSync(source, "utf8");
  } catch (err) {
    throw new UsageError(`delegate: cannot read --tasks ${source}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    // YAML reads JSON too, but JSON's own message is the clearer one for a file that was meant as JSON.
    if (/^\s*[[{]/.test(text))
      throw new UsageError(`delegate: --tasks ${source} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new UsageError(`delegate: --tasks ${source} is not valid JSON or YAML: ${(err as Error).message}`);
  }
}

export const DELEGATE_OPTIONS = parseOptions(DELEGATE_FLAGS);

export type DelegateValues = ReturnType<typeof parse<typeof DELEGATE_OPTIONS>>["values"];

/** The tasks document the command line gives: `--tasks FILE` (or `-`), else one task per argument. */
export function tasksDocument(values: DelegateValues, positionals: string[]): unknown {
  if (values.tasks !== undefined) {
    if (positionals.length) throw new UsageError("delegate: give tasks either as arguments or with --tasks, not both.");
    return readTasksFile(values.tasks);
  }
  if (!positionals.length)
    throw new UsageError('delegate: no task given. Example: subagents delegate "summarize README.md" "list the TODOs"');
  if (positionals.length > MAX_TASKS)
    throw new UsageError(`delegate: ${positionals.length} tasks given; at most ${MAX_TASKS} tasks per call.`);
  const names = values.name ?? [];
  if (names.length > positionals.length)
    throw new UsageError(`delegate: ${names.length} --name flags for ${positionals.length} tasks.`);
  if (values.resume && positionals.length !== 1)
    throw new UsageError("delegate: --resume continues one session: give exactly one task with it.");
  const files: FileSpec[] | undefined = values.file?.length ? values.file : undefined;
  return {
    tasks: positionals.map((prompt, i) => ({
      name: names[i] ?? `task-${i + 1}`,
      prompt,
      ...(files ? { files } : {}),
      ...(values.resume ? { resume: values.resume } : {}),
    })),
  };
}

/** The command line's flags for the call, read (and refused when wrong) before anything else is done. */
export type CallFlags = ReturnType<typeof callFlags>;

export function callFlags(values: DelegateValues, cwd: string) {
  const concurrency = positiveNumber("delegate", "concurrency", values.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency <= MAX_TASKS)) {
    throw new UsageError(
      `delegate: --concurrency must be a whole number from 1 to ${MAX_TASKS} (got "${values.concurrency}").`,
    );
  }
  return {
    defaults: callDefaults("delegate", cwd, values),
    profile: values.profile,
    maxCost: totalCostFlag("delegate", values["max-total-cost"]),
    background: !!values.background,
    concurrency,
  };
}

/** The call's profile: `--profile`, else the document's ("default": pi's defaults, no agent named). */
function callProfile(flags: CallFlags, params: DelegateParams): string | undefined {
  const profile = flags.profile ?? params.profile;
  return profile && profile !== DEFAULT_AGENT ? profile : undefined;
}

/** The call's request: the document's tasks, with the command line's flags as the call's defaults (a flag wins over
 *  the document's call-level profile and maxCost). */
export function cliRequest(flags: CallFlags, params: DelegateParams): CallRequest {
  const profile = callProfile(flags, params);
  return {
    tasks: params.tasks,
    defaults: { ...flags.defaults, ...(profile ? { profile } : {}) },
    maxCost: flags.maxCost ?? params.maxCost,
    background: flags.background,
    concurrency: flags.concurrency,
  };
}

export async function cmdDelegate(argv: string[]): Promise<number> {
  const { values, positionals } = parse("delegate", argv, DELEGATE_OPTIONS);
  if (values.help) {
    console.log(DELEGATE_HELP);
    return EXIT.ok;
  }
  const cwd = workingFolder("delegate", values.cwd);
  // Read first: a bad command line is said before anything else is looked at.
  const flags = callFlags(values, cwd);
  return runDelegate(cliContext(cwd), "delegate", values, flags, tasksDocument(values, positionals));
}

/**
 * A delegate call (or a workflow's: `document` is then `{workflow}`) through the tool's flow (core/call/tools/), with
 * this command line as its front: its flags in the request, this invocation's caps, the person at the terminal
 * asked before a project workflow runs (nobody without one), then handed to a background supervisor or run here
 * live. A refusal is a usage error (exit 2).
 */
export async function runDelegate(
  ctx: CliContext,
  command: "delegate" | "flow",
  values: DelegateValues,
  flags: CallFlags,
  document: unknown,
): Promise<number> {
  const { cwd } = flags.defaults;
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  // The session caps hold per invocation here (and per supervisor for --background, admitted again there).
  const caps = new CapGuard(undefined, "this invocation");
  let profile: string | undefined;
  const run = await delegateFlow<number>(document, {
    cwd,
    engine: () => buildEngine(ctx, cwd),
    consent: { cwd, ...terminalConsent(!!values.json) },
    request: (params) => {
      profile = callProfile(flags, params);
      return cliRequest(flags, params);
    },
    prepare: (engine) => {
      // A profile for the whole call fails up front like `run typo`; a task's own unknown profile fails that task.
      if (profile) requireProfile(command, profile, engine);
      return cliFront(command, engine, caps, values.fork);
    },
    start: async (engine, call, background) => ({
      running: background
        ? await startBackground(ctx, command, { cwd, call }, !!values.json)
        : await runLive(ctx, engine, caps, call, values, command),
    }),
  });
  if (!("refusal" in run)) return run.running;
  if (run.refusal.stage === "engine") throw new ConfigError(run.refusal.reason);
  throw refusalError(command, { code: run.refusal.code, message: run.refusal.reason });
}
