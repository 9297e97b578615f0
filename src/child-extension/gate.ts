// The child's half of an acceptance gate (core/run/process/gate.ts): when the model says it is done (a finalize call,
// or a plain final answer), run the command in this process's folder, bounded in time and output, in its own
// process group (killed whole on timeout and when pi exits). A failure becomes a correction in this same
// conversation, up to the retries; every attempt is reported on fd 3 for the parent to judge and record.
import { spawn } from "node:child_process";
import { GATE_OUTPUT_CHARS, gateCorrection } from "../core/run/process/gate.ts";
import { clearLongTimeout, longTimeout } from "../core/host.ts";
import type { ChildEvent } from "../core/types.ts";

type Api = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void;
  sendUserMessage(content: string, options?: { deliverAs?: "steer" | "followUp" }): void;
};

type GateRun = { exitCode: number | null; timedOut: boolean; output: string };

const running = new Set<number>();
let exitHooked = false;
/** Set once the owner is gone: no gate starts any more (a killed gate would count as a failed attempt and start the
 *  next), and the running ones are ended. */
let ownerGone = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Head and tail of what the command printed: the start says what ran, the end usually says what failed. */
function bounded(text: string): string {
  if (text.length <= GATE_OUTPUT_CHARS) return text;
  const head = Math.floor(GATE_OUTPUT_CHARS / 4);
  return `${text.slice(0, head)}\n…(${text.length - GATE_OUTPUT_CHARS} characters cut)…\n${text.slice(-(GATE_OUTPUT_CHARS - head))}`;
}

/** The owner is gone (owner-gone.ts): running gates end now (SIGTERM to their groups, SIGKILL a second later), and
 *  none starts after. */
export function endGates(): void {
  ownerGone = true;
  for (const pid of running) {
    killGroup(pid, "SIGTERM");
    setTimeout(() => killGroup(pid, "SIGKILL"), 1000).unref?.();
  }
}

export function runGateCommand(command: string, cwd: string, timeoutSec: number): Promise<GateRun> {
  if (!exitHooked) {
    exitHooked = true;
    // pi exits (done, killed by the parent): no gate command outlives it.
    process.on("exit", () => {
      for (const pid of running) killGroup(pid, "SIGKILL");
    });
  }
  return new Promise((resolve) => {
    let out = "";
    const keep = (c: Buffer) => {
      out += c.toString("utf8");
      // Never hold more than a few times the kept amount, whatever the command prints.
      if (out.length > GATE_OUTPUT_CHARS * 4) out = out.slice(0, GATE_OUTPUT_CHARS) + out.slice(-GATE_OUTPUT_CHARS * 2);
    };
    const env = { ...process.env };
    for (const k of Object.keys(env))
      if (k.startsWith("PI_SUBAGENT_GATE") || k === "PI_SUBAGENT_CONTROL_FD") delete env[k];
    const proc = spawn("/bin/sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env });
    let timedOut = false;
    const pid = proc.pid;
    if (pid) running.add(pid);
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    // Any gateTimeout a person sets (a long one waits in steps instead of firing at once).
    const timer = longTimeout(() => {
      timedOut = true;
      if (!pid) return;
      killGroup(pid, "SIGTERM");
      setTimeout(() => killGroup(pid, "SIGKILL"), 2000).unref?.();
    }, timeoutSec * 1000);
    const done = (exitCode: number | null, extra = "") => {
      clearLongTimeout(timer);
      if (pid) {
        // Whatever the command left behind in its group goes with it.
        killGroup(pid, "SIGKILL");
        running.delete(pid);
      }
      resolve({ exitCode: timedOut ? null : exitCode, timedOut, output: bounded(out + extra) });
    };
    proc.on("error", (err) => done(127, `\n${err.message}`));
    proc.on("close", (code) => done(code));
  });
}

export type Gate = {
  /** Runs the gate; the correction text when the child must go on, else null (passed, or out of retries). */
  check(viaFinalize: boolean): Promise<string | null>;
};

export function gateFromEnv(emit: (ev: ChildEvent) => void): Gate | null {
  const command = process.env.PI_SUBAGENT_GATE;
  if (!command?.trim()) return null;
  const timeoutSec = Number(process.env.PI_SUBAGENT_GATE_TIMEOUT) || 300;
  const retries = Math.max(0, Math.floor(Number(process.env.PI_SUBAGENT_GATE_RETRIES ?? 2)));
  let attempts = 0;
  let passed = false;
  return {
    async check(viaFinalize) {
      if (passed || attempts > retries || ownerGone) return null;
      attempts++;
      emit({ type: "gate_start", attempt: attempts, command });
      const r = await runGateCommand(command, process.cwd(), timeoutSec);
      if (ownerGone) return null;
      passed = r.exitCode === 0 && !r.timedOut;
      emit({ type: "gate", attempt: attempts, passed, exitCode: r.exitCode, timedOut: r.timedOut, output: r.output });
      if (passed || attempts > retries) return null;
      return gateCorrection(command, r, attempts, retries + 1, viaFinalize);
    },
  };
}

/** A plain final answer (no tool call) is "done" too when finalize is not required: gate it at turn end. */
export function gatePlainEndings(pi: Api, gate: Gate, finalized: () => boolean): void {
  pi.on("turn_end", async (e) => {
    const m = e?.message;
    if (finalized() || m?.role !== "assistant" || m.stopReason !== "stop") return;
    if (Array.isArray(m.content) && m.content.some((p: { type?: string }) => p?.type === "toolCall")) return;
    const correction = await gate.check(false);
    if (correction) pi.sendUserMessage(correction, { deliverAs: "followUp" });
  });
}
