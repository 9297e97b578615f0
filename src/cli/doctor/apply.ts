// `doctor`'s line for `subagents apply` in the repository of the current folder: an apply stopped midway (its
// marker left in the git folder, apply/guard.ts) is said, with what it left and how to finish or undo it.
import { applyState, readMarker, repoPlace, stateLines } from "../apply/guard.ts";
import type { Check } from "./checks.ts";

export async function applyCheck(cwd: string): Promise<Check> {
  const name = "apply";
  const place = await repoPlace(cwd);
  if (!place) return { name, status: "ok", detail: "not in a git repository" };
  const m = readMarker(place);
  if (!m) return { name, status: "ok", detail: `no stopped 'subagents apply' in ${place.top}` };
  const state = await applyState(place, m);
  const { said, fix } = stateLines(place, m, state);
  return { name, status: state.kind === "running" || state.kind === "done" ? "warn" : "fail", detail: said, fix };
}
