// Display-style names ("Repo Helper") find the agent made from them — in the task and in the project-agent
// consent check alike, so such a name cannot run a repository's agent without consent.
import { expect, test } from "bun:test";
import { defaultSettings } from "../../../../src/core/settings.ts";
import { parseProfile, type Profile } from "../../../../src/core/profiles/profile.ts";
import { resolveTask } from "../../../../src/core/call/resolve.ts";
import type { Engine } from "../../../../src/core/run/engine.ts";
import { MemoryStore } from "../../../../src/core/store/store.ts";
import { makeToolEnv } from "../../../../src/pi/tool-env.ts";
import type { PiServices } from "../../../../src/pi/services.ts";

const helper = parseProfile(
  "---\nname: Repo Helper\ndescription: Helps with this repo\n---\nYou help.",
  "/w/.pi/agents/helper.md",
  "project",
).profile!;
const profiles = new Map<string, Profile>([[helper.name, helper]]);
const engine = {
  store: new MemoryStore({ isAlive: () => true }),
  profiles,
  settings: defaultSettings(),
  call: {},
  host: { realpath: () => null },
  agentDir: "/a",
  caches: {},
} as unknown as Engine;

test("the task finds the agent by its written name and by its usable one", () => {
  expect(helper.name).toBe("repo-helper");
  const agentOf = (profile: string) =>
    resolveTask(engine, { name: "t", prompt: "p", profile }, { cwd: "/w" }, null, () => "s1").agent;
  expect(agentOf("Repo Helper")).toBe("repo-helper");
  expect(agentOf("repo-helper")).toBe("repo-helper");
  expect(profiles.get(agentOf("Repo Helper"))?.filePath).toBe("/w/.pi/agents/helper.md");
});

test("the consent check sees the same agent: a display name of a project agent still needs consent", async () => {
  const runtime = {
    settingsFor: () => ({ settings: defaultSettings(), warnings: [] }),
    profilesFor: () => ({ profiles, diagnostics: [] }),
    engineFor: () => ({ ...engine }),
  } as unknown as PiServices;
  const call = makeToolEnv({ services: async () => runtime, appendEntry: () => {} }).begin({ cwd: "/w", hasUI: false });
  const refused = await call.refusedProfiles(["Repo Helper"]);
  expect(refused.get("Repo Helper")).toBe(
    'Project-local profile "repo-helper" (/w/.pi/agents/helper.md) needs consent; there is no UI to ask. Set subagents.projectAgents to "allow" to run it.',
  );
});
