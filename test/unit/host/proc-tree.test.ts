// Finding a process's descendants (kill protocol, second Ctrl-C): the fast walk down our own subtree must find
// exactly what the full /proc scan finds, grandchildren in their own process groups included.
import { expect, test } from "bun:test";
import { descendantsByScan, descendantsOf } from "../../../src/host/proc-tree.ts";

test("the walk down /proc/<pid>/task/*/children finds the same tree as the full scan", async () => {
  // bash → (setsid sleep) and bash → bash → sleep: a detached process group and two levels.
  const proc = Bun.spawn({
    cmd: ["bash", "-c", "setsid sleep 30 & bash -c 'sleep 30 & wait' & echo ready; wait"],
    stdout: "pipe",
  });
  try {
    const reader = proc.stdout.getReader();
    await reader.read();
    let found: number[] = [];
    for (let i = 0; i < 50 && found.length < 3; i++) {
      await Bun.sleep(20);
      found = descendantsOf(proc.pid);
    }
    expect(found.length).toBe(3);
    expect([...found].sort()).toEqual([...descendantsByScan(proc.pid)].sort());
    expect(descendantsOf(process.pid)).toContain(proc.pid);
  } finally {
    for (const pid of [...descendantsOf(proc.pid), proc.pid]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
  await proc.exited;
});
