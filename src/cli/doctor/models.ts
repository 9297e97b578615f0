// `doctor`'s models check: every model the configuration names — pi's default, each agent's `model` (as it
// resolves: aliases, provider fields), `subagents.fallbackModels` and agents' fallbackModels — against the models
// the pi that children run really offers (`pi --list-models`, run once: ~0.4 s embedded, ~0.5–0.8 s for pi 1.5.2
// under Node 24). A model that pi does not list fails: pi would stop the child (or, for the default model, run
// another one — which our children refuse to do).
import { spawnSync } from "node:child_process";
import { credentialsFix } from "../../core/credentials.ts";
import { discoverProfiles } from "../../core/profiles/profile-discovery.ts";
import { readUserModels, resolveProfileModel } from "../../core/profiles/model-resolve.ts";
import type { Check } from "./checks.ts";
import { cliPiCommand, type CliContext } from "../engine.ts";

/** `provider/model` rows of `pi --list-models` (a table: provider, model, context, …). */
export function parseModelList(text: string): string[] {
  const rows = text.split("\n").map((l) => l.trim().split(/\s+/));
  return rows.filter((r) => r.length >= 2 && r[0] && r[0] !== "provider").map((r) => `${r[0]}/${r[1]}`);
}

/** Whether `name` (provider/id, a bare id, or part of an id as pi matches it) is one of the listed models. */
export function listed(name: string, models: string[]): boolean {
  const want = name.replace(/:[a-z]+$/, "").toLowerCase();
  if (want.includes("/")) return models.some((m) => m.toLowerCase() === want);
  return models.some((m) =>
    m
      .slice(m.indexOf("/") + 1)
      .toLowerCase()
      .includes(want),
  );
}

const LIST_TIMEOUT_MS = 30_000;

export function modelsCheck(ctx: CliContext, cwd: string): Check {
  let pi: ReturnType<typeof cliPiCommand>;
  try {
    pi = cliPiCommand(ctx, cwd);
  } catch {
    return { name: "models", status: "warn", detail: "no pi for sub-agents: cannot check models (see children)" };
  }
  const list = () =>
    spawnSync(pi.argv[0], [...pi.argv.slice(1), "--list-models"], {
      env: { ...process.env, ...pi.env },
      cwd,
      encoding: "utf8",
      timeout: LIST_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
    });
  // It answers in well under a second (pi bounds its own model lookup at 15 s); a pi that did not answer at all
  // is asked once more before the check gives up on it, so one stuck start does not cost the verdict.
  let out = list();
  if (out.error && (out.error as NodeJS.ErrnoException).code === "ETIMEDOUT") out = list();
  if (out.status !== 0) {
    const timedOut = out.error && (out.error as NodeJS.ErrnoException).code === "ETIMEDOUT";
    const why = timedOut
      ? `no answer in ${LIST_TIMEOUT_MS / 1000} s, twice`
      : (out.stderr ?? "").trim().split("\n")[0] || `exit ${out.status}`;
    return { name: "models", status: "warn", detail: `${pi.describe} --list-models failed (${why})` };
  }
  // pi lists no model at all (and says so) when it finds no credentials for any provider.
  if (/No models available/.test(`${out.stdout}${out.stderr}`))
    return {
      name: "models",
      status: "fail",
      detail: `${pi.describe} finds no model with credentials`,
      fix: credentialsFix(),
    };
  const models = parseModelList(out.stdout ?? "");
  const user = readUserModels(ctx.host, ctx.agentDir);
  const named: { model: string; by: string }[] = [];
  if (user.defaultModel) named.push({ model: user.defaultModel, by: "pi's default model" });
  for (const m of ctx.settings.fallbackModels) named.push({ model: m, by: "subagents.fallbackModels" });
  const { profiles } = discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir });
  for (const p of new Set(profiles.values())) {
    if (p.model) {
      const choice = resolveProfileModel(p, p.model, { aliases: ctx.settings.modelAliases, user });
      if (choice.model) named.push({ model: choice.model, by: `agent ${p.name}` });
    }
    for (const m of p.fallbackModels ?? []) named.push({ model: m, by: `agent ${p.name} (fallbackModels)` });
  }
  const missing = named.filter((n) => !listed(n.model, models));
  const version = pi.pi.version ? `pi ${pi.pi.version}` : "the children's pi";
  if (missing.length) {
    const list = missing.map((n) => `${n.model} (${n.by})`).join(", ");
    return {
      name: "models",
      status: "fail",
      detail: `not offered by ${version}: ${list}`,
      fix: `run \`pi --list-models\` with the children's pi, log in to the provider, or update pi (childPi) / change the model`,
    };
  }
  return {
    name: "models",
    status: "ok",
    detail: `${named.length} configured model${named.length === 1 ? "" : "s"} offered by ${version} (${models.length} available)`,
  };
}
