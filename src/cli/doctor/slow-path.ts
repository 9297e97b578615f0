// What `doctor` and `--version --verbose` say when children run the user's pi as it is (the slow path) although a
// copy compiled once by us would start them 2–4× faster: why (not compiled yet, compiling, failed and why, turned
// off) and what fixes it. Users never need to know the fast path exists until it is not taken.
import * as path from "node:path";
import { FAILED } from "../../host/compiled-pi-state.ts";
import type { SlowPath } from "../../host/pi-command.ts";

export type SlowPathNote = { detail: string; fix: string };

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function inTime(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** The first line of a failure that says what went wrong (Bun's build logs put the cause last). */
function gist(reason: string): string {
  const lines = reason
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const line =
    lines.length > 1 && /^pi \(.*\) does not have the shape/.test(lines[0]) ? lines[1] : (lines.at(-1) ?? "");
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

export function slowPathNote(slow: SlowPath, now = Date.now()): SlowPathNote {
  const pi = `pi ${slow.version}`;
  const lead = `slow path: children run ${pi} as installed, not compiled once by subagents (2–4× the start-up)`;
  const s = slow.state;
  switch (s.kind) {
    case "disabled":
      return {
        detail: `${lead}: SUBAGENTS_COMPILE_PI=0 turns the compiled copy off`,
        fix: "unset SUBAGENTS_COMPILE_PI (the next run compiles it in the background)",
      };
    case "compiling":
      return {
        detail: `${lead}: it is being compiled (pid ${s.lock.pid}, started ${ago(now - s.lock.at)}); children use it once it is ready`,
        fix: "nothing to do: it takes about a minute",
      };
    case "pending":
      return {
        detail: `${lead}: ${s.interrupted ? `its compile (pid ${s.interrupted.pid}) ended without a result` : "it is not compiled yet"}; the next run compiles it in the background`,
        fix: 'nothing to do: start any run (e.g. subagents delegate "…") and it is ready about a minute later',
      };
    case "ready":
      return { detail: `${pi} is compiled (${s.exe})`, fix: "" };
    case "failed": {
      const record = slow.dir ? path.join(slow.dir, FAILED) : FAILED;
      const when = `${ago(now - s.failure.at)}${s.failure.build ? ` by ${s.failure.build}` : ""}`;
      if (s.failure.final) {
        return {
          detail: `${lead}: its bundle does not have what this build's hooks need (${gist(s.failure.reason)}; found ${when}), so it is not compiled again for this pi and build`,
          fix: `update subagents (a newer build knows ${pi}), or set subagents.childPi to "embedded" to run the pi inside (${slow.embeddedVersion}, older but fast); details in ${record}`,
        };
      }
      const retry =
        s.retryAt === null || s.retryAt <= now
          ? "the next run tries again"
          : `a run after ${inTime(s.retryAt - now)} from now tries again`;
      return {
        detail: `${lead}: compiling it failed ${when} (${gist(s.failure.reason)}${s.failure.attempts > 1 ? `; ${s.failure.attempts} times in a row` : ""}); ${retry}`,
        fix: `see ${record}; to retry at the next run, remove it`,
      };
    }
  }
}
