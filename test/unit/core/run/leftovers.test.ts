// A run's leftovers (core/run/process/leftovers.ts) are named as they run, not as they were a moment before: a
// process caught between `setsid`'s exec and its command's is looked at again. The scan itself (host/proc-marks.ts)
// runs on real processes here; the exec race is a host seam, since no real process can be held between two execs.
import { afterEach, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import type { Host, MarkedProcess } from "../../../../src/core/host.ts";
import { realClock } from "../../../../src/core/host.ts";
import { endLeftovers, leftoversWarning } from "../../../../src/core/run/process/leftovers.ts";
import { MARK_ENV } from "../../../../src/core/run/process/marks.ts";
import { markedProcesses, markedUnder } from "../../../../src/host/proc-marks.ts";
import { until } from "../../../support/pi-env.ts";

const started: ChildProcess[] = [];
afterEach(() => {
  // Each in a process group of its own: what its shell started goes with it.
  for (const p of started.splice(0))
    try {
      process.kill(-(p.pid as number), "SIGKILL");
    } catch {
      // gone
    }
});

const marked = (mark: string, command: string) => {
  const p = spawn("sh", ["-c", command], {
    env: { ...process.env, [MARK_ENV]: mark },
    stdio: "ignore",
    detached: true,
  });
  started.push(p);
  return p;
};

test("the scan says which marked processes are busy (running) and which wait", async () => {
  const mark = `${process.pid}.leftovers.${Date.now()}`;
  const spinning = marked(`${mark}/spin`, "while :; do :; done");
  const sleeping = marked(`${mark}/sleep`, "exec sleep 600");
  // A waiting process is not busy (once `sleep` has started waiting: just after its exec it may still be loading).
  await until("both marked processes in /proc, the sleeper seen waiting (not busy)", () => {
    const ours = markedProcesses().filter((p) => p.mark.startsWith(mark));
    const sleeper = ours.find((p) => p.pid === sleeping.pid);
    return ours.length === 2 && sleeper?.command === "sleep 600" && sleeper.busy === false;
  });
  // The spinning one is on a CPU or waiting for one (R) in nearly every look.
  const looks = Array.from({ length: 20 }, () => markedProcesses().find((p) => p.pid === spinning.pid)?.busy);
  expect(looks.filter(Boolean).length, `busy in ${looks.filter(Boolean).length} of 20 looks`).toBeGreaterThan(10);
});

test("a run's scan finds its processes, also those started after a scan remembered the unmarked ones", async () => {
  const run = `${process.pid}.scan.${Date.now()}`;
  // Grandchildren, as a run's processes are (this process's own children are never remembered as unmarked).
  const unmarked = spawn("sh", ["-c", "sleep 600 & wait"], { stdio: "ignore", detached: true });
  started.push(unmarked);
  marked(`${run}-other`, "sleep 602 & wait");
  await until("the first processes started and scanned", () =>
    markedUnder(`${run}-other`).some((p) => p.command === "sleep 602"),
  );
  expect(markedUnder(run)).toEqual([]);
  // Started after the scans above remembered the unmarked sleep: found by the next one, under the run's mark only.
  marked(`${run}/sub`, "sleep 601 & wait");
  await until("the run's process found", () => markedUnder(run).some((p) => p.command === "sleep 601"));
  expect(markedUnder(run).map((p) => p.command)).toEqual(["sh -c sleep 601 & wait", "sleep 601"]);
  // Every mark, unfiltered, lists the other run's processes too, and never the unmarked sleep.
  const all = markedProcesses().map((p) => p.command);
  expect(all).toContain("sleep 602");
  expect(all).not.toContain("sleep 600");
});

/** A host whose marked processes are given, one list per look (the last repeats). */
function hostOf(looks: MarkedProcess[][]): Host {
  let i = 0;
  return {
    marked: () => looks[Math.min(i++, looks.length - 1)],
    descendants: () => [],
    signal: () => {},
    isAlive: () => false,
  } as unknown as Host;
}

test("a process caught between setsid's exec and its command's is named by its command (keepProcesses and ended)", async () => {
  const mark = "1.s.x";
  const between = { pid: 41, mark, command: "setsid sleep 9", busy: true };
  const exec = { pid: 41, mark, command: "sleep 9", busy: false };
  for (const keep of [true, false]) {
    const found = await endLeftovers(hostOf([[between], [between], [exec]]), realClock, mark, { keep, graceMs: 50 });
    expect(found.map((p) => p.command)).toEqual(["sleep 9"]);
    expect(leftoversWarning(found, keep ? { sessionId: "s" } : undefined)).toContain("pid 41 `sleep 9`");
  }
});

test("a leftover that stays busy delays the run's end at most about a second, and is named as last seen", async () => {
  const mark = "1.s.y";
  const spin = { pid: 42, mark, command: "yes", busy: true };
  const t0 = Date.now();
  const found = await endLeftovers(hostOf([[spin]]), realClock, mark, { keep: true });
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  expect(found).toEqual([spin]);
});
