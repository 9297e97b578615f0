// gen_ai.provider.name from the provider a child's assistant message names (pi's provider ids; another harness's
// parser passes its own): the conventions' well-known value where one applies, else the id as it came.
import {
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI,
  GEN_AI_PROVIDER_NAME_VALUE_GROQ,
  GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_X_AI,
} from "@opentelemetry/semantic-conventions/incubating";

const WELL_KNOWN: Record<string, string> = {
  anthropic: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  openai: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  "openai-codex": GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  "azure-openai-responses": GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  google: GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  "google-gemini-cli": GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  "google-vertex": GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI,
  "amazon-bedrock": GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  mistral: GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  groq: GEN_AI_PROVIDER_NAME_VALUE_GROQ,
  xai: GEN_AI_PROVIDER_NAME_VALUE_X_AI,
  deepseek: GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK,
};

export function providerName(provider: string | undefined): string | undefined {
  if (!provider) return undefined;
  return WELL_KNOWN[provider] ?? provider;
}
