// `subagents delegate "task" ["task" …]`: several sub-agents in parallel, with live windows on a terminal,
// one plain line per state change otherwise, or JSONL with --json; each task's output is printed at the end.
import * as fs from "node:fs";
import { parse as parseYaml } from "yaml";
import { prepareCall } from "../../core/call/prepare.ts";
import type { CallRequest } from "../../core/call/request.ts";
import { MAX_TASKS, parseDelegateParams, type DelegateParams } from "../../core/delegate-input.ts";
import { InputError } from "../../core/task-fields.ts";
import type { FileSpec } from "../../core/files.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import { parse, positiveNumber, requireProfile, workingFolder } from "../flags/args.ts";
import { DELEGATE_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { startBackground } from "../background/start.ts";
import { totalCostFlag } from "../flags/budget-flags.ts";
import { callDefaults, cliFront, refusalError } from "../flags/call-flags.ts";
import { buildEngine, cliContext, type CliContext } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
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

/** `flow` (flow.ts): the call's tasks document comes from a saved workflow, read from the call's folder; null:
 *  nothing to run (the workflows were listed). */
export type FlowSource = (cwd: string) => Record<string, unknown> | null;

export const DELEGATE_OPTIONS = parseOptions(DELEGATE_FLAGS);

export type DelegateValues = ReturnType<typeof parse<typeof DELEGATE_OPTIONS>>["values"];

/** The command line as the call module's request (null: nothing to run, e.g. `flow` listed the workflows). */
export function delegateRequest(
  values: DelegateValues,
  positionals: string[],
  flow?: FlowSource,
): { request: CallRequest; profileFlag?: string } | null {
  const shellCwd = workingFolder("delegate", values.cwd);
  const defaults = callDefaults("delegate", shellCwd, values);
  const concurrencyFlag = positiveNumber("delegate", "concurrency", values.concurrency);
  if (concurrencyFlag !== undefined && !(Number.isInteger(concurrencyFlag) && concurrencyFlag <= MAX_TASKS)) {
    throw new UsageError(
      `delegate: --concurrency must be a whole number from 1 to ${MAX_TASKS} (got "${values.concurrency}").`,
    );
  }

  let params: DelegateParams;
  const preset = flow?.(shellCwd);
  if (preset === null) return null;
  try {
    if (preset) {
      if (values.tasks !== undefined)
        throw new UsageError("flow: --tasks does not apply: the workflow gives the tasks.");
      params = parseDelegateParams(preset);
    } else if (values.tasks !== undefined) {
      if (positionals.length)
        throw new UsageError("delegate: give tasks either as arguments or with --tasks, not both.");
      params = parseDelegateParams(readTasksFile(values.tasks));
    } else {
      if (!positionals.length)
        throw new UsageError(
          'delegate: no task given. Example: subagents delegate "summarize README.md" "list the TODOs"',
        );
      if (positionals.length > MAX_TASKS)
        throw new UsageError(`delegate: ${positionals.length} tasks given; at most ${MAX_TASKS} tasks per call.`);
      const names = values.name ?? [];
      if (names.length > positionals.length)
        throw new UsageError(`delegate: ${names.length} --name flags for ${positionals.length} tasks.`);
      if (values.resume && positionals.length !== 1)
        throw new UsageError("delegate: --resume continues one session: give exactly one task with it.");
      const files: FileSpec[] | undefined = values.file?.length ? values.file : undefined;
      params = parseDelegateParams({
        tasks: positionals.map((prompt, i) => ({
          name: names[i] ?? `task-${i + 1}`,
          prompt,
          ...(files ? { files } : {}),
          ...(values.resume ? { resume: values.resume } : {}),
        })),
      });
    }
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(`delegate: ${err.message}`);
    throw err;
  }
  const profileFlag = values.profile ?? params.profile;
  const request: CallRequest = {
    tasks: params.tasks,
    defaults: { ...defaults, ...(profileFlag && profileFlag !== "default" ? { profile: profileFlag } : {}) },
    maxCost: totalCostFlag("delegate", values["max-total-cost"]) ?? params.maxCost,
    background: !!values.background,
    concurrency: concurrencyFlag,
  };
  return { request, profileFlag };
}

export async function cmdDelegate(argv: string[]): Promise<number> {
  const { values, positionals } = parse("delegate", argv, DELEGATE_OPTIONS);
  if (values.help) {
    console.log(DELEGATE_HELP);
    return EXIT.ok;
  }
  const read = delegateRequest(values, positionals)!;
  return runDelegate(cliContext(read.request.defaults.cwd), read, values);
}

/** A delegate call (or a workflow's) from its request: prepared under this invocation's caps, then handed to a
 *  background supervisor or run here live. */
export async function runDelegate(
  ctx: CliContext,
  { request, profileFlag }: { request: CallRequest; profileFlag?: string },
  values: DelegateValues,
): Promise<number> {
  const shellCwd = request.defaults.cwd;
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  const engine = buildEngine(ctx, shellCwd);
  // A profile for the whole call fails up front like `run typo`; a task's own unknown profile fails that task only.
  if (profileFlag) requireProfile("delegate", profileFlag, engine);
  // The session caps hold per invocation here (and per supervisor for --background, admitted again there).
  const caps = new CapGuard(undefined, "this invocation");
  const prepared = await prepareCall(engine, request, cliFront("delegate", engine, caps, values.fork));
  if ("refusal" in prepared) throw refusalError("delegate", prepared.refusal);
  if (request.background)
    return startBackground(ctx, "delegate", { cwd: shellCwd, call: prepared.call }, !!values.json);
  return runLive(ctx, engine, caps, prepared.call, values);
}
