// The caps of each pi session (core/run/cap-guard.ts) kept for the extension's lifetime, counted from the store by
// the pi session's id (so a /reload or a resumed session keeps its counts), and the footer status line while
// that session's children run: `subagents 3 running · 2 queued · $0.42`, cleared when none run or wait.
import { CapGuard, type GuardStatus } from "../core/run/cap-guard.ts";
import { capsSummary, usd } from "../core/session-caps.ts";
import type { CapSettings } from "../core/cap-settings.ts";
import type { SessionStore } from "../core/store/store-types.ts";

export const STATUS_KEY = "subagents";

export type StatusUi = { setStatus?(key: string, text: string | undefined): void };

export function statusText(s: GuardStatus): string | undefined {
  if (!s.running && !s.queued) return undefined;
  return `subagents ${s.running} running${s.queued ? ` · ${s.queued} queued` : ""} · ${usd(s.cost)}`;
}

export class SessionGuards {
  private readonly guards = new Map<string, { guard: CapGuard; ui?: StatusUi; shown?: string }>();

  constructor(private readonly store: () => SessionStore | undefined) {}

  /** The guard of one pi session; `ui` (the latest tool call's) is where its status line goes. */
  for(sessionId: string | undefined, ui?: StatusUi): CapGuard {
    const key = sessionId ?? "";
    let g = this.guards.get(key);
    if (!g) {
      const entry: { guard: CapGuard; ui?: StatusUi; shown?: string } = { guard: null as unknown as CapGuard, ui };
      // Without a session id (an old pi) this process is the scope; else the store has every run of the session.
      const recorded = sessionId ? () => this.store()?.parentUsage(sessionId) ?? { spawns: 0, cost: 0 } : undefined;
      entry.guard = new CapGuard(recorded, "this pi session", () => this.show(entry));
      this.guards.set(key, entry);
      g = entry;
    }
    if (ui?.setStatus) g.ui = ui;
    return g.guard;
  }

  private show(g: { guard: CapGuard; ui?: StatusUi; shown?: string }): void {
    const text = statusText(g.guard.status());
    if (text === g.shown) return;
    g.shown = text;
    try {
      g.ui?.setStatus?.(STATUS_KEY, text);
    } catch {
      // a stale context (the pi session was replaced): the status line of a gone session needs no update
    }
  }
}

/** `This pi session: 3/100 sub-agents started · $0.42/$5.00 spent` for /subagents. */
export function capsLine(guards: SessionGuards, sessionId: string | undefined, caps: CapSettings): string {
  return `This pi session: ${capsSummary(caps, guards.for(sessionId).used())}`;
}
