// `--sandbox` and `--runner local|docker|slurm` on `run` and `delegate` (src/core/run/runners/).
import { RUNNER_NAMES, type RunnerName } from "../core/engine-settings.ts";
import { UsageError } from "./errors.ts";

export const ENGINE_OPTIONS = {
  sandbox: { type: "boolean" },
  runner: { type: "string" },
} as const;

export function engineFlags(command: string, values: { sandbox?: boolean; runner?: string }): { sandbox?: boolean; runner?: RunnerName } {
  const out: { sandbox?: boolean; runner?: RunnerName } = {};
  if (values.sandbox) out.sandbox = true;
  if (values.runner !== undefined) {
    if (!(RUNNER_NAMES as string[]).includes(values.runner)) throw new UsageError(`${command}: --runner must be one of ${RUNNER_NAMES.join(", ")} (got "${values.runner}").`);
    out.runner = values.runner as RunnerName;
  }
  return out;
}
