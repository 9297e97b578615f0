// `--sandbox`, `--runner local|docker|slurm` and `--runtime pi|claude-code|codex|gemini|opencode` on `run` and `delegate`
// (src/core/run/runners/, src/core/run/runtimes/).
import { RUNNER_NAMES, type RunnerName } from "../../core/runner-settings.ts";
import { RUNTIME_NAMES, type RuntimeName } from "../../core/runtime-names.ts";
import { UsageError } from "../errors.ts";

export function engineFlags(
  command: string,
  values: { sandbox?: boolean; runner?: string; runtime?: string },
): { sandbox?: boolean; runner?: RunnerName; runtime?: RuntimeName } {
  const out: { sandbox?: boolean; runner?: RunnerName; runtime?: RuntimeName } = {};
  if (values.sandbox) out.sandbox = true;
  if (values.runner !== undefined) {
    if (!(RUNNER_NAMES as string[]).includes(values.runner))
      throw new UsageError(`${command}: --runner must be one of ${RUNNER_NAMES.join(", ")} (got "${values.runner}").`);
    out.runner = values.runner as RunnerName;
  }
  if (values.runtime !== undefined) {
    if (!(RUNTIME_NAMES as readonly string[]).includes(values.runtime))
      throw new UsageError(
        `${command}: --runtime must be one of ${RUNTIME_NAMES.join(", ")} (got "${values.runtime}").`,
      );
    out.runtime = values.runtime as RuntimeName;
  }
  return out;
}
