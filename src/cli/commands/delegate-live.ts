// `delegate` in the foreground: the call's tasks run under this process's owner, with live windows on a terminal,
// one plain line per state change otherwise, or JSONL with --json; each task's output is printed at the end.
import { waitingOf } from "../../control/running.ts";
import { startOwner } from "../../control/owner.ts";
import type { CapGuard } from "../../core/run/cap-guard.ts";
import { isolationLines } from "../../core/run/launch/isolation.ts";
import { runScheduled } from "../../core/run/scheduler.ts";
import { effectiveTimeout } from "../../core/run/task-choices.ts";
import { runTask } from "../../core/run/task.ts";
import type { Engine } from "../../core/run/engine.ts";
import type { TaskOutcome } from "../../core/run/task-types.ts";
import type { CallTaskInput } from "../../core/call/request.ts";
import { settleHooks } from "../../core/run/task-hooks.ts";
import { callWindows } from "../../ui/call-windows.ts";
import { endLines, finalFrame, startLine, totalsLine } from "../../ui/summary.ts";
import { isFinished } from "../../ui/windows.ts";
import { dataDir, type CliContext } from "../engine.ts";
import { EXIT } from "../errors.ts";
import { printOutputs } from "../terminal/ended-output.ts";
import { LiveDisplay } from "../terminal/live.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "../terminal/report.ts";
import { FORCED, STOPPING, trapSignals } from "../terminal/signals.ts";
import { colorStyle, streamWidth } from "../terminal/style.ts";
import { terminalAsker } from "../terminal/ask.ts";

export type LiveOptions = {
  json?: boolean;
  quiet?: boolean;
  "no-color"?: boolean;
  concurrency?: number;
  maxCost?: number;
};

export async function runLive(
  ctx: CliContext,
  engine: Engine,
  caps: CapGuard,
  inputs: CallTaskInput[],
  values: LiveOptions,
): Promise<number> {
  const owner = await startOwner(
    dataDir(ctx),
    "cli",
    inputs.map((t) => t.sessionId),
    { waiting: waitingOf(inputs) },
  );
  const json = !!values.json;
  const tty = !json && !values.quiet && !!process.stdout.isTTY;
  const out = json ? process.stderr : process.stdout;
  const style = colorStyle(out, values["no-color"]);
  const log = (line: string) => out.write(`${line}\n`);
  // Read when used: the terminal may be resized during the run.
  const width = () => streamWidth(out);
  const maxLines = engine.settings.maxLinesPerWindow;
  const windows = callWindows(engine, inputs, maxLines);
  const started = Date.now();
  const live = tty ? new LiveDisplay(() => windows.snapshot(Date.now(), maxLines).windows, { maxLines, style }) : null;
  // A forced stop (second Ctrl-C) exits from inside the signal handler: tasks still running are drawn cancelled.
  const forcedViews = () =>
    windows
      .snapshot(Date.now(), maxLines)
      .windows.map((v) => (isFinished(v.status) ? v : { ...v, status: "cancelled" as const }));
  const interrupt = trapSignals({
    onStop: () => (live ? live.setNote(STOPPING) : process.stderr.write(`${STOPPING}\n`)),
    onForce: () => {
      if (live) live.stop(finalFrame(forcedViews(), width(), style));
      else process.stderr.write(`${FORCED}\n`);
    },
  });
  live?.start();
  // Children's questions go to the person at this terminal; without one they are answered "no one can answer now".
  // Given to the owner's runner, which also lets `subagents answer` from another terminal answer them.
  const ask = terminalAsker({ tty, frame: live });
  let outcomes: TaskOutcome[];
  try {
    const run = caps.runner(
      engine.settings,
      owner.wrap(
        (input, hooks) => runTask(engine, input, hooks),
        (t) => effectiveTimeout(engine, t),
      ),
    );
    outcomes = await runScheduled(
      inputs,
      values.concurrency ?? engine.settings.concurrency,
      (input, hooks) => run(input, { ...hooks, ask }),
      {
        rateLimitWaitSec: engine.settings.rateLimitWait,
        maxMessages: engine.settings.maxMessages,
        signal: interrupt.signal,
        maxCost: values.maxCost,
        onTaskStart: (i) => {
          windows.start(i, Date.now());
          if (json)
            writeJson({
              type: "task_start",
              task: inputs[i].name,
              sessionId: inputs[i].sessionId,
              agent: inputs[i].profile ?? "default",
            });
          else if (!tty && !values.quiet) log(startLine(inputs[i].name, inputs[i].profile, inputs[i].sessionId, style));
        },
        onTaskWarnings: (i, warnings) => {
          windows.warn(i, warnings);
          if (!tty && !json && !values.quiet) for (const w of warnings) log(`  ⚠ ${inputs[i].name}: ${w}`);
        },
        onTaskEvent: (i, state, ev) => {
          windows.event(i, state);
          if (json) {
            const line = jsonEvent(inputs[i].name, inputs[i].sessionId, ev);
            if (line) writeJson(line);
          }
        },
        onTaskEnd: (i, outcome) => {
          windows.end(i, outcome, Date.now());
          if (json) writeJson(taskEndEvent(outcome));
          else if (!tty && !values.quiet) for (const l of endLines(windows.views[i], width(), style)) log(l);
        },
      },
    );
    // The tasks' end hooks run on (bounded by subagents.hooks.timeout); a forced stop ends them.
    await settleHooks(engine);
  } finally {
    live?.stop(finalFrame(windows.snapshot(Date.now(), maxLines).windows, width(), style));
    interrupt.dispose();
    owner.close();
  }
  if (json) writeJson(summaryEvent(outcomes));
  else {
    for (const l of isolationLines(outcomes)) log(l);
    // Plain mode printed each end as it happened; --quiet prints them now, the terminal did in its last frame.
    if (values.quiet) for (const v of windows.views) for (const l of endLines(v, width(), style)) log(l);
    printOutputs(outcomes, width(), style, log);
    log("");
    log(totalsLine(windows.views, Date.now() - started, style));
  }
  const failed = outcomes.some((o) => o.result.status !== "completed");
  return interrupt.exitCode() ?? (failed ? EXIT.taskFailed : EXIT.ok);
}
