// Agent files of other harnesses (test/fixtures/harness-agents: our own files in the shapes Codex, Cursor,
// opencode, Gemini CLI, Qwen Code, GitHub Copilot and oh-my-pi use), discovered on the real filesystem through
// the Bun host: each field mapped to ours or reported once, precedence and shadowing across harness folders,
// files their own harness would not run skipped, broken ones named; and agents that remember (memory).
import { beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverProfiles, type Discovery } from "../../../../src/core/profiles/profile-discovery.ts";
import { parseProfile, profileSummary, type Profile } from "../../../../src/core/profiles/profile.ts";
import { copilotModelId } from "../../../../src/core/profiles/harness-fields.ts";
import { mapHarnessTools } from "../../../../src/core/profiles/harnesses.ts";
import { resolveModel } from "../../../../src/core/profiles/model-resolve.ts";
import {
  hasWriteTools,
  memoryFile,
  memoryPrompt,
  MEMORY_LINES,
  projectRoot,
} from "../../../../src/core/profiles/agent-memory.ts";
import { buildInvocation } from "../../../../src/core/run/launch/invocation.ts";
import { createBunHost } from "../../../../src/host/bun.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "..", "fixtures", "harness-agents");

function hostWith(home: string, env: Record<string, string> = {}) {
  const host = createBunHost(() => {
    throw new Error("no db here");
  });
  return { ...host, homedir: () => home, env };
}

/** A temp root with the fixture home and project installed; the project is a git repo (for memory). */
function install(): { root: string; home: string; project: string; agentDir: string } {
  const root = mkdtempSync(join(tmpdir(), "subagents-harness-"));
  const home = join(root, "home");
  const project = join(root, "work", "proj");
  cpSync(join(FIXTURES, "home"), home, { recursive: true });
  cpSync(join(FIXTURES, "project"), project, { recursive: true });
  mkdirSync(join(project, ".git"));
  const agentDir = join(home, ".pi", "agent");
  mkdirSync(agentDir, { recursive: true });
  return { root, home, project, agentDir };
}

const NOTE = " (a server of the same name in pi's mcp.json is used instead; the agent gets no other MCP servers)";

describe("agent files of every harness", () => {
  let d: Discovery;
  let env: ReturnType<typeof install>;
  const get = (name: string): Profile => {
    const p = d.profiles.get(name);
    if (!p) throw new Error(`${name} not loaded`);
    return p;
  };
  beforeAll(() => {
    env = install();
    d = discoverProfiles(hostWith(env.home), { cwd: env.project, agentDir: env.agentDir });
  });

  test("Codex TOML: developer_instructions is the prompt; effort → thinking, read-only sandbox → read tools, inline MCP recorded", () => {
    const p = get("code-mapper");
    expect(p).toMatchObject({
      harness: "codex",
      source: "project",
      model: "fake-model",
      thinking: "high",
      readonly: true,
      tools: ["read", "grep", "find", "ls"],
    });
    expect(p.filePath).toBe(join(env.project, ".codex/agents/code-mapper.toml"));
    expect(p.systemPrompt).toContain("CODEX-MAPPER-7731");
    expect(p.mcpServers).toEqual({ docs: { command: "node", args: ["docs-server.js"] } });
    expect(p.mcp).toEqual(["docs"]);
    // nickname_candidates is Codex's display detail (quiet); web_search cannot be honoured (said once).
    expect(p.warnings).toEqual([
      "inline MCP servers are not started yet: docs (a server of the same name in pi's mcp.json is used instead; the agent gets no other MCP servers)",
      "not supported here (ignored): web_search",
    ]);
    const tables = parseProfile(
      'name = "t"\ndescription = "d"\ndeveloper_instructions = "x"\n[tools]\nweb_search = true\n[[skills.config]]\npath = "a"\n',
      "/x/t.toml",
      "user",
      "codex",
      "toml",
    ).profile!;
    expect(tables.tools).toBeUndefined();
    expect(tables.warnings).toEqual([
      "Codex's [tools] settings are not supported here (ignored)",
      "Codex's [skills] settings are not supported here (ignored)",
    ]);
    expect(parseProfile('name = "e"\ndescription = "d"\n', "/x/e.toml", "user", "codex", "toml").error).toBe(
      'empty system prompt: set "developer_instructions"',
    );
    const writer = get("quiet-writer");
    expect(writer.thinking).toBe("off");
    expect(writer.tools).toBeUndefined();
    expect(writer.warnings).toEqual([
      'sandbox_mode "workspace-write" is not enforced here: the agent gets pi\'s tools without a sandbox',
    ]);
  });

  test("Cursor: readonly narrows the tools, model: fast is kept for the alias rules, is_background said once", () => {
    const p = get("quick-fixer");
    expect(p).toMatchObject({
      harness: "cursor",
      model: "fast",
      readonly: true,
      tools: ["read", "grep", "find", "ls"],
    });
    expect(p.warnings).toEqual(["is_background: runs like any other agent here (use a background delegate call)"]);
    const user = { providers: new Set(["fake"]), defaultModel: "fake/fake-model" };
    expect(resolveModel("fast", { aliases: {}, user })).toEqual({
      model: "fake/fake-model",
      warning:
        'model "fast" is Cursor\'s fast model, which has no equivalent here: running on fake/fake-model instead (map it with subagents.modelAliases)',
    });
    expect(resolveModel("fast", { aliases: { fast: "fake/other-model" }, user })).toEqual({
      model: "fake/other-model",
    });
  });

  test("opencode markdown: name from the file, tools map and permission → deny list (ask = not given), steps → maxTurns", () => {
    const p = get("doc-writer");
    expect(p).toMatchObject({ harness: "opencode", model: "fake/fake-model", maxTurns: 7 });
    expect(p.excludeTools).toEqual(["bash", "edit", "write"]);
    expect(p.warnings).toEqual([
      'permission "bash": command patterns are not enforced here; "*" decides (deny)',
      'permission "ask" for edit: a child cannot ask, so it does not get it',
      "not supported here (ignored): temperature",
    ]);
    expect(d.skipped.find((s) => s.file.endsWith(".opencode/agents/off-duty.md"))?.reason).toBe(
      "disabled in its front matter (disable: true)",
    );
    // One rule for everything, and "*" as the rule for tools not named.
    const od = (fm: string) =>
      parseProfile(`---\ndescription: d\n${fm}\n---\nx`, "/x/od.md", "project", "opencode").profile!;
    expect(od("permission: deny").excludeTools).toEqual(["bash", "edit", "write", "read", "grep", "find", "ls"]);
    expect(od('permission:\n  "*": deny\n  read: allow\n  grep: allow').excludeTools).toEqual([
      "bash",
      "edit",
      "write",
      "find",
      "ls",
    ]);
  });

  test("opencode.json: agent.<name> with a {file:} prompt; an entry without a prompt tunes opencode's own agent and is skipped", () => {
    const p = get("json-reviewer");
    expect(p).toMatchObject({
      harness: "opencode",
      filePath: join(env.project, "opencode.json"),
      excludeTools: ["write", "edit"],
      maxTurns: 4,
    });
    expect(p.systemPrompt).toBe("You review diffs. Name each risk with file:line.");
    expect(p.warnings).toBeUndefined();
    expect(d.profiles.has("build")).toBe(false);
    // The user's ~/.config/opencode/opencode.jsonc: comments and trailing commas, as opencode reads it.
    expect(get("night-owl")).toMatchObject({
      harness: "opencode",
      source: "user",
      maxTurns: 3,
      systemPrompt: "Read last night's logs, list errors.",
    });
    expect(d.skipped.map((s) => s.file)).toContain(`${join(env.project, "opencode.json")}#agent.build`);
  });

  test("Gemini CLI: tool names mapped, web and MCP tools unavailable, inline mcpServers recorded, max_turns and timeout_mins", () => {
    const p = get("log-reader");
    expect(p).toMatchObject({
      harness: "gemini",
      tools: ["read", "grep", "find"],
      unavailableTools: ["web_fetch", "mcp_logs_*"],
      maxTurns: 9,
      timeout: 180,
      model: "gemini-2.5-flash",
    });
    expect(p.mcpServers).toEqual({ logs: { command: "node", args: ["logs-server.js"] } });
    expect(p.mcp).toEqual(["logs"]);
    expect(p.warnings).toEqual([
      "inline MCP servers are not started yet: logs (a server of the same name in pi's mcp.json is used instead; the agent gets no other MCP servers)",
      "tools not available here: web_fetch, mcp_logs_*",
      "not supported here (ignored): temperature",
    ]);
    expect(d.skipped.find((s) => s.file.endsWith("far-away.md"))?.reason).toBe(
      "a remote (A2A) agent: only local agents run here",
    );
  });

  test("Qwen Code: display tool names, modelConfig.model, runConfig turn and time limits", () => {
    const p = get("test-runner");
    expect(p).toMatchObject({
      harness: "qwen",
      tools: ["read", "bash"],
      unavailableTools: ["WebSearch"],
      model: "fake/fake-model",
      maxTurns: 15,
      timeout: 120,
      color: "green",
    });
    expect(p.warnings).toEqual([
      "modelConfig: not supported here (ignored): temp",
      "tools not available here: WebSearch",
    ]);
    // approvalMode: plan is analyse-only → read-only; `authType:model` → provider/model; deny lists in Qwen's names.
    expect(get("careful-reader")).toMatchObject({
      readonly: true,
      model: "openai/gpt-4o",
      tools: ["read", "grep", "find", "ls"],
    });
    expect(get("careful-reader").warnings).toBeUndefined();
    expect(get("shell-free")).toMatchObject({ model: "fast", excludeTools: ["bash"] });
  });

  test("GitHub Copilot: name from the .agent.md file name, tool aliases, display model names made ids, mcp-servers", () => {
    const p = get("api-architect");
    expect(p).toMatchObject({
      harness: "copilot",
      tools: ["read", "edit", "write", "grep", "find"],
      unavailableTools: ["web", "github/*"],
      model: "claude-sonnet-4-5",
    });
    expect(p.mcpServers).toEqual({ tracker: { type: "local", command: "tracker-mcp" } });
    expect(p.mcp).toEqual(["tracker"]);
    expect(copilotModelId("GPT-4.1 (copilot)")).toBe("gpt-4.1");
    // VS Code's tool names as Copilot files list them, with or without their tool set; the rest are unavailable.
    expect(
      mapHarnessTools("copilot", [
        "edit/editFiles",
        "execute/runInTerminal",
        "search/codebase",
        "read/terminalLastCommand",
        "runTests",
        "Grep",
        "read/*",
        "listDirectory",
      ]),
    ).toEqual({
      tools: ["edit", "write", "bash", "grep", "find", "read", "ls"],
      unavailable: ["read/terminalLastCommand", "runTests"],
      all: false,
    });
    // The user's ~/.copilot/agents: `tools: ['*']` means every tool (no list); a display name ("Copilot Helper")
    // gives way to the file name, which is the agent's identity in Copilot.
    const helper = get("helper");
    expect(helper).toMatchObject({ harness: "copilot", source: "user" });
    expect(helper.tools).toBeUndefined();
    expect(helper.warnings).toBeUndefined();
  });

  test("oh-my-pi: thinkingLevel, a model list → model + fallbacks, output → outputSchema, omp-only tools unavailable", () => {
    const p = get("shaper");
    expect(p).toMatchObject({
      harness: "omp",
      thinking: "high",
      model: "fake/fake-model",
      fallbackModels: ["fake/other-model"],
      tools: ["read", "grep", "find"],
      unavailableTools: ["task"],
    });
    expect(p.outputSchema).toEqual({
      type: "object",
      properties: { steps: { type: "array", items: { type: "string" } } },
      required: ["steps"],
    });
    expect(p.warnings).toEqual(["tools not available here: task", "not supported here (ignored): spawns"]);
    expect(get("omp-user")).toMatchObject({ harness: "omp", source: "user", thinking: "low" });
  });

  test("precedence: in one directory pi > Claude Code > the other harnesses; project > user; every loser reported", () => {
    expect(get("tidy")).toMatchObject({ harness: "pi", systemPrompt: "Tidy things the pi way." });
    const tidy = d.shadowed
      .filter((s) => s.name === "tidy")
      .map((s) => [s.file.slice(env.project.length + 1), s.by.slice(env.project.length + 1)]);
    expect(tidy).toEqual([
      [".codex/agents/tidy.toml", ".gemini/agents/tidy.md"],
      [".gemini/agents/tidy.md", ".claude/agents/tidy.md"],
      [".claude/agents/tidy.md", ".pi/agents/tidy.md"],
    ]);
    expect(d.shadowed.find((s) => s.name === "code-mapper")).toMatchObject({
      source: "user",
      file: join(env.home, ".codex/agents/code-mapper.toml"),
      by: join(env.project, ".codex/agents/code-mapper.toml"),
    });
    expect(get("user-only")).toMatchObject({ harness: "codex", source: "user" });
  });

  test("Claude Code's mcpServers: names become the agent's mcp choice; inline definitions are recorded and allowed by name", () => {
    const inline = parseProfile(
      "---\ndescription: d\nmcpServers:\n  notes:\n    command: notes-mcp\n---\nx",
      "/x/a.md",
      "user",
    ).profile!;
    expect(inline.mcpServers).toEqual({ notes: { command: "notes-mcp" } });
    expect(inline.mcp).toEqual(["notes"]);
    expect(inline.warnings).toEqual([`inline MCP servers are not started yet: notes${NOTE}`]);
    const names = parseProfile("---\ndescription: d\nmcpServers: [github, jira]\n---\nx", "/x/b.md", "user").profile!;
    expect(names.mcp).toEqual(["github", "jira"]);
    expect(names.mcpServers).toBeUndefined();
    expect(names.warnings).toBeUndefined();
    // Claude Code's mixed list: a configured server by name, and an inline definition (a one-key mapping).
    const mixed = parseProfile(
      "---\ndescription: d\nmcpServers:\n  - github\n  - browser:\n      type: stdio\n      command: npx\n---\nx",
      "/x/c.md",
      "user",
    ).profile!;
    expect(mixed.mcp).toEqual(["github", "browser"]);
    expect(mixed.mcpServers).toEqual({ browser: { type: "stdio", command: "npx" } });
    // Our own `mcp` field wins over the names; a malformed value is said once and changes nothing.
    const own = parseProfile("---\ndescription: d\nmcp: false\nmcpServers: [github]\n---\nx", "/x/d.md", "user")
      .profile!;
    expect(own.mcp).toBe(false);
    expect(own.warnings).toBeUndefined();
    const bad = parseProfile("---\ndescription: d\nmcpServers: 3\n---\nx", "/x/e.md", "user").profile!;
    expect(bad.mcp).toBeUndefined();
    expect(bad.warnings).toEqual(['"mcpServers" must be a list of MCP server names or definitions (ignored)']);
  });

  test("a broken TOML file is a diagnostic naming the file; another harness's runtime loads (runtimes/)", () => {
    const broken = d.diagnostics.find((x) => x.file.endsWith("broken.toml"))!;
    expect(broken.reason).toStartWith("invalid TOML:");
    expect(broken.name).toBe("broken-toml");
    expect(d.diagnostics).toHaveLength(1);
    expect(get("other-runtime").runtime).toBe("codex");
    expect(get("on-pi").runtime).toBe("pi");
    expect(parseProfile("---\ndescription: d\nruntime: claude\n---\nx", "/x/a.md", "user").profile!.runtime).toBe(
      "claude-code",
    );
    // list_subagent_profiles says which CLI an agent runs on when it is not pi.
    expect(profileSummary(get("other-runtime"))).toContain("runs on codex");
    expect(profileSummary(get("on-pi"))).not.toContain("runs on");
    expect(parseProfile("---\ndescription: d\nruntime: 7\n---\nx", "/x/a.md", "user").error).toBe(
      'field "runtime" must be one of pi, claude-code, codex, gemini, opencode (got number 7)',
    );
  });

  test("$CODEX_HOME moves the user's Codex folder", () => {
    const codexHome = join(env.root, "codex-home");
    mkdirSync(join(codexHome, "agents"), { recursive: true });
    writeFileSync(
      join(codexHome, "agents", "moved.toml"),
      'name = "moved"\ndescription = "from CODEX_HOME"\ndeveloper_instructions = "Moved."\n',
    );
    const moved = discoverProfiles(hostWith(env.home, { CODEX_HOME: codexHome }), {
      cwd: env.project,
      agentDir: env.agentDir,
    });
    expect(moved.profiles.get("moved")).toMatchObject({ harness: "codex", source: "user" });
    expect(moved.profiles.has("user-only")).toBe(false);
  });

  test("the child gets what the mapping says: Codex read-only tools and thinking, Gemini's mapped tools", () => {
    const base = {
      piCommand: ["pi"],
      transport: "json" as const,
      finalize: "off" as const,
      sessionFile: "/s",
      depth: 1,
      maxDepth: 2,
      parentPid: 1,
      promptFile: "/p.md",
      baseEnv: {},
    };
    const codex = buildInvocation({ ...base, profile: get("code-mapper") });
    expect(codex.argv.join(" ")).toContain("--thinking high --tools read,grep,find,ls");
    expect(codex.files[0].content).toContain("CODEX-MAPPER-7731");
    const gemini = buildInvocation({ ...base, profile: get("log-reader") });
    expect(gemini.argv.join(" ")).toContain("--tools read,grep,find");
    expect(gemini.files[0].content).toContain("do not exist in this environment: web_fetch, mcp_logs_*");
  });
});

describe("agents that remember", () => {
  const env = install();
  const host = hostWith(env.home);
  const profile = (fm: string) =>
    parseProfile(`---\nname: keeper\ndescription: d\n${fm}\n---\nYou keep things.`, "/x/keeper.md", "user").profile!;

  test("memory: user | project | local, each in its own place; project = nearest folder with .git or .pi", () => {
    const sub = join(env.project, "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect(projectRoot(host, sub)).toBe(env.project);
    expect(memoryFile(host, profile("memory: user"), { agentDir: env.agentDir, cwd: sub })).toBe(
      join(env.agentDir, "agent-memory/keeper/MEMORY.md"),
    );
    expect(memoryFile(host, profile("memory: project"), { agentDir: env.agentDir, cwd: sub })).toBe(
      join(env.project, ".pi/agent-memory/keeper/MEMORY.md"),
    );
    expect(memoryFile(host, profile("memory: local"), { agentDir: env.agentDir, cwd: sub })).toBe(
      join(env.project, ".pi/agent-memory-local/keeper/MEMORY.md"),
    );
    expect(memoryFile(host, profile(""), { agentDir: env.agentDir, cwd: sub })).toBeNull();
    const odd = profile("memory: forever");
    expect(odd.memory).toBeUndefined();
    expect(odd.warnings).toEqual(['memory must be "user", "project" or "local" (got string "forever"; ignored)']);
  });

  test("write tools decide whether the agent is told it may keep the file; read-only agents only read it", () => {
    expect(hasWriteTools(profile("memory: user"))).toBe(true);
    expect(hasWriteTools(profile("memory: user\nreadonly: true"))).toBe(false);
    expect(hasWriteTools(profile("memory: user\ntools: Read, Grep, Bash"))).toBe(false);
    expect(hasWriteTools(profile("memory: user\ntools: Read, Edit"))).toBe(true);
    expect(hasWriteTools(profile("memory: user\ndisallowedTools: Edit, Write"))).toBe(false);
    expect(hasWriteTools(profile("memory: user\ndisallowedTools: Bash"), ["read", "grep"])).toBe(false);
  });

  test("the prompt has the first 200 lines; a writer gets the path and the keep-it-short rule; a read-only agent does not", () => {
    const dir = join(env.agentDir, "agent-memory", "keeper");
    mkdirSync(dir, { recursive: true });
    const lines = Array.from({ length: 250 }, (_, i) => `note ${i + 1}`);
    writeFileSync(join(dir, "MEMORY.md"), `${lines.join("\n")}\n`);
    const o = { agentDir: env.agentDir, cwd: env.project };
    const writer = memoryPrompt(host, profile("memory: user"), o);
    expect(writer).toContain(`memory file, kept across all projects: ${join(dir, "MEMORY.md")}`);
    expect(writer).toContain("note 200\n</memory>");
    expect(writer).not.toContain("note 201");
    expect(writer).toContain(`the first ${MEMORY_LINES} of its 250 lines`);
    expect(writer).toContain("Keep it short and current");
    const reader = memoryPrompt(host, profile("memory: user\nreadonly: true"), o);
    expect(reader).toContain("note 1\n");
    expect(reader).toContain("read-only for you");
    expect(reader).not.toContain("Keep it short");
    // No file yet: a writer is told where to start one; a read-only agent gets nothing to read.
    const fresh = (fm: string) =>
      parseProfile(`---\nname: fresh\ndescription: d\n${fm}\n---\nx`, "/x/fresh.md", "user").profile!;
    expect(memoryPrompt(host, fresh("memory: project"), o)).toContain(
      `${join(env.project, ".pi/agent-memory/fresh/MEMORY.md")}. It does not exist yet.`,
    );
    expect(memoryPrompt(host, fresh("memory: project\nreadonly: true"), o)).toBe("");
  });
});
