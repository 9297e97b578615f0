// `subagents run AGENT "task"`: one sub-agent, progress on stderr (or JSONL with --json), result on stdout.
import { DEFAULT_AGENT } from "../../core/run/task-types.ts";
import * as fs from "node:fs";
import { rateLimitLine, retryLine, toolCallLine } from "../../core/run/process/activity.ts";
import { isolationLines } from "../../core/run/launch/isolation.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import { prepareCall } from "../../core/call/prepare.ts";
import type { CallDefaults, CallRequest } from "../../core/call/request.ts";
import { callDefaults, cliFront, refusalError } from "../flags/call-flags.ts";
import type { ChildEvent } from "../../core/types.ts";
import { callWindows } from "../../ui/call-windows.ts";
import { endLines, startLine } from "../../ui/summary.ts";
import { clip, sanitizeLine } from "../../ui/text-width.ts";
import { displayLines, warningLine } from "../../ui/windows.ts";
import { parse, requireProfile, workingFolder } from "../flags/args.ts";
import { buildEngine, cliContext } from "../engine.ts";
import { runForeground } from "../run-call.ts";
import { startBackground } from "../background/start.ts";
import { EXIT, exitForOutcomes, UsageError, unrecordedLines } from "../errors.ts";
import { RUN_HELP } from "../help.ts";
import { RUN_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "../terminal/report.ts";
import { FORCED, STOPPING } from "../terminal/signals.ts";
import { colorStyle, resultText, streamWidth } from "../terminal/style.ts";
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
  const { values, positionals } = parse("run", argv, parseOptions(RUN_FLAGS));
  if (values.help) {
    console.log(RUN_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 2)
    throw new UsageError(
      `run: expected AGENT and "task" (got ${positionals.length} argument${positionals.length === 1 ? "" : "s"}). See 'subagents help run'.`,
    );
  const [agent, rawTask] = positionals;
  const cwd = workingFolder("run", values.cwd);
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
  const caps = new CapGuard(undefined, "this invocation");
  const prepared = await prepareCall(
    engine,
    runRequest(agent, task, defaults, values),
    cliFront("run", engine, caps, values.fork),
  );
  if ("refusal" in prepared) throw refusalError("run", prepared.refusal);
  const { call } = prepared;
  if (values.background) return startBackground(ctx, "run", { cwd, call }, json);
  const [input] = call.tasks;
  const name = input.name;
  const windows = callWindows(ctx, call.tasks, 0);
  const { outcomes, interrupted } = await runForeground(ctx, engine, call, {
    command: "run",
    caps,
    // Children's questions go to the person at this terminal (stderr carries the progress lines here).
    ask: terminalAsker({ tty: progress && !!process.stderr.isTTY, out: process.stderr }),
    onStop: () => say(style.yellow(STOPPING)),
    onForce: () => say(style.yellow(FORCED)),
    onEvent: (e) => {
      windows.apply(e, Date.now());
      if (e.type === "taskStart") {
        if (json) writeJson({ type: "task_start", task: name, sessionId: input.sessionId, agent: input.agent });
        else if (progress) say(startLine(name, input.agent, input.sessionId, style));
      } else if (e.type === "taskWarnings") {
        if (progress) for (const w of e.warnings) say(warningLine(w, width, style));
      } else if (e.type === "taskProgress") {
        const line = json ? jsonEvent(name, input.sessionId, e.event) : null;
        if (line) writeJson(line);
        else if (progress) for (const l of activityLines(e.event)) say(style.dim(clip(`  ${l}`, width)));
      }
    },
  });
  const [outcome] = outcomes;
  const r = outcome.result;
  if (json) {
    writeJson(taskEndEvent(outcome));
    writeJson(summaryEvent([outcome]));
  } else {
    if (r.output) process.stdout.write(resultText(process.stdout, r.output));
    // Warnings printed as it started are not printed again; those of its end (an output cut, a model that fell
    // back) are.
    for (const line of endLines(windows.views[0], width, style, progress ? windows.startWarnings[0] : [])) say(line);
    for (const line of isolationLines([outcome])) say(line);
  }
  // --json keeps stdout for JSON: a result that is not in the store is still said on screen.
  if (json) for (const line of unrecordedLines([outcome])) say(line);
  return interrupted ?? exitForOutcomes([outcome]);
}

/** `run AGENT "task"` as the call module's request: one task, named for its agent unless `--name` names it ("default":
 *  pi's defaults). */
export function runRequest(
  agent: string,
  task: string,
  defaults: CallDefaults,
  o: { session?: string; background?: boolean; name?: string },
): CallRequest {
  const t = {
    name: o.name?.trim() || agent,
    prompt: task,
    ...(agent === DEFAULT_AGENT ? {} : { profile: agent }),
    ...(o.session ? { resume: o.session } : {}),
  };
  return { tasks: [t], defaults, background: !!o.background };
}

/** The lines a window would gain from one event, for `run`'s line-by-line progress. */
function activityLines(ev: ChildEvent): string[] {
  if (ev.type === "tool_start" && ev.name !== "subagent_finalize")
    return [sanitizeLine(toolCallLine(ev.name, ev.args))];
  if (ev.type === "rate_limit") return [rateLimitLine(ev.status, ev.retryAfterMs)];
  if (ev.type === "retry") return displayLines([retryLine({ ...ev, errorMessage: sanitizeLine(ev.errorMessage) })]);
  return [];
}
