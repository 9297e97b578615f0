// Profiles (parsing, aliases, validation, discovery precedence), settings (merge, clamp, warnings) and the
// files field — against the real filesystem in temp dirs, through the Bun host.
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderFiles, resolvePath } from "../../../../src/core/files.ts";
import { discoverProfiles } from "../../../../src/core/profiles/profile-discovery.ts";
import { parseProfile, profileSummary, validateProfileSkills } from "../../../../src/core/profiles/profile.ts";
import { loadSettings, mergeSettings, defaultSettings } from "../../../../src/core/settings.ts";
import { createBunHost } from "../../../../src/host/bun.ts";

const host = createBunHost(() => {
  throw new Error("no db here");
});
const fresh = () => mkdtempSync(join(tmpdir(), "subagents-cfg-"));
const md = (fm: string, body = "You are helpful.") => `---\n${fm}\n---\n${body}\n`;

test("aliases, comma lists, Claude tool names, defaults", () => {
  const a = parseProfile(
    md("approved_tools:\n  - Read\n  - Grep\n  - Glob\nthinkingLevel: high\nmodel: claude-x\nprovider: anthropic"),
    "/x/a.md",
    "user",
  ).profile!;
  expect(a.name).toBe("a");
  expect(a.tools).toEqual(["read", "grep", "find"]);
  expect(a.thinking).toBe("high");
  const b = parseProfile(
    md("name: b\nallowed_tools: Bash, Edit, Write, MultiEdit\nskills: one, two"),
    "/x/b.md",
    "user",
  ).profile!;
  expect(b.tools).toEqual(["bash", "edit", "write"]);
  expect(b.loadSkills).toEqual(["one", "two"]);
  const c = parseProfile(md("denied_tools: [Bash]\nthinking: low"), "/x/c.md", "user").profile!;
  expect(c.excludeTools).toEqual(["bash"]);
  const d = parseProfile(md("disallowedTools: write"), "/x/d.md", "user").profile!;
  expect(d.excludeTools).toEqual(["write"]);
  const ro = parseProfile(md("readonly: true"), "/x/ro.md", "user").profile!;
  expect(ro.tools).toEqual(["read", "grep", "find", "ls"]);
  const append = parseProfile(md("systemPromptMode: append", ""), "/x/ap.md", "user").profile!;
  expect(append.systemPromptMode).toBe("append");
  expect(profileSummary(a)).toContain("anthropic/claude-x");
});

test("each broken profile gets a reason that names the problem", () => {
  const err = (text: string, source: "user" | "project" = "user") => parseProfile(text, "/x/p.md", source).error ?? "";
  expect(err("---\n[unclosed\n---\nbody")).toContain("invalid YAML");
  expect(err("---\n- a\n- b\n---\nbody")).toContain("front matter must be a mapping");
  expect(err(md("thinking: turbo"))).toContain('unknown thinking level "turbo"');
  expect(err(md("timeout: -5"))).toContain('"timeout" must be a positive number');
  expect(err(md("tools: 42"))).toContain('field "tools" must be a list');
  expect(err(md("noTools: yes please"))).toContain('"noTools" must be true or false');
  expect(err(md("apiKey: abc"), "project")).toContain('project profiles cannot set "apiKey"');
  expect(err(md("tools: read\nextraArgs: ['--tools=bash']"))).toBe(
    'Refusing extraArg "--tools=bash" which would override profile tool restrictions. Use the dedicated profile fields instead.',
  );
  expect(err(md("extraArgs: ['--session', 'x']"))).toContain('Refusing extraArg "--session"');
  expect(err(md("name: x"), "user")).toBe("");
  expect(err("---\nname: x\n---\n")).toContain("empty system prompt");
  // Shell metacharacters are harmless (no shell is ever used): accepted.
  expect(err(md("extraArgs: ['--thinking', 'low; rm -rf /']"))).toBe("");
});

test("parsed profiles with noSkills and a skill list are refused, naming both fields", () => {
  const p = parseProfile(md("noSkills: true\nsuggestedSkills: a"), "/x/s.md", "user").profile!;
  expect(validateProfileSkills(p)).toBe(
    'Profile "s" has both "suggestedSkills" and "noSkills" set. These are mutually exclusive — --no-skills would override --skill flags.',
  );
  const q = parseProfile(md("noSkills: true\nloadSkills: a"), "/x/q.md", "user").profile!;
  expect(validateProfileSkills(q)).toBe(
    'Profile "q" has both "loadSkills" and "noSkills" set. These are mutually exclusive — --no-skills disables skill discovery.',
  );
});

test("discovery: built-ins < user < project (nearest wins); broken files never hide the rest", () => {
  const root = fresh();
  const agent = join(root, "agent");
  const repo = join(root, "repo");
  const sub = join(repo, "pkg", "deep");
  for (const d of [
    join(agent, "agents"),
    join(agent, "agent-profiles"),
    join(repo, ".pi", "agents"),
    join(sub, ".claude", "agents"),
  ])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(agent, "agents", "scout.md"), md("description: user scout"));
  writeFileSync(join(agent, "agent-profiles", "helper.md"), md("description: user helper"));
  writeFileSync(join(agent, "agent-profiles", "broken.md"), "---\nthinking: warp\n---\nx");
  writeFileSync(join(repo, ".pi", "agents", "helper.md"), md("description: repo helper"));
  writeFileSync(join(sub, ".claude", "agents", "helper.md"), md("description: nearest helper"));
  writeFileSync(join(repo, ".pi", "agents", "notes.txt"), "ignored");
  const { profiles, diagnostics } = discoverProfiles(host, { cwd: sub, agentDir: agent });
  expect(profiles.get("scout")?.description).toBe("user scout");
  expect(profiles.get("scout")?.source).toBe("user");
  expect(profiles.get("helper")?.description).toBe("nearest helper");
  expect(profiles.get("helper")?.source).toBe("project");
  expect(profiles.get("planner")?.source).toBe("builtin");
  // The name a broken file meant to define (here from its file name), so a task naming it hears why it failed.
  expect(diagnostics).toEqual([
    {
      file: join(agent, "agent-profiles", "broken.md"),
      reason: expect.stringContaining('unknown thinking level "warp"'),
      name: "broken",
    },
  ]);
});

test("100 profile files load fast", () => {
  const root = fresh();
  const dir = join(root, "agent", "agents");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 100; i++)
    writeFileSync(join(dir, `p${i}.md`), md(`description: profile ${i}\ntools: read, grep`));
  const t = performance.now();
  const { profiles } = discoverProfiles(host, { cwd: root, agentDir: join(root, "agent") });
  expect(profiles.size).toBe(104);
  expect(performance.now() - t).toBeLessThan(5_000); // generous: a busy machine is slow, not broken
});

test("settings: global then project, snake_case keys, clamping and warnings, never throws", () => {
  const root = fresh();
  const agent = join(root, "agent");
  const proj = join(root, "proj");
  mkdirSync(agent, { recursive: true });
  mkdirSync(join(proj, ".pi"), { recursive: true });
  writeFileSync(
    join(agent, "settings.json"),
    JSON.stringify({
      subagents: { extend_timeout_debounce: 500, looping_tool_count: 7, concurrency: 2, transport: "json" },
    }),
  );
  writeFileSync(
    join(proj, ".pi", "settings.json"),
    JSON.stringify({ subagents: { concurrency: 3, maxLinesPerWindow: "many", tools: ["subagent", "bogus"] } }),
  );
  const { settings, warnings } = loadSettings(host, { agentDir: agent, cwd: proj });
  expect(settings.extendTimeoutDebounce).toBe(300);
  expect(settings.loopingToolCount).toBe(7);
  expect(settings.concurrency).toBe(3);
  expect(settings.transport).toBe("json");
  expect(settings.maxLinesPerWindow).toBe(15);
  expect(settings.tools).toEqual(["subagent"]);
  expect(warnings.join("\n")).toContain("extend_timeout_debounce = 500 is out of range 0–300; using 300");
  expect(warnings.join("\n")).toContain("maxLinesPerWindow must be a number");
  expect(warnings.join("\n")).toContain("unknown names bogus");
  writeFileSync(join(proj, ".pi", "settings.json"), "{ not json");
  const broken = loadSettings(host, { agentDir: agent, cwd: proj });
  expect(broken.warnings.join("\n")).toContain("not valid JSON");
  expect(broken.settings.concurrency).toBe(2);
  expect(mergeSettings(defaultSettings(), { looping_tool_count: -3 }).settings.loopingToolCount).toBe(0);
});

test("files: forms, placeholders, binary, non-UTF-8, directory, symlink loop, exactly 1 MB and one byte more", () => {
  const root = fresh();
  writeFileSync(join(root, "a.txt"), "one\ntwo\nthree\nfour\n");
  writeFileSync(join(root, "bin.dat"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
  writeFileSync(join(root, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  writeFileSync(join(root, "exact.txt"), Buffer.alloc(1024 * 1024, 97));
  writeFileSync(join(root, "over.txt"), Buffer.alloc(1024 * 1024 + 1, 97));
  mkdirSync(join(root, "dir"));
  const { symlinkSync } = require("node:fs") as typeof import("node:fs");
  symlinkSync(join(root, "loop1"), join(root, "loop2"));
  symlinkSync(join(root, "loop2"), join(root, "loop1"));
  const out = renderFiles(
    host,
    [
      "a.txt",
      { path: "a.txt", start: 2, end: 3 },
      { path: "a.txt", head: 1 },
      { path: "a.txt", tail: 2 },
      { path: "a.txt", start: 3 },
    ],
    root,
  );
  expect(out).toBe(
    "=== a.txt ===\none\ntwo\nthree\nfour\n\n=== a.txt ===\ntwo\nthree\n\n=== a.txt ===\none\n\n=== a.txt ===\nthree\nfour\n\n=== a.txt ===\nthree\nfour\n\n",
  );
  const bad = renderFiles(host, ["missing.txt", "bin.dat", "latin1.txt", "dir", "loop1", "over.txt"], root);
  expect(bad).toContain("[file not found: missing.txt]");
  expect(bad).toContain("[could not read file: bin.dat]");
  expect(bad).toContain("[could not read file: latin1.txt]");
  expect(bad).toContain("[could not read file: dir]");
  expect(bad).toContain("[file not found: loop1]");
  expect(bad).toContain("[file too large: over.txt (1024KB, limit 1024KB)]");
  expect(renderFiles(host, ["exact.txt"], root).length).toBeGreaterThan(1024 * 1024);
  expect(resolvePath("/a/b", "../c/./d.txt")).toBe("/a/c/d.txt");
  expect(resolvePath("/a/b", "/abs.txt")).toBe("/abs.txt");
});
