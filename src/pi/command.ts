// /subagents — recent sessions with status, cost and age; `/subagents show ID`; `/subagents kill` (stops every
// running sub-agent of this pi session; a single call's children share one abort).
import { formatSessionTranscript, sessionNotFound } from "../core/store/transcript.ts";
import { sessionRow } from "../ui/format.ts";
import type { ActiveRuns } from "./active-runs.ts";
import type { PiRuntime } from "./runtime.ts";


export function subagentsCommand(runtime: () => Promise<PiRuntime>, active: ActiveRuns) {
  return {
    description: "Sub-agent sessions: /subagents [show ID | kill ID | kill all]",
    handler: async (args: string, ctx: { ui: { notify(m: string, t?: "info" | "warning" | "error"): void } }) => {
      const rt = await runtime();
      const [verb, id] = (args ?? "").trim().split(/\s+/);
      if (verb === "kill") {
        if (id === "all" || (!id && active.running().length <= 1)) {
          const n = active.abortAll();
          ctx.ui.notify(n ? `Stopping ${n} running sub-agent${n === 1 ? "" : "s"}.` : "No sub-agents are running.", "info");
          return;
        }
        if (!id) {
          ctx.ui.notify(`Several sub-agents are running: /subagents kill ID (one of ${active.running().join(", ")}) or /subagents kill all.`, "warning");
          return;
        }
        const killed = active.kill(id);
        ctx.ui.notify(killed ? `Stopping sub-agent ${id}.` : `Sub-agent ${id} is not running here.`, killed ? "info" : "warning");
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
      const text = rows.map((r) => sessionRow(r, now)).join("\n");
      ctx.ui.notify(text, "info");
    },
  };
}
