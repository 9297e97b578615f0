// Finds profiles in every location of DESIGN §3, later ones winning: built-ins → user dirs → project dirs
// (searched from the filesystem root down to cwd, so the nearest directory wins).
// Each directory is listed once and each file read once: discovery runs on every delegate call.
import { BUILTIN_AGENTS } from "./builtin-agents.ts";
import type { Host } from "../host.ts";
import { parseProfile, profileNameOf, type Profile, type ProfileSource } from "./profile.ts";

/** A file that could not be used; `name` is the profile it meant to define, so a call naming it hears why. */
export type Diagnostic = { file: string; reason: string; name?: string };
export type Discovery = { profiles: Map<string, Profile>; diagnostics: Diagnostic[] };

const USER_SUBDIRS = ["agents", "agent-profiles", "subagents"];
const PROJECT_SUBDIRS = [".pi/agents", ".pi/agent-profiles", ".claude/agents"];

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

function markdownFiles(host: Host, dir: string): string[] {
  let entries: ReturnType<Host["listDir"]>;
  try {
    entries = host.listDir(dir);
  } catch {
    return []; // missing or unreadable: simply no profiles there
  }
  const names: string[] = [];
  for (const e of entries) {
    if (!e.name.toLowerCase().endsWith(".md")) continue;
    // Some hosts report a symlink as neither file nor directory: ask once where it points.
    const isFile = e.isFile || (!e.isDirectory && host.stat(join(dir, e.name))?.isFile === true);
    if (isFile) names.push(e.name);
  }
  return names.sort();
}

function loadDir(host: Host, dir: string, source: ProfileSource, out: Discovery): void {
  const seen = new Map<string, string>();
  for (const name of markdownFiles(host, dir)) {
    const file = join(dir, name);
    const text = host.readText(file);
    if (text === null) {
      out.diagnostics.push({ file, reason: "could not be read" });
      continue;
    }
    const { profile, error } = parseProfile(text, file, source);
    if (!profile) {
      out.diagnostics.push({ file, reason: error ?? "invalid", name: profileNameOf(text, file) });
      continue;
    }
    const earlier = seen.get(profile.name);
    if (earlier) out.diagnostics.push({ file, reason: `name "${profile.name}" is also used by ${earlier} in the same directory; this file wins` });
    seen.set(profile.name, file);
    out.profiles.set(profile.name, profile);
  }
}

/** Why a profile name that is not loaded cannot be used: a file meant to define it was refused. */
export function brokenProfile(diagnostics: Diagnostic[] | undefined, name: string): Diagnostic | undefined {
  return diagnostics?.filter((d) => d.name === name).pop();
}

/** Every profile visible from cwd, plus one diagnostic per file that could not be used. Never throws. */
export function discoverProfiles(host: Host, opts: { cwd: string; agentDir: string }): Discovery {
  const out: Discovery = { profiles: new Map(), diagnostics: [] };
  for (const p of builtinProfiles(out.diagnostics)) out.profiles.set(p.name, p);

  const home = norm(host.homedir());
  const base = norm(opts.agentDir);
  const userDirs = [...USER_SUBDIRS.map((d) => join(base, d)), join(home, ".claude/agents")];
  for (const dir of userDirs) loadDir(host, dir, "user", out);

  const loaded = new Set(userDirs);
  for (const dir of ancestors(opts.cwd)) {
    // The home directory's own .pi and .claude are the user scope, not a project.
    if (dir === home) continue;
    for (const sub of PROJECT_SUBDIRS) {
      const path = join(dir, sub);
      if (loaded.has(path)) continue;
      loaded.add(path);
      loadDir(host, path, "project", out);
    }
  }
  return out;
}
