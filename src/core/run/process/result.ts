// What an attempt's end means (classify: completed, failed, or to be nudged once more), and the masking of what the
// run result keeps (its messages and structured data).
import type { ExitInfo } from "../../host.ts";
import { sanitize } from "../../sanitize.ts";
import type { ErrorCode, StoredMessage } from "../../types.ts";
import type { FinalizeMode } from "./finalize-contract.ts";
import type { MarkedProcess } from "./marks.ts";
import type { RunState } from "./run-state.ts";
import { stderrSummary } from "./stderr-summary.ts";
import type { Stop } from "./stops.ts";

/** One child process from spawn to exit, and why it was stopped, if it was. */
export type Attempt = {
  exit: ExitInfo;
  stop: Stop | null;
  stderr: string;
  stderrHead: string;
  stderrWhole: boolean;
  keptChild?: { pid: number; task: number };
  leftovers: MarkedProcess[];
};

export function classify(
  state: RunState,
  { exit, stop, stderr, stderrHead, stderrWhole }: Attempt,
  finalize: FinalizeMode,
): { status: "completed" | "error"; output: string; error?: string; code?: ErrorCode } | "nudge" {
  // An answer stopped at an output limit before it ended is kept as far as it came (its first OUTPUT_CHARS).
  const inFlight = stop?.code === "SUBAGENT_OUTPUT_TRUNCATED" && state.streamHead.trim() ? state.streamHead : null;
  const partial = state.finalize?.result ?? inFlight ?? state.lastText;
  if (stop) return { status: "error", output: partial, error: stop.message, code: stop.code };
  if (state.errorMessage)
    return { status: "error", output: state.lastText, error: state.errorMessage, code: "SUBAGENT_FAILED" };
  if (!state.agentEnded && !state.finalize) {
    const why =
      stderrSummary(stderrHead, stderr, stderrWhole) || (exit.signal ? `killed by ${exit.signal}` : "no output");
    return {
      status: "error",
      output: state.lastText,
      error: `Sub-agent process exited with code ${exit.code ?? "null"} before finishing: ${why}`,
      code: "SUBAGENT_FAILED",
    };
  }
  const f = state.finalize;
  if (f?.status === "SUCCESS") return { status: "completed", output: f.result ?? "" };
  if (f?.status === "ERROR")
    return {
      status: "error",
      output: f.result ?? "",
      error: f.error ?? "Sub-agent reported an error",
      code: "SUBAGENT_FAILED",
    };
  // Without the strict contract the result is the last assistant text.
  if (finalize !== "required") return { status: "completed", output: state.lastText };
  return "nudge";
}

/** Whether the run's output is cut, and how much of how much is kept: it was longer than the run keeps, or the child
 *  already sent only its first part (lastTextCut, finalizeCut). null: it is whole. */
export function outputCut(
  state: RunState,
  raw: string,
  limit: number,
): { kept: number; of: string; lineLost: boolean } | null {
  const told = raw === state.lastText ? state.lastTextCut : raw === state.finalize?.result ? state.finalizeCut : null;
  if (!told && raw.length <= limit) return null;
  const whole = told?.of ?? (told ? null : raw.length);
  const n = (x: number) => x.toLocaleString("en-US");
  return {
    kept: Math.min(limit, raw.length),
    of: whole === null ? `over ${n(raw.length)}` : n(whole),
    lineLost: whole === null,
  };
}

/** Secrets masked inside the structured result too; what no longer parses after masking is kept as masked text. */
export function sanitizedData(data: unknown): unknown {
  const masked = sanitize(JSON.stringify(data));
  try {
    return JSON.parse(masked);
  } catch {
    return masked;
  }
}

export function sanitizeMessage(m: StoredMessage): StoredMessage {
  if (m.role !== "assistant") return { ...m, text: sanitize(m.text) };
  return {
    ...m,
    text: sanitize(m.text),
    toolCalls: m.toolCalls.map((c) => ({ name: c.name, args: sanitize(c.args) })),
    ...(m.error !== undefined ? { error: sanitize(m.error) } : {}),
  };
}
