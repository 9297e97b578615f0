// The runtimes by name (types.ts). pi is not here: it is the engine's own invocation (invocation.ts).
import { claudeCode } from "./claude-code.ts";
import { codex } from "./codex.ts";
import { gemini } from "./gemini.ts";
import { opencode } from "./opencode.ts";
import type { ForeignRuntime, ForeignRuntimeName } from "./types.ts";

export const FOREIGN_RUNTIMES: Record<ForeignRuntimeName, ForeignRuntime> = {
  "claude-code": claudeCode,
  codex,
  gemini,
  opencode,
};
