// Finds profiles in every location docs/agents.md lists, later ones winning: built-ins → user dirs (Claude Code's, then
// pi's) → project dirs (searched from the filesystem root down to cwd, so the nearest directory wins; in one
// directory pi's folders win over Claude Code's). Folders are walked recursively, because collections install
// as category sub-folders; a `.md` without front matter and a description is a document, not an agent.
// Each directory is listed once and each file read once: discovery runs on every delegate call.
import { BUILTIN_AGENTS } from "./builtin-agents.ts";
import type { Host } from "../host.ts";
import {
  notAgentReason,
  parseProfile,
  parseProfileFields,
  profileNameOf,
  type Profile,
  type ProfileSource,
} from "./profile.ts";
import { PROJECT_LOCATIONS, userLocations, type Location } from "./harnesses.ts";
import { readOpencodeJson } from "./agent-file-formats.ts";

/** A file that could not be used; `name` is the profile it meant to define, so a call naming it hears why. */
export type Diagnostic = { file: string; reason: string; name?: string };
/** A profile that lost to another of the same name: `by` is the winner's file (or `builtin:name`). */
export type Shadowed = { name: string; file: string; source: ProfileSource; by: string };
/** A `.md` file that is not an agent definition (shown by `profiles --all`). */
export type Skipped = { file: string; reason: string };
export type Discovery = {
  profiles: Map<string, Profile>;
  diagnostics: Diagnostic[];
  shadowed: Shadowed[];
  skipped: Skipped[];
};

/** Sub-folder levels walked below an agents folder (a cloned collection: clone/plugins/x/agents/y.md). */
export const MAX_DEPTH = 5;
/** Folders of a cloned collection that hold other things than agents (commands, skills, prompt templates, docs). */
const SKIP_DIRS = new Set(["node_modules", "skills", "commands", "prompts", "hooks", "docs", "doc"]);
/** Documentation files that sit next to agents in collections; never agents even with front matter. */
const DOC_NAMES = /^(?:readme|changelog|contributing|license|licence|code_of_conduct)(?:\.[^.]+)?\.md$/i;
/** These only in capitals: a lower-case `security.md` may well be an agent. */
const UPPERCASE_DOCS = new Set(["SECURITY.md", "CLAUDE.md", "AGENTS.md", "SKILL.md"]);
const isDocFile = (name: string) => DOC_NAMES.test(name) || UPPERCASE_DOCS.has(name);

/** Forward slashes, no trailing slash (except a bare root): paths compare as strings. */
function norm(path: string): string {
  const p = path.replace(/\\/g, "/");
  const trimmed = p.replace(/\/+$/, "");
  return trimmed === "" ? "/" : /^[A-Za-z]:$/.test(trimmed) ? `${trimmed}/` : trimmed;
}

const join = (dir: string, name: string) => (dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`);

/** `$PI_CODING_AGENT_DIR` (with `~` expanded, as pi does) or `<home>/.pi/agent`. */
export function agentDir(env: Record<string, string | undefined>, homedir: string): string {
  const dir = env.PI_CODING_AGENT_DIR;
  if (!dir) return join(norm(homedir), ".pi/agent");
  if (dir === "~") return norm(homedir);
  if (dir.startsWith("~/") || dir.startsWith("~\\")) return join(norm(homedir), norm(dir.slice(2)));
  return norm(dir);
}

/** cwd and every ancestor, root first, cwd last. Handles "/a/b" and "C:/a/b" (or backslashes). */
export function ancestors(cwd: string): string[] {
  const p = norm(cwd);
  const drive = /^[A-Za-z]:/.exec(p)?.[0] ?? "";
  const parts = p.slice(drive.length).split("/").filter(Boolean);
  const dirs = [`${drive}/`];
  for (let i = 1; i <= parts.length; i++) dirs.push(`${drive}/${parts.slice(0, i).join("/")}`);
  return dirs;
}

let builtins: { profiles: Profile[]; diagnostics: Diagnostic[] } | null = null;
/** Built-ins are parsed once per process; callers get copies so nothing they do leaks into the next discovery. */
function builtinProfiles(diagnostics: Diagnostic[]): Profile[] {
  if (!builtins) {
    builtins = { profiles: [], diagnostics: [] };
    for (const [name, text] of Object.entries(BUILTIN_AGENTS)) {
      const { profile, error } = parseProfile(text, `${name}.md`, "builtin");
      if (profile) builtins.profiles.push(profile);
      else builtins.diagnostics.push({ file: `builtin:${name}`, reason: error ?? "invalid" });
    }
  }
  diagnostics.push(...builtins.diagnostics);
  return builtins.profiles.map(copyProfile);
}

function copyProfile(p: Profile): Profile {
  const copy: Record<string, unknown> = { ...p };
  for (const [k, v] of Object.entries(copy)) if (Array.isArray(v)) copy[k] = [...v];
  return copy as Profile;
}

type Candidate = { file: string; profile: Profile };

/** What one file turned out to be. */
type FileResult = { profile?: Profile; error?: string; name?: string; skip?: string };
/**
 * Files already parsed, by path, valid while size and mtime are unchanged: in pi, discovery runs on every
 * delegate call, and a user with a few hundred collection agents should not pay for parsing them each time.
 */
const parsedBy = new WeakMap<Host, Map<string, { size: number; mtimeMs: number; result: FileResult }>>();
const PARSED_MAX = 5000;

function readAgentFile(host: Host, path: string, source: ProfileSource, loc: Location): FileResult {
  let parsed = parsedBy.get(host);
  if (!parsed) parsedBy.set(host, (parsed = new Map()));
  const st = host.stat(path);
  const needsDescription = loc.needsDescription !== false;
  const key = `${source}\u0000${needsDescription}\u0000${loc.harness}\u0000${path}`;
  const hit = st ? parsed.get(key) : undefined;
  if (hit && st && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.result;
  const result = parseAgentFile(host, path, source, loc);
  if (st && result.error !== "could not be read") {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(key, { size: st.size, mtimeMs: st.mtimeMs, result });
  }
  return result;
}

function parseAgentFile(host: Host, path: string, source: ProfileSource, loc: Location): FileResult {
  const text = host.readText(path);
  if (text === null) return { error: "could not be read" };
  const needsDescription = loc.needsDescription !== false;
  const notAgent = needsDescription && loc.kind === "md" ? notAgentReason(text) : null;
  if (notAgent) return { skip: notAgent };
  const { profile, error, skip } = parseProfile(text, path, source, loc.harness, loc.kind === "toml" ? "toml" : "md");
  if (skip) return { skip };
  if (profile && needsDescription && !profile.description)
    return { skip: loc.kind === "md" ? "no description in its front matter" : "no description" };
  return profile ? { profile } : { error: error ?? "invalid", name: profileNameOf(text, path) };
}

type Walk = { host: Host; out: Discovery; seenDirs: Set<string>; candidates: Candidate[] };

function entries(host: Host, dir: string): ReturnType<Host["listDir"]> {
  try {
    return [...host.listDir(dir)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return []; // missing or unreadable: simply no profiles there
  }
}

/** Collects the profiles under one agents folder, depth first, in name order. */
function walk(w: Walk, dir: string, source: ProfileSource, loc: Location, depth: number): void {
  // A folder reached twice (a symlink to an ancestor or to another agents folder) is read once: no loops.
  const real = w.host.realpath?.(dir) ?? dir;
  if (w.seenDirs.has(real)) return;
  w.seenDirs.add(real);
  for (const e of entries(w.host, dir)) {
    if (e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    // Some hosts report a symlink as neither file nor directory: ask once where it points.
    const st = e.isFile || e.isDirectory ? e : w.host.stat(path);
    if (st?.isDirectory) {
      if (depth < MAX_DEPTH && !SKIP_DIRS.has(e.name.toLowerCase())) walk(w, path, source, loc, depth + 1);
      continue;
    }
    if (!st?.isFile || !e.name.toLowerCase().endsWith(loc.kind === "toml" ? ".toml" : ".md")) continue;
    if (isDocFile(e.name) || /\.chain\.md$/i.test(e.name)) {
      w.out.skipped.push({ file: path, reason: "documentation file" });
      continue;
    }
    const r = readAgentFile(w.host, path, source, loc);
    if (r.skip) w.out.skipped.push({ file: path, reason: r.skip });
    else if (r.profile) w.candidates.push({ file: path, profile: copyProfile(r.profile) });
    else w.out.diagnostics.push({ file: path, reason: r.error ?? "invalid", ...(r.name ? { name: r.name } : {}) });
  }
}

/** Adds one location's profiles; a later location (or a later file in the same walk) wins a name. */
function loadLocation(
  host: Host,
  path: string,
  loc: Location,
  source: ProfileSource,
  out: Discovery,
  seenDirs: Set<string>,
): void {
  const w: Walk = { host, out, seenDirs, candidates: [] };
  if (loc.kind === "opencode-json") readOpencodeFile(w, path, source);
  else walk(w, path, source, loc, 0);
  for (const { file, profile } of w.candidates) {
    const earlier = out.profiles.get(profile.name);
    if (earlier)
      out.shadowed.push({
        name: earlier.name,
        file: earlier.filePath ?? `builtin:${earlier.name}`,
        source: earlier.source,
        by: file,
      });
    out.profiles.set(profile.name, profile);
  }
}

/** opencode.json's `agent.<name>` entries (one file, several agents). A missing file adds nothing. */
function readOpencodeFile(w: Walk, path: string, source: ProfileSource): void {
  if (!w.host.stat(path)?.isFile) return;
  const text = w.host.readText(path);
  if (text === null) {
    w.out.diagnostics.push({ file: path, reason: "could not be read" });
    return;
  }
  const dir = path.slice(0, path.lastIndexOf("/")) || "/";
  const { entries, error } = readOpencodeJson(text, dir, (p) => w.host.readText(p));
  if (error) w.out.diagnostics.push({ file: path, reason: error });
  for (const e of entries) {
    if (e.skip) w.out.skipped.push({ file: `${path}#agent.${e.name}`, reason: e.skip });
    if (e.error) w.out.diagnostics.push({ file: path, reason: e.error, name: e.name });
    if (!e.read) continue;
    const r = parseProfileFields(e.read, path, source, "opencode");
    if (r.skip) w.out.skipped.push({ file: `${path}#agent.${e.name}`, reason: r.skip });
    else if (r.profile && !r.profile.description)
      w.out.skipped.push({ file: `${path}#agent.${e.name}`, reason: "no description" });
    else if (r.profile) w.candidates.push({ file: path, profile: r.profile });
    else w.out.diagnostics.push({ file: path, reason: `agent "${e.name}": ${r.error ?? "invalid"}`, name: e.name });
  }
}

/** Why a profile name that is not loaded cannot be used: a file meant to define it was refused. */
export function brokenProfile(diagnostics: Diagnostic[] | undefined, name: string): Diagnostic | undefined {
  return diagnostics?.filter((d) => d.name === name).pop();
}

/** Every profile visible from cwd, plus one diagnostic per file that could not be used. Never throws. */
export function discoverProfiles(host: Host, opts: { cwd: string; agentDir: string }): Discovery {
  const out: Discovery = { profiles: new Map(), diagnostics: [], shadowed: [], skipped: [] };
  for (const p of builtinProfiles(out.diagnostics)) out.profiles.set(p.name, p);

  const home = norm(host.homedir());
  const base = norm(opts.agentDir);
  const userPath = (loc: Location) =>
    loc.agentDir ? join(base, loc.path) : loc.path.startsWith("~/") ? join(home, loc.path.slice(2)) : norm(loc.path);
  const seenDirs = new Set<string>();
  const loaded = new Set<string>();
  for (const loc of userLocations(host.env ?? {})) {
    const path = userPath(loc);
    loaded.add(path);
    loadLocation(host, path, loc, "user", out, seenDirs);
  }

  for (const dir of ancestors(opts.cwd)) {
    // The home directory's own .pi, .claude, .codex, … are the user scope, not a project.
    if (dir === home) continue;
    for (const loc of PROJECT_LOCATIONS) {
      const path = join(dir, loc.path);
      if (loaded.has(path)) continue;
      loaded.add(path);
      loadLocation(host, path, loc, "project", out, seenDirs);
    }
  }
  return out;
}
