// Front matter as the tools that wrote it read it. Strict YAML first; when that fails, a tolerant reading of
// `key: value` lines (Claude Code loads such files, and public collections are full of descriptions with an
// unquoted ": " or inline `<example>` blocks that strict YAML rejects). The tolerant reading is reported as a
// warning so authors can fix their file, but the agent still loads.
import { parse as parseYaml } from "yaml";
import { AGENT_FILE_KEYS } from "./profile-fields.ts";

export type Fields = Record<string, unknown>;

export type FrontMatter = {
  /** False when the file does not start with a `---` line: a document, not an agent definition. */
  present: boolean;
  fields: Fields;
  body: string;
  /** Set when strict YAML failed and the tolerant reading was used: the YAML error's first line. */
  lenient?: string;
};

/** Thrown for front matter that no reading can make sense of. */
export class FrontMatterError extends Error {}

/**
 * Keys that start a new field in the tolerant reading even in the middle of a free-text value: every key an agent
 * file may have (profile-fields.ts lists them). Any other `word:` line inside a description (`user: "…"`,
 * `Context: …`, `assistant: …` in example blocks) continues it.
 */
const KNOWN_KEYS = new Set(AGENT_FILE_KEYS);
/** Fields whose value is free text: an unknown `word:` line below them is part of the text. */
const TEXT_KEYS = new Set(["description", "initialPrompt", "appendSystemPrompt"]);

/**
 * Blank lines before the opening `---`, or a whole file indented (pasted from a code block), are read as if
 * they were not there: the author clearly meant front matter.
 */
function normalize(text: string): string {
  const src = text.replace(/^\uFEFF/, "");
  const m = /^(?:[ \t]*\r?\n)*([ \t]*)---[ \t]*\r?\n/.exec(src);
  if (!m || m[0].startsWith("---")) return src;
  const indent = m[1];
  const rest = src.slice(m[0].length - m[0].trimStart().length);
  return indent
    ? rest
        .split("\n")
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join("\n")
    : rest;
}

export function splitFrontMatter(text: string): { yaml: string | null; body: string } {
  const src = normalize(text);
  if (!/^---[ \t]*\r?\n/.test(src)) return { yaml: null, body: src };
  // The closing fence may be longer than three dashes (some files close with a whole row of them).
  const m = /^---[ \t]*\r?\n([\s\S]*?)^-{3,}[ \t]*(?:\r?\n|$)/m.exec(src);
  if (!m) throw new FrontMatterError('front matter starts with "---" but has no closing "---" line');
  return { yaml: m[1], body: src.slice(m[0].length) };
}

/** One scalar as YAML would read it when it stands alone: booleans, integers, [a, b] lists, quoted strings. */
function scalar(raw: string): unknown {
  const v = raw.trim();
  if (v === "true" || v === "false") return v === "true";
  if (/^-?\d+$/.test(v)) return Number(v);
  if (/^\[.*\]$/.test(v))
    return v
      .slice(1, -1)
      .split(",")
      .map((s) => unquote(s.trim()))
      .filter(Boolean);
  return unquote(v);
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))))
    return v.slice(1, -1);
  return v;
}

/**
 * Tolerant reading: a line `key: rest` at column 0 starts a field (value = the rest of the line); following
 * lines belong to it (`  - item` lines make a list). Literal `\n` in a value become newlines, as the authors
 * of such one-line descriptions meant.
 */
export function readLenient(yaml: string): Fields {
  const fields: Fields = {};
  let key: string | null = null;
  let lines: string[] = [];
  let items: string[] | null = null;
  const flush = () => {
    if (key === null) return;
    if (items && !lines.join("").trim()) fields[key] = items;
    else {
      const text = lines.join("\n").trim();
      fields[key] = lines.length > 1 ? text.replace(/\\n/g, "\n") : scalar(text.replace(/\\n/g, "\n"));
    }
  };
  for (const line of yaml.split(/\r?\n/)) {
    const m = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$/.exec(line);
    const continues = key !== null && TEXT_KEYS.has(key) && m && !KNOWN_KEYS.has(m[1]);
    if (m && !continues) {
      flush();
      key = m[1];
      const rest = (m[2] ?? "").trim();
      lines = rest && rest !== "|" && rest !== ">" && rest !== "|-" && rest !== ">-" ? [rest] : [];
      items = null;
      continue;
    }
    if (key === null) continue; // stray text before the first key: nothing to attach it to
    const item = /^\s+-\s+(.*)$/.exec(line);
    if (item && !lines.join("").trim()) (items ??= []).push(unquote(item[1].trim()));
    else lines.push(line.trim());
  }
  flush();
  return fields;
}

/** Splits and reads a file's front matter. Throws FrontMatterError for what no reading can use. */
export function readFrontMatter(text: string): FrontMatter {
  const { yaml, body } = splitFrontMatter(text);
  if (yaml === null) return { present: false, fields: {}, body };
  if (!yaml.trim()) return { present: true, fields: {}, body };
  let parsed: unknown;
  try {
    parsed = parseYaml(yaml);
  } catch (err) {
    const why = String((err as Error).message)
      .split("\n")[0]
      .replace(/:\s*$/, "");
    const fields = readLenient(yaml);
    if (!Object.keys(fields).length) throw new FrontMatterError(`invalid YAML front matter: ${why}`);
    return { present: true, fields, body, lenient: why };
  }
  if (parsed === null || parsed === undefined) return { present: true, fields: {}, body };
  if (typeof parsed !== "object" || Array.isArray(parsed))
    throw new FrontMatterError("front matter must be a mapping of fields (key: value), not a list or a scalar");
  return { present: true, fields: parsed as Fields, body };
}
