// The front half of `--background`: hand a prepared call to a detached supervisor, wait for its word, and say how to
// follow the tasks — only once the supervisor has taken them on; its refusal is this command's refusal.
import { startedLine } from "../../core/call/results.ts";
import { startSupervisor, type Job } from "./supervisor.ts";
import { dataDir, type CliContext } from "../engine.ts";
import { ConfigError, EXIT } from "../errors.ts";
import { refusalError } from "../flags/call-flags.ts";
import { writeJson } from "../terminal/report.ts";

export async function startBackground(ctx: CliContext, command: string, job: Job, json: boolean): Promise<number> {
  const { pid, log, word } = await startSupervisor(dataDir(ctx), job);
  if ("refusal" in word) throw refusalError(command, word.refusal);
  if ("error" in word) throw new ConfigError(`${command}: the background run did not start: ${word.error}`);
  const tasks = job.call.tasks;
  if (json) {
    for (const t of tasks) writeJson({ type: "task_background", task: t.name, sessionId: t.sessionId });
    writeJson({
      type: "summary",
      background: true,
      supervisorPid: pid,
      log,
      tasks: tasks.map((t) => ({ name: t.name, sessionId: t.sessionId, status: "running" })),
    });
    return EXIT.ok;
  }
  for (const t of tasks) console.log(startedLine(t));
  process.stderr.write(
    `Collect with: subagents wait ${tasks.map((t) => t.sessionId).join(" ")}   (steer: subagents steer ID "…", stop: subagents cancel ID)\n`,
  );
  return EXIT.ok;
}
