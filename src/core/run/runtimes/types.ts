// Which CLI runs a child (docs/agents.md "Other harnesses as children"): pi (ours: steering, finalize, resume) or another harness's headless CLI.
// The runner decides WHERE a child runs (runners/), the runtime WHAT runs there: the two are chosen separately.
// A foreign runtime is one small module here: its argv/env and a parser of its JSONL stream into ChildEvents.
import type { ChildEvent } from "../../types.ts";

import type { RuntimeName } from "../../runtime-names.ts";
export { RUNTIME_NAMES, type RuntimeName } from "../../runtime-names.ts";
export type ForeignRuntimeName = Exclude<RuntimeName, "pi">;

/** The agent's tool rules in pi's names (profile-fields.ts has made readonly an allow list already). */
export type ToolRules = { allow?: string[]; deny?: string[]; none?: boolean };

/** What a foreign CLI is given for one child. */
export type RuntimeRequest = {
  /** The task text (files and resume transcript included). */
  prompt: string;
  /** The agent's own prompt plus what we add (skills, memory); "" when there is none. */
  systemPrompt: string;
  /** The model as the task or agent file names it, or undefined: the CLI's own default. */
  model?: string;
  maxTurns?: number;
  /** The agent's tool list, for a runtime that can apply it (`appliesTools`). */
  tools?: ToolRules;
  /** A private folder for files this child needs (deleted after it ends). */
  tmpDir: string;
};

export type RuntimeCommand = {
  /** Arguments after the program itself. */
  args: string[];
  /** Variables added to the passed-through environment (never credentials of ours). */
  env: Record<string, string>;
  stdin: string;
  files: { path: string; content: string }[];
  /** What this child does differently from what the agent file asked (e.g. a model prefix dropped). */
  warnings: string[];
};

/** One parser per process: turns the CLI's stdout lines into engine events (several, one or none per line);
 *  `end`, for a stream without a last event of its own, says what its exit means. */
export type EventParser = { parse(line: string): ChildEvent[]; end?(exitCode: number | null): ChildEvent[] };

export type ForeignRuntime = {
  name: ForeignRuntimeName;
  /** The program looked up on PATH. */
  bin: string;
  /** Where to get it, for the "not found" error. */
  npmPackage: string;
  /** Whether build() applies the agent's tool list (what it cannot map, it says in its warnings). */
  appliesTools?: boolean;
  /** What this runtime cannot do that a pi child can: said in every window and record of its runs. */
  notes: string[];
  build(req: RuntimeRequest): RuntimeCommand;
  /** Where it keeps its configuration, credentials and sessions (`~/` is the home): writable in the sandbox. */
  ownConfig(env: Record<string, string | undefined>): string[];
  parser(): EventParser;
};
