// The pi extension: registers delegate_to_subagents, get_subagent_output, get_subagent_session,
// list_subagent_profiles and subagent (as settings allow), the /subagents command, and the lifecycle hooks.
// Never writes to stdout (under Bun pi that would corrupt JSON/RPC output).
import { printable } from "../core/sanitize.ts";
import { readEntries } from "./persist.ts";
import { childAtMaxDepth, createServices, type PiServices } from "./services.ts";
import { profilesTool, outputTool, sessionTool } from "./tool-retrieval.ts";
import { batchToolOf } from "./tool-batch.ts";
import { delegateTool } from "./tool-delegate.ts";
import { subagentTool } from "./tool-subagent.ts";
import { makeToolEnv, type ToolContext } from "./tool-env.ts";
import { subagentsCommand } from "./command.ts";
import { ActiveRuns } from "./active-runs.ts";
import { cancelledBy, ownerShutdown } from "../core/run/process/abort-reason.ts";
import { capsLine } from "./session-guard.ts";
import { NestedCalls } from "./nested-progress.ts";
import { defersTools, exposed, reachability } from "./tool-exposure.ts";
import { processTracing } from "../host/otlp-exporter.ts";

/** The kill protocol's own bound (SIGTERM, 5 s, SIGKILL) plus a moment to record the ends. */
const SHUTDOWN_GRACE_MS = 7000;

// Types only (erased from the bundle): checked against current pi; pi 0.73.1's API is a subset we stay within.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type PiApi = Pick<
  ExtensionAPI,
  "registerTool" | "registerCommand" | "on" | "appendEntry" | "getActiveTools" | "getAllTools" | "sendMessage"
> &
  Partial<Pick<ExtensionAPI, "events" | "setActiveTools">>;

type Tool = {
  name: string;
  execute: (
    id: string,
    params: unknown,
    signal: AbortSignal | undefined,
    onUpdate: unknown,
    ctx: ToolContext,
  ) => Promise<unknown>;
};

/** How recent a stop by an abort must be to have been pi's own on quitting (it aborts, waits for the call, then
 *  tells us it ends): the kill protocol's grace and a margin. */
const QUIT_ABORT_MS = 10_000;

/** pi aborts a tool call when the user presses Esc (or an RPC client aborts): its children say so, unlike a stop
 *  picked in /subagents. */
const ABORTED = cancelledBy("Cancelled: the tool call was aborted");

/** Wraps execute so every call's children are reachable from session_shutdown, a call a codemode script made
 * shows its progress in a widget (nested-progress.ts), and a delegation's sub-agents can be fetched afterwards
 * (tool-exposure.ts). */
function tracked<T extends Tool>(tool: T, active: ActiveRuns, nested: NestedCalls, afterCall: () => void): T {
  return {
    ...tool,
    execute: async (
      id: string,
      params: unknown,
      signal: AbortSignal | undefined,
      onUpdate: unknown,
      ctx: ToolContext,
    ) => {
      const c = active.link(signal, ABORTED);
      const progress = nested.progress(
        id,
        onUpdate as (r: unknown) => void,
        ctx as Parameters<NestedCalls["progress"]>[2],
      );
      try {
        return await tool.execute(id, params, c.signal, progress.onUpdate, ctx);
      } finally {
        progress.close();
        active.release(c);
        afterCall();
      }
    },
  };
}

/** Whether a session's history holds a call of our delegating tools (its sub-agents may be asked about). */
function delegatedIn(entries: unknown[]): boolean {
  return entries.some((e) => {
    const m = (e as { type?: string; message?: { role?: string; content?: unknown } })?.message;
    if ((e as { type?: string })?.type !== "message" || m?.role !== "assistant" || !Array.isArray(m.content))
      return false;
    return m.content.some(
      (p: { type?: string; name?: string }) =>
        p?.type === "toolCall" && (p.name === "delegate_to_subagents" || p.name === "subagent"),
    );
  });
}

export default async function subagentsExtension(pi: PiApi): Promise<void> {
  // In a child at max depth no delegation tool exists at all: the child cannot recurse, whatever loaded us. Checked
  // before anything else (no store, no host): every child of an installed extension passes through here.
  if (process.env.PI_SUBAGENT_CHILD === "1" && childAtMaxDepth()) return;
  let servicesPromise: Promise<PiServices> | null = null;
  const services = () => (servicesPromise ??= createServices());
  const rt = await services();
  const { settings, warnings: settingsWarnings } = rt.settingsFor(process.cwd());

  const active = new ActiveRuns();
  const activeTools = () => {
    try {
      return pi.getActiveTools();
    } catch {
      return undefined; // older pi or a stale context: deny lists fall back to pi's defaults
    }
  };
  // A background task's end reaches the model the way pi delivers messages: a new turn when idle, at the next
  // turn boundary (steer) when it is busy.
  const notify = (text: string) =>
    pi.sendMessage(
      // Shown in pi's view too: a child's text in it acts on nothing there.
      { customType: "subagents-done", content: printable(text), display: true },
      { triggerTurn: true, deliverAs: "steer" },
    );
  const toolDefs = () => {
    const names = activeTools();
    if (!names) return undefined;
    const all = new Map(pi.getAllTools().map((t) => [t.name, t]));
    return names.flatMap((n) => {
      const t = all.get(n);
      return t ? [{ name: t.name, description: t.description ?? "", parameters: t.parameters }] : [];
    });
  };
  // Other extensions hear of each task's start and end (subagents:task_start / subagents:task_end) with the object
  // a task hook gets on stdin. pi.events exists from pi 0.7x on; an older pi simply has no listeners to tell.
  const emit = pi.events ? (channel: string, data: unknown) => pi.events?.emit(channel, data) : undefined;
  const env = makeToolEnv({
    services,
    appendEntry: (type, data) => pi.appendEntry(type, data),
    active,
    activeTools,
    notify,
    toolDefs,
    emit,
  });
  const tools: Tool[] = [
    delegateTool(env),
    outputTool(env),
    sessionTool(env),
    profilesTool(env),
    subagentTool(env),
    batchToolOf(env),
  ] as unknown as Tool[];
  // Our tools take plain JSON Schema (TypeBox symbols stripped, so pi's coercion works under both runtimes), not
  // pi's TypeBox generics: the one cast at the boundary.
  type Registered = Parameters<PiApi["registerTool"]>[0];
  const nested = new NestedCalls();
  const ours = new Set(tools.map((t) => t.name));
  pi.on("tool_call", (event) => {
    if (ours.has(event.toolName)) nested.noteCall(event);
  });
  const defer = defersTools() && typeof pi.setActiveTools === "function";
  const reach = reachability(pi as Parameters<typeof reachability>[0], defer);
  const delegating = new Set(["delegate_to_subagents", "subagent"]);
  for (const tool of tools) {
    if (!settings.tools.includes(tool.name)) continue;
    const afterCall = delegating.has(tool.name) ? () => reach("call") : () => {};
    pi.registerTool(exposed(tracked(tool, active, nested, afterCall), defer) as unknown as Registered);
  }
  pi.registerCommand(
    "subagents",
    subagentsCommand(services, active, (ctx) =>
      capsLine(env.guards, ctx.sessionManager?.getSessionId?.(), rt.settingsFor(ctx.cwd ?? process.cwd()).settings),
    ),
  );

  let noticeShown = false;
  pi.on("session_start", async (event, ctx) => {
    if (!noticeShown && ctx?.hasUI) {
      noticeShown = true;
      if (rt.memoryNotice) ctx.ui.notify(rt.memoryNotice, "warning");
      // A trace exporter that fails says so once, in pi's notifications rather than across its screen.
      processTracing(process.env)?.warnTo((line) => ctx.ui.notify(`subagents: ${line}`, "warning"));
      // A settings value we ignored (bad type, a project raising a cap) is said once, as doctor says it.
      if (settingsWarnings.length) ctx.ui.notify(`subagents settings: ${settingsWarnings.join("; ")}`, "warning");
    }
    const entries = event?.reason === "new" ? [] : (ctx?.sessionManager?.getEntries?.() ?? []);
    const earlier = readEntries(entries);
    for (const runs of earlier) rt.store.importRuns?.(runs);
    // The model can fetch sub-agents' outputs from its first request on where there are some to ask about: a resumed
    // session with sub-agents of its own or a delegation in its history, a folder where runs of ours were made (a
    // background run from the CLI, another pi session's).
    const folder = ctx?.cwd ?? process.cwd();
    const some = earlier.length > 0 || delegatedIn(entries) || !!rt.store.hasSessionsIn?.(folder);
    reach(some ? "call" : "start");
  });
  // The pi session owns its sub-agents: they stop with it and are recorded as interrupted, not cancelled. pi awaits
  // this handler, so the kill protocol (up to ~5 s per child) finishes and the ends are recorded before pi exits.
  pi.on("session_shutdown", async () => {
    const running = active.running().length;
    // A delegation in the foreground was aborted by pi itself as it quit (Ctrl-C twice, /quit): its tasks ended
    // just before this event, recorded as cancelled, while pi's last frame still shows them running.
    const justStopped = active.stoppedWithin(QUIT_ABORT_MS);
    active.abortAll(ownerShutdown());
    await active.settle(SHUTDOWN_GRACE_MS);
    // The tasks' end hooks finish (each is bounded by subagents.hooks.timeout, then ended).
    await env.settleCalls();
    rt.closeOwner();
    // pi stops its terminal UI before this event, so its last frame still says `subagents N running`: the line
    // after it says what became of them. stderr, never stdout (JSON and RPC modes own stdout).
    if (running)
      process.stderr.write(
        `subagents: pi ended with ${running} sub-agent${running === 1 ? "" : "s"} running; stopped and recorded as interrupted (/subagents lists them).\n`,
      );
    if (justStopped)
      process.stderr.write(
        `subagents: ${justStopped} sub-agent${justStopped === 1 ? "" : "s"} stopped just before pi ended (${justStopped === 1 ? "its" : "their"} delegation aborted) and recorded as cancelled (/subagents lists them).\n`,
      );
  });
}
