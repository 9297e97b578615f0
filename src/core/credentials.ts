// Missing model credentials, said in a way a new user can act on. pi's own words for it ("No models available",
// "No API key found for …") tell nothing about what to run; every front shows a task's error, so the advice is
// attached once, here, to the error itself. Only variable names are ever printed, never values.

// Providers whose key variable is not simply <PROVIDER>_API_KEY (pi's docs/providers.md).
const ENV_KEYS: Record<string, string[]> = {
  anthropic: ["ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"],
  google: ["GEMINI_API_KEY"],
  "google-vertex": ["GOOGLE_CLOUD_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"],
  "amazon-bedrock": ["AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK"],
  "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
  moonshotai: ["MOONSHOT_API_KEY"],
  huggingface: ["HF_TOKEN"],
  "github-copilot": ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"],
};

/** The environment variables pi reads a provider's credentials from, the usual one first. */
export function envKeysFor(provider: string): string[] {
  return ENV_KEYS[provider] ?? [`${provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_API_KEY`];
}

/** What to do about missing credentials: for one provider when it is known, else the usual choices. */
export function credentialsFix(provider?: string): string {
  const login = provider ? `\`pi auth login ${provider}\` in a shell` : "`pi auth login PROVIDER` in a shell";
  const variable = provider
    ? envKeysFor(provider)[0]
    : "the provider's API key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, …)";
  return `log in once: run \`pi\` and type /login, or ${login} (add --api-key to save a key); or set ${variable}`;
}

const NO_MODELS = /No models available/;
const NO_KEY = /No API key found for (?:the selected model|([\w.-]*[\w-]))/;

/**
 * The task error for a child pi that stopped for want of credentials, or null when that is not why it failed.
 * `model` is the model the child was asked to run (`provider/id`), which names the provider when pi does not.
 */
export function credentialsError(error: string | undefined, model?: string): string | null {
  if (!error) return null;
  const key = NO_KEY.exec(error);
  const provider = key?.[1] ?? (key && model?.includes("/") ? model.slice(0, model.indexOf("/")) : undefined);
  // pi warns "No models available" before naming the selected model's provider: the provider is the better advice.
  if (!provider && !key && !NO_MODELS.test(error)) return null;
  const what = provider
    ? `no credentials for provider "${provider}"${model ? ` (model ${model})` : ""}`
    : "no model has credentials here";
  return `pi cannot start the sub-agent: ${what}. To fix it, ${credentialsFix(provider)}. \`subagents doctor\` checks it.`;
}
