// What the owner takes back from a task's layer (docs/sandbox-runners.md "What comes back"): the content of regular
// files, the folders they are in, deletions, and symbolic links that stay inside the folder. Everything else stays
// in the layer and is named in the task's warnings. The rules are about one changed path at a time, so they hold
// at any depth and for any name (names are bytes: a folder whose name is not UTF-8 is a folder like any other):
//  - git data: a path with a `.git` component (the repository's own folder, a repository or `.git` file the child
//    made, a submodule's), and a folder that git would take for a repository when run inside it (HEAD, objects/,
//    refs/: a bare one). An isolated task's branch is committed by the owner from the content alone;
//  - special files (FIFOs, sockets, devices) and links that point out of the folder (or through one of the
//    names below): a later write through them would land elsewhere;
//  - for a confined (sandboxed, container) child, the protected names: files that tools run code from on their own
//    when a person next works in the folder — pi's `.pi` (but its agents' memory notes), other agents' and
//    editors' project config, direnv's `.envrc`, shell startup files, git hooks folders named by core.hooksPath —
//    unless the person opened them (subagents.sandboxWritable).
// Pure: paths as bytes, no runtime imports.

/** Why a change stays behind. */
export type LeftWhy = "git" | "special" | "link-out" | "protected" | "outside";

/** pi's project folder: extensions, settings, MCP servers, skills, prompts, agents and workflows load from it. */
const PI_DIR = ".pi";
/** Inside `.pi`, what an agent is told it may keep current (agent-memory.ts): notes, not code. */
const PI_WRITABLE = new Set(["agent-memory", "agent-memory-local"]);

/** Names whose content a tool started in their folder runs or loads, at any depth. */
export const PROTECTED_NAMES = new Set([
  PI_DIR,
  ".agents", // pi loads .agents/skills from the folder and its parents (trusted projects)
  ".claude", // Claude Code: settings.json hooks run commands; commands/ and agents/
  ".mcp.json", // Claude Code's project MCP servers (commands it starts)
  ".codex", // Codex's project config
  ".gemini", // Gemini CLI: settings.json (MCP servers, tool commands)
  ".opencode", // opencode loads plugins (code) from it
  "opencode.json",
  "opencode.jsonc",
  ".vscode", // tasks.json (runOn: folderOpen), settings.json pointing tools at programs
  ".idea", // JetBrains run configurations and startup tasks
  ".envrc", // direnv, when the folder is allowed by prefix rather than per file
  ".gitconfig", // the rest matter when a task folder is a home folder
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
]);

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: false });
const SLASH = 0x2f;

/** A relative path as bytes, split at `/`. */
export function components(path: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path[i] === SLASH) {
      if (i > start) out.push(path.subarray(start, i));
      start = i + 1;
    }
  }
  return out;
}

const same = (a: Uint8Array, b: string) => a.length === b.length && dec.decode(a) === b;
const isName = (c: Uint8Array, names: Set<string>) => c.length < 32 && names.has(dec.decode(c));

/** A path for people: its bytes as UTF-8 (anything else shown as �). */
export const shown = (path: Uint8Array) => dec.decode(path);
export const bytesOf = (path: string) => enc.encode(path);

export type RuleOpts = {
  /** A confined child: the protected names stay behind too. */
  protect: boolean;
  /** Relative paths (as text) the person opened on purpose (subagents.sandboxWritable), and their insides. */
  open?: string[];
  /** Relative folders (as text) git runs hooks from (core.hooksPath inside the folder). */
  hooks?: string[];
  /** Relative folder (as text) the harvest takes back; changes elsewhere stay behind ("" or absent: everything). */
  scope?: string;
};

const inside = (p: string, dir: string) => dir === "" || p === dir || p.startsWith(`${dir}/`);

/** Why a changed path stays behind, or null when it comes back. */
export function leftBehind(path: Uint8Array, opts: RuleOpts): LeftWhy | null {
  const parts = components(path);
  if (parts.some((c) => same(c, ".git"))) return "git";
  const text = shown(path);
  if (opts.scope && !inside(text, opts.scope)) return "outside";
  if (!opts.protect) return null;
  if ((opts.open ?? []).some((o) => inside(text, o))) return null;
  if ((opts.hooks ?? []).some((h) => inside(text, h))) return "protected";
  for (let i = 0; i < parts.length; i++) {
    if (!isName(parts[i], PROTECTED_NAMES)) continue;
    // pi's agents keep their memory notes in .pi/agent-memory*: notes, not code.
    if (same(parts[i], PI_DIR) && i + 1 < parts.length && isName(parts[i + 1], PI_WRITABLE)) continue;
    return "protected";
  }
  return null;
}

/** A link at `path` pointing at `target` stays inside the folder (lexically: no `..` above the top, not absolute
 *  unless under `root`), and does not point into git data. */
export function linkInside(path: Uint8Array, target: Uint8Array, root: string): boolean {
  let t = target;
  const rootBytes = enc.encode(root.endsWith("/") ? root : `${root}/`);
  if (t[0] === SLASH) {
    if (t.length < rootBytes.length || !rootBytes.every((b, i) => t[i] === b)) return false;
    t = t.subarray(rootBytes.length);
  } else {
    const dir = components(path).slice(0, -1);
    const joined = new Uint8Array(dir.reduce((n, c) => n + c.length + 1, 0) + t.length);
    let at = 0;
    for (const c of dir) {
      joined.set(c, at);
      at += c.length;
      joined[at++] = SLASH;
    }
    joined.set(t, at);
    t = joined;
  }
  const stack: Uint8Array[] = [];
  for (const c of components(t)) {
    if (same(c, ".")) continue;
    if (same(c, "..")) {
      if (!stack.length) return false;
      stack.pop();
      continue;
    }
    if (same(c, ".git")) return false;
    stack.push(c);
  }
  return true;
}

/** Entries git takes for a repository's own folder when run in the folder holding them (a bare repository). */
export const BARE_MARKS = ["HEAD", "objects", "refs"] as const;

const WHY_TEXT: Record<LeftWhy, string> = {
  git: "git data (the task's commits, refs, config, hooks, repositories it made): the owner keeps content only",
  special: "not a regular file (a FIFO, socket or device)",
  "link-out": "symbolic links that point out of the folder (or into git data)",
  protected:
    "protected (tools run what is there when you next open the folder; subagents.sandboxWritable opens a path on purpose)",
  outside: "outside the task's folder",
};

/** The task's warnings for what stayed behind, one per reason, naming a few paths each. */
export function leftWarnings(
  left: { path: string; why: LeftWhy }[],
  where: string,
  list: (names: string[]) => string,
): string[] {
  const by = new Map<LeftWhy, string[]>();
  for (const l of left) by.set(l.why, [...(by.get(l.why) ?? []), l.path]);
  return [...by].map(
    ([why, paths]) => `${where}: not taken back from the task's layer: ${list(paths)} — ${WHY_TEXT[why]}`,
  );
}
