// Small helpers the foreign runtimes share (their parsers and their commands).
import { cap, stringify } from "../process/transport.ts";
import type { ChildEvent } from "../../types.ts";

const parseLine = (line: string): Record<string, any> | null => {
  if (!line.startsWith("{")) return null;
  try {
    const v = JSON.parse(line);
    return v && typeof v === "object" ? v : null;
  } catch {
    return null;
  }
};

/** A CLI's JSON-lines event parser: each line that is a JSON object goes to `handle` with the list its events go
 *  into; any other line gives none. */
export const jsonLines =
  (handle: (ev: Record<string, any>, out: ChildEvent[]) => void) =>
  (line: string): ChildEvent[] => {
    const ev = parseLine(line);
    if (!ev) return [];
    const out: ChildEvent[] = [];
    handle(ev, out);
    return out;
  };

export const argsText = (v: unknown): string => cap(typeof v === "string" ? v : stringify(v ?? {}), 1000);
export const resultText = (v: unknown): string => cap(typeof v === "string" ? v : stringify(v ?? ""), 2000);
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export function assistant(
  text: string,
  usage: Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number; cost: number }> = {},
  extra: {
    model?: string;
    provider?: string;
    stopReason?: string;
    errorMessage?: string;
    toolCalls?: { id: string; name: string; args: string }[];
  } = {},
): ChildEvent {
  return {
    type: "assistant",
    text,
    toolCalls: extra.toolCalls ?? [],
    usage: {
      input: usage.input ?? 0,
      output: usage.output ?? 0,
      cacheRead: usage.cacheRead ?? 0,
      cacheWrite: usage.cacheWrite ?? 0,
      cost: usage.cost ?? 0,
    },
    model: extra.model,
    provider: extra.provider,
    stopReason: extra.stopReason ?? (extra.toolCalls?.length ? "toolUse" : "stop"),
    errorMessage: extra.errorMessage,
  };
}

/** The task for a CLI with no flag to add to its system prompt: the agent's prompt leads it, in tags. */
export function withLeadingInstructions(systemPrompt: string, prompt: string): string {
  return systemPrompt ? `<agent-instructions>\n${systemPrompt}\n</agent-instructions>\n\n${prompt}` : prompt;
}

/** A model named "provider/id" for a CLI that takes bare ids: the id, and a warning when a prefix was dropped. */
export function bareModel(model: string | undefined, warnings: string[], runtime: string): string | undefined {
  if (!model) return undefined;
  const slash = model.indexOf("/");
  if (slash === -1) return model;
  const id = model.slice(slash + 1);
  warnings.push(`${runtime} takes bare model ids: "${model}" was given as "${id}"`);
  return id;
}
