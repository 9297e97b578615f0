// Builds the command line and environment of one child pi. Pure: the caller writes the temp files it lists.
import type { Profile } from "../../profiles/profile.ts";
import type { Transport } from "../process/transport.ts";
import { FINALIZE_INSTRUCTIONS, FORK_ANSWER_INSTRUCTION, type FinalizeMode } from "../process/finalize-contract.ts";
import type { ParentPrompt } from "./parent-prompt.ts";
import { childPiCaps, selectTools, type McpChoice } from "./child-tools.ts";

/** The tools pi enables when no --tools is given (pi 0.73.1). */
export const PI_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];
/** Tool names that delegate to further sub-agents: never offered to a child at max depth. */
export const DELEGATION_TOOLS = [
  "delegate_to_subagents",
  "subagent",
  "get_subagent_output",
  "get_subagent_session",
  "list_subagent_profiles",
];
export const FINALIZE_TOOL = "subagent_finalize";

/** Env var each built-in provider reads its key from, so a profile's apiKey never appears in argv. */
const PROVIDER_KEY_ENV: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  google: "GEMINI_API_KEY",
  groq: "GROQ_API_KEY",
  xai: "XAI_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  mistral: "MISTRAL_API_KEY",
  cerebras: "CEREBRAS_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
};

export type InvocationInput = {
  /** How to start pi: e.g. ["/path/bun", "--no-install", "/path/pi/dist/bun/cli.js"]. */
  piCommand: string[];
  /** Absent when the child's pi has our child extension built in (the embedded pi). */
  childExtension?: string;
  profile: Profile | null;
  transport: Transport;
  finalize: FinalizeMode;
  sessionFile: string;
  /** Overrides the profile's model ("provider/id[:thinking]" or "id"); null: no --model at all (pi's default). */
  model?: string | null;
  depth: number;
  maxDepth: number;
  parentPid: number;
  /**
   * The tools a deny list subtracts from: the parent pi's active tools, or pi's defaults when there
   * is no parent pi (the CLI).
   */
  parentTools?: string[];
  /** Where to put the system prompt file (0600); the caller creates and removes it. */
  promptFile: string;
  /** Skill files/dirs resolved from the profile's suggestedSkills. */
  skillPaths?: string[];
  /** Extra text for the system prompt (e.g. loaded skills, the finalize instructions). */
  appendPrompt?: string;
  /** The parent pi's project-trust decision, answered by the child extension's project_trust handler (a flag
   *  like --approve would make pi 0.73.1 exit: it has no such option). */
  projectTrust?: "yes" | "no";
  baseEnv: Record<string, string | undefined>;
  /** The child pi's version ("" or unset: unknown, treated as the oldest supported): which flags it takes. */
  piVersion?: string;
  /** The agent's or settings' `mcp` (pi 1.x children); default: every configured server. */
  mcp?: McpChoice;
  /** MCP servers configured for the child's folder, and those that did not answer the owner's probe. */
  mcpServers?: string[];
  deadMcpServers?: string[];
  /** pi's default model ("provider/id", from its settings): what the child must run when no --model is given. */
  defaultModel?: string;
  /** Whether anyone can answer the child's questions (else it gets no `ask_parent`); default true. */
  canAsk?: boolean;
  /** The call has sibling tasks: the child gets `send_message` (core/team.ts; compact transport only). */
  team?: boolean;
  /**
   * A forked child that reads its parent's prompt cache (fork.ts): it sends the parent's tools and system prompt
   * byte for byte, and everything we would add to its system prompt goes after the task in its first message.
   */
  forkPrompt?: ParentPrompt;
};

export type Invocation = {
  /** What the child gets differently from what was asked (unknown or dead MCP servers). */
  warnings?: string[];
  argv: string[];
  env: Record<string, string>;
  /** Files to create (mode 0600) before spawning and remove afterwards. */
  files: { path: string; content: string }[];
  /** With forkPrompt: what goes after the task in the child's first message (instead of into its system prompt). */
  taskNote?: string;
};

/** The child is told which tools its agent file lists that it does not have, so it does not go looking for them. */
export function missingToolsNote(p: Profile | null): string {
  if (!p?.unavailableTools?.length) return "";
  return `Your instructions mention tools that do not exist in this environment: ${p.unavailableTools.join(", ")}. Do not try to call them; do the work with the tools you have.`;
}

export function buildInvocation(input: InvocationInput): Invocation {
  const p = input.profile;
  const argv = [...input.piCommand];
  if (input.transport === "json") argv.push("--mode", "json");
  argv.push("-p", "--session", input.sessionFile);
  if (input.childExtension) argv.push("-e", input.childExtension);
  for (const ext of p?.extensions ?? []) argv.push("-e", ext);
  if (p?.noExtensions) argv.push("--no-extensions");

  const model =
    input.model === null
      ? undefined
      : (input.model ??
        (p?.model ? (p.provider && !p.model.includes("/") ? `${p.provider}/${p.model}` : p.model) : undefined));
  if (model) argv.push("--model", model);
  else if (p?.provider && input.model !== null) argv.push("--provider", p.provider);
  if (p?.thinking && !(model && /:[a-z]+$/.test(model))) argv.push("--thinking", p.thinking);

  const fork = input.forkPrompt;
  const canAsk = input.canAsk !== false && !fork;
  // Messages travel on fd 3 and the control pipe; a cache-true fork keeps its parent's tool list as it is.
  const team = !!input.team && !fork && input.transport === "compact";
  const selection = selectTools({
    profile: p,
    finalizeTool: input.finalize !== "off" ? FINALIZE_TOOL : null,
    askTool: canAsk,
    messageTool: team,
    // A cache-true fork keeps the parent's delegation tools in its tool list (as stand-ins that refuse: src/child-extension/fork-prompt.ts).
    atMaxDepth: !fork && input.depth >= input.maxDepth,
    delegationTools: DELEGATION_TOOLS,
    parentTools: input.parentTools,
    baseTools: PI_DEFAULT_TOOLS,
    caps: childPiCaps(input.piVersion),
    mcp: input.mcp ?? true,
    configured: input.mcpServers ?? [],
    dead: input.deadMcpServers,
  });
  argv.push(...selection.argv);

  if (p?.noSkills) argv.push("--no-skills");
  for (const skill of input.skillPaths ?? []) argv.push("--skill", skill);
  if (p?.noContextFiles) argv.push("--no-context-files");

  const files: Invocation["files"] = [];
  // A fork answers in plain text unless its contract requires the finalize call (a tool only it has would end the
  // prefix it shares with its parent at the tool list).
  const childFinalize: FinalizeMode = fork && input.finalize === "optional" ? "off" : input.finalize;
  const instruction =
    childFinalize === "off" ? (fork ? FORK_ANSWER_INSTRUCTION : "") : FINALIZE_INSTRUCTIONS[childFinalize];
  const appended = [
    p?.systemPrompt && (fork || p.systemPromptMode === "append") ? p.systemPrompt : "",
    p?.appendSystemPrompt ?? "",
    input.appendPrompt ?? "",
    missingToolsNote(p),
    instruction,
  ]
    .filter((s) => s.trim())
    .join("\n\n");
  let taskNote: string | undefined;
  if (fork) {
    files.push({ path: `${input.promptFile}.fork.json`, content: JSON.stringify(fork) });
    taskNote = appended || undefined;
  } else if (p && p.systemPromptMode !== "append" && p.systemPrompt.trim()) {
    // Replace mode: our extra instructions go into the same file, after the profile's prompt.
    files.push({ path: input.promptFile, content: [p.systemPrompt, appended].filter(Boolean).join("\n\n") });
    argv.push("--system-prompt", input.promptFile);
  } else if (appended) {
    // Not --append-system-prompt: pi takes that flag INSTEAD of the user's own APPEND_SYSTEM.md (global or
    // project), so a child would silently lose it. The child extension appends this file to the system prompt
    // pi assembled (before_agent_start), so the user's additions stay.
    files.push({ path: input.promptFile, content: appended });
  }
  argv.push(...(p?.extraArgs ?? []));

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.baseEnv)) if (v !== undefined) env[k] = v;
  env.PI_SUBAGENT_CHILD = "1";
  env.PI_SUBAGENT_DEPTH = String(input.depth);
  env.PI_SUBAGENT_MAX_DEPTH = String(input.maxDepth);
  env.PI_SUBAGENT_PARENT_PID = String(input.parentPid);
  env.PI_SUBAGENT_TRANSPORT = input.transport;
  env.PI_SUBAGENT_FINALIZE = childFinalize;
  if (canAsk) delete env.PI_SUBAGENT_ASK;
  else env.PI_SUBAGENT_ASK = "0";
  if (team) env.PI_SUBAGENT_TEAM = "1";
  else delete env.PI_SUBAGENT_TEAM;
  if (fork) env.PI_SUBAGENT_FORK_PROMPT = `${input.promptFile}.fork.json`;
  else delete env.PI_SUBAGENT_FORK_PROMPT;
  env.PI_OFFLINE ??= "1";
  if (appended && !fork && !(p && p.systemPromptMode !== "append" && p.systemPrompt.trim()))
    env.PI_SUBAGENT_APPEND_PROMPT = input.promptFile;
  else delete env.PI_SUBAGENT_APPEND_PROMPT;
  // The child extension stops before any model call when pi resolved another model (src/child-extension/model-guard.ts).
  const expected = model ?? (p?.provider && input.model !== null ? undefined : input.defaultModel);
  if (expected) env.PI_SUBAGENT_EXPECT_MODEL = expected;
  else delete env.PI_SUBAGENT_EXPECT_MODEL;
  if (input.piVersion) env.PI_SUBAGENT_PI_VERSION = input.piVersion;
  else delete env.PI_SUBAGENT_PI_VERSION;
  if (input.projectTrust) env.PI_SUBAGENT_PROJECT_TRUST = input.projectTrust;
  else delete env.PI_SUBAGENT_PROJECT_TRUST;
  if (p?.apiKey) {
    const provider = (model?.includes("/") ? model.split("/")[0] : p.provider) ?? "";
    const name = PROVIDER_KEY_ENV[provider];
    if (name) env[name] = p.apiKey;
    else argv.push("--api-key", p.apiKey);
  }
  return {
    argv,
    env,
    files,
    ...(taskNote ? { taskNote } : {}),
    ...(selection.warnings.length ? { warnings: selection.warnings } : {}),
  };
}
