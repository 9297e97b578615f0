// `delegate` in the foreground: the call's tasks run under this process's owner, with live windows on a terminal,
// one plain line per state change otherwise, or JSONL with --json; each task's output is printed at the end.
import type { PreparedCall } from "../../core/call/prepare.ts";
import type { CallEvent } from "../../core/call/runner.ts";
import type { CapGuard } from "../../core/run/cap-guard.ts";
import type { Engine } from "../../core/run/engine.ts";
import { isolationLines } from "../../core/run/launch/isolation.ts";
import type { TaskOutcome } from "../../core/run/task-types.ts";
import { callWindows } from "../../ui/call-windows.ts";
import { endLines, finalFrame, startLine, totalsLine } from "../../ui/summary.ts";
import { sanitizeLine } from "../../ui/text-width.ts";
import { isFinished } from "../../ui/windows.ts";
import type { CliContext } from "../engine.ts";
import { exitForOutcomes, unrecordedLines } from "../errors.ts";
import { runForeground } from "../run-call.ts";
import { printOutputs } from "../terminal/ended-output.ts";
import { LiveDisplay } from "../terminal/live.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "../terminal/report.ts";
import { FORCED, STOPPING } from "../terminal/signals.ts";
import { colorStyle, streamWidth } from "../terminal/style.ts";
import { terminalAsker } from "../terminal/ask.ts";

export type LiveOptions = {
  json?: boolean;
  quiet?: boolean;
  "no-color"?: boolean;
};

export async function runLive(
  ctx: CliContext,
  engine: Engine,
  caps: CapGuard,
  call: PreparedCall,
  values: LiveOptions,
  command = "delegate",
): Promise<number> {
  const tasks = call.tasks;
  const json = !!values.json;
  const tty = !json && !values.quiet && !!process.stdout.isTTY;
  const out = json ? process.stderr : process.stdout;
  const style = colorStyle(out, values["no-color"]);
  const log = (line: string) => out.write(`${line}\n`);
  // Read when used: the terminal may be resized during the run.
  const width = () => streamWidth(out);
  // Shown by this command's settings: the engine is what the call runs on.
  const maxLines = ctx.settings.maxLinesPerWindow;
  const windows = callWindows(ctx, tasks, maxLines);
  const started = Date.now();
  const live = tty ? new LiveDisplay(() => windows.snapshot(Date.now(), maxLines).windows, { maxLines, style }) : null;
  // A forced stop (second Ctrl-C) exits from inside the signal handler: tasks still running are drawn cancelled.
  const forcedViews = () =>
    windows
      .snapshot(Date.now(), maxLines)
      .windows.map((v) => (isFinished(v.status) ? v : { ...v, status: "cancelled" as const }));
  const plain = !tty && !json && !values.quiet;
  const render = (e: CallEvent) => {
    windows.apply(e, Date.now());
    if (e.type === "taskStart") {
      const t = tasks[e.index];
      if (json) writeJson({ type: "task_start", task: t.name, sessionId: t.sessionId, agent: t.agent });
      else if (plain) log(startLine(t.name, t.agent, t.sessionId, style));
    } else if (e.type === "taskWarnings") {
      if (plain) for (const w of e.warnings) log(`  ⚠ ${sanitizeLine(`${tasks[e.index].name}: ${w}`)}`);
    } else if (e.type === "taskProgress") {
      const line = json ? jsonEvent(tasks[e.index].name, tasks[e.index].sessionId, e.event) : null;
      if (line) writeJson(line);
    } else if (e.type === "taskEnd") {
      if (json) writeJson(taskEndEvent(e.outcome));
      else if (plain)
        for (const l of endLines(windows.views[e.index], width(), style, windows.startWarnings[e.index])) log(l);
    }
  };
  live?.start();
  let ran: { outcomes: TaskOutcome[]; interrupted: number | null };
  try {
    ran = await runForeground(ctx, engine, call, {
      command,
      caps,
      // Children's questions go to the person at this terminal; without one they are answered "no one can answer
      // now". The owner also lets `subagents answer` from another terminal answer them.
      ask: terminalAsker({ tty, frame: live }),
      onEvent: render,
      onStop: () => (live ? live.setNote(STOPPING) : process.stderr.write(`${STOPPING}\n`)),
      onForce: () => {
        if (!live) return process.stderr.write(`${FORCED}\n`);
        // The same last lines as a stop that ran its course: the frame, then the totals (outputs are not waited for).
        const views = forcedViews();
        live.stop(finalFrame(views, width(), style));
        log("");
        log(totalsLine(views, Date.now() - started, style));
      },
    });
  } finally {
    live?.stop(finalFrame(windows.snapshot(Date.now(), maxLines).windows, width(), style));
  }
  const { outcomes } = ran;
  if (json) writeJson(summaryEvent(outcomes));
  else {
    for (const l of isolationLines(outcomes)) log(l);
    // Plain mode printed each end as it happened; --quiet prints them now, the terminal did in its last frame.
    if (values.quiet) for (const v of windows.views) for (const l of endLines(v, width(), style)) log(l);
    printOutputs(outcomes, width(), style, log);
    log("");
    log(totalsLine(windows.views, Date.now() - started, style));
  }
  // --json keeps stdout for JSON: a result that is not in the store is still said on screen (else its end lines do).
  if (json) for (const line of unrecordedLines(outcomes)) process.stderr.write(`${line}\n`);
  return ran.interrupted ?? exitForOutcomes(outcomes);
}
