// The front half of `--background`: hand validated tasks to a detached supervisor and say how to follow them.
import { startSupervisor, type Job } from "./supervisor.ts";
import { dataDir, type CliContext } from "../engine.ts";
import { EXIT } from "../errors.ts";
import { writeJson } from "../terminal/report.ts";

export function startBackground(ctx: CliContext, job: Job, json: boolean): number {
  const { pid, log } = startSupervisor(dataDir(ctx), job);
  const ids = job.inputs.map((t) => t.sessionId);
  if (json) {
    for (const t of job.inputs) writeJson({ type: "task_background", task: t.name, sessionId: t.sessionId });
    writeJson({
      type: "summary",
      background: true,
      supervisorPid: pid,
      log,
      tasks: job.inputs.map((t) => ({ name: t.name, sessionId: t.sessionId, status: "running" })),
    });
    return EXIT.ok;
  }
  for (const t of job.inputs) console.log(`● ${t.name}: started in the background (session: ${t.sessionId})`);
  process.stderr.write(
    `Collect with: subagents wait ${ids.join(" ")}   (steer: subagents steer ID "…", stop: subagents cancel ID)\n`,
  );
  return EXIT.ok;
}
