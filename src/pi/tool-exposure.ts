// What pi learns about our tools besides their schemas, and what it costs a parent that does not delegate. Every
// declared tool is in every request the parent sends; the retrieval tools matter only around a delegation, so in
// pi ≥ 1.6 they are `deferred`: pi's `tool_search` declares one when the model looks for it, and codemode scripts
// can call them. A pi whose model has neither loader active (tool_search is off by default) would never reach
// them, so then they are declared as they become useful: the profile list from the start, output and transcript
// once a call of ours has started a sub-agent in this session — or from the start where there are sub-agents to ask
// about (a resumed session's, a folder's: extension.ts). Older pis get them as before.
// `annotations` (MCP's hints, read by permission extensions): core/call/tool-texts.ts, the same for `subagents mcp`.
import { ANNOTATIONS } from "../core/call/tool-texts.ts";
import { compareVersions, runningPiVersion } from "../host/pi-discovery.ts";

/** Declared from the start when no loader is active; the others once a sub-agent of this session exists. */
const FROM_START = ["list_subagent_profiles"];
const AFTER_A_CALL = ["get_subagent_output", "get_subagent_session"];
export const DEFERRED = new Set([...FROM_START, ...AFTER_A_CALL]);
/** pi's tools that can reach a deferred tool. */
const LOADERS = ["tool_search", "codemode"];

const DEFERRED_FROM = "1.6.0";

/** Whether this pi gets deferred retrieval tools (decided once per process, from the running pi's version). */
export function defersTools(version = runningPiVersion()): boolean {
  return !!version && compareVersions(version, DEFERRED_FROM) >= 0;
}

/** A tool as registered: its annotations, and `exposure: "deferred"` for a retrieval tool when `defer`. */
export function exposed<T extends { name: string }>(tool: T, defer: boolean): T {
  return {
    ...tool,
    ...(tool.name in ANNOTATIONS ? { annotations: ANNOTATIONS[tool.name as keyof typeof ANNOTATIONS] } : {}),
    ...(defer && DEFERRED.has(tool.name) ? { exposure: "deferred" } : {}),
  };
}

type ToolSet = { getActiveTools(): string[]; getAllTools(): { name: string }[]; setActiveTools(names: string[]): void };

/**
 * Keeps deferred tools reachable when no loader is active: `declare("start")` at session start, `declare("call")`
 * once a call of ours started a sub-agent. Does nothing while tool_search or codemode is active.
 */
export function reachability(pi: ToolSet, defer: boolean) {
  return (when: "start" | "call"): void => {
    if (!defer) return;
    try {
      const active = pi.getActiveTools();
      if (active.some((n) => LOADERS.includes(n))) return;
      const registered = new Set(pi.getAllTools().map((t) => t.name));
      const wanted = (when === "start" ? FROM_START : [...FROM_START, ...AFTER_A_CALL]).filter(
        (n) => registered.has(n) && !active.includes(n),
      );
      if (wanted.length) pi.setActiveTools([...active, ...wanted]);
    } catch {
      // a stale context (the pi session was replaced): the next session start declares them again
    }
  };
}
