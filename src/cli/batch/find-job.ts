// The batch job a subcommand names (else the latest one), from this machine's store.
import type { BatchJob } from "../../core/store/batch-records.ts";
import { cliContext, openStore } from "../engine.ts";
import { UsageError } from "../errors.ts";

/** The job a status or export names, else the latest one. */
export function findJob(
  command: string,
  name: string | undefined,
): { job: BatchJob; store: ReturnType<typeof openStore> } {
  const store = openStore(cliContext(process.cwd()));
  const job = name ? store.batches.job(name) : store.batches.jobs(1)[0];
  if (!job) {
    const known = store.batches.jobs(5).map((j) => j.id);
    throw new UsageError(
      name
        ? `${command}: no batch job "${name}".${known.length ? ` Recent jobs: ${known.join(", ")}` : ""}`
        : `${command}: no batch job recorded yet (start one: subagents batch ITEMS --prompt "…").`,
    );
  }
  return { job, store };
}
