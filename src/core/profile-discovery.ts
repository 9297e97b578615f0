// Finds profiles in every location of DESIGN §3, later ones winning: built-ins → user dirs → project dirs
// (searched from the filesystem root down to cwd, so the nearest directory wins).
import { BUILTIN_AGENTS } from "./builtin-agents.ts";
import type { Host } from "./host.ts";
import { parseProfile, type Profile } from "./profile.ts";

export type Diagnostic = { file: string; reason: string };

export function agentDir(env: Record<string, string | undefined>, homedir: string): string {
  return env.PI_CODING_AGENT_DIR || `${homedir}/.pi/agent`;
}

const USER_SUBDIRS = ["agents", "agent-profiles", "subagents"];
const PROJECT_SUBDIRS = [".pi/agents", ".pi/agent-profiles", ".claude/agents"];

function parentsOf(cwd: string): string[] {
  const parts = cwd.split("/").filter(Boolean);
  const dirs: string[] = [];
  for (let i = 0; i <= parts.length; i++) dirs.push(`/${parts.slice(0, i).join("/")}`);
  return dirs; // root first, cwd last
}

function loadDir(host: Host, dir: string, source: Profile["source"], into: Map<string, Profile>, diagnostics: Diagnostic[]): void {
  const entries = host.listDir(dir).filter((e) => e.isFile && e.name.toLowerCase().endsWith(".md"));
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const file = `${dir}/${e.name}`;
    const text = host.readText(file);
    if (text === null) {
      diagnostics.push({ file, reason: "could not be read" });
      continue;
    }
    const { profile, error } = parseProfile(text, file, source);
    if (error || !profile) diagnostics.push({ file, reason: error ?? "invalid" });
    else into.set(profile.name, profile);
  }
}

export function discoverProfiles(host: Host, opts: { cwd: string; agentDir: string }): { profiles: Map<string, Profile>; diagnostics: Diagnostic[] } {
  const profiles = new Map<string, Profile>();
  const diagnostics: Diagnostic[] = [];
  for (const [name, text] of Object.entries(BUILTIN_AGENTS)) {
    const { profile, error } = parseProfile(text, `builtin:${name}.md`, "builtin");
    if (profile) profiles.set(profile.name, profile);
    else diagnostics.push({ file: `builtin:${name}`, reason: error ?? "invalid" });
  }
  const home = host.homedir();
  const userDirs = [...USER_SUBDIRS.map((d) => `${opts.agentDir}/${d}`), `${home}/.claude/agents`];
  for (const dir of userDirs) loadDir(host, dir, "user", profiles, diagnostics);
  const userDirSet = new Set(userDirs.map((d) => host.realpath(d) ?? d));
  for (const base of parentsOf(opts.cwd)) {
    for (const sub of PROJECT_SUBDIRS) {
      const dir = base === "/" ? `/${sub}` : `${base}/${sub}`;
      // The home directory's .claude/agents is the user scope, not a project.
      if (userDirSet.has(host.realpath(dir) ?? dir)) continue;
      loadDir(host, dir, "project", profiles, diagnostics);
    }
  }
  return { profiles, diagnostics };
}
