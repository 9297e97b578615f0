// `model:` as users mean it. Agent files written for Claude Code say `sonnet`, `haiku`, `opus`, `inherit` or a
// `claude-*` id; pi would look those up as model ids and land on a provider the user may have no credentials
// for. Here they resolve to a model the user *has* (pi's settings.json / models.json / auth.json in the agent
// dir, and API-key variables), through `subagents.modelAliases`; what cannot be resolved runs on the default
// model with a warning instead of failing the task.
import type { Host } from "../host.ts";
import { THINKING_LEVELS, type Profile } from "./profile.ts";

/** What the user can run, read from pi's own files (never by loading pi). */
export type UserModels = {
  /** "provider/id" from settings.json (defaultProvider + defaultModel), when set. */
  defaultModel?: string;
  /** Providers with credentials (or a models.json entry, or the default's provider). */
  providers: Set<string>;
  /** models.json's model ids → their provider, so a bare id names the provider that has it. */
  custom?: Map<string, string>;
};

/** Built-in defaults of `subagents.modelAliases`: Claude Code's names in pi's Anthropic ids. */
export const DEFAULT_MODEL_ALIASES: Record<string, string> = {
  sonnet: "anthropic/claude-sonnet-4-5",
  opus: "anthropic/claude-opus-4-1",
  haiku: "anthropic/claude-haiku-4-5",
};
const FAMILIES = ["sonnet", "opus", "haiku"];

/** Env variables pi reads a provider's key from (pi-ai's table, the common part). */
const PROVIDER_ENV: Record<string, string[]> = {
  anthropic: ["ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"],
  openai: ["OPENAI_API_KEY"],
  google: ["GEMINI_API_KEY"],
  groq: ["GROQ_API_KEY"],
  xai: ["XAI_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  "github-copilot": ["COPILOT_GITHUB_TOKEN"],
  "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
  zai: ["ZAI_API_KEY"],
  huggingface: ["HF_TOKEN"],
  fireworks: ["FIREWORKS_API_KEY"],
};

function readJson(host: Host, file: string): Record<string, unknown> | null {
  const text = host.readText(file);
  if (text === null) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null; // pi reports its own broken files; here a broken file just adds nothing
  }
}

export function readUserModels(host: Host, agentDir: string): UserModels {
  const providers = new Set<string>();
  const settings = readJson(host, `${agentDir}/settings.json`);
  const models = readJson(host, `${agentDir}/models.json`);
  const auth = readJson(host, `${agentDir}/auth.json`);
  const customProviders = models?.providers;
  const custom = new Map<string, string>();
  if (customProviders && typeof customProviders === "object") {
    for (const [p, def] of Object.entries(customProviders as Record<string, { models?: { id?: unknown }[] }>)) {
      providers.add(p);
      for (const m of Array.isArray(def?.models) ? def.models : [])
        if (typeof m?.id === "string" && !custom.has(m.id)) custom.set(m.id, p);
    }
  }
  if (auth) for (const p of Object.keys(auth)) providers.add(p);
  for (const [p, vars] of Object.entries(PROVIDER_ENV)) if (vars.some((v) => host.env[v])) providers.add(p);
  const provider = typeof settings?.defaultProvider === "string" ? settings.defaultProvider : undefined;
  const model = typeof settings?.defaultModel === "string" ? settings.defaultModel : undefined;
  if (provider) providers.add(provider);
  const defaultModel = model
    ? provider && !model.startsWith(`${provider}/`)
      ? `${provider}/${model}`
      : model
    : undefined;
  return { defaultModel, providers, custom };
}

export type ModelChoice = {
  /** What the child gets as --model; undefined: no --model, pi's default. */
  model?: string;
  /** Said in the run header and kept in the run's record when the model is not what the file says. */
  warning?: string;
};

export type ResolveOptions = {
  /** The profile's provider field, for bare ids. */
  provider?: string;
  /** The parent's model ("provider/id"), for `inherit`; unknown in the CLI (then pi's default). */
  parentModel?: string;
  /** `subagents.modelAliases`: name → model, or "inherit" / "default". */
  aliases: Record<string, string>;
  user: UserModels;
};

const providerOf = (model: string) => (model.includes("/") ? model.slice(0, model.indexOf("/")) : undefined);

/** Splits a trailing `:thinking` level off ("sonnet:high"), which pi accepts on --model. */
function splitThinking(model: string): { base: string; suffix: string } {
  const i = model.lastIndexOf(":");
  if (i > 0 && (THINKING_LEVELS as readonly string[]).includes(model.slice(i + 1).toLowerCase()))
    return { base: model.slice(0, i), suffix: model.slice(i) };
  return { base: model, suffix: "" };
}

function fallback(requested: string, why: string, o: ResolveOptions): ModelChoice {
  const to = o.user.defaultModel ?? "pi's default model";
  return {
    model: o.user.defaultModel,
    warning: `model "${requested}" ${why}: running on ${to} instead (map it with subagents.modelAliases)`,
  };
}

/** The model a child runs on for a requested model name. Never fails: the worst case is the default model. */
export function resolveModel(requested: string, o: ResolveOptions): ModelChoice {
  const { base, suffix } = splitThinking(requested.trim());
  const lower = base.toLowerCase();
  const configured = o.aliases[base] ?? o.aliases[lower];
  if (configured === "inherit" || (configured === undefined && lower === "inherit")) {
    return { model: o.parentModel ? `${o.parentModel}${suffix}` : undefined };
  }
  if (configured === "default") return { model: o.user.defaultModel };
  if (configured !== undefined) return { model: `${configured}${suffix}` };
  // Cursor's `model: fast` names its own quick model: ours is whatever the user maps "fast" to.
  if (lower === "fast") return fallback(requested, "is Cursor's fast model, which has no equivalent here", o);

  const claude = FAMILIES.includes(lower) || /^(anthropic\/)?claude-/.test(lower);
  if (claude) {
    // A user alias for the family ("sonnet") also covers its dated ids ("claude-sonnet-4-20250514").
    const family = FAMILIES.find((f) => lower.includes(f));
    const familyAlias = family && !FAMILIES.includes(lower) ? o.aliases[family] : undefined;
    if (familyAlias === "inherit") return { model: o.parentModel ? `${o.parentModel}${suffix}` : undefined };
    if (familyAlias === "default") return { model: o.user.defaultModel };
    if (familyAlias) return { model: `${familyAlias}${suffix}` };
    if (o.user.providers.has("anthropic")) {
      const id = FAMILIES.includes(lower)
        ? DEFAULT_MODEL_ALIASES[lower]
        : base.includes("/")
          ? base
          : `anthropic/${base}`;
      return { model: `${id}${suffix}` };
    }
    return fallback(requested, "is a Claude model and there are no Anthropic credentials here", o);
  }

  const own = o.user.custom?.get(base);
  const written = base.includes("/") ? base : o.provider ? `${o.provider}/${base}` : own ? `${own}/${base}` : base;
  const provider = providerOf(written);
  if (provider && !o.user.providers.has(provider))
    return fallback(requested, `needs provider "${provider}", which has no credentials or models.json entry here`, o);
  return { model: `${written}${suffix}` };
}

/** resolveModel for a profile: its provider, and its own API key makes that provider usable. */
export function resolveProfileModel(
  profile: Profile | null,
  requested: string,
  o: Omit<ResolveOptions, "provider">,
): ModelChoice {
  let user = o.user;
  if (profile?.apiKey && profile.provider)
    user = { ...user, providers: new Set([...user.providers, profile.provider]) };
  return resolveModel(requested, { ...o, provider: profile?.provider, user });
}
