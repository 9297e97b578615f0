// The two agent file shapes that are not markdown: Codex's TOML (one agent per file, the prompt in
// `developer_instructions`) and opencode's JSON config (`agent.<name>` entries, the prompt in `prompt`, which
// may be `{file:./path}`). Both become the same { fields, body } the front-matter reader gives.
import { parse as parseToml } from "smol-toml";
import type { Fields } from "./front-matter.ts";
// The ESM build: its UMD "main" loads its parts with a runtime require that a bundle cannot follow.
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser/lib/esm/main.js";

export class AgentFileError extends Error {}

export type ReadAgent = { fields: Fields; body: string };

/** A Codex agent file. Throws AgentFileError for TOML that does not parse. */
export function readCodexToml(text: string): ReadAgent {
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const why = String((err as Error).message).split("\n")[0];
    throw new AgentFileError(`invalid TOML: ${why}`);
  }
  const { developer_instructions, ...fields } = parsed;
  if (developer_instructions !== undefined && typeof developer_instructions !== "string") {
    throw new AgentFileError(`field "developer_instructions" must be a string (the agent's instructions)`);
  }
  return { fields, body: developer_instructions ?? "" };
}

export type OpencodeEntry = { name: string; read?: ReadAgent; error?: string; skip?: string };

/**
 * The agents an opencode.json defines. An entry without a prompt only tunes one of opencode's own agents
 * (`agent.build.model`): nothing to run here, so it is skipped. `readText` reads a `{file:…}` prompt,
 * relative to the config file's folder.
 */
export function readOpencodeJson(
  text: string,
  dir: string,
  readText: (path: string) => string | null,
): { entries: OpencodeEntry[]; error?: string } {
  // opencode's files are JSON with comments and trailing commas (opencode.jsonc), read as opencode reads them.
  const errors: ParseError[] = [];
  const parsed: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const { error, offset } = errors[0];
    const line = text.slice(0, offset).split("\n").length;
    return { entries: [], error: `invalid JSON: ${printParseErrorCode(error)} at line ${line}` };
  }
  const agents = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>).agent : undefined;
  if (agents === undefined) return { entries: [] };
  if (!agents || typeof agents !== "object" || Array.isArray(agents))
    return { entries: [], error: '"agent" must be a mapping of agent names to definitions' };
  const entries: OpencodeEntry[] = [];
  for (const [name, def] of Object.entries(agents as Record<string, unknown>)) {
    if (!def || typeof def !== "object" || Array.isArray(def)) {
      entries.push({ name, error: `agent "${name}" must be a mapping of fields` });
      continue;
    }
    const { prompt, ...rest } = def as Record<string, unknown>;
    if (prompt === undefined) {
      entries.push({ name, skip: `agent "${name}" has no prompt (it tunes opencode's own agent)` });
      continue;
    }
    if (typeof prompt !== "string") {
      entries.push({ name, error: `agent "${name}": field "prompt" must be a string` });
      continue;
    }
    const file = /^\{file:(.+)\}$/.exec(prompt.trim());
    let body = prompt;
    if (file) {
      const target = file[1].trim();
      const path = target.startsWith("/") ? target : `${dir}/${target.replace(/^\.\//, "")}`;
      const content = readText(path);
      if (content === null) {
        entries.push({ name, error: `agent "${name}": prompt file ${path} could not be read` });
        continue;
      }
      body = content;
    }
    entries.push({ name, read: { fields: { name, ...rest }, body } });
  }
  return { entries };
}
