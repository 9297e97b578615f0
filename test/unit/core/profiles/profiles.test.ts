// Profiles: parsing (aliases, lists, Claude names, every validation error), the extraArgs guard, skill
// conflicts, built-ins, and discovery precedence — through an in-memory Host, plus once on the real disk.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILTIN_AGENTS } from "../../../../src/core/profiles/builtin-agents.ts";
import type { DirEntry, Host } from "../../../../src/core/host.ts";
import { agentDir, ancestors, discoverProfiles } from "../../../../src/core/profiles/profile-discovery.ts";
import {
  extraArgsProblem,
  parseProfile,
  profileSummary,
  validateProfileSkills,
  type Profile,
} from "../../../../src/core/profiles/profile.ts";

const md = (fm: string, body = "You are helpful.") => `---\n${fm}\n---\n${body}\n`;
const ok = (text: string, file = "/x/p.md", source: Profile["source"] = "user"): Profile => {
  const r = parseProfile(text, file, source);
  if (!r.profile) throw new Error(`expected a profile, got error: ${r.error}`);
  return r.profile;
};
const err = (text: string, source: Profile["source"] = "user", file = "/x/p.md") => {
  const r = parseProfile(text, file, source);
  expect(r.profile).toBeUndefined();
  return r.error ?? "";
};

/** A directory tree in memory; counts reads so tests can check nothing is read twice. */
function memHost(files: Record<string, string>, home = "/home/u", unreadable: string[] = []) {
  const reads: string[] = [];
  const dirs = new Map<string, Map<string, boolean>>(); // dir → child name → isFile
  for (const path of Object.keys(files)) {
    const parts = path.split("/").filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join("/")}`;
      if (!dirs.has(dir)) dirs.set(dir, new Map());
      dirs.get(dir)!.set(parts[i], i === parts.length - 1);
    }
  }
  const host: Partial<Host> = {
    homedir: () => home,
    listDir(path: string): DirEntry[] {
      if (unreadable.includes(path)) throw new Error("EACCES");
      return [...(dirs.get(path) ?? new Map()).entries()].map(([name, isFile]) => ({
        name,
        isFile,
        isDirectory: !isFile,
      }));
    },
    readText(path: string) {
      reads.push(path);
      return unreadable.includes(path) ? null : (files[path] ?? null);
    },
    stat(path: string) {
      return path in files ? { size: files[path].length, isFile: true, isDirectory: false, mtimeMs: 0 } : null;
    },
  };
  return { host: host as Host, reads };
}

describe("parseProfile", () => {
  test("name defaults to the file name; body is the prompt; front matter is optional", () => {
    const p = ok(md("description: d"), "/a/b/code-reviewer.md");
    expect(p).toMatchObject({
      name: "code-reviewer",
      description: "d",
      source: "user",
      filePath: "/a/b/code-reviewer.md",
      systemPrompt: "You are helpful.",
      systemPromptMode: "replace",
    });
    expect(ok("Just a prompt.", "C:\\agents\\win.md").name).toBe("win");
    expect(ok(md("name: other"), "/a/file.md").name).toBe("other");
    expect(ok("---\n---\nBody only.", "/a/e.md").systemPrompt).toBe("Body only.");
    expect(ok("\uFEFF---\r\nname: crlf\r\n---\r\nWindows body\r\n").name).toBe("crlf");
  });

  test("thinking aliases", () => {
    expect(ok(md("thinkingLevel: high")).thinking).toBe("high");
    expect(ok(md("thinking: minimal")).thinking).toBe("minimal");
    expect(ok(md("thinking: XHigh")).thinking).toBe("xhigh");
  });

  test("allow-list aliases, YAML lists and comma strings, Claude names mapped and deduped", () => {
    expect(ok(md("tools: read, grep")).tools).toEqual(["read", "grep"]);
    expect(ok(md("approved_tools:\n  - Read\n  - Glob")).tools).toEqual(["read", "find"]);
    expect(ok(md("allowed_tools: [Bash, LS]")).tools).toEqual(["bash", "ls"]);
    const claude = ok(md("tools: Read, Grep, Glob, Bash, Edit, Write, LS, MultiEdit, WebFetch"));
    expect(claude.tools).toEqual(["read", "grep", "find", "bash", "edit", "write", "ls"]);
    expect(claude.unavailableTools).toEqual(["WebFetch"]);
  });

  test("deny-list aliases", () => {
    expect(ok(md("excludeTools: bash, Write")).excludeTools).toEqual(["bash", "write"]);
    expect(ok(md("denied_tools:\n  - Edit\n  - MultiEdit")).excludeTools).toEqual(["edit"]);
    expect(ok(md("disallowedTools: [Bash]")).excludeTools).toEqual(["bash"]);
  });

  test("skills aliases and the other list/bool/string fields", () => {
    expect(ok(md("skills: a, b")).loadSkills).toEqual(["a", "b"]);
    expect(ok(md("loadSkills: [c]")).loadSkills).toEqual(["c"]);
    const p = ok(
      md(
        "provider: anthropic\nmodel: claude-x\nextensions: ./a.ts, ./b.ts\nnoExtensions: false\nsuggestedSkills: s1\nnoContextFiles: true\nappendSystemPrompt: extra\napiKey: k\ntimeout: 90\nfinalize: false\nnoTools: true\ncolor: blue",
      ),
    );
    expect(p).toMatchObject({
      provider: "anthropic",
      model: "claude-x",
      extensions: ["./a.ts", "./b.ts"],
      noExtensions: false,
      suggestedSkills: ["s1"],
      noContextFiles: true,
      appendSystemPrompt: "extra",
      apiKey: "k",
      timeout: 90,
      finalize: false,
      noTools: true,
    });
    expect(p.color).toBe("blue");
  });

  test("readonly defaults the allow list, narrows a deny list, keeps an explicit list", () => {
    expect(ok(md("readonly: true")).tools).toEqual(["read", "grep", "find", "ls"]);
    expect(ok(md("readonly: true\nexcludeTools: ls")).tools).toEqual(["read", "grep", "find"]);
    expect(ok(md("readonly: true\ntools: read, bash")).tools).toEqual(["read", "bash"]);
    expect(ok(md("readonly: false")).tools).toBeUndefined();
  });

  test("empty body only with systemPromptMode append", () => {
    expect(ok(md("systemPromptMode: append", "")).systemPrompt).toBe("");
    expect(err(md("name: x", "  \n"))).toContain("empty system prompt");
    expect(err("---\nname: x\n---\n")).toContain("empty system prompt");
  });

  test("every validation error names the problem", () => {
    expect(err("---\n[unclosed\n---\nbody")).toContain("invalid YAML");
    expect(err("---\n- a\n- b\n---\nbody")).toContain("front matter must be a mapping");
    expect(err("---\njust text\n---\nbody")).toContain("front matter must be a mapping");
    expect(err("---\nname: x\nno closing line")).toContain('no closing "---"');
    expect(err(md("name: [a]"))).toContain('field "name" must be a string');
    // A display-style name is made usable, and one that cannot be falls back to the file name (said in a
    // warning); only a bad file name too is an error.
    const spaced = ok(md("name: has space"), "/x/p.md");
    expect(spaced.name).toBe("has-space");
    expect(spaced.warnings?.[0]).toContain('name "has space" is used as "has-space"');
    expect(ok(md("name: '!!!'"), "/x/p.md").name).toBe("p");
    expect(err(md("name: '!!!'"), "user", "/x/bad name.md")).toContain('field "name"');
    expect(err("body", "user", "/x/has space.md")).toContain("taken from the file name");
    expect(err(md("description: {a: 1}"))).toContain('field "description" must be a string');
    expect(err(md("tools: 42"))).toContain('field "tools" must be a list of strings');
    expect(err(md("denied_tools: [1, 2]"))).toContain('field "denied_tools" must be a list of strings');
    expect(err(md("skills: {a: 1}"))).toContain('field "skills" must be a list');
    expect(err(md("noTools: yes please"))).toContain('field "noTools" must be true or false');
    expect(err(md("readonly: 1"))).toContain('field "readonly" must be true or false');
    expect(err(md("tools: read\nallowed_tools: grep"))).toContain('"tools" and "allowed_tools" mean the same thing');
    expect(err(md("noTools: true\ntools: read"))).toContain('"noTools: true" contradicts "tools"');
    expect(err(md("readonly: true\ntools: read, Write"))).toContain('"readonly: true" but "tools" includes write');
    const thinking = err(md("thinking: turbo"));
    expect(thinking).toContain('unknown thinking level "turbo"');
    expect(thinking).toContain("off, minimal, low, medium, high, xhigh");
    for (const t of ["-5", "0", "fast", ".inf"])
      expect(err(md(`timeout: ${t}`))).toContain('field "timeout" must be a positive number');
    expect(err(md("systemPromptMode: prepend"))).toContain('field "systemPromptMode" must be "replace" or "append"');
    expect(err(md("apiKey: abc"), "project")).toContain('project profiles cannot set "apiKey"');
    expect(ok(md("apiKey: abc"), "/x/p.md", "user").apiKey).toBe("abc");
    expect(err(md("extraArgs: {a: 1}"))).toContain('field "extraArgs" must be a list');
  });
});

describe("extraArgs guard", () => {
  const guard = (arg: string) =>
    `Refusing extraArg "${arg}" which would override profile tool restrictions. Use the dedicated profile fields instead.`;

  test("tool-override flags are refused only while the profile restricts tools", () => {
    for (const restrict of ["tools: read", "excludeTools: bash", "noTools: true", "readonly: true"]) {
      for (const arg of ["--tools", "-t", "--no-tools", "-nt", "--tools=bash", "-t=bash", "--no-tools=1", "-nt=1"]) {
        expect(err(md(`${restrict}\nextraArgs: ['${arg}']`))).toBe(guard(arg));
      }
    }
    expect(ok(md("extraArgs: ['--tools', 'read,bash']")).extraArgs).toEqual(["--tools", "read,bash"]);
    expect(extraArgsProblem(["-nt"], false)).toBeNull();
  });

  test("flags that break the child contract are always refused, with the flag named", () => {
    for (const arg of [
      "--session",
      "--session-dir=/x",
      "--mode",
      "-p",
      "--print",
      "--api-key",
      "--no-session",
      "--resume",
      "-c",
    ]) {
      const e = err(md(`extraArgs: ['${arg}', 'x']`));
      expect(e).toStartWith(`Refusing extraArg "${arg}"`);
      expect(e).toContain(arg.split("=")[0]);
    }
    expect(err(md("extraArgs: ['--api-key', 'k']"))).toContain('"apiKey" field');
  });

  test("shell metacharacters pass through untouched (no shell is ever used); string form splits on whitespace", () => {
    expect(ok(md("extraArgs: ['--thinking', 'low; rm -rf / | cat $(x)']")).extraArgs).toEqual([
      "--thinking",
      "low; rm -rf / | cat $(x)",
    ]);
    expect(ok(md("extraArgs: --models a,b --verbose")).extraArgs).toEqual(["--models", "a,b", "--verbose"]);
    expect(ok(md("extraArgs: [--max, 5]")).extraArgs).toEqual(["--max", "5"]);
  });
});

describe("skills, summary, built-ins", () => {
  test("skill conflicts (noSkills with suggestedSkills or loadSkills) are refused, naming both fields; skills with suggestedSkills are fine", () => {
    expect(validateProfileSkills(ok(md("noSkills: true\nsuggestedSkills: a"), "/x/s.md"))).toBe(
      'Profile "s" has both "suggestedSkills" and "noSkills" set. These are mutually exclusive — --no-skills would override --skill flags.',
    );
    expect(validateProfileSkills(ok(md("noSkills: true\nskills: a"), "/x/q.md"))).toBe(
      'Profile "q" has both "loadSkills" and "noSkills" set. These are mutually exclusive — --no-skills disables skill discovery.',
    );
    expect(validateProfileSkills(ok(md("noSkills: true"), "/x/n.md"))).toBeNull();
    expect(validateProfileSkills(ok(md("skills: a\nsuggestedSkills: b"), "/x/n.md"))).toBeNull();
  });

  test("summary is one line with name, model, tools, settings and a short prompt preview", () => {
    const long = "Review carefully. ".repeat(20);
    const s = profileSummary(
      ok(
        md(
          "provider: anthropic\nmodel: claude-x\ntools: Read, Grep\nthinking: high\ntimeout: 120\napiKey: sekrit-value",
          long,
        ),
        "/x/rev.md",
      ),
    );
    expect(s).not.toContain("\n");
    expect(s).toStartWith("rev ");
    for (const part of [
      "anthropic/claude-x",
      "tools: read,grep",
      "thinking high",
      "timeout 120s",
      "own API key",
      'prompt: "Review carefully.',
    ])
      expect(s).toContain(part);
    expect(s).not.toContain("sekrit");
    const quoted = /prompt: "([^"]*)"/.exec(s)![1];
    expect(quoted.length).toBeLessThanOrEqual(60);
    expect(quoted.endsWith("…")).toBe(true);
    const plain = profileSummary(ok(md("excludeTools: bash"), "/x/d.md"));
    expect(plain).toContain("default model");
    expect(plain).toContain("all tools except bash");
    expect(profileSummary(ok(md("noTools: true"), "/x/n.md"))).toContain("no tools");
  });

  test("built-ins parse cleanly, are read-only where promised, and ask for subagent_finalize", () => {
    expect(Object.keys(BUILTIN_AGENTS).sort()).toEqual(["planner", "reviewer", "scout", "worker"]);
    for (const [name, text] of Object.entries(BUILTIN_AGENTS)) {
      const r = parseProfile(text, `${name}.md`, "builtin");
      expect(r.error).toBeUndefined();
      expect(r.profile!.name).toBe(name);
      expect(r.profile!.filePath).toBeUndefined();
      expect(r.profile!.description).toBeTruthy();
      expect(r.profile!.systemPrompt).toContain("subagent_finalize");
    }
    const tools = (n: string) => parseProfile(BUILTIN_AGENTS[n], `${n}.md`, "builtin").profile!.tools;
    expect(tools("scout")).toEqual(["read", "grep", "find", "ls", "bash"]);
    for (const n of ["planner", "reviewer"]) expect(tools(n)!.some((t) => t === "write" || t === "edit")).toBe(false);
    expect(tools("worker")).toBeUndefined();
  });
});

describe("discovery", () => {
  const AGENT = "/home/u/.pi/agent";

  test("agentDir: env wins (with ~ expanded), else ~/.pi/agent", () => {
    expect(agentDir({}, "/home/u")).toBe("/home/u/.pi/agent");
    expect(agentDir({ PI_CODING_AGENT_DIR: "/opt/pi/" }, "/home/u")).toBe("/opt/pi");
    expect(agentDir({ PI_CODING_AGENT_DIR: "~/alt" }, "/home/u")).toBe("/home/u/alt");
    expect(agentDir({ PI_CODING_AGENT_DIR: "" }, "/home/u")).toBe("/home/u/.pi/agent");
    expect(ancestors("/a/b/")).toEqual(["/", "/a", "/a/b"]);
    expect(ancestors("C:\\w\\r")).toEqual(["C:/", "C:/w", "C:/w/r"]);
  });

  test("built-ins < user dirs (Claude Code's, then pi's) < project dirs, nearest project dir wins", () => {
    const { host } = memHost({
      [`${AGENT}/agents/scout.md`]: md("description: user scout"),
      [`${AGENT}/agent-profiles/a.md`]: md("description: agent-profiles a"),
      [`${AGENT}/subagents/a.md`]: md("description: subagents a"),
      [`${AGENT}/subagents/b.md`]: md("description: subagents b"),
      "/home/u/.claude/agents/b.md": md("description: claude b"),
      "/home/u/.claude/agents/c.md": md("description: claude c"),
      "/w/.pi/agents/c.md": md("description: far c"),
      "/w/.pi/agents/d.md": md("description: far d"),
      "/w/repo/.pi/agents/d.md": md("description: repo .pi/agents d"),
      "/w/repo/.pi/agent-profiles/d.md": md("description: repo agent-profiles d"),
      "/w/repo/.claude/agents/e.md": md("description: repo claude e"),
      "/w/repo/pkg/.claude/agents/e.md": md("description: nearest e"),
      "/w/repo/pkg/.claude/agents/notes.txt": "not a profile",
      "/w/repo/pkg/.claude/agents/folder.md/x.md": md("description: inside a dir named .md"),
    });
    const { profiles, diagnostics } = discoverProfiles(host, { cwd: "/w/repo/pkg", agentDir: AGENT });
    const desc = (n: string) => `${profiles.get(n)?.source}: ${profiles.get(n)?.description}`;
    expect(diagnostics).toEqual([]);
    expect(desc("scout")).toBe("user: user scout");
    expect(desc("planner")).toMatch(/^builtin: /);
    expect(desc("a")).toBe("user: subagents a");
    expect(desc("b")).toBe("user: subagents b"); // pi's folder wins over Claude Code's
    expect(desc("c")).toBe("project: far c");
    expect(desc("d")).toBe("project: repo agent-profiles d");
    expect(desc("e")).toBe("project: nearest e");
    expect(profiles.has("notes")).toBe(false);
    expect(profiles.has("folder")).toBe(false);
    expect(profiles.get("e")?.filePath).toBe("/w/repo/pkg/.claude/agents/e.md");
  });

  test("the home directory's own .pi/.claude are user scope, never re-read as a project", () => {
    const { host, reads } = memHost({
      "/home/u/.claude/agents/h.md": md("description: home claude"),
      "/home/u/.pi/agents/stray.md": md("description: home .pi/agents"),
      "/home/u/proj/.pi/agents/p.md": md("description: proj"),
    });
    const { profiles } = discoverProfiles(host, { cwd: "/home/u/proj", agentDir: AGENT });
    expect(profiles.get("h")?.source).toBe("user");
    expect(profiles.has("stray")).toBe(false);
    expect(profiles.get("p")?.source).toBe("project");
    expect(new Set(reads).size).toBe(reads.length);
  });

  test("a broken or unreadable file is a diagnostic and hides nothing else; an unreadable dir is empty", () => {
    const { host } = memHost(
      {
        [`${AGENT}/agents/aa-broken.md`]: "---\ndescription: broken\nthinking: warp\n---\nx",
        [`${AGENT}/agents/good.md`]: md("description: good"),
        [`${AGENT}/agents/locked.md`]: md("description: locked"),
        "/w/.pi/agents/key.md": md("description: key\napiKey: stolen"),
        "/w/.pi/agents/fine.md": md("description: fine"),
        "/w/.claude/agents/hidden.md": md("description: hidden"),
        "/w/.pi/agent-profiles/dup1.md": md("name: dup\ndescription: first"),
        "/w/.pi/agent-profiles/dup2.md": md("name: dup\ndescription: second"),
      },
      "/home/u",
      [`${AGENT}/agents/locked.md`, "/w/.claude/agents"],
    );
    const { profiles, diagnostics } = discoverProfiles(host, { cwd: "/w", agentDir: AGENT });
    expect(profiles.get("good")?.description).toBe("good");
    expect(profiles.get("fine")?.description).toBe("fine");
    expect(profiles.get("dup")?.description).toBe("second");
    expect(profiles.has("hidden")).toBe(false);
    expect(profiles.has("scout")).toBe(true);
    const byFile = Object.fromEntries(diagnostics.map((d) => [d.file, d.reason]));
    expect(byFile[`${AGENT}/agents/aa-broken.md`]).toContain('unknown thinking level "warp"');
    expect(byFile[`${AGENT}/agents/locked.md`]).toBe("could not be read");
    expect(byFile["/w/.pi/agents/key.md"]).toContain('project profiles cannot set "apiKey"');
    expect(diagnostics.length).toBe(3);
    const { shadowed } = discoverProfiles(host, { cwd: "/w", agentDir: AGENT });
    expect(shadowed).toContainEqual({
      name: "dup",
      file: "/w/.pi/agent-profiles/dup1.md",
      source: "project",
      by: "/w/.pi/agent-profiles/dup2.md",
    });
  });

  test("built-ins are fresh objects each time", () => {
    const { host } = memHost({});
    const first = discoverProfiles(host, { cwd: "/", agentDir: AGENT }).profiles.get("scout")!;
    first.tools!.length = 0;
    first.description = "mutated";
    const again = discoverProfiles(host, { cwd: "/", agentDir: AGENT }).profiles.get("scout")!;
    expect(again.description).not.toBe("mutated");
    expect(again.tools).toEqual(["read", "grep", "find", "ls", "bash"]);
  });

  test("real filesystem: user and project dirs, 100 files, each read once, well under 50 ms", () => {
    const root = fs.mkdtempSync(join(tmpdir(), "subagents-profiles-"));
    const agent = join(root, "agent");
    const proj = join(root, "proj", "sub");
    fs.mkdirSync(join(agent, "agents"), { recursive: true });
    fs.mkdirSync(join(root, "proj", ".pi", "agents"), { recursive: true });
    fs.mkdirSync(proj, { recursive: true });
    for (let i = 0; i < 100; i++)
      fs.writeFileSync(
        join(agent, "agents", `p${i}.md`),
        md(`description: profile ${i}\ntools: Read, Grep\nthinking: low`, `Prompt ${i}.`),
      );
    fs.writeFileSync(join(root, "proj", ".pi", "agents", "p7.md"), md("description: project p7"));
    fs.symlinkSync(join(agent, "agents", "p1.md"), join(root, "proj", ".pi", "agents", "linked.md"));
    let reads = 0;
    const real: Partial<Host> = {
      homedir: () => join(root, "home"),
      listDir: (p) => {
        try {
          return fs
            .readdirSync(p, { withFileTypes: true })
            .map((d) => ({ name: d.name, isFile: d.isFile(), isDirectory: d.isDirectory() }));
        } catch {
          return [];
        }
      },
      readText: (p) => {
        reads++;
        try {
          return fs.readFileSync(p, "utf8");
        } catch {
          return null;
        }
      },
      stat: (p) => {
        try {
          const s = fs.statSync(p);
          return { size: s.size, isFile: s.isFile(), isDirectory: s.isDirectory(), mtimeMs: s.mtimeMs };
        } catch {
          return null;
        }
      },
    };
    const opts = { cwd: proj, agentDir: agent };
    reads = 0;
    discoverProfiles(real as Host, opts); // warm-up: module and YAML parser JIT
    expect(reads).toBe(102); // each file once (the symlinked one under its own path too)
    // Best of three, so a busy machine (tests run in parallel) doesn't make this flaky.
    let ms = Infinity;
    let result = discoverProfiles(real as Host, opts);
    for (let i = 0; i < 3; i++) {
      reads = 0;
      const t = performance.now();
      result = discoverProfiles(real as Host, opts);
      ms = Math.min(ms, performance.now() - t);
    }
    const { profiles, diagnostics } = result;
    expect(diagnostics).toEqual([]);
    expect(reads).toBe(0); // unchanged files are not read again
    const changed = join(agent, "agents", "p3.md");
    fs.writeFileSync(changed, md("description: changed p3\ntools: Read", "Prompt 3, longer now."));
    reads = 0;
    expect(discoverProfiles(real as Host, opts).profiles.get("p3")?.description).toBe("changed p3");
    expect(reads).toBe(1);
    fs.writeFileSync(changed, md("description: profile 3\ntools: Read, Grep\nthinking: low", "Prompt 3."));
    expect(profiles.size).toBe(100 + 4 + 1);
    expect(profiles.get("p7")?.source).toBe("project");
    expect(profiles.get("p3")?.tools).toEqual(["read", "grep"]);
    expect(profiles.get("linked")?.systemPrompt).toBe("Prompt 1.");
    expect(ms).toBeLessThan(50);
    fs.rmSync(root, { recursive: true, force: true });
  });
});

test("gate, gateTimeout, gateRetries in front matter; bad values name the field", () => {
  const ok = parseProfile(
    "---\nname: fixer\ngate: npm test\ngateTimeout: 60\ngateRetries: 1\n---\nFix things.",
    "/a/fixer.md",
    "user",
  );
  expect(ok.profile).toMatchObject({ gate: "npm test", gateTimeout: 60, gateRetries: 1 });
  expect(ok.profile?.warnings).toBeUndefined();
  expect(parseProfile("---\nname: f\ngate: 3\n---\nx", "/a/f.md", "user").error).toContain(
    'field "gate" must be a shell command',
  );
  expect(parseProfile("---\nname: f\ngate: x\ngateRetries: -1\n---\nx", "/a/f.md", "user").error).toContain(
    'field "gateRetries" must be a whole number',
  );
});
