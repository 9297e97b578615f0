// The front-matter fields of an agent file, one reader each: types checked, spellings of the same field
// reconciled, tool lists mapped, contradictions refused (Invalid, which parseProfile turns into a diagnostic).
import { RUNTIME_NAMES, type RuntimeName } from "../runtime-names.ts";
import { EFFORT_TO_THINKING, mapTools, QUIET_FIELDS, UNSUPPORTED_FIELDS } from "./claude-compat.ts";
import type { Fields } from "./front-matter.ts";
import { argList, bool, Invalid, kind, list, pick, present, str } from "./field-values.ts";

export { argList, bool, Invalid, kind, list, pick, str };
import { isIsolationMode, type IsolationMode } from "../isolation-types.ts";
import { budgetValue, type BudgetKey } from "../budget.ts";
import { ENGINE_FIELDS } from "./runner-fields.ts";
import { outputSchemaProblem } from "../output-schema.ts";
import {
  MEMORY_SCOPES,
  READONLY_TOOLS,
  THINKING_LEVELS,
  type MemoryScope,
  type Profile,
  type Thinking,
} from "./profile-types.ts";

/** Runtimes a file may name (src/core/run/runtimes/); "claude" is taken for "claude-code". */
const RUNTIME_ALIASES: Record<string, RuntimeName> = { claude: "claude-code" };
const WRITING_TOOLS = ["edit", "write"];
const TOOL_OVERRIDE_FLAGS = ["--tools", "-t", "--no-tools", "-nt"];
/** Flags that would break how we drive a child: its session, output mode, key handling, or make pi exit early. */
const CONTRACT_FLAGS = [
  "--session",
  "--session-dir",
  "--no-session",
  "--fork",
  "--continue",
  "-c",
  "--resume",
  "-r",
  "--mode",
  "-p",
  "--print",
  "--api-key",
  "--export",
  "--list-models",
  "--help",
  "-h",
  "--version",
  "-v",
];

/** Flags that would override the agent's tool restrictions or break the child contract (docs/agents.md `extraArgs`). Returns a reason, or null. */
export function extraArgsProblem(args: string[], restrictsTools: boolean): string | null {
  for (const arg of args) {
    const flag = arg.split("=")[0];
    if (restrictsTools && TOOL_OVERRIDE_FLAGS.includes(flag)) {
      return `Refusing extraArg "${arg}" which would override profile tool restrictions. Use the dedicated profile fields instead.`;
    }
    if (CONTRACT_FLAGS.includes(flag)) {
      const hint = flag === "--api-key" ? ' (use the "apiKey" field)' : "";
      return `Refusing extraArg "${arg}": sub-agents set ${flag} themselves, so it would break how the child is run${hint}.`;
    }
  }
  return null;
}

type ToolFields = Pick<Profile, "tools" | "excludeTools" | "noTools" | "readonly" | "unavailableTools">;

export function toolFields(fm: Fields, warnings: string[], mappedAway = 0): ToolFields {
  const allowKey = pick(fm, ["tools", "approved_tools", "allowed_tools"]);
  const denyKey = pick(fm, ["excludeTools", "denied_tools", "disallowedTools"]);
  let allow = list(fm, allowKey);
  const deny = list(fm, denyKey);
  // "all tools" spellings of the ecosystem mean: no allow list; "none" means none.
  const only = allow?.length === 1 ? allow[0].toLowerCase() : undefined;
  if (only === "*" || only === "all" || only === "inherit") allow = undefined;
  if (only === "none") allow = [];
  const noTools = bool(fm, "noTools");
  const readonly = bool(fm, "readonly");
  if (noTools && (allow || deny)) throw new Invalid(`"noTools: true" contradicts "${allowKey ?? denyKey}": use one`);
  // An empty allow list means what it says (Claude Code reads `tools: []` the same way): no tools at all.
  if (allow && allow.length === 0 && only !== "none" && !mappedAway)
    warnings.push(`"${allowKey}" is empty: the agent runs without tools`);
  const out: ToolFields = {};
  if (noTools !== undefined) out.noTools = noTools;
  if (readonly !== undefined) out.readonly = readonly;
  const mappedAllow = allow ? mapTools(allow) : null;
  const mappedDeny = deny ? mapTools(deny) : null;
  warnings.push(...(mappedAllow?.notes ?? []));
  if (mappedAllow?.unavailable.length) {
    out.unavailableTools = mappedAllow.unavailable;
    warnings.push(`tools not available here: ${mappedAllow.unavailable.join(", ")}`);
  }
  const denied = mappedDeny?.tools ?? [];
  if (mappedAllow) {
    // Claude Code's rule: the deny list is removed from the allow list.
    out.tools = mappedAllow.tools.filter((t) => !denied.includes(t));
    const writers = out.tools.filter((t) => WRITING_TOOLS.includes(t));
    if (readonly && writers.length)
      throw new Invalid(`"readonly: true" but "${allowKey}" includes ${writers.join(", ")}`);
    if (!out.tools.length && allow!.length)
      warnings.push("none of the listed tools exist here: the agent runs without tools");
  } else if (readonly && !noTools) {
    // Read-only narrows to the read tools; a deny list then removes from those.
    out.tools = READONLY_TOOLS.filter((t) => !denied.includes(t));
  } else if (denied.length) {
    out.excludeTools = denied;
  }
  return out;
}

export function thinkingField(fm: Fields, warnings: string[]): Thinking | undefined {
  const key = pick(fm, ["thinkingLevel", "thinking"]);
  const raw = str(fm, key)?.trim().toLowerCase();
  if (raw === undefined) {
    // Claude Code's `effort` is the same idea; an unknown value there is the author's tool's business, not an error.
    const effort = present(fm, "effort") ? String(fm.effort).trim().toLowerCase() : undefined;
    if (effort === undefined) return undefined;
    const mapped = EFFORT_TO_THINKING[effort];
    if (!mapped) warnings.push(`effort "${effort}" has no thinking level here (ignored)`);
    return mapped as Thinking | undefined;
  }
  if (!(THINKING_LEVELS as readonly string[]).includes(raw))
    throw new Invalid(`unknown thinking level "${raw}" in "${key}" (use one of: ${THINKING_LEVELS.join(", ")})`);
  return raw as Thinking;
}

/** A budget field (maxTurns, maxTokens, maxCost): a positive number; anything else is reported and ignored. */
export function budgetField(fm: Fields, key: BudgetKey, warnings: string[]): number | undefined {
  if (!present(fm, key)) return undefined;
  const v = budgetValue(key, fm[key]);
  if (typeof v === "number") return v;
  warnings.push(`${v}; ignored`);
  return undefined;
}

/** isolation: "worktree" (the only mode); anything else is reported and ignored. */
export function isolationField(fm: Fields, warnings: string[]): IsolationMode | undefined {
  if (!present(fm, "isolation")) return undefined;
  const v = typeof fm.isolation === "string" ? fm.isolation.trim() : fm.isolation;
  if (isIsolationMode(v)) return v;
  warnings.push(`isolation must be "worktree" (got ${kind(fm.isolation)}; ignored)`);
  return undefined;
}

/** Every field this loader reads; anything else is reported as not supported here. */
const HANDLED_FIELDS = new Set([
  "name",
  "description",
  "provider",
  "model",
  "thinkingLevel",
  "thinking",
  "effort",
  "tools",
  "approved_tools",
  "allowed_tools",
  "excludeTools",
  "denied_tools",
  "disallowedTools",
  "noTools",
  "extensions",
  "noExtensions",
  "noSkills",
  "suggestedSkills",
  "loadSkills",
  "skills",
  "noContextFiles",
  "systemPromptMode",
  "appendSystemPrompt",
  "apiKey",
  "extraArgs",
  "readonly",
  "timeout",
  "finalize",
  "maxTurns",
  "maxTokens",
  "maxCost",
  "fallbackModels",
  "isolation",
  "color",
  "gate",
  "gateTimeout",
  "gateRetries",
  "outputSchema",
  "context",
  "mcp",
  "memory",
  "runtime",
  "keepProcesses",
  "taskStart",
  "taskEnd",
  "setup",
  ...QUIET_FIELDS,
  ...ENGINE_FIELDS,
]);

/** Every key an agent file may have: the ones read here, the ones other tools' files carry (said or quietly
 *  ignored), and other harnesses' own (harness-fields.ts). */
export const AGENT_FILE_KEYS = [...HANDLED_FIELDS, ...UNSUPPORTED_FIELDS, "mcpServers", "allowed-tools"];

export function unsupportedFields(fm: Fields): string | null {
  const keys = Object.keys(fm).filter((k) => !HANDLED_FIELDS.has(k));
  if (!keys.length) return null;
  const claude = keys.filter((k) => UNSUPPORTED_FIELDS.includes(k));
  const other = keys.filter((k) => !UNSUPPORTED_FIELDS.includes(k));
  return `not supported here (ignored): ${[...claude, ...other].join(", ")}`;
}

const validName = (n: string) => /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(n);

/** "Python Security Expert" → "python-security-expert": how a display-style name becomes a usable one. */
export function nameSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_.]+/g, "-")
    .replace(/^[-_.]+|-+$/g, "")
    .slice(0, 64);
}

/** A profile by its name, or by the display-style name it was made from ("Python Security Expert"). */
export function findProfile(profiles: Map<string, Profile>, name: string): Profile | undefined {
  return profiles.get(name) ?? profiles.get(nameSlug(name));
}

/** `name` (a display-style one made usable, said in a warning), else the file name. */
export function nameField(fm: Fields, filePath: string, warnings: string[]): string {
  const base = baseName(filePath);
  const written = str(fm, "name")?.trim();
  if (written !== undefined && validName(written)) return written;
  const slug = written !== undefined ? nameSlug(written) : "";
  if (slug && validName(slug)) {
    warnings.push(`name "${written}" is used as "${slug}" (names are letters, digits, "_", "-", ".")`);
    return slug;
  }
  if (!validName(base)) {
    throw new Invalid(
      `field "name" must be 1–64 letters, digits, "_", "-" or "." (got "${written ?? base}"${written !== undefined ? "" : ", taken from the file name"})`,
    );
  }
  if (written !== undefined)
    warnings.push(
      `name "${written}" is not a usable name (letters, digits, "_", "-", "."): using the file name "${base}"`,
    );
  return base;
}

/** `gate` (a shell command), `gateTimeout` (seconds), `gateRetries` (corrections before GATE_FAILED); the hooks
 * `taskStart` / `taskEnd` and an isolated task's `setup` (shell commands). */
export function gateFields(fm: Fields): Partial<Profile> {
  const out: Partial<Profile> = {};
  for (const key of ["taskStart", "taskEnd", "setup"] as const) {
    if (!present(fm, key)) continue;
    const v = fm[key];
    if (typeof v !== "string" || !v.trim())
      throw new Invalid(`field "${key}" must be a shell command (got ${kind(v)})`);
    out[key] = v;
  }
  if (present(fm, "gate")) {
    if (typeof fm.gate !== "string" || !fm.gate.trim())
      throw new Invalid(`field "gate" must be a shell command (got ${kind(fm.gate)})`);
    out.gate = fm.gate;
  }
  if (present(fm, "gateTimeout")) {
    const v = fm.gateTimeout;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
      throw new Invalid(`field "gateTimeout" must be a positive number of seconds (got ${kind(v)})`);
    out.gateTimeout = v;
  }
  if (present(fm, "outputSchema")) {
    let schema = fm.outputSchema;
    // Written as a JSON string (or read line by line from non-strict front matter): parse it.
    if (typeof schema === "string") {
      try {
        schema = JSON.parse(schema);
      } catch {
        throw new Invalid('field "outputSchema" must be a JSON Schema (a YAML mapping, or JSON text)');
      }
    }
    const problem = outputSchemaProblem('field "outputSchema"', schema);
    if (problem) throw new Invalid(problem);
    out.outputSchema = schema as Record<string, unknown>;
  }
  if (present(fm, "context")) {
    if (fm.context !== "fork" && fm.context !== "fresh")
      throw new Invalid(`field "context" must be "fork" or "fresh" (got ${kind(fm.context)})`);
    out.context = fm.context;
  }
  if (present(fm, "gateRetries")) {
    const v = fm.gateRetries;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
      throw new Invalid(`field "gateRetries" must be a whole number ≥ 0 (got ${kind(v)})`);
    out.gateRetries = v;
  }
  return out;
}

export function timeoutField(fm: Fields): number | undefined {
  if (!present(fm, "timeout")) return undefined;
  const v = fm.timeout;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
    throw new Invalid(`field "timeout" must be a positive number of seconds (got ${kind(v)})`);
  return v;
}

/** memory: user | project | local; another value is reported and ignored. */
export function memoryField(fm: Fields, warnings: string[]): MemoryScope | undefined {
  if (!present(fm, "memory")) return undefined;
  const v = typeof fm.memory === "string" ? fm.memory.trim().toLowerCase() : fm.memory;
  if ((MEMORY_SCOPES as readonly unknown[]).includes(v)) return v as MemoryScope;
  warnings.push(`memory must be "user", "project" or "local" (got ${kind(fm.memory)}; ignored)`);
  return undefined;
}

/** runtime: which CLI runs the child; an unknown one is refused (not silently run on pi). */
export function runtimeField(fm: Fields): RuntimeName | undefined {
  if (!present(fm, "runtime")) return undefined;
  const v = typeof fm.runtime === "string" ? fm.runtime.trim().toLowerCase() : fm.runtime;
  const name = typeof v === "string" ? (RUNTIME_ALIASES[v] ?? v) : v;
  if ((RUNTIME_NAMES as readonly unknown[]).includes(name)) return name as RuntimeName;
  throw new Invalid(`field "runtime" must be one of ${RUNTIME_NAMES.join(", ")} (got ${kind(fm.runtime)})`);
}

/** An agent's name from its file name (`x.md`, `x.agent.md`, `x.toml`). */
export function baseName(filePath: string): string {
  return filePath
    .split(/[\\/]/)
    .pop()!
    .replace(/(?:\.agent)?\.md$|\.toml$/i, "");
}
