// `subagents run AGENT "task"`: one sub-agent, progress on stderr (or JSONL with --json), result on stdout.
import * as fs from "node:fs";
import * as path from "node:path";
import { rateLimitLine, toolCallLine } from "../../core/run/process/activity.ts";
import { isolationLines } from "../../core/run/launch/isolation.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import { effectiveTimeout } from "../../core/run/task-choices.ts";
import { runTask } from "../../core/run/task.ts";
import { settleHooks } from "../../core/run/task-hooks.ts";
import { prepareCall } from "../../core/call/prepare.ts";
import type { CallDefaults, CallRequest } from "../../core/call/request.ts";
import { callDefaults, cliFront, refusalError } from "../flags/call-flags.ts";
import { GATE_OPTIONS } from "../flags/gate-flags.ts";
import type { ChildEvent } from "../../core/types.ts";
import { CallWindows } from "../../ui/call-windows.ts";
import { endLines, startLine } from "../../ui/summary.ts";
import { clip, sanitizeLine } from "../../ui/text-width.ts";
import { displayLines } from "../../ui/windows.ts";
import { parse, requireProfile } from "../flags/args.ts";
import { buildEngine, cliContext, dataDir } from "../engine.ts";
import { startOwner } from "../../control/owner.ts";
import { startBackground } from "../background/start.ts";
import { EXIT, UsageError } from "../errors.ts";
import { RUN_HELP } from "../help.ts";
import { ENGINE_OPTIONS } from "../flags/runner-flags.ts";
import { BUDGET_OPTIONS } from "../flags/budget-flags.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "../terminal/report.ts";
import { FORCED, STOPPING, trapSignals } from "../terminal/signals.ts";
import { colorStyle, streamWidth } from "../terminal/style.ts";
import { terminalAsker } from "../terminal/ask.ts";

function readTask(raw: string): string {
  if (raw !== "-") return raw;
  // On a terminal `-` would wait without a word: say what it waits for.
  if (process.stdin.isTTY) process.stderr.write("Reading the task from standard input; finish with Ctrl-D.\n");
  try {
    return fs.readFileSync(0, "utf8");
  } catch (err) {
    throw new UsageError(`run: cannot read the task from standard input: ${(err as Error).message}`);
  }
}

export async function cmdRun(argv: string[]): Promise<number> {
  const { values, positionals } = parse("run", argv, {
    session: { type: "string" },
    cwd: { type: "string" },
    model: { type: "string" },
    timeout: { type: "string" },
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
    "no-color": { type: "boolean" },
    background: { type: "boolean" },
    isolation: { type: "string" },
    ...GATE_OPTIONS,
    ...ENGINE_OPTIONS,
    ...BUDGET_OPTIONS,
  });
  if (values.help) {
    console.log(RUN_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 2)
    throw new UsageError(
      `run: expected AGENT and "task" (got ${positionals.length} argument${positionals.length === 1 ? "" : "s"}). See 'subagents help run'.`,
    );
  const [agent, rawTask] = positionals;
  const cwd = path.resolve(values.cwd ?? process.cwd());
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`run: --cwd ${cwd} is not a directory.`);
  const defaults = callDefaults("run", cwd, values);

  const ctx = cliContext(cwd);
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  const engine = buildEngine(ctx, cwd);
  // Refusals before anything starts are usage errors (exit 2), the same as in `delegate`.
  if (!values.session) requireProfile("run", agent, engine);
  const task = readTask(rawTask);
  if (!task.trim()) throw new UsageError("run: the task is empty.");

  const json = !!values.json;
  const progress = !json && !values.quiet;
  const style = colorStyle(process.stderr, values["no-color"]);
  const width = streamWidth(process.stderr);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const name = agent;
  const request = runRequest(agent, task, defaults, values);
  const prepared = await prepareCall(
    engine,
    request,
    cliFront("run", engine, new CapGuard(undefined, "this invocation"), values.fork),
  );
  if ("refusal" in prepared) throw refusalError("run", prepared.refusal);
  const [input] = prepared.inputs;
  // The id is chosen before the child starts so the owner can list it (wait/steer from elsewhere).
  let sessionId = input.sessionId;
  const timeoutSec = defaults.timeout;
  if (values.background) return startBackground(ctx, { cwd, inputs: [input] }, json);
  const owner = await startOwner(dataDir(ctx), "cli", [sessionId]);
  const interrupt = trapSignals({
    onStop: () => say(style.yellow(STOPPING)),
    onForce: () => say(style.yellow(FORCED)),
  });
  let windows: CallWindows | null = null;
  // Children's questions go to the person at this terminal (stderr carries the progress lines here).
  const ask = terminalAsker({ tty: progress && !!process.stderr.isTTY, out: process.stderr });
  const outcome = await owner.wrap(
    (i, h) => runTask(engine, i, h),
    (t) => effectiveTimeout(engine, t),
  )(input, {
    signal: interrupt.signal,
    ask,
    onStart: (info) => {
      sessionId = info.sessionId;
      windows = new CallWindows(
        [{ name, sessionId, profile: info.agent, timeoutSec: timeoutSec ?? engine.settings.timeout }],
        0,
      );
      windows.start(0, Date.now());
      if (json) writeJson({ type: "task_start", task: name, sessionId, agent: info.agent });
      else if (progress) {
        say(startLine(name, info.agent, sessionId, style));
        for (const w of info.warnings) say(style.yellow(clip(`  ⚠ ${sanitizeLine(w)}`, width)));
      }
    },
    onEvent: (state, ev) => {
      windows?.event(0, state);
      if (json) {
        const line = jsonEvent(name, sessionId, ev);
        if (line) writeJson(line);
      } else if (progress) for (const line of activityLines(ev)) say(style.dim(clip(`  ${line}`, width)));
    },
  });
  // Its end hooks run on (bounded by subagents.hooks.timeout); a forced stop ends them.
  await settleHooks(engine);
  interrupt.dispose();
  owner.close();
  const r = outcome.result;
  if (json) {
    writeJson(taskEndEvent(outcome));
    writeJson(summaryEvent([outcome]));
  } else {
    if (r.output) process.stdout.write(r.output.endsWith("\n") ? r.output : `${r.output}\n`);
    const w =
      windows ?? new CallWindows([{ name, sessionId: outcome.sessionId, profile: outcome.agent, timeoutSec: 0 }], 0);
    w.end(0, outcome, Date.now());
    if (!windows) w.views[0].elapsedMs = r.durationMs;
    for (const line of endLines(w.views[0], width, style)) say(line);
    for (const line of isolationLines([outcome])) say(line);
  }
  return interrupt.exitCode() ?? (r.status === "completed" ? EXIT.ok : EXIT.taskFailed);
}

/** `run AGENT "task"` as the call module's request: one task named for its agent ("default": pi's defaults). */
export function runRequest(
  agent: string,
  task: string,
  defaults: CallDefaults,
  o: { session?: string; background?: boolean },
): CallRequest {
  const t = {
    name: agent,
    prompt: task,
    ...(agent === "default" ? {} : { profile: agent }),
    ...(o.session ? { resume: o.session } : {}),
  };
  return { tasks: [t], defaults, background: !!o.background };
}

/** The lines a window would gain from one event, for `run`'s line-by-line progress. */
function activityLines(ev: ChildEvent): string[] {
  if (ev.type === "tool_start" && ev.name !== "subagent_finalize")
    return [sanitizeLine(toolCallLine(ev.name, ev.args))];
  if (ev.type === "rate_limit") return [rateLimitLine(ev.status, ev.retryAfterMs)];
  if (ev.type === "retry")
    return displayLines([
      `↻ retry ${ev.attempt}/${ev.maxAttempts} in ${Math.round(ev.delayMs / 1000)}s: ${sanitizeLine(ev.errorMessage)}`,
    ]);
  return [];
}
