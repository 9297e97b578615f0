// What tools and MCP servers a child pi gets (src/core/run/launch/child-tools.ts), per pi version, and the `mcp` field and
// setting. Pure: the e2e side is test/e2e/agents/mcp.test.ts.
import { expect, test } from "bun:test";
import { childPiCaps, selectTools, type ToolSelectionInput } from "../../../../src/core/run/launch/child-tools.ts";
import { DELEGATION_TOOLS, PI_DEFAULT_TOOLS } from "../../../../src/core/run/launch/invocation.ts";
import { parseProfile, profileSummary } from "../../../../src/core/profiles/profile.ts";
import { mergeSettings, defaultSettings } from "../../../../src/core/settings.ts";

const base = (over: Partial<ToolSelectionInput>): ToolSelectionInput => ({
  profile: null,
  finalizeTool: "subagent_finalize",
  atMaxDepth: false,
  delegationTools: DELEGATION_TOOLS,
  baseTools: PI_DEFAULT_TOOLS,
  caps: childPiCaps("1.5.2"),
  mcp: true,
  configured: [],
  ...over,
});
const profile = (fm: string) =>
  parseProfile(`---\nname: p\ndescription: d\n${fm}\n---\nBody.\n`, "/x/p.md", "user").profile!;

test("pi versions: project trust from 0.79, ahead-of-time token refresh from 0.83, --exclude-tools from 0.87, MCP from 1.0; an unknown pi is treated as the oldest", () => {
  const none = { excludeTools: false, mcp: false, projectTrust: false, authRefresh: false };
  expect(childPiCaps("0.73.1")).toEqual(none);
  expect(childPiCaps("0.80.0")).toEqual({ ...none, projectTrust: true });
  expect(childPiCaps("0.87.1")).toEqual({ excludeTools: true, mcp: false, projectTrust: true, authRefresh: true });
  expect(childPiCaps("1.5.2")).toEqual({ excludeTools: true, mcp: true, projectTrust: true, authRefresh: true });
  expect(childPiCaps("")).toEqual(none);
});

test("no agent restriction: no --tools; at max depth only the delegation tools go (an allow list on old pi)", () => {
  expect(selectTools(base({})).argv).toEqual([]);
  expect(selectTools(base({ atMaxDepth: true })).argv).toEqual(["--exclude-tools", DELEGATION_TOOLS.join(",")]);
  expect(selectTools(base({ atMaxDepth: true, caps: childPiCaps("0.73.1") })).argv).toEqual([
    "--tools",
    "read,bash,edit,write,subagent_finalize,ask_parent",
  ]);
});

test("deny lists: the parent pi's tools minus them; without a parent, --exclude-tools where pi has it", () => {
  const nobash = profile("excludeTools: bash");
  expect(
    selectTools(base({ profile: nobash, parentTools: ["read", "grep", "bash", "delegate_to_subagents"] })).argv,
  ).toEqual(["--tools", "read,grep,delegate_to_subagents,subagent_finalize,ask_parent"]);
  expect(selectTools(base({ profile: nobash })).argv).toEqual(["--exclude-tools", "bash"]);
  expect(selectTools(base({ profile: nobash, caps: childPiCaps("0.73.1") })).argv).toEqual([
    "--tools",
    "read,edit,write,subagent_finalize,ask_parent",
  ]);
});

test("MCP: all by default; mcp: false and unreachable servers mean --no-mcp; a list hides the others' tools", () => {
  const configured = ["docs", "git-hub"];
  expect(selectTools(base({ configured })).argv).toEqual([]);
  expect(selectTools(base({ configured, mcp: false })).argv).toEqual(["--no-mcp"]);
  // read-only: MCP out of reach, so nothing is started for nothing.
  expect(selectTools(base({ configured, profile: profile("readonly: true") })).argv).toEqual([
    "--tools",
    "read,grep,find,ls,subagent_finalize,ask_parent",
    "--no-mcp",
  ]);
  // an allow list naming codemode or an MCP pattern keeps the servers.
  expect(selectTools(base({ configured, profile: profile("tools: read, codemode") })).argv).toEqual([
    "--tools",
    "read,codemode,subagent_finalize,ask_parent",
  ]);
  const only = selectTools(base({ configured, mcp: ["git_hub"] }));
  expect(only.argv).toEqual(["--exclude-tools", "mcp__docs__*"]);
  expect(only.servers).toEqual(["git-hub"]);
  const unknown = selectTools(base({ configured, mcp: ["nope"] }));
  expect(unknown.argv).toEqual(["--no-mcp"]);
  expect(unknown.warnings).toEqual(["mcp: no MCP server named nope is configured here (configured: docs, git-hub)"]);
  // nothing configured: no flag at all.
  expect(selectTools(base({ mcp: false })).argv).toEqual([]);
  // a pi without MCP gets no MCP flag (it would exit on an unknown one).
  expect(selectTools(base({ configured, mcp: false, caps: childPiCaps("0.87.1") })).argv).toEqual([]);
});

test("dead servers: left out, and --no-mcp when none is left; always said", () => {
  const all = selectTools(base({ configured: ["dead"], dead: ["dead"] }));
  expect(all.argv).toEqual(["--no-mcp"]);
  expect(all.warnings).toEqual(["MCP server dead did not answer: the child runs without MCP servers"]);
  const some = selectTools(base({ configured: ["dead", "live"], dead: ["dead"] }));
  expect(some.argv).toEqual(["--exclude-tools", "mcp__dead__*"]);
  expect(some.warnings[0]).toStartWith("MCP server dead did not answer: its tools are left out");
});

test("the mcp field and setting: true, false, a list or a comma string; anything else is a warning", () => {
  expect(profile("mcp: false").mcp).toBe(false);
  expect(profile("mcp: [docs, github]").mcp).toEqual(["docs", "github"]);
  expect(profile("mcp: docs, github").mcp).toEqual(["docs", "github"]);
  expect(profileSummary(profile("mcp: false"))).toContain("no MCP servers");
  expect(profileSummary(profile("mcp: [docs]"))).toContain("MCP: docs");
  const bad = profile("mcp: 3");
  expect(bad.mcp).toBeUndefined();
  expect(bad.warnings?.join(" ")).toContain("mcp must be true, false or a list of MCP server names");
  expect(profile('mcp: ["a b"]').warnings?.join(" ")).toContain("a b is not an MCP server name");
  expect(mergeSettings(defaultSettings(), { mcp: ["docs"] }).settings.mcp).toEqual(["docs"]);
  expect(defaultSettings().mcp).toBe(true);
  expect(mergeSettings(defaultSettings(), { mcp: {} }, "s.json").warnings[0]).toContain(
    "s.json: subagents.mcp must be true, false or a list",
  );
});
