// Acceptance gates (docs/composing.md): a shell command that must exit 0 before a task counts as completed. The check
// is the host's, not the model's claim. It runs inside the child's process (src/child-extension/gate.ts) when the child says
// it is done, in the child's folder, so a failure goes back into the SAME conversation as a correction — like a
// finalize correction — without reloading the session. The parent only reads the attempts (events on fd 3)
// and decides: no passing attempt → GATE_FAILED.
import type { GateProgress, RunState } from "./run-state.ts";

export type { GateProgress };

export type GateSpec = { command: string; timeoutSec: number; retries: number };

export const DEFAULT_GATE_TIMEOUT = 300;
export const DEFAULT_GATE_RETRIES = 2;
/** Gate output kept per attempt (head and tail), for the correction and the record. */
export const GATE_OUTPUT_CHARS = 8000;

/** How the child learns its gate (read by src/child-extension/gate.ts). */
export function gateEnv(g: GateSpec | undefined): Record<string, string> {
  if (!g) return {};
  return {
    PI_SUBAGENT_GATE: g.command,
    PI_SUBAGENT_GATE_TIMEOUT: String(g.timeoutSec),
    PI_SUBAGENT_GATE_RETRIES: String(g.retries),
  };
}

/** What the child's extension reads: its gate, and the schema of its structured result (src/child-extension/finalize-data.ts). */
export function composeEnv(task: { gate?: GateSpec; outputSchema?: Record<string, unknown> }): Record<string, string> {
  return {
    ...gateEnv(task.gate),
    ...(task.outputSchema ? { PI_SUBAGENT_OUTPUT_SCHEMA: JSON.stringify(task.outputSchema) } : {}),
  };
}

/** The correction the child gets after a failed attempt. */
export function gateCorrection(
  command: string,
  r: { exitCode: number | null; timedOut: boolean; output: string },
  attempt: number,
  tries: number,
  viaFinalize: boolean,
): string {
  const how = r.timedOut ? "did not finish in time" : `exited with code ${r.exitCode ?? "?"}`;
  const again = viaFinalize ? "then call `subagent_finalize` again" : "then finish again";
  return (
    `The acceptance check \`${command}\` ${how} (attempt ${attempt} of ${tries}). Your task is not done until it passes. ` +
    `Fix the problem, ${again}. Its output:\n${r.output.trim() || "(no output)"}`
  );
}

/** A run that the child calls done, judged by its gate: null when it passed (or there is no gate). */
export function gateFailure(g: GateSpec | undefined, progress: GateProgress | undefined): string | null {
  if (!g || progress?.passed) return null;
  if (!progress?.attempts) return `The acceptance check \`${g.command}\` did not run (the child reported no attempt)`;
  const how = progress.timedOut
    ? `did not finish within ${g.timeoutSec}s`
    : `exited with code ${progress.lastExit ?? "?"}`;
  const last = (progress.lastOutput ?? "").trim().split("\n").slice(-5).join("\n");
  return `Acceptance check failed after ${progress.attempts} attempt${progress.attempts === 1 ? "" : "s"}: \`${g.command}\` ${how}${last ? `\n${last}` : ""}`;
}

export const gateSummary = (s: RunState): { passed: boolean; attempts: number } | undefined =>
  s.gate ? { passed: s.gate.passed, attempts: s.gate.attempts } : undefined;
