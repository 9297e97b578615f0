// Which provider's credentials a confined child gets (child-notes.ts childProvider, default-model.ts): the model it is
// started with, its agent's provider, else the default model of its folder — the user's, and a project's only where
// pi trusts that project (pi's own rules: trust.json, defaultProjectTrust, no trust before pi 0.79). A project's
// `{"defaultModel": null}` no longer opens every provider.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import { childProvider } from "../../../../src/core/run/child-notes.ts";
import { savedProjectTrust } from "../../../../src/core/run/default-model.ts";
import type { Engine } from "../../../../src/core/run/engine.ts";
import type { TaskContext } from "../../../../src/core/run/task-context.ts";

const host = createBunHost(() => {
  throw new Error("no db");
});
const root = mkdtempSync(join(tmpdir(), "child-provider-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const agentDir = join(root, "agent");
mkdirSync(agentDir);
writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "m1" }));

function project(name: string, settings?: unknown): string {
  const dir = join(root, name);
  mkdirSync(join(dir, ".pi"), { recursive: true });
  if (settings !== undefined) writeFileSync(join(dir, ".pi", "settings.json"), JSON.stringify(settings));
  return dir;
}
const engine = (piVersion = "1.6.0") => ({ host, agentDir, piVersion, caches: {} }) as unknown as Engine;
const task = (cwd: string, trust?: "yes" | "no", profile: Record<string, unknown> | null = null) =>
  ({ engine: engine(), cwd, trust, profile }) as unknown as TaskContext;

test("the user's default provider where the project sets nothing, or sets something pi does not load (untrusted)", () => {
  const plain = project("plain");
  expect(childProvider(task(plain, "no"), undefined)).toBe("fake");
  const nulled = project("nulled", { defaultModel: null });
  expect(childProvider(task(nulled, "no"), undefined)).toBe("fake");
  const other = project("other", { defaultProvider: "openai", defaultModel: "gpt-x" });
  expect(childProvider(task(other, "no"), undefined)).toBe("fake");
});

test("a trusted project's own default counts (a null clears the user's: no provider, so no credentials)", () => {
  expect(
    childProvider(task(project("t-other", { defaultProvider: "openai", defaultModel: "gpt-x" }), "yes"), undefined),
  ).toBe("openai");
  expect(childProvider(task(project("t-nulled", { defaultModel: null }), "yes"), undefined)).toBeUndefined();
  // Only the provider changed: the user's model on the project's provider, as pi combines them.
  expect(childProvider(task(project("t-prov", { defaultProvider: "groq" }), "yes"), undefined)).toBe("groq");
});

test("the model it is started with, or its agent's provider, comes first", () => {
  const p = project("explicit", { defaultProvider: "openai", defaultModel: "gpt-x" });
  expect(childProvider(task(p, "yes"), "anthropic/claude-x")).toBe("anthropic");
  expect(childProvider(task(p, "no", { provider: "mistral" }), undefined)).toBe("mistral");
  // A bare id pi resolves itself: not known here.
  expect(childProvider(task(p, "no"), "some-model")).toBeUndefined();
});

test("pi's own trust decision without a person: the closest saved decision, else defaultProjectTrust; before pi 0.79, always", () => {
  const parent = join(root, "trusted-parent");
  const child = join(parent, "repo");
  const denied = join(parent, "denied");
  for (const d of [child, denied]) mkdirSync(d, { recursive: true });
  writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [parent]: true, [denied]: false }));
  expect(savedProjectTrust(engine(), child)).toBe("yes");
  expect(savedProjectTrust(engine(), denied)).toBe("no");
  expect(savedProjectTrust(engine(), root)).toBe("no");
  expect(savedProjectTrust(engine("0.73.1"), root)).toBe("yes");
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({ defaultProvider: "fake", defaultModel: "m1", defaultProjectTrust: "always" }),
  );
  expect(savedProjectTrust(engine(), root)).toBe("yes");
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "m1" }));
  rmSync(join(agentDir, "trust.json"));
});
