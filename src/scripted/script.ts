// The script a conversation carries for the scripted model (model-server.ts): finding it in the newest user
// message, the step for this turn, and the default answer past the last step. Pure: no server here.
import { withoutTeamNote } from "../core/team.ts";

export type ScriptStep = {
  text?: string;
  /** The text sent this many times over: a long answer from a short script (a 17 MB answer is 17 M characters). */
  repeat?: number;
  chunks?: number;
  tool?: string;
  args?: Record<string, unknown>;
  tools?: { name: string; args: Record<string, unknown> }[];
  finalize?: { status: string; result?: string; error?: string };
  status?: number;
  message?: string;
  cut?: boolean;
  delayMs?: number;
  /** Pause between streamed chunks, so a person can watch text arrive (demo). */
  chunkDelayMs?: number;
  /** With an error `status`: fail only this many times for this turn, then answer with `then`. */
  times?: number;
  then?: ScriptStep;
};

type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown[] };
type ChatRequest = { messages?: ChatMessage[]; tools?: { function?: { name?: string } }[] };

const SCRIPT_START = "[[script:";
const SCRIPT_RE = /\[\[script:\[[\s\S]*?\]\]\]/g;

/**
 * Finds the script in a message: the first `[[script:` whose JSON array parses, trying each possible `]]`
 * end in turn (a task prompt inside a script may carry its own script, so the shortest match is not enough).
 */
export function findScript(text: string): { steps: ScriptStep[] } | { invalid: true } | null {
  const start = text.indexOf(SCRIPT_START);
  if (start === -1) return null;
  const from = start + SCRIPT_START.length;
  for (let end = text.indexOf("]]", from); end !== -1; end = text.indexOf("]]", end + 1)) {
    try {
      const steps = JSON.parse(text.slice(from, end)) as unknown;
      if (Array.isArray(steps)) return { steps: steps as ScriptStep[] };
    } catch {
      // not this end
    }
  }
  return { invalid: true };
}

export function messageText(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content
      .map((p) => (p && typeof p === "object" && "text" in p ? String((p as { text: unknown }).text) : ""))
      .join("");
  }
  return "";
}

/** `{{lastSessionId}}` in a step's arguments becomes the last 16-hex session id in the latest tool result. */
function fillPlaceholders(step: ScriptStep, messages: ChatMessage[]): ScriptStep {
  const raw = JSON.stringify(step);
  if (!raw.includes("{{lastSessionId}}")) return step;
  const lastTool = [...messages].reverse().find((m) => m.role === "tool");
  const ids = lastTool ? messageText(lastTool).match(/\b[0-9a-f]{16}\b/g) : null;
  return JSON.parse(raw.replaceAll("{{lastSessionId}}", ids?.at(-1) ?? "no-session-id")) as ScriptStep;
}

/** Picks the step for this request: pure, exported for tests. */
export function chooseStep(req: ChatRequest, served?: Map<string, number>): ScriptStep {
  const step = pickStep(req, served);
  return step.repeat && step.text ? { ...step, text: step.text.repeat(step.repeat), repeat: undefined } : step;
}

function pickStep(req: ChatRequest, served?: Map<string, number>): ScriptStep {
  const messages = req.messages ?? [];
  let scriptAt = -1;
  let script: ScriptStep[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== "user") continue;
    // A child's own task drives it, never a sibling's line in the team note after it (core/team.ts).
    const found = findScript(withoutTeamNote(messageText(messages[i])));
    if (!found) continue;
    if ("invalid" in found) return { text: "scripted model: the script is not valid JSON" };
    script = found.steps;
    scriptAt = i;
    break;
  }
  const turn = messages.slice(scriptAt + 1).filter((m) => m.role === "assistant").length;
  if (scriptAt >= 0 && turn < script.length) {
    const step = script[turn];
    if (step.times !== undefined && served) {
      // Failed attempts leave no assistant message, so a retry asks for the same turn again: count them.
      const key = `${JSON.stringify(script)}#${turn}#${messageText(messages[scriptAt]).length}`;
      const n = served.get(key) ?? 0;
      served.set(key, n + 1);
      if (n >= step.times) return fillPlaceholders(step.then ?? { text: "recovered" }, messages);
    }
    return fillPlaceholders(step, messages);
  }
  const offersFinalize = (req.tools ?? []).some((t) => t.function?.name === "subagent_finalize");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const prompt = lastUser ? withoutTeamNote(messageText(lastUser)).replace(SCRIPT_RE, "").trim() : "";
  const echo = `Done: ${prompt.slice(0, 80)}`;
  return offersFinalize ? { finalize: { status: "SUCCESS", result: echo } } : { text: echo };
}

/** The marker a task text carries to steer the scripted model. */
export function script(steps: ScriptStep[]): string {
  return `[[script:${JSON.stringify(steps)}]]`;
}
