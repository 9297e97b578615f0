// The runtimes a child may run on (src/core/run/runtimes/): pi, or another harness's headless CLI. Here, at the
// bottom layer, because agent files, task input and settings name them too.
export const RUNTIME_NAMES = ["pi", "claude-code", "codex", "gemini", "opencode"] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];
