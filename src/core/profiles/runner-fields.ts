// Agent front matter `sandbox: true` and `runner: local|docker|slurm`. A wrong value is a warning on the profile
// and is ignored, like other optional fields.
import { RUNNER_NAMES, type RunnerName } from "../runner-settings.ts";

export const ENGINE_FIELDS = ["sandbox", "runner"];

export function engineFields(
  fm: Record<string, unknown>,
  warnings: string[],
): { sandbox?: boolean; runner?: RunnerName } {
  const out: { sandbox?: boolean; runner?: RunnerName } = {};
  if (fm.sandbox !== undefined && fm.sandbox !== null) {
    if (typeof fm.sandbox === "boolean") out.sandbox = fm.sandbox;
    else warnings.push(`sandbox must be true or false (got ${JSON.stringify(fm.sandbox)}; ignored)`);
  }
  if (fm.runner !== undefined && fm.runner !== null) {
    const v = typeof fm.runner === "string" ? fm.runner.trim() : fm.runner;
    if ((RUNNER_NAMES as unknown[]).includes(v)) out.runner = v as RunnerName;
    else warnings.push(`runner must be one of ${RUNNER_NAMES.join(", ")} (got ${JSON.stringify(fm.runner)}; ignored)`);
  }
  return out;
}
