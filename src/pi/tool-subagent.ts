// `subagent {agent, task, sessionId?}` (docs/pi-extension.md): one child with a sticky session, a result text
// that starts with the **Status:** / **Session ID:** header, and details {mode, runId, results[], error?,
// sessionId, finalized}. Failures come back as results carrying details.error, as the spec describes.
import { realClock } from "../core/host.ts";
import { sanitize } from "../core/sanitize.ts";
import { profileRefusal } from "../core/run/task-error.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { prepareCall } from "../core/call/prepare.ts";
import type { CallRequest } from "../core/call/request.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import type { ErrorCode, FinalizePayload, RunResult, Usage } from "../core/types.ts";
import { emptyUsage } from "../core/types.ts";
import { isolationLines, type IsolationResult } from "../core/run/launch/isolation.ts";
import { callWindows } from "../ui/call-windows.ts";
import type { WindowedDetails } from "../ui/windows.ts";
import { renderSimpleCall, renderWindowsResult, type ThemeLike } from "./render.ts";
import { firstProblem, SCHEMAS, SUBAGENT_SCHEMA } from "./schemas.ts";
import { Throttle, UPDATE_INTERVAL_MS } from "./throttle.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { launchBackground } from "./background.ts";
import { childrenResultFields, refusedTasks, startedTasks, TASKS_OUTPUT_SCHEMA } from "./tool-results.ts";

const OUTPUT_BYTES = 48 * 1024;
/** A caller-chosen session id becomes part of a file name: no separators, no dots. */
const STICKY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

type DisplayItem = { type: "text"; text: string } | { type: "toolCall"; name: string; args: Record<string, unknown> };

export type SingleResult = {
  agent: string;
  task: string;
  exitCode: number;
  usage: Usage;
  error?: string;
  sessionFile?: string;
  output?: string;
  displayItems?: DisplayItem[];
};

export type SubagentDetails = {
  mode: "single" | "management";
  runId?: string;
  results: SingleResult[];
  error?: { code: ErrorCode; message: string };
  sessionId?: string;
  finalized?: FinalizePayload;
  /** An isolated run's branch, changed files and diffstat. */
  isolation?: IsolationResult;
  /** The acceptance gate's outcome (profile `gate`). */
  gate?: { passed: boolean; attempts: number };
  structured?: unknown;
  /** Our live window (same layout as delegate_to_subagents). */
  window?: WindowedDetails;
};

function failure(code: ErrorCode, message: string, mode: "single" | "management" = "single") {
  const details: SubagentDetails = { mode, results: [], error: { code, message } };
  return {
    content: [{ type: "text", text: message }],
    details,
    isError: true,
    structuredContent: refusedTasks(code, message),
  };
}

function parseJsonArgs(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function displayItems(r: RunResult): DisplayItem[] {
  const items: DisplayItem[] = [];
  for (const m of r.messages) {
    if (m.role !== "assistant") continue;
    if (m.text.trim()) items.push({ type: "text", text: m.text });
    for (const c of m.toolCalls) items.push({ type: "toolCall", name: c.name, args: parseJsonArgs(c.args) });
  }
  return items.slice(-50);
}

export function subagentResult(o: TaskOutcome, task: string, runId: string) {
  const r = o.result;
  const statusWord = r.finalize?.status ?? (r.status === "completed" ? "SUCCESS" : "ERROR");
  const body =
    r.status === "completed"
      ? r.output
      : [r.error ? `Error: ${r.error}` : "", r.output ? `Partial output:\n${r.output}` : ""]
          .filter(Boolean)
          .join("\n\n");
  const t = truncateHeadTail(body, {
    maxBytes: OUTPUT_BYTES,
    maxLines: 1000,
    hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text`,
  });
  // What did not go as asked (a model substituted, an agent file read leniently, an output cut) precedes the answer.
  const warned = r.warnings?.length ? `**Warnings:**\n${r.warnings.map((w) => `- ${w}`).join("\n")}\n` : "";
  const text = `**Status:** ${statusWord}\n**Session ID:** \`${o.sessionId}\`\n${warned}\n---\n\n${t.text}`;
  let code: ErrorCode | undefined = r.errorCode;
  if (r.status === "error" && !code) code = "SUBAGENT_FAILED";
  if (!code && t.truncated) code = "SUBAGENT_OUTPUT_TRUNCATED";
  const single: SingleResult = {
    agent: o.agent,
    task: sanitize(task),
    // The child's real exit code; a child that never exited on its own (stopped, never started) counts as 0 or 1.
    exitCode: r.exitCode ?? (r.status === "completed" ? 0 : 1),
    usage: r.usage ?? emptyUsage(),
    ...(r.error ? { error: r.error } : {}),
    ...(r.sessionFile ? { sessionFile: r.sessionFile } : {}),
    output: r.output,
    displayItems: displayItems(r),
  };
  const details: SubagentDetails = {
    mode: "single",
    runId,
    results: [single],
    ...(code
      ? {
          error: {
            code,
            message:
              r.error ??
              r.warnings?.find((w) => w.startsWith("output cut:")) ??
              `Output truncated; get_subagent_output returns the full text`,
          },
        }
      : {}),
    sessionId: o.sessionId,
    ...(r.finalize ? { finalized: r.finalize } : {}),
    ...(r.isolation ? { isolation: r.isolation } : {}),
    ...(r.gate ? { gate: r.gate } : {}),
    ...(r.structured !== undefined ? { structured: r.structured } : {}),
  };
  const lines = isolationLines([o]);
  return { content: [{ type: "text", text: lines.length ? `${text}\n\n---\n\n${lines.join("\n")}` : text }], details };
}

/** The spec's header with a status of its own: the result is still to come, as a notice. */
function backgroundResult(sessionId: string, runId: string, agent: string) {
  const text = `**Status:** RUNNING\n**Session ID:** \`${sessionId}\`\n\n---\n\nStarted in the background. A notice arrives when it ends; get_subagent_output with this session id and wait: true waits for it.`;
  const details: SubagentDetails = { mode: "single", runId, results: [], sessionId };
  return {
    content: [{ type: "text", text }],
    details: { ...details, background: true },
    structuredContent: startedTasks([{ name: agent, sessionId, agent }]),
  };
}

/** One named agent's task as the call module's request; `resume` when the store knows the sticky session. */
export function subagentRequest(
  p: { agent: string; task: string; sessionId?: string; isolation?: "worktree"; background?: boolean },
  resume: string | undefined,
  cwd: string,
): CallRequest {
  const t = {
    name: p.agent,
    prompt: p.task,
    profile: p.agent,
    ...(resume ? { resume } : {}),
    ...(p.sessionId ? { sessionId: p.sessionId } : {}),
    ...(p.isolation ? { isolation: p.isolation } : {}),
  };
  return { tasks: [t], defaults: { cwd, finalize: "required" }, background: p.background };
}

export function subagentTool(env: ToolEnv) {
  return {
    name: "subagent",
    label: "Sub-agent",
    description: "Run one task with a named agent; returns its result and a sessionId that continues it.",
    promptSnippet: "One task to a named agent; its sessionId continues it",
    parameters: SUBAGENT_SCHEMA,
    outputSchema: TASKS_OUTPUT_SCHEMA,
    async execute(
      _id: string,
      params: unknown,
      signal: AbortSignal | undefined,
      onUpdate: ((r: unknown) => void) | undefined,
      ctx: ToolContext,
    ) {
      const problem = firstProblem(SCHEMAS.subagent, params);
      if (problem) return failure("INVALID_INPUT", `Invalid subagent call: ${problem}`);
      const { agent, task, sessionId, isolation, background } = params as {
        agent: string;
        task: string;
        sessionId?: string;
        isolation?: "worktree";
        background?: boolean;
      };
      if (sessionId !== undefined && !STICKY_ID.test(sessionId)) {
        return failure(
          "INVALID_INPUT",
          `Invalid subagent call: sessionId "${sessionId}" may only hold letters, digits, "-" and "_" (at most 128).`,
        );
      }
      const rt = await env.services();
      const call = env.begin(ctx);
      let engine: Awaited<ReturnType<typeof call.engine>>;
      try {
        engine = await call.engine();
      } catch (err) {
        // e.g. pi cannot be found: a result with details.error, never a thrown tool error (docs/pi-extension.md "Errors").
        return failure("SUBAGENT_FAILED", `Cannot start a sub-agent: ${(err as Error).message}`);
      }
      if (rt.depth >= engine.settings.maxDepth) {
        return failure(
          "SUBAGENT_DEPTH_EXCEEDED",
          `Sub-agent depth limit reached (depth ${rt.depth}, maxDepth ${engine.settings.maxDepth}): sub-agents cannot start further sub-agents.`,
          "management",
        );
      }
      const profiles = call.profiles();
      if (!profiles.has(agent)) {
        const refused = profileRefusal(engine, agent);
        if (refused.code !== "UNKNOWN_AGENT") return failure(refused.code, refused.message);
        return failure(
          "UNKNOWN_AGENT",
          `Unknown agent: ${agent}. Available agents: ${[...profiles.keys()].sort().join(", ") || "(none)"}`,
        );
      }
      // Sticky sessions: an id the store knows is resumed. An id it does not know (another pi session, a
      // store kept in memory, or one the caller chose) starts that sticky session: the child's session file is
      // named by cwd, agent and id, so pi continues it when it is on disk and starts it fresh when not.
      const known = sessionId ? engine.store.getSession(sessionId) : null;
      if (known && known.agent !== agent)
        return failure("INVALID_INPUT", `Session "${sessionId}" belongs to agent "${known.agent}", not "${agent}".`);
      const resume = known && known.runs.length > 0 ? sessionId : undefined;
      const prepared = await prepareCall(
        engine,
        subagentRequest({ agent, task, sessionId, isolation, background }, resume, ctx.cwd),
        await call.front(engine),
      );
      if ("refusal" in prepared) return failure(prepared.refusal.code, prepared.refusal.message);
      // A project-local agent without consent: this tool's one task cannot run, so the call itself fails.
      const [refused] = prepared.call.refused;
      if (refused) return failure("SUBAGENTS_DISABLED", refused);
      const [input] = prepared.call.tasks;
      const id = input.sessionId;
      const runId = id.slice(0, 8);
      const windows = callWindows(engine, [input]);
      const throttle = new Throttle(
        (w: WindowedDetails) => {
          const state = w.windows[0];
          const details: SubagentDetails = { mode: "single", results: [], sessionId: id, window: w };
          onUpdate?.({ content: [{ type: "text", text: `${agent}: ${state.toolCount} tools` }], details });
        },
        UPDATE_INTERVAL_MS,
        realClock,
      );
      windows.start(0, Date.now());
      if (background) {
        const refusal = await launchBackground(call, engine, prepared.call);
        return refusal ? failure(refusal.code, refusal.message) : backgroundResult(id, runId, agent);
      }
      const running = await call.start(engine, prepared.call, {
        signal,
        onEvent: (e) => {
          if (e.type === "taskWarnings") windows.warn(0, e.warnings);
          if (e.type !== "taskProgress") return;
          windows.event(0, e.state);
          throttle.push(windows.snapshot(Date.now()));
        },
      });
      if ("refusal" in running) return failure(running.refusal.code, running.refusal.message);
      const [outcome] = await running.outcomes;
      throttle.cancel();
      windows.end(0, outcome, Date.now());
      const result = subagentResult(outcome, task, runId);
      return {
        ...result,
        details: { ...result.details, window: windows.snapshot(Date.now()) },
        ...childrenResultFields([outcome]),
      };
    },
    renderCall: (args: { agent?: string; task?: string }, theme: ThemeLike) =>
      renderSimpleCall("subagent", `${args?.agent ?? ""} ${(args?.task ?? "").slice(0, 80)}`, theme),
    renderResult: (
      result: { details?: SubagentDetails; content?: { text?: string }[] },
      opts: { expanded: boolean },
      theme: ThemeLike,
    ) => renderWindowsResult(result.details?.window, opts.expanded, theme, result.content?.[0]?.text ?? ""),
  };
}
