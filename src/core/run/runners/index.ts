// The runners by name: one entry per runner file of this folder. Everything else asks a runner what it can do
// (types.ts ChildRunner), never its name.
import { dockerRunner } from "./docker.ts";
import { localRunner } from "./local.ts";
import { slurmRunner } from "./slurm.ts";
import type { ChildRunner, RunnerName } from "./types.ts";

const RUNNERS: Record<RunnerName, ChildRunner> = { local: localRunner, docker: dockerRunner, slurm: slurmRunner };

/** The runner of that name (a name no runner has, from an old record: this machine's). */
export const runnerNamed = (name: RunnerName): ChildRunner => RUNNERS[name] ?? localRunner;
