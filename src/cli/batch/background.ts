// `batch --background`: the same command in a detached process (host/batch-process.ts); this one returns once the
// job is recorded under it, with the job's id and how to follow it.
import { jobTaken, startBatchProcess } from "../../host/batch-process.ts";
import { selfCommand } from "../self-command.ts";
import { cliContext, dataDir, openStore } from "../engine.ts";
import { ConfigError, EXIT } from "../errors.ts";
import { writeJson } from "../terminal/report.ts";
import type { BatchArgs } from "./run-batch.ts";

export async function startDetached(argv: string[], args: BatchArgs, json: boolean): Promise<number> {
  const cwd = args.spec.defaults.cwd;
  const ctx = cliContext(cwd);
  const store = openStore(ctx);
  const passBefore = store.batches.job(args.job)?.pass ?? 0;
  const rest = argv.filter((a) => a !== "--background");
  // --json of the detached run would go to its log: its view there is the plain one.
  const start = startBatchProcess(
    selfCommand(),
    rest.filter((a) => a !== "--json"),
    {
      cwd: process.cwd(),
      env: process.env,
      dataDir: dataDir(ctx),
      job: args.job,
    },
  );
  const why = await jobTaken(store.batches, args.job, start, passBefore, (pid) => ctx.host.isAlive(pid));
  if (why) throw new ConfigError(`batch: the background job did not start: ${why}`);
  if (json) writeJson({ type: "job", job: args.job, background: true, pid: start.pid, log: start.log });
  else {
    console.log(args.job);
    process.stderr.write(
      `batch ${args.job} runs in the background (pid ${start.pid}, log ${start.log}). Follow: subagents batch status ${args.job}; results: subagents batch export ${args.job}\n`,
    );
  }
  return EXIT.ok;
}
