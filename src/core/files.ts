// The `files` task field (docs/pi-extension.md "Task fields"): read files and prepend them to the prompt as `=== path ===` blocks, with
// the spec's placeholders for missing, unreadable and too-large files (the task still runs).
import type { Host } from "./host.ts";

export type FileSpec =
  | string
  | { path: string; start?: number; end?: number }
  | { path: string; head: number }
  | { path: string; tail: number };

export const FILE_LIMIT = 1024 * 1024;

/** Joins and normalizes a path (core cannot import node:path). `..` is resolved lexically. */
export function resolvePath(cwd: string, p: string): string {
  const raw = p.startsWith("/") ? p : `${cwd.replace(/\/+$/, "")}/${p}`;
  const out: string[] = [];
  for (const part of raw.split("/")) {
    if (!part || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

function select(lines: string[], spec: FileSpec): string[] {
  if (typeof spec === "string") return lines;
  if ("head" in spec && spec.head !== undefined) return lines.slice(0, Math.max(1, spec.head));
  if ("tail" in spec && spec.tail !== undefined) return lines.slice(-Math.max(1, spec.tail));
  const r = spec as { start?: number; end?: number };
  const start = Math.max(1, r.start ?? 1);
  const end = r.end === undefined ? lines.length : Math.max(start, r.end);
  return lines.slice(start - 1, end);
}

function readOne(host: Host, spec: FileSpec, cwd: string): { label: string; body: string } {
  const label = typeof spec === "string" ? spec : spec.path;
  const full = resolvePath(cwd, label);
  const st = host.stat(full);
  if (!st) return { label, body: `[file not found: ${label}]` };
  if (!st.isFile) return { label, body: `[could not read file: ${label}]` };
  if (st.size > FILE_LIMIT)
    return { label, body: `[file too large: ${label} (${Math.round(st.size / 1024)}KB, limit 1024KB)]` };
  const bytes = host.readBytes(full, FILE_LIMIT + 1);
  if (!bytes) return { label, body: `[could not read file: ${label}]` };
  if (bytes.length > FILE_LIMIT)
    return { label, body: `[file too large: ${label} (${Math.round(bytes.length / 1024)}KB, limit 1024KB)]` };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { label, body: `[could not read file: ${label}]` };
  }
  if (text.includes("\u0000")) return { label, body: `[could not read file: ${label}]` };
  const trailingNewline = text.endsWith("\n");
  const lines = (trailingNewline ? text.slice(0, -1) : text).split("\n");
  return { label, body: select(lines, spec).join("\n") };
}

/** The `=== path ===` blocks for all files, each followed by a blank line; "" when there are none. */
export function renderFiles(host: Host, files: FileSpec[], cwd: string): string {
  return files
    .map((f) => {
      const { label, body } = readOne(host, f, cwd);
      return `=== ${label} ===\n${body}\n\n`;
    })
    .join("");
}
