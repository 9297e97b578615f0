// Skills for profiles (docs/agents.md): `suggestedSkills` are handed to the child with --skill PATH, `loadSkills` are
// read and appended to its system prompt. Discovery follows pi's own locations (docs/skills.md), then Claude
// Code's (.claude/skills in the project, then ~/.claude/skills): the first skill found under a name wins, as in pi.
import type { Host } from "../host.ts";
import type { Profile } from "./profile.ts";

export type Skill = { name: string; file: string };

const MAX_DEPTH = 4;

function frontMatterName(text: string): string | undefined {
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const line = m?.[1].split(/\r?\n/).find((l) => /^name\s*:/.test(l));
  const name = line
    ?.replace(/^name\s*:\s*/, "")
    .trim()
    .replace(/^["']|["']$/g, "");
  return name || undefined;
}

function scan(host: Host, dir: string, rootMd: boolean, found: Map<string, Skill>, depth = 0): void {
  if (depth > MAX_DEPTH) return;
  for (const e of host.listDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isFile && rootMd && depth === 0 && e.name.endsWith(".md")) {
      const name = frontMatterName(host.readText(path) ?? "") ?? e.name.replace(/\.md$/, "");
      if (!found.has(name)) found.set(name, { name, file: path });
    } else if (e.isDirectory) {
      const skillFile = `${path}/SKILL.md`;
      if (host.stat(skillFile)?.isFile) {
        const name = frontMatterName(host.readText(skillFile) ?? "") ?? e.name;
        if (!found.has(name)) found.set(name, { name, file: skillFile });
      } else scan(host, path, false, found, depth + 1);
    }
  }
}

export function discoverSkills(host: Host, opts: { agentDir: string; cwd: string }): Map<string, Skill> {
  const found = new Map<string, Skill>();
  scan(host, `${opts.agentDir}/skills`, true, found);
  scan(host, `${host.homedir()}/.agents/skills`, false, found);
  scan(host, `${opts.cwd}/.pi/skills`, true, found);
  // Claude Code's skill folders, so an agent file's `skills:` finds what its author installed for it.
  scan(host, `${opts.cwd}/.claude/skills`, false, found);
  scan(host, `${host.homedir()}/.claude/skills`, false, found);
  const parts = opts.cwd.split("/").filter(Boolean);
  for (let i = parts.length; i >= 0; i--)
    scan(host, `/${parts.slice(0, i).join("/")}/.agents/skills`.replace("//", "/"), false, found);
  return found;
}

export type ResolvedSkills = { skillPaths: string[]; appendPrompt: string };

/** Skill names → paths and inlined text; unknown names are an error (`Unknown skills: …`, test/unit/core/profiles/profiles.test.ts). */
export function resolveProfileSkills(
  host: Host,
  p: Profile,
  skills: Map<string, Skill>,
): ResolvedSkills | { error: string } {
  const wanted = [...(p.suggestedSkills ?? []), ...(p.loadSkills ?? [])];
  const unknown = wanted.filter((n) => !skills.has(n));
  if (unknown.length) {
    const available = [...skills.keys()].sort();
    return {
      error: `Unknown skills: ${unknown.map((n) => `"${n}"`).join(", ")}. Available skills: ${available.length ? available.join(", ") : "(none)"}`,
    };
  }
  const skillPaths = (p.suggestedSkills ?? []).map((n) => skills.get(n)!.file);
  const appendPrompt = (p.loadSkills ?? [])
    .map((n) => `## Skill: ${n}\n\n${(host.readText(skills.get(n)!.file) ?? "").trim()}`)
    .join("\n\n");
  return { skillPaths, appendPrompt };
}
