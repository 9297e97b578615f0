// What a task asks for that only a pi child can give, when another harness's CLI runs it: said as notes (in its
// windows and record), and the finalize contract relaxed (only a pi child has subagent_finalize). The call's
// resolution (core/call/resolve.ts) applies it once.
import type { FinalizeMode } from "../process/finalize-contract.ts";
import { FOREIGN_RUNTIMES } from "./index.ts";
import type { RuntimeName } from "./types.ts";

/** `asks`: the task's acceptance gate and structured result (both run inside our pi child extension), and its
 *  finalize contract. */
export function runtimeLimits(
  name: RuntimeName,
  asks: { gate: boolean; outputSchema: boolean; finalize: FinalizeMode },
): { notes: string[]; finalize: FinalizeMode } {
  if (name === "pi") return { notes: [], finalize: asks.finalize };
  const notes = [...FOREIGN_RUNTIMES[name].notes];
  // A contract that demands the tool would fail every run: it is dropped and said. Gate and structured result run
  // inside our pi child extension: another CLI has neither, so they are said, not silently skipped.
  if (asks.gate) notes.push(`the acceptance gate runs inside a pi child: not run on ${name}`);
  if (asks.outputSchema)
    notes.push(`a structured result (outputSchema) needs a pi child: the ${name} child's answer is plain text`);
  if (asks.finalize === "required")
    notes.push(`the finalize contract ("required") needs a pi child: the ${name} child's last message is its result`);
  return { notes, finalize: asks.finalize === "off" ? "off" : "optional" };
}
