// What pi 1.x takes from a tool result besides text (docs/pi-extension.md "Usage and structured results"):
// - `usage` in pi's Usage shape: pi persists it on the tool result and adds it to its footer, `/session` and the
//   RPC `get_session_stats` totals, so sub-agents' spend counts where the user looks. Only children that ran in
//   this call are counted (a resumed session's earlier runs were counted by the call that ran them).
// - `structuredContent` (declared by `outputSchema`): codemode scripts receive it instead of the text, so a
//   script reads ids, statuses and outputs without parsing. MCP clients (Claude Code, Codex) hand it to their model
//   instead of the text, and cut what is long: it is bounded like the text (STRUCTURED_BYTES in all), and every
//   task's status, error and session id come first (`summary`, then each task's fields before its output).
// pi 0.73.1 and 0.87.1 ignore both fields.
import { printable } from "../sanitize.ts";
import { shareBytes, truncateHeadTail, utf8Length } from "../truncate.ts";
import { boundedOutput, MIN_OUTPUT_BYTES, statusLine } from "../run/outcome-text.ts";
import type { TaskOutcome } from "../run/task-types.ts";
import { addUsage, emptyUsage, type ErrorCode, type Usage } from "../types.ts";

/** pi's Usage (`@earendil-works/pi-ai`): token counts and cost in USD. Our children report the total cost only. */
export type PiUsage = {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
};

export function toPiUsage(u: Usage): PiUsage {
  return {
    input: u.input,
    output: u.output,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: u.cost },
  };
}

/** The combined usage of the children that ran in this call, or undefined when none spent anything. */
export function callUsage(outcomes: TaskOutcome[]): PiUsage | undefined {
  const total = outcomes.reduce((sum, o) => addUsage(sum, o.result.usage ?? emptyUsage()), emptyUsage());
  if (!total.input && !total.output && !total.cacheRead && !total.cacheWrite && !total.cost) return undefined;
  return toPiUsage(total);
}

/** The whole structured result, like the text the model gets: the full outputs stay retrievable. */
export const STRUCTURED_BYTES = 50 * 1024;
/** What one task's error, finalized result and each warning keep at most (their head and tail). */
const FIELD_BYTES = { error: 2048, finalized: 2048, warning: 512 } as const;
/** The summary of every task's status line fits in what a client that keeps only a result's start shows its model
 *  (Claude Code: a 2 KB preview of a long result), 16 tasks included: a long line keeps its head (status, name)
 *  and its tail (session id). */
const SUMMARY_BYTES = 1400;
const SUMMARY_LINE_BYTES = { least: 72, most: 400 };
const MAX_WARNINGS = 10;

export type StructuredTask = {
  name: string;
  sessionId: string;
  agent: string;
  status: "completed" | "error" | "running" | "skipped";
  /** The task's structured result (outputSchema) and its acceptance gate's outcome. */
  data?: unknown;
  gate?: { passed: boolean; attempts: number };
  error?: string;
  errorCode?: string;
  /** What did not go as asked: a model substituted, an agent file read leniently, an output cut. */
  warnings?: string[];
  finalized?: { status: string; result?: string };
  /** What it spent (input excludes cacheRead, the tokens read from the provider's cache) and its wall time. */
  usage: { input: number; output: number; cacheRead: number; cost: number; turns: number; durationMs: number };
  /** Last: a client that cuts a long result keeps every task's fields above. */
  output: string;
};
export type StructuredTasks = {
  /** One status line per task (what the text starts with): status, error, session id. */
  summary?: string;
  tasks: StructuredTask[];
  usage: { input: number; output: number; cacheRead: number; cost: number };
  error?: { code: string; message: string };
};

const NO_USAGE = { input: 0, output: 0, cacheRead: 0, cost: 0, turns: 0, durationMs: 0 };
const NO_TOTAL = { input: 0, output: 0, cacheRead: 0, cost: 0 };

/** What every front says of a task it started in the background (its id is what collects it). */
export const startedLine = (t: { name: string; sessionId: string }) =>
  `● ${printable(t.name).replace(/\n/g, " ")}: started in the background (session: ${t.sessionId})`;

/** Tasks started in the background (resolved tasks, or their name, id and agent): their results come later
 *  (get_subagent_output). */
export function startedTasks(started: readonly { name: string; sessionId: string; agent: string }[]): StructuredTasks {
  return {
    tasks: started.map((t) => ({
      name: t.name,
      sessionId: t.sessionId,
      agent: t.agent,
      status: "running",
      usage: NO_USAGE,
      output: "",
    })),
    usage: NO_TOTAL,
  };
}

/** A call refused before any child ran. */
export function refusedTasks(code: string, message: string): StructuredTasks {
  return { tasks: [], usage: NO_TOTAL, error: { code, message } };
}

/** A call refused before anything started, with the spec's error shape in details (and pi's error flag). The tools
 * declare an outputSchema, so pi 1.x codemode hands a script `structuredContent` when there is one — without it a
 * refusal with isError rejected the script's call with the bare text, and the code was lost. */
export function refusedCall({ code, message }: { code: ErrorCode; message: string }) {
  return {
    content: [{ type: "text" as const, text: message }],
    details: { error: { code, message } },
    isError: true,
    structuredContent: refusedTasks(code, message),
  };
}

const clipped = (text: string, maxBytes: number, o: TaskOutcome) =>
  truncateHeadTail(text, {
    maxBytes,
    maxLines: 200,
    hint: `get_subagent_output with sessionId "${o.sessionId}" has it whole`,
  }).text;

/** A task's fields, its output left empty (bounded with the others': structuredTasks). */
function taskFields(o: TaskOutcome): StructuredTask {
  const r = o.result;
  const u = r.usage ?? emptyUsage();
  const warnings = r.warnings?.slice(0, MAX_WARNINGS).map((w) => clipped(w, FIELD_BYTES.warning, o));
  return {
    name: o.name,
    sessionId: o.sessionId,
    agent: o.agent,
    status: r.status === "completed" ? "completed" : r.errorCode === "SKIPPED" ? "skipped" : "error",
    ...(r.error ? { error: clipped(r.error, FIELD_BYTES.error, o) } : {}),
    ...(r.errorCode ? { errorCode: r.errorCode } : {}),
    ...(warnings?.length ? { warnings } : {}),
    ...(r.structured !== undefined ? { data: r.structured } : {}),
    ...(r.gate ? { gate: r.gate } : {}),
    ...(r.finalize
      ? {
          finalized: {
            status: r.finalize.status,
            ...(r.finalize.result !== undefined
              ? { result: clipped(String(r.finalize.result), FIELD_BYTES.finalized, o) }
              : {}),
          },
        }
      : {}),
    usage: {
      input: u.input,
      output: u.output,
      cacheRead: u.cacheRead,
      cost: u.cost,
      turns: u.turns,
      durationMs: r.durationMs,
    },
    output: "",
  };
}

const jsonBytes = (v: unknown) => utf8Length(JSON.stringify(v));

/**
 * Every task's outcome for a script or an MCP client, within `maxBytes` of JSON in all: the status lines first, then
 * each task's fields, its output last and cut to its share of what is left (head and tail, with where the rest is).
 * A task's `data` (its structured result) too big to leave room for the outputs is left out, saying so.
 */
export function structuredTasks(outcomes: TaskOutcome[], maxBytes = STRUCTURED_BYTES): StructuredTasks {
  const line = Math.min(
    SUMMARY_LINE_BYTES.most,
    Math.max(SUMMARY_LINE_BYTES.least, Math.floor(SUMMARY_BYTES / Math.max(1, outcomes.length))),
  );
  const summary = outcomes
    .map((o) => truncateHeadTail(statusLine(o), { maxBytes: line, maxLines: 1 }).text.replace(/\n/g, " "))
    .join("\n");
  const tasks = outcomes.map(taskFields);
  const usage = tasks.reduce(
    (s, t) => ({
      input: s.input + t.usage.input,
      output: s.output + t.usage.output,
      cacheRead: s.cacheRead + t.usage.cacheRead,
      cost: s.cost + t.usage.cost,
    }),
    NO_TOTAL,
  );
  const result: StructuredTasks = { ...(outcomes.length ? { summary } : {}), tasks, usage };
  const floor = MIN_OUTPUT_BYTES * outcomes.filter((o) => o.result.output).length;
  // The biggest data first, until the fields leave each output its least.
  for (const t of [...tasks].sort((a, b) => jsonBytes(b.data ?? null) - jsonBytes(a.data ?? null))) {
    if (t.data === undefined || jsonBytes(result) + floor <= maxBytes) break;
    const size = jsonBytes(t.data);
    delete t.data;
    t.warnings = [...(t.warnings ?? []), `data (${Math.round(size / 1024)} KB) left out of this result: too big`];
  }
  const sizes = outcomes.map((o) => utf8Length(o.result.output ?? ""));
  // JSON escapes (newlines, quotes) make an output longer than its text: shrink the room until the whole fits.
  let room = maxBytes - jsonBytes(result);
  for (let tries = 0; tries < 4; tries++) {
    const shares = shareBytes(sizes, room, Math.min(MIN_OUTPUT_BYTES, Math.floor(room / Math.max(1, outcomes.length))));
    outcomes.forEach((o, i) => {
      tasks[i].output = o.result.output ? boundedOutput(o, Math.max(1, shares[i]), 2000) : "";
    });
    const over = jsonBytes(result) - maxBytes;
    if (over <= 0) break;
    room -= over + 256 * outcomes.length;
  }
  return result;
}

/** JSON Schema of `structuredContent` (pi hands it to codemode as the call's return type). Kept short: it is prompt. */
export const TASKS_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    summary: { type: "string" },
    tasks: {
      type: "array",
      items: {
        type: "object",
        properties: {
          name: { type: "string" },
          sessionId: { type: "string" },
          agent: { type: "string" },
          status: { type: "string", enum: ["completed", "error", "running", "skipped"] },
          output: { type: "string" },
          data: {},
          gate: { type: "object", properties: { passed: { type: "boolean" }, attempts: { type: "number" } } },
          error: { type: "string" },
          errorCode: { type: "string" },
          warnings: { type: "array", items: { type: "string" } },
          finalized: { type: "object", properties: { status: { type: "string" }, result: { type: "string" } } },
          usage: {
            type: "object",
            properties: {
              input: { type: "number" },
              output: { type: "number" },
              cacheRead: { type: "number" },
              cost: { type: "number" },
              turns: { type: "number" },
              durationMs: { type: "number" },
            },
          },
        },
        required: ["name", "sessionId", "agent", "status", "output", "usage"],
      },
    },
    usage: {
      type: "object",
      properties: {
        input: { type: "number" },
        output: { type: "number" },
        cacheRead: { type: "number" },
        cost: { type: "number" },
      },
    },
    error: { type: "object", properties: { code: { type: "string" }, message: { type: "string" } } },
  },
  required: ["tasks", "usage"],
} as const;

/** The extra fields of a result of a tool that ran children in this call. `isError` (pi ≥ 1.0 reads it) when no
 * task completed — every one failed, was cancelled or skipped: the call as a whole did not do its work. */
export function childrenResultFields(outcomes: TaskOutcome[]): {
  usage?: PiUsage;
  structuredContent: StructuredTasks;
  isError: boolean;
} {
  const usage = callUsage(outcomes);
  return {
    ...(usage ? { usage } : {}),
    structuredContent: structuredTasks(outcomes),
    isError: outcomes.length > 0 && outcomes.every((o) => o.result.status !== "completed"),
  };
}

/** A background child's spend (PiSession.takeBackgroundSpend) in pi's shape, or undefined when it spent nothing. */
export function backgroundUsage(u: Usage | undefined): PiUsage | undefined {
  return u && (u.input || u.output || u.cacheRead || u.cacheWrite || u.cost) ? toPiUsage(u) : undefined;
}
