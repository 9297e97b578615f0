// `subagents run AGENT "task"`: one sub-agent, progress on stderr (or JSONL with --json), result on stdout.
import * as fs from "node:fs";
import * as path from "node:path";
import { toolCallLine } from "../core/run/activity.ts";
import { checkProfileSkills, checkResumable, profileRefusal, runTask } from "../core/run/task.ts";
import { startOwner } from "../control/owner.ts";
import { startBackground } from "./background.ts";
import { parse, positiveNumber } from "./args.ts";
import { buildEngine, cliContext, dataDir } from "./engine.ts";
import { EXIT, UsageError } from "./errors.ts";
import { RUN_HELP } from "./help.ts";
import { jsonEvent, summaryEvent, taskEndEvent, writeJson } from "./report.ts";
import { trapSignals } from "./signals.ts";

function readTask(raw: string): string {
  if (raw !== "-") return raw;
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
    background: { type: "boolean" },
  });
  if (values.help) {
    console.log(RUN_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 2) throw new UsageError(`run: expected AGENT and "task" (got ${positionals.length} argument${positionals.length === 1 ? "" : "s"}). See 'subagents run --help'.`);
  const [agent, rawTask] = positionals;
  const task = readTask(rawTask);
  if (!task.trim()) throw new UsageError("run: the task is empty.");
  const cwd = path.resolve(values.cwd ?? process.cwd());
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`run: --cwd ${cwd} is not a directory.`);
  const timeoutSec = positiveNumber("run", "timeout", values.timeout);

  const ctx = cliContext(cwd);
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  const engine = buildEngine(ctx, cwd);
  // Refusals before anything starts are usage errors (exit 2), the same as in `delegate`.
  if (agent !== "default" && !engine.profiles.has(agent) && !values.session) throw new UsageError(`run: ${profileRefusal(engine, agent).message}`);
  const resumeProblem = values.session ? checkResumable(engine, values.session) : null;
  if (resumeProblem) throw new UsageError(`run: ${resumeProblem}`);
  const conflict = checkProfileSkills(engine, [agent]);
  if (conflict) throw new UsageError(`run: ${conflict}`);
  const json = !!values.json;
  const name = agent;
  let sessionId = values.session ?? engine.store.newSessionId();
  const input = { name, prompt: task, cwd, profile: agent === "default" ? undefined : agent, model: values.model, timeoutSec, resume: values.session, sessionId };
  if (values.background) {
    const problem = values.session ? checkResumable(engine, values.session) : null;
    if (problem) throw new UsageError(`run: ${problem}`);
    return startBackground(ctx, { cwd, inputs: [input] }, json);
  }
  const owner = await startOwner(dataDir(ctx), "cli", [sessionId]);
  const interrupt = trapSignals();
  const outcome = await owner.wrap((i, h) => runTask(engine, i, h))(
    input,
    {
      signal: interrupt.signal,
      onStart: (info) => {
        sessionId = info.sessionId;
        if (json) writeJson({ type: "task_start", task: name, sessionId, agent: info.agent });
        else process.stderr.write(`▸ ${info.agent} · session ${sessionId}\n`);
      },
      onEvent: (_state, ev) => {
        if (json) {
          const line = jsonEvent(name, sessionId, ev);
          if (line) writeJson(line);
        } else if (ev.type === "tool_start" && ev.name !== "subagent_finalize") process.stderr.write(`  ${toolCallLine(ev.name, ev.args)}\n`);
        else if (ev.type === "retry") process.stderr.write(`  ↻ retry ${ev.attempt}/${ev.maxAttempts}: ${ev.errorMessage}\n`);
      },
    },
  );
  interrupt.dispose();
  owner.close();
  const r = outcome.result;
  if (json) {
    writeJson(taskEndEvent(outcome));
    writeJson(summaryEvent([outcome]));
  } else {
    if (r.output) process.stdout.write(r.output.endsWith("\n") ? r.output : `${r.output}\n`);
    const cost = r.usage.cost ? ` · $${r.usage.cost.toFixed(4)}` : "";
    if (r.status === "completed") process.stderr.write(`✓ completed in ${(r.durationMs / 1000).toFixed(1)}s · ${r.toolCount} tools${cost} · session ${outcome.sessionId}\n`);
    else process.stderr.write(`✗ ${r.errorCode ?? "error"}: ${r.error} (session: ${outcome.sessionId})\n`);
  }
  return interrupt.exitCode() ?? (r.status === "completed" ? EXIT.ok : EXIT.taskFailed);
}
