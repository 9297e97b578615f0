// Which runtime a task runs on: the task's choice, else its agent file's, else pi. Chosen in prepare, next to
// where it runs (runners/choose.ts): the two are independent.
import type { Profile } from "../../profiles/profile.ts";
import type { FinalizeMode } from "../process/finalize-contract.ts";
import { FOREIGN_RUNTIMES } from "./index.ts";
import type { RuntimeName } from "./types.ts";

export type RuntimeChoice = { name: RuntimeName; notes: string[]; finalize?: FinalizeMode };

/** `pi-only`: what the task asks for that only a pi child can do (an acceptance gate, a structured result). */
export function chooseRuntime(
  task: { runtime?: RuntimeName },
  profile: Profile | null,
  finalize: FinalizeMode,
  piOnly: { gate?: boolean; outputSchema?: boolean } = {},
): RuntimeChoice {
  const name = task.runtime ?? profile?.runtime ?? "pi";
  if (name === "pi") return { name, notes: [] };
  const notes = [...FOREIGN_RUNTIMES[name].notes];
  // Only a pi child has subagent_finalize: a contract that demands it would fail every run, so it is dropped and said.
  // Both run inside our pi child extension: another CLI has neither, so they are said, not silently skipped.
  if (piOnly.gate) notes.push(`the acceptance gate runs inside a pi child: not run on ${name}`);
  if (piOnly.outputSchema)
    notes.push(`a structured result (outputSchema) needs a pi child: the ${name} child's answer is plain text`);
  if (finalize === "required")
    notes.push(`the finalize contract ("required") needs a pi child: the ${name} child's last message is its result`);
  return { name, notes, finalize: finalize === "off" ? "off" : "optional" };
}
