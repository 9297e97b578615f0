// What an agent definition is, once read: the Profile type and the values its fields may take (profile.ts reads
// files into it, profile-fields.ts reads each field).
import type { RuntimeName } from "../runtime-names.ts";
import type { IsolationMode } from "../isolation-types.ts";
import type { McpChoice } from "../mcp-choice.ts";
import type { RunnerName } from "../runner-settings.ts";
import type { Harness } from "./harnesses.ts";

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export type Thinking = (typeof THINKING_LEVELS)[number];

export type Profile = {
  name: string;
  description?: string;
  source: "builtin" | "user" | "project";
  filePath?: string;
  provider?: string;
  model?: string;
  thinking?: Thinking;
  /** Allow list (pi names); already minus the deny list when the file had both. May be empty (only finalize). */
  tools?: string[];
  /** Deny list (pi names). Never set together with `tools`. */
  excludeTools?: string[];
  /** Tools the file lists that do not exist here (Claude Code's WebFetch, Task, mcp__…): the child is told. */
  unavailableTools?: string[];
  noTools?: boolean;
  extensions?: string[];
  noExtensions?: boolean;
  noSkills?: boolean;
  suggestedSkills?: string[];
  loadSkills?: string[];
  noContextFiles?: boolean;
  /** The markdown body, trimmed. */
  systemPrompt: string;
  systemPromptMode: "replace" | "append";
  appendSystemPrompt?: string;
  apiKey?: string;
  extraArgs?: string[];
  readonly?: boolean;
  /** Seconds. */
  timeout?: number;
  finalize?: boolean;
  /** Budgets (budget.ts); maxTurns is also Claude Code's turn budget. */
  maxTurns?: number;
  /** Run in a git worktree (Claude Code's `isolation: worktree`). */
  isolation?: IsolationMode;
  maxTokens?: number;
  maxCost?: number;
  /** Models to continue on, in order, when the task's model fails (fallback.ts). */
  fallbackModels?: string[];
  /** Claude Code's display colour, as written. */
  color?: string;
  /** Acceptance gate (run/process/gate.ts): a shell command that must pass before the task counts as completed. */
  gate?: string;
  gateTimeout?: number;
  gateRetries?: number;
  /** Shell command run in an isolated task's new worktree before its child starts (core/run/task-setup.ts), after the
   *  settings' own. */
  setup?: string;
  /** Shell commands run when a task on this agent starts / ends (core/run/task-hooks.ts), after the settings' own. */
  taskStart?: string;
  taskEnd?: string;
  /** Structured result (output-schema.ts): a JSON Schema the child's finalize `data` must match (also oh-my-pi's `output`). */
  outputSchema?: Record<string, unknown>;
  /** `fork`: start from a copy of the parent pi session's conversation (run/fork.ts); `fresh` (default): a new one. */
  context?: "fork" | "fresh";
  /** MCP servers the child may start (pi 1.x): all, none (`false`), or only the named ones. */
  mcp?: McpChoice;
  /** What the child's commands leave running is kept (and recorded) instead of ended with the run. */
  keepProcesses?: boolean;
  /** Run sandboxed, and where (src/core/run/runners/). */
  sandbox?: boolean;
  runner?: RunnerName;
  /** What loaded with a compromise: tolerant front matter, unsupported fields, unmapped tools, … */
  warnings?: string[];
  /** Whose agent file this is (harnesses.ts): pi, claude-code, codex, cursor, opencode, gemini, qwen, copilot, omp. */
  harness?: Harness;
  /** Which CLI runs the child (src/core/run/runtimes/): pi, or another harness's headless CLI. */
  runtime?: RuntimeName;
  /** Claude Code's `memory`: a MEMORY.md the child starts with (agent-memory.ts). */
  memory?: MemoryScope;
  /** Inline MCP server definitions from the file (Codex, Gemini, Copilot); recorded, not started yet. */
  mcpServers?: Record<string, unknown>;
};

export const MEMORY_SCOPES = ["user", "project", "local"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export type ProfileSource = Profile["source"];

export const READONLY_TOOLS = ["read", "grep", "find", "ls"];
