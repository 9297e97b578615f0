// Which runtime a task runs on: the task's choice, else its agent file's, else pi. Chosen in prepare, next to
// where it runs (runners/choose.ts): the two are independent.
import type { Profile } from "../../profiles/profile.ts";
import type { FinalizeMode } from "../finalize-contract.ts";
import { FOREIGN_RUNTIMES } from "./index.ts";
import type { RuntimeName } from "./types.ts";

export type RuntimeChoice = { name: RuntimeName; notes: string[]; finalize?: FinalizeMode };

export function chooseRuntime(task: { runtime?: RuntimeName }, profile: Profile | null, finalize: FinalizeMode): RuntimeChoice {
  const name = task.runtime ?? profile?.runtime ?? "pi";
  if (name === "pi") return { name, notes: [] };
  const notes = [...FOREIGN_RUNTIMES[name].notes];
  // Only a pi child has subagent_finalize: a contract that demands it would fail every run, so it is dropped and said.
  if (finalize === "required") notes.push(`the finalize contract ("required") needs a pi child: the ${name} child's last message is its result`);
  return { name, notes, finalize: finalize === "off" ? "off" : "optional" };
}
