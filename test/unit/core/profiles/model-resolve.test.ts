// `model:` as agent-file authors mean it: inherit, Claude aliases and ids, subagents.modelAliases, providers
// without credentials; the user's models come from pi's own files in the agent dir.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readUserModels, resolveModel, type UserModels } from "../../../../src/core/profiles/model-resolve.ts";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";
import { createBunHost } from "../../../../src/host/bun.ts";

const noAnthropic: UserModels = { defaultModel: "fake/fake-model", providers: new Set(["fake"]) };
const withAnthropic: UserModels = { defaultModel: "fake/fake-model", providers: new Set(["fake", "anthropic"]) };
const opts = (user: UserModels, extra: Partial<Parameters<typeof resolveModel>[1]> = {}) => ({
  aliases: {},
  user,
  ...extra,
});

describe("resolveModel", () => {
  test("inherit is the parent's model, else pi's default (no --model); never a warning", () => {
    expect(resolveModel("inherit", opts(noAnthropic, { parentModel: "fake/parent-model" }))).toEqual({
      model: "fake/parent-model",
    });
    expect(resolveModel("inherit", opts(noAnthropic))).toEqual({ model: undefined });
  });

  test("Claude aliases and ids go to Anthropic only when the user has Anthropic credentials", () => {
    expect(resolveModel("sonnet", opts(withAnthropic)).model).toBe("anthropic/claude-sonnet-4-5");
    expect(resolveModel("haiku", opts(withAnthropic)).model).toBe("anthropic/claude-haiku-4-5");
    expect(resolveModel("opus", opts(withAnthropic)).model).toBe("anthropic/claude-opus-4-1");
    expect(resolveModel("claude-sonnet-4-20250514", opts(withAnthropic)).model).toBe(
      "anthropic/claude-sonnet-4-20250514",
    );
    for (const m of ["sonnet", "haiku", "opus", "claude-sonnet-4-20250514", "anthropic/claude-haiku-4-5"]) {
      const c = resolveModel(m, opts(noAnthropic));
      expect(c.model).toBe("fake/fake-model");
      expect(c.warning).toContain(`model "${m}" is a Claude model and there are no Anthropic credentials here`);
      expect(c.warning).toContain("running on fake/fake-model");
    }
  });

  test("subagents.modelAliases wins, covers a family's dated ids, and can say inherit or default", () => {
    const aliases = { sonnet: "fake/fast-model", opus: "inherit", haiku: "default" };
    expect(resolveModel("sonnet", opts(noAnthropic, { aliases }))).toEqual({ model: "fake/fast-model" });
    expect(resolveModel("claude-sonnet-4-20250514", opts(noAnthropic, { aliases }))).toEqual({
      model: "fake/fast-model",
    });
    expect(resolveModel("opus", opts(noAnthropic, { aliases, parentModel: "fake/p" }))).toEqual({ model: "fake/p" });
    expect(resolveModel("haiku", opts(withAnthropic, { aliases }))).toEqual({ model: "fake/fake-model" });
    expect(resolveModel("gpt-x", opts(noAnthropic, { aliases: { "gpt-x": "fake/other" } }))).toEqual({
      model: "fake/other",
    });
  });

  test("a provider without credentials falls back to the default with a warning; a known one passes", () => {
    const c = resolveModel("nowhere/big-model", opts(noAnthropic));
    expect(c).toEqual({ model: "fake/fake-model", warning: expect.stringContaining('needs provider "nowhere"') });
    expect(resolveModel("fake/other-model", opts(noAnthropic))).toEqual({ model: "fake/other-model" });
    expect(resolveModel("other-model", opts(noAnthropic, { provider: "fake" }))).toEqual({ model: "fake/other-model" });
    // With no default model known either, the child gets no --model at all (pi's own default) and the warning says so.
    const bare = resolveModel("opus", opts({ providers: new Set() }));
    expect(bare.model).toBeUndefined();
    expect(bare.warning).toContain("pi's default model");
  });

  test("a :thinking suffix survives resolution", () => {
    expect(resolveModel("sonnet:high", opts(withAnthropic)).model).toBe("anthropic/claude-sonnet-4-5:high");
    expect(resolveModel("inherit:low", opts(noAnthropic, { parentModel: "fake/p" })).model).toBe("fake/p:low");
  });
});

test("readUserModels: settings.json default, models.json and auth.json providers, key variables", () => {
  const dir = mkdtempSync(join(tmpdir(), "subagents-models-"));
  writeFileSync(join(dir, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model" }));
  writeFileSync(
    join(dir, "models.json"),
    JSON.stringify({ providers: { local: { baseUrl: "http://127.0.0.1:1/v1", models: [{ id: "m" }] } } }),
  );
  writeFileSync(join(dir, "auth.json"), JSON.stringify({ openrouter: { type: "api_key", key: "k" } }));
  const host = {
    ...createBunHost(() => {
      throw new Error("no db");
    }),
    env: { ANTHROPIC_API_KEY: "x" },
  };
  const user = readUserModels(host, dir);
  expect(user.defaultModel).toBe("fake/fake-model");
  expect([...user.providers].sort()).toEqual(["anthropic", "fake", "local", "openrouter"]);
  // A bare id that models.json has names its provider.
  expect(resolveModel("m", { aliases: {}, user }).model).toBe("local/m");
  const empty = readUserModels({ ...host, env: {} }, join(dir, "missing"));
  expect(empty).toEqual({ defaultModel: undefined, providers: new Set(), custom: new Map() });
});

test("settings: subagents.modelAliases merges by name; bad values are warnings", () => {
  const a = mergeSettings(defaultSettings(), { modelAliases: { sonnet: "fake/a", haiku: 3 } }, "user.json");
  expect(a.settings.modelAliases).toEqual({ sonnet: "fake/a" });
  expect(a.warnings).toEqual([
    'user.json: subagents.modelAliases.haiku must be a model name ("provider/id", "inherit" or "default"); ignored',
  ]);
  const b = mergeSettings(a.settings, { modelAliases: { opus: "inherit" } }, "project.json");
  expect(b.settings.modelAliases).toEqual({ sonnet: "fake/a", opus: "inherit" });
  expect(mergeSettings(defaultSettings(), { modelAliases: ["x"] }).warnings[0]).toContain("must be an object");
});
