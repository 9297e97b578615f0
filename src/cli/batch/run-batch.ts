// `subagents batch ITEMS --prompt TEMPLATE`: the job is recorded (its items read from the file, a page at a time),
// then run on the call runner (core/batch/run-job.ts) under this process as its owner, with one summary view and
// `--out` written as items finish. The same command again resumes it (docs/batch.md).
import { DEFAULT_AGENT } from "../../core/run/task-types.ts";
import * as fs from "node:fs";
import * as path from "node:path";
import { prepareCall } from "../../core/call/prepare.ts";
import type { CallRequest } from "../../core/call/request.ts";
import {
  DEFAULT_MAX_ATTEMPTS,
  deriveJobId,
  JOB_NAME,
  parseShard,
  shardJobId,
  type JobSpec,
} from "../../core/batch/job.ts";
import { recordItems } from "../../core/batch/record-items.ts";
import { newProgress, prepareJobRun, runJob } from "../../core/batch/run-job.ts";
import { templateColumns } from "../../core/batch/template.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import type { Store } from "../../core/store/store.ts";
import { startOwner } from "../../control/owner.ts";
import { buildEngine, cliContext, dataDir, openStore } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { callDefaults, cliFront, refusalError } from "../flags/call-flags.ts";
import { type parse, positiveNumber, requireProfile, workingFolder } from "../flags/args.ts";
import { BATCH_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { writeJson } from "../terminal/report.ts";
import { STOPPING, trapSignals } from "../terminal/signals.ts";
import { colorStyle } from "../terminal/style.ts";
import { readItems, itemsFormat } from "./items-file.ts";
import { OutFile } from "./out-file.ts";
import { BatchView, summaryJson } from "./batch-view.ts";
import { startDetached } from "./background.ts";

export const BATCH_OPTIONS = parseOptions(BATCH_FLAGS);
type Values = ReturnType<typeof parse<typeof BATCH_OPTIONS>>["values"];

const MAX_CONCURRENCY = 64;

const STOP_SIGNALS: Record<number, string> = {
  [EXIT.sigint]: "SIGINT (Ctrl-C)",
  [EXIT.sigterm]: "SIGTERM",
  [EXIT.sighup]: "SIGHUP (the terminal hung up)",
};

/** What the command line asks for, checked before anything is recorded. */
export type BatchArgs = {
  items: string;
  template: string;
  promptSource: string;
  job: string;
  spec: JobSpec;
  agent?: string;
  out?: string;
};

export function batchArgs(command: string, values: Values, positionals: string[]): BatchArgs {
  if (positionals.length !== 1)
    throw new UsageError(
      `${command}: expected one items file (.jsonl or .csv), got ${positionals.length}. See 'subagents help batch'.`,
    );
  const items = path.resolve(positionals[0]);
  itemsFormat(items);
  const stat = fs.statSync(items, { throwIfNoEntry: false });
  if (!stat) throw new UsageError(`${command}: the items file ${items} does not exist.`);
  if (!stat.isFile())
    throw new UsageError(
      `${command}: the items file ${items} is ${stat.isDirectory() ? "a folder" : "not a plain file"}.`,
    );
  if ((values.prompt === undefined) === (values["prompt-file"] === undefined))
    throw new UsageError(
      `${command}: give the prompt template with --prompt TEXT or --prompt-file FILE (one of them).`,
    );
  let template = values.prompt ?? "";
  const promptFile = values["prompt-file"] && path.resolve(values["prompt-file"]);
  if (promptFile) {
    try {
      template = fs.readFileSync(promptFile, "utf8");
    } catch (err) {
      throw new UsageError(`${command}: cannot read --prompt-file ${promptFile}: ${(err as Error).message}`);
    }
  }
  if (!template.trim()) throw new UsageError(`${command}: the prompt template is empty.`);
  if (!templateColumns(template).length)
    process.stderr.write(`warning: the prompt has no {{column}}: every item gets the same prompt\n`);
  const cwd = workingFolder(command, values.cwd);
  const concurrency = positiveNumber(command, "concurrency", values.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency <= MAX_CONCURRENCY))
    throw new UsageError(`${command}: --concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}.`);
  const attempts = positiveNumber(command, "max-attempts", values["max-attempts"]);
  if (attempts !== undefined && !Number.isInteger(attempts))
    throw new UsageError(`${command}: --max-attempts must be a whole number (got "${values["max-attempts"]}").`);
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (typeof shard === "string") throw new UsageError(`${command}: ${shard}.`);
  if (values.job !== undefined && !JOB_NAME.test(values.job))
    throw new UsageError(
      `${command}: --job must be letters, digits, ".", "_" or "-" (at most 80; got "${values.job}").`,
    );
  const job = values.job
    ? shard
      ? shardJobId(values.job, shard)
      : values.job
    : deriveJobId(items, promptFile ?? template, shard);
  const out = values.out && path.resolve(values.out);
  // submit makes the folder (its script goes there too); a run writes into one that exists.
  if (out) outProblem(command, out, command === "batch submit");
  const defaults = callDefaults(command, cwd, { ...values, "max-cost": values["max-item-cost"] });
  if (values.agent && values.agent !== DEFAULT_AGENT) defaults.profile = values.agent;
  return {
    items,
    template,
    promptSource: promptFile ?? template,
    job,
    agent: defaults.profile,
    out,
    spec: {
      template,
      idColumn: values.id ?? "id",
      defaults,
      ...(values["output-schema"] ? { outputSchema: readSchema(command, values["output-schema"]) } : {}),
      concurrency: concurrency ?? 0,
      maxAttempts: attempts ?? DEFAULT_MAX_ATTEMPTS,
      ...(values["max-cost"] !== undefined ? { maxCost: positiveNumber(command, "max-cost", values["max-cost"]) } : {}),
      ...(shard ? { shard } : {}),
    },
  };
}

/** --out must be a file in a folder that exists: found before the job is recorded, not as it starts writing. */
function outProblem(command: string, out: string, made: boolean): void {
  if (fs.statSync(out, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`${command}: --out ${out} is a folder; name the results file.`);
  if (made) return;
  const dir = path.dirname(out);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`${command}: --out ${out}: the folder ${dir} does not exist.`);
}

function readSchema(command: string, raw: string): Record<string, unknown> {
  let text = raw;
  if (!raw.trim().startsWith("{")) {
    try {
      text = fs.readFileSync(raw, "utf8");
    } catch (err) {
      throw new UsageError(`${command}: cannot read --output-schema ${raw}: ${(err as Error).message}`);
    }
  }
  try {
    const schema = JSON.parse(text);
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw new Error("not a JSON object");
    return schema;
  } catch (err) {
    throw new UsageError(`${command}: --output-schema is not a JSON Schema object: ${(err as Error).message}`);
  }
}

export async function runBatch(argv: string[], values: Values, positionals: string[]): Promise<number> {
  const args = batchArgs("batch", values, positionals);
  if (values.background) return startDetached(argv, args, !!values.json);
  const cwd = args.spec.defaults.cwd;
  const ctx = cliContext(cwd);
  for (const w of ctx.warnings) process.stderr.write(`warning: ${w}\n`);
  const store = openStore(ctx, true);
  const engine = buildEngine(ctx, cwd, store);
  if (args.agent) requireProfile("batch", args.agent, engine);
  const spec = { ...args.spec, concurrency: args.spec.concurrency || engine.settings.concurrency };
  // The job's task, prepared once as a call of one task: every check a call gets (agent, folder, gate, schema).
  const caps = new CapGuard(undefined, "this batch job");
  const request: CallRequest = {
    tasks: [
      { name: args.job, prompt: spec.template, ...(spec.outputSchema ? { outputSchema: spec.outputSchema } : {}) },
    ],
    defaults: spec.defaults,
  };
  const prepared = await prepareCall(engine, request, cliFront("batch", engine, caps, undefined));
  if ("refusal" in prepared) throw refusalError("batch", prepared.refusal);
  // A task the call would refuse alone (its agent, consent) refuses the whole job: every item is that task.
  const alone = prepared.call.refused[0];
  if (alone) throw refusalError("batch", alone);
  const [task] = prepared.call.tasks;
  // What an item's result depends on besides its prompt, as resolved once for the job (core/call/resolve.ts).
  const { agent } = task;
  const model = task.model ?? "";

  const records = store.batches;
  const owner = { pid: process.pid, start: ctx.host.startTimeOf?.(process.pid) ?? null };
  // The job's record keeps the task every item runs as (plain data), beside what the command line said.
  const { prompt: _template, sessionId: _session, ...resolved } = task;
  const before = records.job(args.job)?.status;
  const claimed = records.claim(args.job, args.items, { ...spec, out: args.out, task: resolved }, owner);
  if ("busy" in claimed)
    throw new UsageError(
      `batch: job ${args.job} is running in process ${claimed.busy.pid}; follow it with 'subagents batch status ${args.job}'.`,
    );
  const json = !!values.json;
  let view: BatchView | undefined;
  const interrupt = trapSignals({ onStop: () => view?.note(STOPPING), onForce: () => view?.stop() });
  let released = false;
  try {
    const recorded = await recordItems(
      records,
      args.job,
      claimed.pass,
      readItems(args.items),
      spec,
      { agent, model, schema: spec.outputSchema },
      args.items,
    );
    if ("refusal" in recorded) {
      // Refused before anything ran: a job that was done stays done.
      records.release(args.job, before === "done" ? "done" : "stopped");
      released = true;
      throw refusalError("batch", recorded.refusal);
    }
    prepareJobRun(records, args.job, claimed.pass, spec, !!values["retry-failed"]);
    const progress = newProgress(records, args.job, Date.now());
    const out = args.out ? OutFile.rewrite(args.out, records, args.job) : null;
    const style = colorStyle(process.stderr, values["no-color"]);
    view = new BatchView(progress, spec, style, { quiet: json || !!values.quiet, out: process.stderr });
    const start = { type: "job", job: args.job, items: progress.counts.total, toRun: progress.counts.pending };
    if (json) writeJson({ ...start, ...(args.out ? { out: args.out } : {}) });
    view.started(args.out);
    const ownerCtl = await startOwner(dataDir(ctx), "cli", []);
    let end: Awaited<ReturnType<typeof runJob>>;
    try {
      view.start();
      end = await runJob(
        {
          engine,
          records,
          job: args.job,
          spec,
          task,
          caps,
          capSettings: { ...engine.settings, maxSpawnsPerSession: Number.MAX_SAFE_INTEGER },
          owner: ownerCtl,
          signal: interrupt.signal,
          onFinished: (line) => out?.append(line),
        },
        progress,
      );
      released = true;
    } finally {
      ownerCtl.close();
      out?.close();
      view.stop();
    }
    const code = interrupt.exitCode();
    // The run only knows it was stopped: which signal it was is this process's.
    if (code !== null) end = { ...end, stoppedBy: `stopped by ${STOP_SIGNALS[code] ?? "a signal"}` };
    if (json) writeJson(summaryJson(args.job, end, args.out));
    else view.final(end, args.out);
    if (code !== null) return code;
    return end.counts.completed === end.counts.total ? EXIT.ok : EXIT.taskFailed;
  } finally {
    interrupt.dispose();
    if (!released) releaseQuietly(store, args.job);
  }
}

function releaseQuietly(store: Store, job: string): void {
  try {
    store.batches.release(job, "stopped");
  } catch {
    // the store failed: the next run sees a dead owner and takes the job over
  }
}
