// Agents that remember (Claude Code's `memory` field): a MEMORY.md per agent whose first lines go into the
// child's system prompt on every run. `user` memory is shared by all projects (<agentDir>/agent-memory/<agent>/),
// `project` memory lives in the project (<project>/.pi/agent-memory/<agent>/, meant to be committed), `local`
// too but apart (<project>/.pi/agent-memory-local/<agent>/, for .gitignore). An agent that has write tools is
// told the path and may keep the file current; a read-only agent only reads it: no tool is ever added for
// memory, so read-only and sandbox rules hold.
import type { Host } from "../host.ts";
import type { Profile } from "./profile.ts";

/** Lines of MEMORY.md that go into the prompt; the writer is asked to stay within them. */
export const MEMORY_LINES = 200;
/** Bytes read at most: a runaway file never floods the prompt or the process. */
const MEMORY_BYTES = 64 * 1024;
const WRITE_TOOLS = ["edit", "write"];
/** pi's tools when no list is given (the child's default; see run/launch/invocation.ts). */
const PI_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

/** The project a cwd belongs to: the nearest folder up from it that has `.git` or `.pi`, else cwd itself. */
export function projectRoot(host: Pick<Host, "stat">, cwd: string): string {
  let dir = cwd.replace(/\/+$/, "") || "/";
  for (;;) {
    if (host.stat(`${dir}/.git`) || host.stat(`${dir}/.pi`)?.isDirectory) return dir;
    const up = dir.slice(0, dir.lastIndexOf("/")) || "/";
    if (up === dir) return cwd;
    dir = up;
  }
}

/** Where an agent's memory lives, or null for an agent without `memory`. */
export function memoryFile(
  host: Pick<Host, "stat">,
  p: Pick<Profile, "name" | "memory">,
  o: { agentDir: string; cwd: string },
): string | null {
  if (!p.memory) return null;
  if (p.memory === "user") return `${o.agentDir}/agent-memory/${p.name}/MEMORY.md`;
  const root = projectRoot(host, o.cwd);
  return `${root === "/" ? "" : root}/.pi/${p.memory === "local" ? "agent-memory-local" : "agent-memory"}/${p.name}/MEMORY.md`;
}

/** Whether the child will have a tool that writes files (edit/write): what it gets, never more. */
export function hasWriteTools(p: Profile, parentTools?: string[]): boolean {
  if (p.noTools) return false;
  if (p.tools) return p.tools.some((t) => WRITE_TOOLS.includes(t));
  // No list: pi's defaults. A deny list subtracts from the parent's tools (pi's defaults from the CLI).
  if (!p.excludeTools?.length) return true;
  return (parentTools ?? PI_DEFAULT_TOOLS).some((t) => WRITE_TOOLS.includes(t) && !p.excludeTools!.includes(t));
}

/** The first MEMORY_LINES lines of the file, and how many it has in all; null when there is no file. */
export function readMemory(
  host: Pick<Host, "readBytes">,
  file: string,
): { text: string; lines: number; shown: number } | null {
  const bytes = host.readBytes(file, MEMORY_BYTES);
  if (bytes === null) return null;
  const all = new TextDecoder().decode(bytes).replace(/\r\n/g, "\n").replace(/\n+$/, "");
  const lines = all ? all.split("\n") : [];
  const shown = lines.slice(0, MEMORY_LINES);
  return { text: shown.join("\n"), lines: lines.length, shown: shown.length };
}

/**
 * The system-prompt section for an agent's memory, or "" when it has none (or a read-only agent whose file
 * does not exist yet: nothing to read, nothing it could write).
 */
export function memoryPrompt(
  host: Pick<Host, "readBytes" | "stat">,
  p: Profile,
  o: { agentDir: string; cwd: string; parentTools?: string[] },
): string {
  const file = memoryFile(host, p, o);
  if (!file) return "";
  const memory = readMemory(host, file);
  const writable = hasWriteTools(p, o.parentTools);
  const scope = p.memory === "user" ? "kept across all projects" : "kept for this project";
  const cut = memory && memory.lines > memory.shown ? ` (the first ${memory.shown} of its ${memory.lines} lines)` : "";
  const content = memory?.text.trim() ? `<memory file="${file}">\n${memory.text}\n</memory>` : "";
  if (!writable) {
    if (!content) return "";
    return `# Your memory\n\nNotes from earlier runs of this agent, ${scope}${cut}. They are read-only for you: use them, do not try to change them.\n\n${content}`;
  }
  const state = content ? `Its content${cut}:\n\n${content}` : "It does not exist yet.";
  return [
    "# Your memory",
    `You have a memory file, ${scope}: ${file}. ${state}`,
    `When you learn something a later run of this agent should know (conventions, pitfalls, where things are), update that file with your file tools. Keep it short and current: a few lines per point, remove what is no longer true, and stay under ${MEMORY_LINES} lines (only the first ${MEMORY_LINES} are shown to you).`,
  ].join("\n\n");
}
