// The default model a child without --model must run: pi's `defaultProvider`/`defaultModel` from the user's
// settings.json, or — where pi trusts the project, and only there — from the project's `.pi/settings.json` over them.
// Whether pi trusts it is the call's to say when it knows (pi's parent decided for its own folder, or the owner decided
// for a confined child, which is then told: projectTrustFor); else the owner cannot always tell (an extension of the
// user's may decide), and a project that sets its own default gives no expected model rather than a false one.
import type { Host } from "../host.ts";
import { childPiCaps } from "./launch/child-tools.ts";
import { type Engine, userModels } from "./engine.ts";
import { dirOf } from "./runners/sandbox.ts";

type ModelSettings = { defaultProvider?: unknown; defaultModel?: unknown };

/** The project's own model settings, when it sets either (to anything, null included). */
function projectModelSettings(host: Host, cwd: string): ModelSettings | null {
  const text = host.readText(`${cwd}/.pi/settings.json`);
  if (text === null) return null;
  try {
    const s = JSON.parse(text) as Record<string, unknown> | null;
    if (!s || typeof s !== "object") return null;
    return "defaultModel" in s || "defaultProvider" in s ? s : null;
  } catch {
    return null;
  }
}

function readJson(host: Host, file: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(host.readText(file) ?? "") as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * pi's own decision on a project's settings in `cwd`, as pi takes it without a person to ask: a pi before project
 * trust (0.79) loads them; else the closest saved decision in `<agentDir>/trust.json` (the folder or a parent), else
 * the user's `defaultProjectTrust` ("always" loads them, "ask" and "never" do not).
 */
export function savedProjectTrust(engine: Pick<Engine, "host" | "agentDir" | "piVersion">, cwd: string): "yes" | "no" {
  if (engine.piVersion && !childPiCaps(engine.piVersion).projectTrust) return "yes";
  const saved = readJson(engine.host, `${engine.agentDir}/trust.json`) ?? {};
  for (let dir = cwd, i = 0; i < 256; dir = dirOf(dir), i++) {
    const d = saved[dir];
    if (d === true || d === false) return d ? "yes" : "no";
    if (dir === "/") break;
  }
  return readJson(engine.host, `${engine.agentDir}/settings.json`)?.defaultProjectTrust === "always" ? "yes" : "no";
}

/** `provider/model` from settings as pi combines them (a model already naming its provider is taken as it is). */
function combined(s: ModelSettings): string | undefined {
  const provider = typeof s.defaultProvider === "string" ? s.defaultProvider : undefined;
  const model = typeof s.defaultModel === "string" ? s.defaultModel : undefined;
  if (!model) return undefined;
  return provider && !model.startsWith(`${provider}/`) ? `${provider}/${model}` : model;
}

/**
 * The model a child without --model runs in `cwd`. `trust`: pi's decision on the project there when the call knows
 * it; without it a project that sets its own default gives undefined (not known here).
 */
export function expectedDefaultModel(engine: Engine, cwd: string, trust?: "yes" | "no"): string | undefined {
  const user = userModels(engine).defaultModel;
  const project = projectModelSettings(engine.host, cwd);
  if (!project || trust === "no") return user;
  if (trust !== "yes") return undefined;
  const own = readJson(engine.host, `${engine.agentDir}/settings.json`) ?? {};
  // The project's keys over the user's, as pi merges them (a project's null clears the user's value).
  return combined({
    defaultProvider: "defaultProvider" in project ? project.defaultProvider : own.defaultProvider,
    defaultModel: "defaultModel" in project ? project.defaultModel : own.defaultModel,
  });
}
