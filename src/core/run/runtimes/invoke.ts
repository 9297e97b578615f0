// The command of a foreign runtime's child: its CLI found on PATH, the user's own environment passed through
// (its configuration and credentials are its own, never ours), the agent's prompt and model given as its flags.
import type { Host } from "../../host.ts";
import type { Profile } from "../../profiles/profile.ts";
import { onPath } from "../runners/commands.ts";
import { FOREIGN_RUNTIMES } from "./index.ts";
import type { EventParser, ForeignRuntimeName, ToolRules } from "./types.ts";

export type ForeignInvocation = {
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  files: { path: string; content: string }[];
  warnings: string[];
  parser: () => EventParser;
  /** Its own configuration (credentials, sessions): what the sandbox gives back to it. */
  ownConfig: string[];
};

export type ForeignRequest = {
  host: Host;
  runtime: ForeignRuntimeName;
  profile: Profile | null;
  prompt: string;
  /** Added to the agent's prompt (skills, memory). */
  appendPrompt?: string;
  model?: string;
  tmpDir: string;
  depth: number;
  maxDepth: number;
  /** The runner is local: the program is this machine's (else its name is looked up where the child runs). */
  local: boolean;
};

/** The child's environment: the user's, plus how deep it is (a `subagents` it runs itself keeps the depth limit). */
function childEnv(host: Host, depth: number, maxDepth: number, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(host.env)) if (v !== undefined && !k.startsWith("PI_SUBAGENT_")) env[k] = v;
  return { ...env, PI_SUBAGENT_DEPTH: String(depth), PI_SUBAGENT_MAX_DEPTH: String(maxDepth), ...extra };
}

/** The agent's tool rules, or undefined when it keeps every tool. */
function toolRules(p: Profile | null): ToolRules | undefined {
  if (p?.noTools) return { none: true };
  if (p?.tools) return { allow: p.tools };
  if (p?.excludeTools?.length) return { deny: p.excludeTools };
  return undefined;
}

/** The invocation, or a clear error (the CLI is not installed) when nothing can start. */
export function foreignInvocation(req: ForeignRequest): ForeignInvocation | string {
  const rt = FOREIGN_RUNTIMES[req.runtime];
  const program = req.local ? onPath(req.host, rt.bin) : rt.bin;
  if (!program)
    return `runtime "${rt.name}": the "${rt.bin}" command was not found on PATH (install it with: npm install -g ${rt.npmPackage})`;
  const p = req.profile;
  const systemPrompt = [p?.systemPrompt ?? "", p?.appendSystemPrompt ?? "", req.appendPrompt ?? ""]
    .filter((s) => s.trim())
    .join("\n\n");
  const tools = toolRules(p);
  const cmd = rt.build({
    prompt: req.prompt,
    systemPrompt,
    model: req.model,
    maxTurns: p?.maxTurns,
    tmpDir: req.tmpDir,
    tools,
  });
  const warnings = [...cmd.warnings];
  if (tools && !rt.appliesTools)
    warnings.push(`${rt.name} runs with its own tools: the agent's tool list is not applied`);
  return {
    argv: [program, ...cmd.args],
    env: childEnv(req.host, req.depth, req.maxDepth, cmd.env),
    stdin: cmd.stdin,
    files: cmd.files,
    warnings,
    parser: rt.parser,
    ownConfig: rt.ownConfig(req.host.env),
  };
}
