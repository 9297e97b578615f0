// Stage "setup": what no copy of the user's files solves (a `pnpm install --offline`, a code generator, a build of
// the workspace's packages) is a command run in the isolated task's new worktree before its child starts — the
// settings' `subagents.setup`, then its agent file's `setup:` — inside the worktree's view (the child sees what it
// wrote into the ignored folders), bounded by `subagents.setupTimeout`. A failure is the task's end
// (SETUP_FAILED) before any model call. A project's setup command is a command from whoever wrote the repository:
// it runs only with the consent a project's hooks need. What a setup changes in tracked files becomes part of the
// worktree's base, so the task's branch holds only its child's work.
import { sanitize } from "../sanitize.ts";
import type { ErrorCode, RunResult } from "../types.ts";
import { GIT_LOCATION_VARS } from "./launch/isolation.ts";
import { listed } from "../string-list.ts";
import { abortStop } from "./process/abort-reason.ts";
import { exitText, runShell, shortCommand } from "./process/shell-command.ts";
import { projectHookRefusal } from "./task-hooks.ts";
import { failedResult } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";

/** What a setup's failure keeps of its output (head and tail). */
const SETUP_OUTPUT_CHARS = 8000;
/** Between SIGTERM and SIGKILL for a setup ended at its timeout. */
const SETUP_GRACE_MS = 2000;

const lastLines = (text: string, n: number) => text.trim().split("\n").slice(-n).join("\n");

/** The setup commands of this task, in order, and a warning for a project's command that may not run. */
export function setupCommands(task: Pick<TaskContext, "engine" | "profile">): { run: string[]; refused?: string } {
  const { engine, profile } = task;
  const run: string[] = [];
  let refused: string | undefined;
  const own = engine.settings.setup;
  if (own) {
    const why = own.source === "project" ? projectHookRefusal(engine, "setup command") : null;
    if (why) refused = sanitize(`setup \`${shortCommand(own.command)}\` from ${own.file} not run: ${why}`);
    else run.push(own.command);
  }
  if (profile?.setup) run.push(profile.setup);
  return { run, refused };
}

/** The task's end before its child: what was said so far (a refused project command) goes with it. */
const ended = (task: TaskContext, message: string, code: ErrorCode): RunResult => ({
  ...failedResult(message, code),
  ...(task.warnings.length ? { warnings: [...task.warnings] } : {}),
});

export async function setupTask(task: TaskContext): Promise<RunResult | void> {
  const { engine, iso } = task;
  if (!iso) return;
  const { run, refused } = setupCommands(task);
  if (refused) task.warnings.push(refused);
  if (!run.length) return;
  const timeout = engine.settings.setupTimeout;
  // Until sealed, what the worktree holds is the setup's: an owner killed meanwhile leaves nothing to keep.
  iso.settingUp();
  for (const command of run) {
    const ran = await runShell(engine, {
      // In the worktree's view: what it installs into node_modules lands in the task's own layer, as the child's does.
      command,
      prefix: iso.worktree.view?.enter,
      cwd: iso.worktree.cwd,
      without: GIT_LOCATION_VARS,
      env: { SUBAGENTS_SESSION_ID: task.id, SUBAGENTS_WORKTREE: iso.worktree.path, SUBAGENTS_REPO: iso.worktree.repo },
      timeoutMs: timeout * 1000,
      sessionId: task.id,
      keep: "both",
      maxChars: SETUP_OUTPUT_CHARS,
      graceMs: SETUP_GRACE_MS,
      signal: task.wiring.signal,
    });
    if (ran.end === "aborted") {
      const stop = abortStop(task.wiring.signal?.reason, false);
      return ended(task, stop.message, stop.code);
    }
    const out = lastLines(ran.output, 10);
    if (ran.end === "timeout")
      return ended(
        task,
        `Setup \`${shortCommand(command)}\` did not finish within ${timeout} s (subagents.setupTimeout) in the task's worktree; the task did not start${out ? `:\n${out}` : ""}`,
        "SETUP_FAILED",
      );
    if (ran.end.code !== 0)
      return ended(
        task,
        `Setup \`${shortCommand(command)}\` failed (${exitText(ran.end)}) in the task's worktree; the task did not start${out ? `:\n${out}` : ""}`,
        "SETUP_FAILED",
      );
  }
  try {
    const sealed = await iso.seal();
    if (sealed.length)
      task.warnings.push(
        `setup changed tracked files (${listed(sealed)}): they are part of the task's base, not of its work (apply --cherry-pick leaves them out)`,
      );
  } catch (err) {
    return ended(task, `Setup ran, but its changes could not be kept apart: ${(err as Error).message}`, "SETUP_FAILED");
  }
}
