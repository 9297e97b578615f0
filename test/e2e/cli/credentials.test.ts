// A first run with no credentials says how to get them (real embedded pi, no network): `run`/`delegate` fail the
// task with pi's /login, `pi auth login`, and the provider's key variable; `doctor` marks it ✗ and exits 1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentialsError } from "../../../src/core/credentials.ts";
import { cli, piWorld, summaryOf, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
// No provider of pi's has credentials: no models.json (the scripted provider's key lives there), no auth.json,
// no key variables.
const noKeys: Record<string, string> = {};
beforeAll(async () => {
  world = await piWorld();
  rmSync(join(world.agentDir, "models.json"));
  for (const k of Object.keys(world.env)) if (/_(API_KEY|TOKEN)$|^AWS_|^GOOGLE_APPLICATION/.test(k)) noKeys[k] = "";
});
afterAll(() => world.close());

const why = (r: { stdout: string; stderr: string }) =>
  `stdout: ${r.stdout.slice(-800)}\nstderr: ${r.stderr.slice(-800)}`;

test("no credentials and no default model: the task says how to log in, and doctor fails with the fix", async () => {
  writeFileSync(join(world.agentDir, "settings.json"), "{}");
  const r = await cli(world, ["run", "default", "Summarize the README", "--json"], { binary: true, env: noKeys });
  expect(r.code, why(r)).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.status, why(r)).toBe("error");
  expect(t.error).toContain("no model has credentials here");
  expect(t.error).toContain("/login");
  expect(t.error).toContain("pi auth login PROVIDER");
  expect(t.error).toContain("ANTHROPIC_API_KEY");

  const d = await cli(world, ["doctor", "--json"], { binary: true, env: noKeys });
  expect(d.code, why(d)).toBe(1);
  const models = (JSON.parse(d.stdout).checks as any[]).find((c) => c.name === "models");
  expect(models.status, why(d)).toBe("fail");
  expect(models.detail).toContain("finds no model with credentials");
  expect(models.fix).toContain("pi auth login");
}, 60_000);

test("a default model whose provider has no key: the task names the provider and its variable; doctor too", async () => {
  writeFileSync(
    join(world.agentDir, "settings.json"),
    JSON.stringify({ defaultProvider: "anthropic", defaultModel: "claude-fable-5-2" }),
  );
  const r = await cli(world, ["delegate", "Summarize the README", "--json"], { binary: true, env: noKeys });
  expect(r.code, why(r)).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.error, why(r)).toContain('no credentials for provider "anthropic"');
  expect(t.error).toContain("pi auth login anthropic");
  expect(t.error).toContain("ANTHROPIC_API_KEY");

  const d = await cli(world, ["doctor", "--json"], { binary: true, env: noKeys });
  expect(d.code, why(d)).toBe(1);
  const model = (JSON.parse(d.stdout).checks as any[]).find((c) => c.name === "model");
  expect(model.status, why(d)).toBe("fail");
  expect(model.fix).toContain("ANTHROPIC_API_KEY");
}, 60_000);

test("credentialsError leaves other failures alone and reads pi's wording", () => {
  expect(credentialsError('Model "x" not found')).toBeNull();
  expect(credentialsError(undefined)).toBeNull();
  expect(credentialsError("No API key found for amazon-bedrock.", "amazon-bedrock/m")).toContain("AWS_PROFILE");
  expect(credentialsError("No API key found for the selected model.", "openai/gpt-x")).toContain("OPENAI_API_KEY");
});
