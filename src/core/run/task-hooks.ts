// A task's start and end hooks: the shell commands of settings `subagents.hooks` (the user's, and a project's
// when it has consent) and of the task's agent file, each run with the task's event object (payload.ts) on
// stdin. A hook never holds up or fails its task: it runs beside it, bounded by `subagents.hooks.timeout`, and
// whatever goes wrong (a failing exit, a hang, a refused project hook) is a warning on the task's run record.
// Each hook runs in a process group of its own under a run mark of its own (process/marks.ts): at its end, or
// its timeout, whatever it started is ended too, and a forced stop of the front ends it with the runs.
import type { HookCommand, HookEvent } from "../hook-settings.ts";
import type { Profile } from "../profiles/profile.ts";
import type { SessionStore } from "../store/store-types.ts";
import { sanitize } from "../sanitize.ts";
import { exitText, runShell, shortCommand } from "./process/shell-command.ts";
import type { Engine } from "./engine.ts";
import type { TaskWiring } from "./task-types.ts";
import { endPayload, startPayload, type TaskEventPayload } from "./hooks/payload.ts";
import type { RunResult } from "../types.ts";

/** What a hook's failure shows of its standard error. */
const STDERR_TAIL = 400;
/** A hook ended at its timeout gets this long between SIGTERM and SIGKILL. */
const HOOK_GRACE_MS = 1000;

/** The hooks that apply to one event of one task, and the project hooks refused (with why). */
export function hooksFor(
  engine: Engine,
  profile: Profile | null,
  event: HookEvent,
): { run: HookCommand[]; refused: string[] } {
  const run: HookCommand[] = [];
  const refused: string[] = [];
  for (const h of engine.settings.hooks.commands) {
    if (h.event !== event) continue;
    if (h.source !== "project") {
      run.push(h);
      continue;
    }
    const why = projectHookRefusal(engine, "hooks");
    if (why) refused.push(`${event} hook \`${shortCommand(h.command)}\` from ${h.file} not run: ${why}`);
    else run.push(h);
  }
  const own = profile?.[event];
  if (own) run.push({ command: own, event, source: "agent", file: profile?.filePath ?? profile?.name ?? "agent" });
  return { run, refused };
}

/**
 * Why a project's commands (its hooks, its setup command) may not run in this call, or null: the front's answer,
 * else the user's projectAgents.
 */
export function projectHookRefusal(engine: Engine, what: "hooks" | "setup command"): string | null {
  const decided = engine.call.projectHooks;
  if (decided === "allowed") return null;
  if (decided) return decided;
  const consent = engine.settings.hooks.projectConsent;
  const verb = what === "hooks" ? "are" : "is";
  if (consent === "allow") return null;
  if (consent === "deny")
    return `a project's ${what} ${verb} not allowed: your settings' subagents.projectAgents is "deny"`;
  return `a project's ${what} ${what === "hooks" ? "need" : "needs"} consent: set subagents.projectAgents to "allow" in your own settings (pi asks when it has a UI)`;
}

/**
 * Tells everyone who listens that a task started or ended: the front (pi.events) at once, the shell hooks in the
 * background. Returns at once; the hooks' promise is kept on the engine (settleHooks waits for them).
 */
export function fireTaskEvent(
  engine: Engine,
  hooks: TaskWiring,
  profile: Profile | null,
  runId: number | null,
  who: { sessionId: string; name: string; agent: string; cwd: string },
  /** Its end's result; unset: it started. */
  result?: RunResult,
): void {
  const identity = { ...who, schedule: engine.call.schedule };
  const payload = result ? endPayload(identity, result) : startPayload(identity);
  try {
    hooks.onTaskEvent?.(payload);
  } catch {
    // A listener's bug is not the task's.
  }
  const { run, refused } = hooksFor(engine, profile, payload.event);
  const warn = (w: string) => recordWarning(engine.store, runId, w);
  for (const w of refused) warn(w);
  if (!run.length) return;
  const pending = (engine.caches.hooksRunning ??= new Set());
  for (const h of run) {
    const p = runHook(engine, h, payload)
      .then((w) => w && warn(w))
      .catch((err) => warn(`${h.event} hook \`${shortCommand(h.command)}\` could not run: ${(err as Error).message}`))
      .finally(() => pending.delete(p));
    pending.add(p);
  }
}

/** Waits for the hooks still running (each is bounded by its own timeout): a front calls it before it exits. */
export async function settleHooks(engine: Pick<Engine, "caches">): Promise<void> {
  while (engine.caches.hooksRunning?.size) await Promise.all([...engine.caches.hooksRunning]);
}

function recordWarning(store: SessionStore, runId: number | null, warning: string): void {
  if (runId === null) return;
  try {
    store.addRunWarnings(runId, [sanitize(warning)]);
  } catch {
    // The store is gone (the front is closing): the hook's trouble is not worth failing over.
  }
}

/** One hook from spawn to exit (or its timeout); a warning when it did not end well, else null. */
async function runHook(engine: Engine, hook: HookCommand, payload: TaskEventPayload): Promise<string | null> {
  const { host } = engine;
  const ran = await runShell(engine, {
    command: hook.command,
    cwd: host.stat(payload.cwd)?.isDirectory ? payload.cwd : host.homedir(),
    env: { SUBAGENTS_HOOK_EVENT: payload.event, SUBAGENTS_SESSION_ID: payload.sessionId },
    stdin: `${JSON.stringify(payload)}\n`,
    timeoutMs: engine.settings.hooks.timeout * 1000,
    sessionId: payload.sessionId,
    keep: "stderr",
    maxChars: STDERR_TAIL * 4,
    graceMs: HOOK_GRACE_MS,
  });
  const what = `${hook.event} hook \`${shortCommand(hook.command)}\` (${hook.source === "agent" ? `agent file ${hook.file}` : hook.file})`;
  if (ran.end === "timeout" || ran.end === "aborted")
    return `${what} did not end within ${engine.settings.hooks.timeout} s (subagents.hooks.timeout): ended; the task went on`;
  if (ran.end.code === 0) return null;
  const tail = ran.output.trim().split("\n").slice(-3).join(" / ").slice(-STDERR_TAIL);
  return `${what} failed (${exitText(ran.end)})${tail ? `: ${tail}` : ""}; the task went on`;
}
