// JIT settings for the Bun children we start (the embedded pi, the user's pi compiled by us). A trivial child lives
// ~100 ms: JavaScriptCore's optimizing JIT (DFG) compiles the functions that run hot while pi starts up on
// background threads, work such a short process never earns back — and on a busy machine those threads take CPU
// from the other children. Raising DFG's tier-up thresholds measured −12 to −17% CPU per trivial child (83–87 →
// 72 ms, 12 alternating runs; turning DFG off entirely saves about the same). Thresholds, not DFG off, so the code
// a long-running child really runs hot is still optimized, only later. The child removes them at once (pi-role.ts,
// the compiled pi's prelude), so nothing it runs — a user's `bun test` in its bash tool — inherits them.
export const CHILD_JIT_MARK = "SUBAGENTS_CHILD_JIT";
const OPTIONS: Record<string, string> = {
  BUN_JSC_thresholdForOptimizeAfterWarmUp: "100000",
  BUN_JSC_thresholdForOptimizeAfterLongWarmUp: "100000",
  BUN_JSC_thresholdForOptimizeSoon: "100000",
};

/** The variables to add to a Bun child's environment: none when the user tunes JavaScriptCore themselves. */
export function childJitEnv(parentEnv: Record<string, string | undefined> = process.env): Record<string, string> {
  if (Object.keys(parentEnv).some((k) => k.startsWith("BUN_JSC_"))) return {};
  return { ...OPTIONS, [CHILD_JIT_MARK]: Object.keys(OPTIONS).join(",") };
}

/** In the child: removes what `childJitEnv` added (JavaScriptCore has read them by now). Self-contained when given
 * both arguments: the compiled user's pi runs its source text as plain JS. */
export function dropChildJitEnv(
  env: Record<string, string | undefined> = process.env,
  mark: string = CHILD_JIT_MARK,
): void {
  const added = env[mark];
  if (!added) return;
  for (const key of added.split(",")) if (key.startsWith("BUN_JSC_")) delete env[key];
  delete env[mark];
}
