// /subagents — recent sessions with status, cost and age; `/subagents show ID`; `/subagents kill` (stops every
// running sub-agent of this pi session; a single call's children share one abort).
import { formatSessionTranscript, sessionNotFound } from "../core/transcript.ts";
import type { ActiveRuns } from "./extension.ts";
import type { PiRuntime } from "./runtime.ts";

function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

export function subagentsCommand(runtime: () => Promise<PiRuntime>, active: ActiveRuns) {
  return {
    description: "Sub-agent sessions: /subagents [show ID | kill]",
    handler: async (args: string, ctx: { ui: { notify(m: string, t?: "info" | "warning" | "error"): void } }) => {
      const rt = await runtime();
      const [verb, id] = (args ?? "").trim().split(/\s+/);
      if (verb === "kill") {
        const n = active.abortAll();
        ctx.ui.notify(n ? `Stopping ${n} running sub-agent call${n === 1 ? "" : "s"}.` : "No sub-agents are running.", "info");
        return;
      }
      if (verb === "show") {
        const record = id ? rt.store.getSession(id) : null;
        if (!record || record.runs.length === 0) {
          ctx.ui.notify(sessionNotFound(id ?? ""), "error");
          return;
        }
        const messages = new Map(record.runs.map((r) => [r.id, rt.store.getMessages(r.id)]));
        ctx.ui.notify(formatSessionTranscript(record, messages).slice(0, 20_000), "info");
        return;
      }
      const rows = rt.store.listSessions({ limit: 20 });
      if (!rows.length) {
        ctx.ui.notify("No sub-agent sessions yet.", "info");
        return;
      }
      const now = Date.now();
      const text = rows.map((r) => `${r.id}  ${r.status.padEnd(9)} ${r.agent.padEnd(10)} ${r.cost ? `$${r.cost.toFixed(4)}` : "-"}  ${age(now - r.updatedAt)} ago  ${r.name}`).join("\n");
      ctx.ui.notify(text, "info");
    },
  };
}
