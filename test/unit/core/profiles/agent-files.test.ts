// Agent files as people already have them: fixture collections (test/fixtures/agent-collections, our own text
// in the shapes public Claude Code and pi collections use) installed the way their READMEs say, discovered on
// the real filesystem through the Bun host; plus the tolerant front matter, tool and field mapping, symlink
// loops, depth and precedence.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverProfiles } from "../../../../src/core/profiles/profile-discovery.ts";
import { parseProfile } from "../../../../src/core/profiles/profile.ts";
import { readLenient } from "../../../../src/core/profiles/front-matter.ts";
import { buildInvocation } from "../../../../src/core/run/launch/invocation.ts";
import { createBunHost } from "../../../../src/host/bun.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "..", "fixtures", "agent-collections");
const manifest = JSON.parse(readFileSync(join(FIXTURES, "manifest.json"), "utf8")) as Record<
  string,
  { install: string; agents: string[] }
>;

function hostWithHome(home: string) {
  const host = createBunHost(() => {
    throw new Error("no db here");
  });
  return { ...host, homedir: () => home };
}

/** A fresh home with every fixture collection installed the way its README says. */
function installAll(): { home: string; agentDir: string } {
  const home = mkdtempSync(join(tmpdir(), "subagents-collections-"));
  const claude = join(home, ".claude", "agents");
  const agentDir = join(home, ".pi", "agent");
  mkdirSync(claude, { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  for (const [name, { install }] of Object.entries(manifest)) {
    const src = join(FIXTURES, name);
    if (install === "claude-clone")
      cpSync(src, join(claude, name), { recursive: true }); // git clone into ~/.claude/agents/NAME
    else if (install === "claude-copy-contents")
      cpSync(src, claude, { recursive: true }); // cp -r agents/* ~/.claude/agents/
    else if (install === "pi-copy") cpSync(src, join(agentDir, "agents", name), { recursive: true });
    else throw new Error(`unknown install "${install}"`);
  }
  return { home, agentDir };
}

describe("collections installed the way their READMEs say", () => {
  const { home, agentDir } = installAll();
  const d = discoverProfiles(hostWithHome(home), { cwd: join(home, "elsewhere"), agentDir });
  const files = [...d.profiles.values()].filter((p) => p.source !== "builtin");

  test("every agent name loads, and nothing else does", () => {
    const expected = Object.values(manifest)
      .flatMap((c) => c.agents)
      .sort();
    expect(files.map((p) => p.name).sort()).toEqual(expected);
    expect(d.diagnostics).toEqual([]);
  });

  test("docs, commands, skills and chain files are not agents; docs are listed as skipped", () => {
    const skipped = d.skipped.map((s) => s.file.slice(home.length + 1));
    expect(skipped).toContain(".claude/agents/README.md");
    expect(skipped).toContain(".claude/agents/categories/01-build/README.md");
    expect(skipped).toContain(".claude/agents/bold-colon/CLAUDE.md");
    expect(skipped).toContain(".claude/agents/bold-colon/WORKFLOWS.md");
    expect(skipped).toContain(".claude/agents/marketing/slogan-writer.md");
    expect(skipped).toContain(".pi/agent/agents/pi-native/review-then-fix.chain.md");
    expect(d.skipped).toContainEqual({
      file: join(agentDir, "agents", "pi-native", "retired.md"),
      reason: "disabled in its front matter",
    });
    for (const name of [
      "plant",
      "composting",
      "ratios",
      "usage",
      "slogan-writer",
      "review-then-fix",
      "README",
      "CLAUDE",
      "retired",
    ])
      expect(d.profiles.has(name)).toBe(false);
  });

  test("each front-matter shape keeps what its author wrote", () => {
    const get = (n: string) => d.profiles.get(n)!;
    // Inline <example> blocks with literal \n and "user:" lines at column 0 stay in the description.
    const poster = get("poster-maker");
    expect(poster.description).toContain('<example>\nContext: a bake sale\nuser: "We need a poster for Saturday"');
    expect(poster.description).toContain("</example>");
    expect(poster.color).toBe("magenta");
    expect(poster.tools).toEqual(["write", "read", "edit"]);
    expect(poster.warnings?.[0]).toContain("not strict YAML");
    // Unquoted ": " inside descriptions.
    expect(get("route-planner").description).toBe(
      "Use for trips. Output: a numbered route with stops, times and fuel notes.",
    );
    expect(get("site-surveyor").description).toStartWith("**SURVEY LEAD**: Measures a site");
    expect(get("crew-lead").description).toBe(
      "**CREW LEAD**: Hands work to the others: surveyor first, builders after.",
    );
    // A quoted description with ": " inside is strict YAML: no warning about the front matter.
    expect(get("budget-keeper").description).toBe("Keeps a running budget; warns: over plan, under plan.");
    expect(get("budget-keeper").warnings?.join(" ")).not.toContain("strict YAML");
    // A display-style name, a blank line after the opening fence and a long closing fence.
    expect(get("soup-pot-expert").tools).toEqual(["ls", "read", "grep"]);
    expect(get("soup-pot-expert").systemPrompt).toStartWith("# Soup Pot Expert");
    // An indented file after a blank line, and a dated Claude id.
    expect(get("teapot-expert").systemPrompt).toStartWith("## Focus Areas");
    expect(get("teapot-expert").model).toBe("claude-sonnet-4-20250514");
    // YAML list vs comma string, Claude names mapped, tools with no equivalent listed.
    expect(get("soil-tester").tools).toEqual(["read", "bash", "grep"]);
    expect(get("shelf-builder").tools).toEqual(["read", "write", "edit", "bash", "find", "grep"]);
    // MCP tool names are pi 1.x's own (`mcp__server__tool`): they pass through.
    expect(get("site-surveyor").tools).toEqual(["grep", "find", "ls", "read", "write", "edit", "mcp__maps__geocode"]);
    expect(get("site-surveyor").unavailableTools).toEqual(["Task", "TodoWrite"]);
    expect(get("budget-keeper").unavailableTools).toEqual(["WebFetch", "WebSearch"]);
    expect(get("seed-sorter").tools).toEqual([]);
    // pi-subagents' own format.
    expect(get("lookout")).toMatchObject({
      thinking: "low",
      tools: ["read", "grep", "find", "ls", "bash"],
      systemPromptMode: "replace",
    });
    expect(get("lookout").warnings).toEqual([
      "not supported here (ignored): inheritProjectContext, inheritSkills, defaultProgress, output",
    ]);
    // tintinweb's pi-subagents spellings: snake_case fields, booleans for skills/extensions, `max`, none, ext: tools.
    expect(get("auditor")).toMatchObject({
      tools: ["read", "grep", "find", "scan_licences"],
      maxTurns: 30,
      systemPromptMode: "append",
      thinking: "xhigh",
      noSkills: true,
    });
    expect(get("auditor").extensions).toBeUndefined();
    expect(get("auditor").warnings).toEqual(["not supported here (ignored): inherit_context, run_in_background"]);
    expect(get("auditor").isolation).toBe("worktree");
    expect(get("quiet-one").tools).toEqual([]);
    expect(get("quiet-one").warnings).toBeUndefined();
  });

  test("Claude Code fields: allow minus deny, maxTurns, effort, and the rest reported, never failing", () => {
    const fixer = d.profiles.get("fixer")!;
    expect(fixer.tools).toEqual(["read", "edit", "bash", "grep"]);
    expect(fixer.excludeTools).toBeUndefined();
    expect(fixer.maxTurns).toBe(12);
    expect(fixer.thinking).toBe("high");
    expect(fixer.isolation).toBe("worktree");
    expect(fixer.warnings).toEqual(["not supported here (ignored): permissionMode, background, hooks"]);
    expect(fixer.mcp).toEqual(["github"]); // mcpServers: [github] — a configured server by name
    expect(fixer.memory).toBe("project");
    expect(fixer.fallbackModels).toEqual(["fake/fake-model"]);
  });

  test("at least 97% of names load (here: all), with the same discovery the engine uses", () => {
    const expected = Object.values(manifest).flatMap((c) => c.agents);
    const loaded = expected.filter((n) => d.profiles.get(n)?.source === "user");
    expect(loaded.length / expected.length).toBeGreaterThanOrEqual(0.97);
  });
});

describe("tolerant front matter", () => {
  test("strict YAML failure falls back to key: value lines with a warning; unusable front matter stays an error", () => {
    const r = parseProfile("---\nname: a\ndescription: Role: does things\nmodel: sonnet\n---\nBody", "/x/a.md", "user");
    expect(r.profile).toMatchObject({ name: "a", description: "Role: does things", model: "sonnet" });
    expect(r.profile!.warnings![0]).toContain("not strict YAML");
    expect(parseProfile("---\n[unclosed\n---\nBody", "/x/a.md", "user").error).toContain("invalid YAML front matter");
    expect(parseProfile("---\ndescription: x\nno end", "/x/a.md", "user").error).toContain('no closing "---"');
  });

  test("multi-line values, block lists and scalars in the tolerant reading", () => {
    const f = readLenient(
      "description: first: line\n  second line\nuser: \"kept in the description\"\ntools:\n  - Read\n  - Grep\nmaxTurns: 5\nbackground: true\nmodel: 'haiku'",
    );
    expect(f).toEqual({
      description: 'first: line\nsecond line\nuser: "kept in the description"',
      tools: ["Read", "Grep"],
      maxTurns: 5,
      background: true,
      model: "haiku",
    });
  });

  test("a display-style name is made usable; unknown effort and bad maxTurns are warnings", () => {
    const p = parseProfile(
      "---\nname: Code Reviewer\ndescription: d\neffort: turbo\nmaxTurns: lots\n---\nBody",
      "/x/code-reviewer.md",
      "user",
    ).profile!;
    expect(p.name).toBe("code-reviewer");
    expect(p.warnings!.join("\n")).toContain('name "Code Reviewer" is used as "code-reviewer"');
    expect(p.warnings!.join("\n")).toContain('effort "turbo"');
    expect(p.warnings!.join("\n")).toContain("maxTurns must be a positive whole number");
    expect(p.thinking).toBeUndefined();
    expect(p.maxTurns).toBeUndefined();
  });

  test("tool patterns keep the tool with a note; Task(type) is unavailable", () => {
    const p = parseProfile(
      "---\ndescription: d\ntools: Bash(git log:*), Read Glob, Task(worker)\n---\nBody",
      "/x/p.md",
      "user",
    ).profile!;
    expect(p.tools).toEqual(["bash", "read", "find"]);
    expect(p.unavailableTools).toEqual(["Task(worker)"]);
    // pi-subagents' direct MCP selectors need its MCP adapter: unavailable here too.
    expect(
      parseProfile("---\ndescription: d\ntools: read, mcp:github/search_repositories\n---\nBody", "/x/q.md", "user")
        .profile!.unavailableTools,
    ).toEqual(["mcp:github/search_repositories"]);
    expect(p.warnings!.join("\n")).toContain('"Bash(git log:*)": the pattern is not enforced here');
  });

  test("the child is told which listed tools it does not have, and gets only the ones that exist", () => {
    const p = parseProfile(
      "---\ndescription: d\ntools: Read, WebFetch, TodoWrite\n---\nYou research.",
      "/x/p.md",
      "user",
    ).profile!;
    const inv = buildInvocation({
      piCommand: ["pi"],
      childExtension: "/x/child.js",
      profile: p,
      transport: "compact",
      finalize: "required",
      sessionFile: "/x/s.jsonl",
      depth: 1,
      maxDepth: 1,
      parentPid: 1,
      promptFile: "/x/prompt.md",
      baseEnv: {},
    });
    expect(inv.argv[inv.argv.indexOf("--tools") + 1]).toBe("read,subagent_finalize,ask_parent");
    expect(inv.files[0].content).toContain("do not exist in this environment: WebFetch, TodoWrite");
    // An agent whose listed tools all do not exist runs with none (not with pi's defaults).
    const none = parseProfile("---\ndescription: d\ntools: WebSearch\n---\nYou search.", "/x/n.md", "user").profile!;
    const inv2 = buildInvocation({
      ...{
        piCommand: ["pi"],
        childExtension: "/x/c.js",
        transport: "compact" as const,
        finalize: "required" as const,
        sessionFile: "/x/s",
        depth: 1,
        maxDepth: 1,
        parentPid: 1,
        promptFile: "/x/p",
        baseEnv: {},
      },
      profile: none,
    });
    expect(inv2.argv[inv2.argv.indexOf("--tools") + 1]).toBe("subagent_finalize,ask_parent");
  });
});

describe("discovery walks folders safely and in the documented precedence", () => {
  const md = (desc: string) => `---\ndescription: ${desc}\n---\nPrompt for ${desc}.\n`;

  test("symlinks are followed once: a loop back to an ancestor and a second link to the same folder add nothing", () => {
    const home = mkdtempSync(join(tmpdir(), "subagents-links-"));
    const agents = join(home, ".claude", "agents");
    mkdirSync(join(agents, "team", "deep"), { recursive: true });
    const shared = join(home, "shared-agents");
    mkdirSync(shared, { recursive: true });
    writeFileSync(join(agents, "team", "deep", "digger.md"), md("digger"));
    writeFileSync(join(shared, "linked.md"), md("linked"));
    symlinkSync(agents, join(agents, "team", "deep", "loop")); // back to the root: a loop
    symlinkSync(shared, join(agents, "shared")); // a collection linked in
    symlinkSync(shared, join(agents, "team", "shared-again")); // and linked twice
    const started = performance.now();
    const d = discoverProfiles(hostWithHome(home), { cwd: home, agentDir: join(home, ".pi", "agent") });
    expect(performance.now() - started).toBeLessThan(10_000); // a loop would never end
    expect(d.profiles.get("digger")?.filePath).toBe(join(agents, "team", "deep", "digger.md"));
    expect(d.profiles.get("linked")?.filePath).toBe(join(agents, "shared", "linked.md"));
    expect(d.shadowed).toEqual([]);
    expect(d.diagnostics).toEqual([]);
  });

  test("depth is bounded: five folder levels are walked, a sixth is not", () => {
    const home = mkdtempSync(join(tmpdir(), "subagents-depth-"));
    const five = join(home, ".claude", "agents", "a", "b", "c", "d", "e");
    mkdirSync(join(five, "f"), { recursive: true });
    writeFileSync(join(five, "deep-ok.md"), md("five levels down"));
    writeFileSync(join(five, "f", "too-deep.md"), md("six levels down"));
    const d = discoverProfiles(hostWithHome(home), { cwd: home, agentDir: join(home, ".pi", "agent") });
    expect(d.profiles.has("deep-ok")).toBe(true);
    expect(d.profiles.has("too-deep")).toBe(false);
  });

  test("project over user, pi over Claude Code; every loser is reported as shadowed by the winner", () => {
    const home = mkdtempSync(join(tmpdir(), "subagents-prec-"));
    const agentDir = join(home, ".pi", "agent");
    const repo = join(home, "repo");
    const files = {
      userClaude: join(home, ".claude", "agents", "cat", "helper.md"),
      userPi: join(agentDir, "agents", "helper.md"),
      projectClaude: join(repo, ".claude", "agents", "helper.md"),
      projectPi: join(repo, ".pi", "agents", "nested", "helper.md"),
    };
    for (const [k, f] of Object.entries(files)) {
      mkdirSync(join(f, ".."), { recursive: true });
      writeFileSync(f, md(k));
    }
    const d = discoverProfiles(hostWithHome(home), { cwd: repo, agentDir });
    expect(d.profiles.get("helper")?.description).toBe("projectPi");
    expect(d.shadowed.filter((s) => s.name === "helper").map((s) => [s.file, s.by])).toEqual([
      [files.userClaude, files.userPi],
      [files.userPi, files.projectClaude],
      [files.projectClaude, files.projectPi],
    ]);
  });

  test("a .md without a description is quietly not an agent, except in an agent-profiles folder", () => {
    const home = mkdtempSync(join(tmpdir(), "subagents-nodesc-"));
    const agentDir = join(home, ".pi", "agent");
    mkdirSync(join(agentDir, "agents"), { recursive: true });
    mkdirSync(join(agentDir, "agent-profiles"), { recursive: true });
    writeFileSync(join(agentDir, "agents", "notes.md"), "---\ntitle: notes\n---\nJust notes.\n");
    writeFileSync(
      join(agentDir, "agent-profiles", "plain.md"),
      "---\nmodel: fake/fake-model\n---\nAn agent-profiles profile without a description.\n",
    );
    const d = discoverProfiles(hostWithHome(home), { cwd: home, agentDir });
    expect(d.profiles.has("notes")).toBe(false);
    expect(d.skipped).toContainEqual({
      file: join(agentDir, "agents", "notes.md"),
      reason: "no description in its front matter",
    });
    expect(d.profiles.get("plain")?.model).toBe("fake/fake-model");
    expect(d.diagnostics).toEqual([]);
  });
});
