// Where another harness's CLI reaches its model, for the sandbox's closed network (runners/network.ts): its
// vendor's API hosts, or the base URL its environment points it at (a gateway, a local server). A CLI configured
// elsewhere (codex's config.toml `base_url`, opencode's providers) needs that host in subagents.sandboxAllowHosts.
import type { ForeignRuntimeName } from "./types.ts";
import { endpointOf } from "../runners/network.ts";

export const FOREIGN_PROVIDERS: Record<ForeignRuntimeName, string[]> = {
  "claude-code": [
    "api.anthropic.com:443",
    "platform.claude.com:443",
    "console.anthropic.com:443",
    "statsig.anthropic.com:443",
  ],
  codex: ["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
  gemini: ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"],
  opencode: ["opencode.ai:443", "api.anthropic.com:443", "api.openai.com:443"],
};

const BASE_URL_ENV: Record<ForeignRuntimeName, string[]> = {
  "claude-code": ["ANTHROPIC_BASE_URL"],
  codex: ["OPENAI_BASE_URL"],
  gemini: ["GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"],
  opencode: [],
};

export function foreignEndpoints(runtime: ForeignRuntimeName, env: Record<string, string | undefined>): string[] {
  const set = BASE_URL_ENV[runtime]
    .map((k) => env[k])
    .filter((v): v is string => !!v)
    .map(endpointOf)
    .filter((e): e is string => !!e);
  return [...new Set([...FOREIGN_PROVIDERS[runtime], ...set])];
}
