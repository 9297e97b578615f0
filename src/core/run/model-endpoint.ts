// Where a child's model is reached, for the sandbox's network proxy (runners/network.ts): the host and port of its
// provider's base URL — from pi's models.json when the provider is defined or overridden there, else the built-in
// providers' endpoints (taken from pi's own model list, plus the hosts their sign-in tokens are refreshed at).
// A provider that is in neither gives no endpoint and a warning: the person adds its host to
// subagents.sandboxAllowHosts.
import type { Host } from "../host.ts";
import type { UserModels } from "../profiles/model-resolve.ts";
import { endpointOf } from "./runners/network.ts";

const BUILTIN: Record<string, string[]> = {
  anthropic: ["api.anthropic.com:443", "platform.claude.com:443", "console.anthropic.com:443"],
  openai: ["api.openai.com:443"],
  "openai-codex": ["chatgpt.com:443", "auth.openai.com:443"],
  google: ["generativelanguage.googleapis.com:443"],
  "google-gemini-cli": ["cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"],
  "google-antigravity": ["*.googleapis.com:443"],
  "google-vertex": ["*.googleapis.com:443"],
  "amazon-bedrock": ["*.amazonaws.com:443"],
  mistral: ["api.mistral.ai:443"],
  groq: ["api.groq.com:443"],
  xai: ["api.x.ai:443"],
  cerebras: ["api.cerebras.ai:443"],
  openrouter: ["openrouter.ai:443"],
  "vercel-ai-gateway": ["ai-gateway.vercel.sh:443"],
  "github-copilot": ["*.githubcopilot.com:443", "api.github.com:443"],
  huggingface: ["router.huggingface.co:443"],
  fireworks: ["api.fireworks.ai:443"],
  together: ["api.together.ai:443"],
  deepseek: ["api.deepseek.com:443"],
  zai: ["api.z.ai:443"],
  "zai-coding-cn": ["open.bigmodel.cn:443"],
  moonshotai: ["api.moonshot.ai:443"],
  "moonshotai-cn": ["api.moonshot.cn:443"],
  "kimi-coding": ["api.kimi.com:443"],
  minimax: ["api.minimax.io:443"],
  "minimax-cn": ["api.minimaxi.com:443"],
  nvidia: ["integrate.api.nvidia.com:443"],
  baseten: ["inference.baseten.co:443"],
  opencode: ["opencode.ai:443"],
  "opencode-go": ["opencode.ai:443"],
  "cloudflare-ai-gateway": ["gateway.ai.cloudflare.com:443"],
  "cloudflare-workers-ai": ["api.cloudflare.com:443"],
  meta: ["api.meta.ai:443"],
  radius: ["radius.pi.dev:443"],
};

function readModelsJson(
  host: Host,
  agentDir: string,
): Record<string, { baseUrl?: unknown; models?: { id?: unknown; baseUrl?: unknown }[] }> {
  try {
    const v = JSON.parse(host.readText(`${agentDir}/models.json`) ?? "{}") as { providers?: unknown };
    return v.providers && typeof v.providers === "object" ? (v.providers as never) : {};
  } catch {
    return {};
  }
}

/** The provider a model name runs on ("p/id", a models.json id, or the default model's provider). */
export function providerOf(model: string | null | undefined, user: UserModels): string | undefined {
  const m = model ?? user.defaultModel;
  if (!m) return undefined;
  if (m.includes("/")) return m.slice(0, m.indexOf("/"));
  return user.custom?.get(m.replace(/:[a-z]+$/, ""));
}

/** The endpoints the child's model needs, or why none is known (then only the allow list is reachable). */
export function modelEndpoints(
  host: Host,
  agentDir: string,
  model: string | null | undefined,
  user: UserModels,
): { allow: string[]; warning?: string } {
  const provider = providerOf(model, user);
  if (!provider)
    return {
      allow: [],
      warning: `sandbox network: the child's model provider is not known here, so no model host is allowed; add its host to subagents.sandboxAllowHosts`,
    };
  const def = readModelsJson(host, agentDir)[provider];
  const urls = [def?.baseUrl, ...(Array.isArray(def?.models) ? def.models.map((m) => m?.baseUrl) : [])].filter(
    (u): u is string => typeof u === "string",
  );
  const custom = urls.map(endpointOf).filter((e): e is string => !!e);
  const allow = [...new Set(custom.length ? custom : (BUILTIN[provider] ?? []))];
  if (!allow.length)
    return {
      allow,
      warning: `sandbox network: no host is known for provider "${provider}"; add its host to subagents.sandboxAllowHosts`,
    };
  return { allow };
}
