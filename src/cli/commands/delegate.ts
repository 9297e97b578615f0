// `subagents delegate "task" ["task" …]`: several sub-agents in parallel, with live windows on a terminal,
// one plain line per state change otherwise, or JSONL with --json; each task's output is printed at the end.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { gateFolderProblem } from "../../core/run/gate-check.ts";
import { attachFork } from "../../core/run/fork.ts";
import { CLI_FORK_NEEDS, readForkSession } from "../fork-session.ts";
import { waitingOf } from "../../control/running.ts";
import { InputError, MAX_TASKS, parseDelegateParams, type DelegateParams } from "../../core/delegate-input.ts";
import type { FileSpec } from "../../core/files.ts";
import { runScheduled } from "../../core/run/scheduler.ts";
import { checkProfileSkills, checkResumable, effectiveTimeout, runTask, type TaskInput, type TaskOutcome } from "../../core/run/task.ts";
import { isolationLines } from "../../core/run/launch/isolation.ts";
import { CallWindows } from "../../ui/call-windows.ts";
import { endLines, finalFrame, startLine, totalsLine } from "../../ui/summary.ts";
import { isFinished } from "../../ui/windows.ts";
import { isolationFlag, parse, positiveNumber, requireProfile } from "../args.ts";
import { startBackground } from "../background.ts";
import { buildEngine, cliContext, dataDir } from "../engine.ts";
import { startOwner } from "../../control/owner.ts";
import { EXIT, UsageError } from "../errors.ts";
import { DELEGATE_HELP, FLOW_HELP } from "../help.ts";
import { ENGINE_OPTIONS, engineFlags } from "../engine-flags.ts";
import { GATE_OPTIONS, gateFlags } from "../gate-flags.ts";
import { BUDGET_OPTIONS, budgetFlags, totalCostFlag } from "../budget-flags.ts";
import { LiveDisplay } from "../live.ts";
import { terminalAsker } from "../terminal-ask.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "../report.ts";
import { FORCED, STOPPING, trapSignals } from "../signals.ts";
import { colorStyle, streamWidth } from "../style.ts";
import { printOutputs } from "../ended-output.ts";
import { duplicateTasks } from "../../core/session-caps.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";

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
    if (/^\s*[[{]/.test(text)) throw new UsageError(`delegate: --tasks ${source} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new UsageError(`delegate: --tasks ${source} is not valid JSON or YAML: ${(err as Error).message}`);
  }
}

/** `flow` (cmd-flow.ts): the call comes from a saved workflow named by the positionals; null: nothing to run. */
export type FlowSource = (cwd: string, positionals: string[], json: boolean) => Record<string, unknown> | null;

export async function cmdDelegate(argv: string[], flow?: FlowSource): Promise<number> {
  const { values, positionals } = parse(flow ? "flow" : "delegate", argv, {
    name: { type: "string", multiple: true },
    profile: { type: "string" },
    model: { type: "string" },
    cwd: { type: "string" },
    timeout: { type: "string" },
    concurrency: { type: "string" },
    file: { type: "string", multiple: true },
    resume: { type: "string" },
    tasks: { type: "string" },
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
    "no-color": { type: "boolean" },
    background: { type: "boolean" },
    isolation: { type: "string" },
    ...GATE_OPTIONS,
    ...ENGINE_OPTIONS,
    ...BUDGET_OPTIONS,
    "max-total-cost": { type: "string" },
  });
  if (values.help) {
    console.log(flow ? FLOW_HELP : DELEGATE_HELP);
    return EXIT.ok;
  }
  const shellCwd = path.resolve(values.cwd ?? process.cwd());
  if (!fs.statSync(shellCwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`delegate: --cwd ${shellCwd} is not a directory.`);
  const timeout = positiveNumber("delegate", "timeout", values.timeout);
  const isolation = isolationFlag("delegate", values.isolation);
  const where = engineFlags("delegate", values);
  const concurrencyFlag = positiveNumber("delegate", "concurrency", values.concurrency);
  if (concurrencyFlag !== undefined && !(Number.isInteger(concurrencyFlag) && concurrencyFlag <= MAX_TASKS)) {
    throw new UsageError(`delegate: --concurrency must be a whole number from 1 to ${MAX_TASKS} (got "${values.concurrency}").`);
  }

  let params: DelegateParams;
  const preset = flow?.(shellCwd, positionals, !!values.json);
  if (preset === null) return EXIT.ok;
  try {
    if (preset) {
      if (values.tasks !== undefined) throw new UsageError("flow: --tasks does not apply: the workflow gives the tasks.");
      params = parseDelegateParams(preset);
    } else if (values.tasks !== undefined) {
      if (positionals.length) throw new UsageError("delegate: give tasks either as arguments or with --tasks, not both.");
      params = parseDelegateParams(readTasksFile(values.tasks));
    } else {
      if (!positionals.length) throw new UsageError('delegate: no task given. Example: subagents delegate "summarize README.md" "list the TODOs"');
      if (positionals.length > MAX_TASKS) throw new UsageError(`delegate: ${positionals.length} tasks given; at most ${MAX_TASKS} tasks per call.`);
      const names = values.name ?? [];
      if (names.length > positionals.length) throw new UsageError(`delegate: ${names.length} --name flags for ${positionals.length} tasks.`);
      if (values.resume && positionals.length !== 1) throw new UsageError("delegate: --resume continues one session: give exactly one task with it.");
      const files: FileSpec[] | undefined = values.file?.length ? values.file : undefined;
      params = parseDelegateParams({
        tasks: positionals.map((prompt, i) => ({ name: names[i] ?? `task-${i + 1}`, prompt, ...(files ? { files } : {}), ...(values.resume ? { resume: values.resume } : {}) })),
      });
    }
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(`delegate: ${err.message}`);
    throw err;
  }
  const budget = budgetFlags("delegate", values);
  const gates = gateFlags("delegate", values);
  const maxCost = totalCostFlag("delegate", values["max-total-cost"]) ?? params.maxCost;
  const profileFlag = values.profile ?? params.profile;
  const profile = profileFlag === "default" ? undefined : profileFlag;

  const ctx = cliContext(shellCwd);
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  const engine = buildEngine(ctx, shellCwd);
  // A profile for the whole call fails up front like `run typo`; a task's own unknown profile fails that task only.
  if (profileFlag) requireProfile("delegate", profileFlag, engine);
  const inputs: TaskInput[] = params.tasks.map((t) => ({
    name: t.name,
    prompt: t.prompt,
    cwd: t.cwd ?? shellCwd,
    profile: t.profile ?? profile,
    model: values.model,
    timeoutSec: t.timeout ?? timeout,
    resume: t.resume,
    files: t.files,
    isolation: t.isolation ?? isolation,
    sandbox: t.sandbox || where.sandbox || undefined,
    keepProcesses: t.keepProcesses,
    runner: t.runner ?? where.runner,
    runtime: t.runtime ?? where.runtime,
    sessionId: t.resume ?? engine.store.newSessionId(),
    budget: { ...budget, ...t.budget },
    after: t.after,
    gate: t.gate ?? gates.gate,
    gateTimeout: t.gateTimeout ?? gates.gateTimeout,
    gateRetries: t.gateRetries ?? gates.gateRetries,
    outputSchema: t.outputSchema,
  }));
  // Checked before anything starts: a bad resume, a skills conflict or a missing cwd fails the whole call (spec 000).
  const forkOf = params.tasks.map((t) => ({ context: t.context ?? (values.fork ? ("fork" as const) : undefined) }));
  const conflict =
    checkProfileSkills(engine, inputs.map((t) => t.profile)) ??
    gateFolderProblem(engine, inputs) ??
    attachFork(engine.profiles, forkOf, inputs, () => (values.fork ? readForkSession(ctx.agentDir, values.fork, "delegate") : undefined), CLI_FORK_NEEDS);
  if (conflict) throw new UsageError(`delegate: ${conflict}`);
  for (const t of inputs) {
    if (!fs.statSync(t.cwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`delegate: task "${t.name}": working directory ${t.cwd} does not exist.`);
    const problem = t.resume ? checkResumable(engine, t.resume) : null;
    if (problem) throw new UsageError(`delegate: ${problem}`);
  }
  const duplicate = duplicateTasks(inputs);
  if (duplicate) throw new UsageError(`delegate: ${duplicate}`);
  // The session caps hold per invocation here (and per supervisor for --background, checked again there).
  const caps = new CapGuard(undefined, "this invocation");
  const limit = caps.admit(engine.settings, { tasks: inputs.length, maxCost });
  if (limit) throw new UsageError(`delegate: ${limit.code}: ${limit.message}`);

  if (values.background) return startBackground(ctx, { cwd: shellCwd, concurrency: concurrencyFlag, inputs, maxCost }, !!values.json);
  const owner = await startOwner(dataDir(ctx), "cli", inputs.map((t) => t.sessionId!), { waiting: waitingOf(inputs) });
  const json = !!values.json;
  const tty = !json && !values.quiet && !!process.stdout.isTTY;
  const out = json ? process.stderr : process.stdout;
  const style = colorStyle(out, values["no-color"]);
  const log = (line: string) => out.write(`${line}\n`);
  // Read when used: the terminal may be resized during the run.
  const width = () => streamWidth(out);
  const maxLines = engine.settings.maxLinesPerWindow;
  const windows = new CallWindows(
    inputs.map((t) => ({ name: t.name, sessionId: t.sessionId!, profile: t.profile, timeoutSec: effectiveTimeout(engine, t), after: t.after })),
    maxLines,
  );
  const started = Date.now();
  const live = tty ? new LiveDisplay(() => windows.snapshot(Date.now(), maxLines).windows, { maxLines, style }) : null;
  // A forced stop (second Ctrl-C) exits from inside the signal handler: tasks still running are drawn cancelled.
  const forcedViews = () => windows.snapshot(Date.now(), maxLines).windows.map((v) => (isFinished(v.status) ? v : { ...v, status: "cancelled" as const }));
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
    const run = caps.runner(engine.settings, owner.wrap((input, hooks) => runTask(engine, input, hooks), (t) => effectiveTimeout(engine, t)));
    outcomes = await runScheduled(inputs, concurrencyFlag ?? engine.settings.concurrency, (input, hooks) => run(input, { ...hooks, ask }), {
      rateLimitWaitSec: engine.settings.rateLimitWait,
      signal: interrupt.signal,
      maxCost,
      onTaskStart: (i) => {
        windows.start(i, Date.now());
        if (json) writeJson({ type: "task_start", task: inputs[i].name, sessionId: inputs[i].sessionId!, agent: inputs[i].profile ?? "default" });
        else if (!tty && !values.quiet) log(startLine(inputs[i].name, inputs[i].profile, inputs[i].sessionId!, style));
      },
      onTaskWarnings: (i, warnings) => {
        windows.warn(i, warnings);
        if (!tty && !json && !values.quiet) for (const w of warnings) log(`  ⚠ ${inputs[i].name}: ${w}`);
      },
      onTaskEvent: (i, state, ev) => {
        windows.event(i, state);
        if (json) {
          const line = jsonEvent(inputs[i].name, inputs[i].sessionId!, ev);
          if (line) writeJson(line);
        }
      },
      onTaskEnd: (i, outcome) => {
        windows.end(i, outcome, Date.now());
        if (json) writeJson(taskEndEvent(outcome));
        else if (!tty && !values.quiet) for (const l of endLines(windows.views[i], width(), style)) log(l);
      },
    });
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
