// The Tasks extension's tasks (src/mcp/tasks.ts) on a stand-in run and a memory store: the handle at once, its
// progress line while it works, a child's question as an input request answered with tasks/update, the result when
// done, tasks/cancel stopping the run, the time to live, and a task another server started read back from the
// records through its index entry.
import { expect, test } from "bun:test";
import { cancelledBy } from "../../../src/core/run/process/abort-reason.ts";
import type { AskAnswer, AskRequest } from "../../../src/core/run/process/ask.ts";
import type { TaskOutcome } from "../../../src/core/run/task-types.ts";
import { MemoryStore } from "../../../src/core/store/memory-store.ts";
import { runResult } from "../../../src/core/types.ts";
import type { ToolResult } from "../../../src/mcp/protocol/wire.ts";
import { TaskIndex } from "../../../src/mcp/task-index.ts";
import { McpTasks } from "../../../src/mcp/tasks.ts";
import { standInRun } from "./stand-in.ts";

/** Files in memory: the index's host. */
function memoryFiles() {
  const files = new Map<string, string>();
  return {
    files,
    writeFile: (p: string, d: string) => void files.set(p, d),
    rename: (a: string, b: string) => {
      const d = files.get(a);
      if (d === undefined) return false;
      files.delete(a);
      files.set(b, d);
      return true;
    },
    readText: (p: string) => files.get(p) ?? null,
    remove: (p: string) => void files.delete(p),
    mkdirp: () => {},
    listDir: (dir: string) =>
      [...files.keys()]
        .filter((p) => p.startsWith(`${dir}/`))
        .map((p) => ({ name: p.slice(dir.length + 1), isFile: true, isDirectory: false })),
  };
}

const SID = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"];

const standIn = () => standInRun(SID);

const outcome = (sessionId: string, output: string): TaskOutcome => ({
  sessionId,
  name: sessionId.slice(0, 2),
  agent: "default",
  result: runResult({ status: "completed", output }),
});

const results = {
  delegate: (o: TaskOutcome[]): ToolResult => ({
    content: [{ type: "text", text: o.map((x) => x.result.output).join("|") }],
  }),
  subagent: (o: TaskOutcome[]): ToolResult => ({ content: [{ type: "text", text: o[0].result.output }] }),
};

function setup(now = { t: 1_000_000 }) {
  const fs = memoryFiles();
  const store = new MemoryStore({ isAlive: () => false });
  const index = new TaskIndex(fs, "/data");
  const cancelled: string[] = [];
  const tasks = new McpTasks({
    store,
    index,
    results,
    cancelElsewhere: async (id) => cancelled.push(id),
    ttlMs: 60_000,
    now: () => now.t,
  });
  return { fs, store, index, tasks, now, cancelled };
}

const question = (id: string, signal = new AbortController().signal): AskRequest => ({
  id,
  kind: "ask_parent",
  title: "Which design?",
  options: ["a", "b"],
  sessionId: SID[0],
  label: "t0",
  signal,
});

test("a task: its handle at once (recorded first), working with a progress line, its child's question as an input request, the answer through tasks/update, then its result", async () => {
  const { tasks, index } = setup();
  const { run, end } = standIn();
  const { task, asker } = tasks.open("delegate", SID);
  const handle = tasks.start(task, run);
  expect(handle).toMatchObject({ taskId: SID[0], status: "working", ttlMs: 60_000, pollIntervalMs: 1000 });
  expect(handle.statusMessage).toMatch(/^Sub-agents: 0 running, 0 done, 2 queued · \d+s · t0 queued, t1 queued$/);
  expect(index.read(SID[0])).toMatchObject({ kind: "delegate", sessions: SID });
  const answer = asker(question("c1"));
  const asking = tasks.get(SID[0]);
  expect(asking.status).toBe("input_required");
  expect(Object.keys(asking.inputRequests!)).toEqual(["q1"]);
  expect(asking.inputRequests!.q1.params.message).toBe(`Sub-agent t0 (session ${SID[0]}) asks: Which design? (a | b)`);
  // Keys that are not outstanding are ignored; the right one answers the child.
  tasks.update(SID[0], {
    q9: { action: "accept", content: { answer: "a" } },
    q1: { action: "accept", content: { answer: "b" } },
  });
  expect(await answer).toEqual({ value: "b" } satisfies AskAnswer);
  expect(tasks.get(SID[0]).status).toBe("working");
  end([outcome(SID[0], "one"), outcome(SID[1], "two")]);
  await run.outcomes;
  await Bun.sleep(0);
  expect(tasks.get(SID[0])).toMatchObject({ status: "completed", result: { content: [{ text: "one|two" }] } });
});

test("a question answered elsewhere leaves the task's input requests; a new one gets a new key", async () => {
  const { tasks } = setup();
  const { run } = standIn();
  const { task, asker } = tasks.open("delegate", SID);
  tasks.start(task, run);
  const closed = new AbortController();
  void asker(question("c1", closed.signal));
  expect(tasks.get(SID[0]).status).toBe("input_required");
  closed.abort();
  expect(tasks.get(SID[0]).status).toBe("working");
  void asker(question("c2"));
  expect(Object.keys(tasks.get(SID[0]).inputRequests!)).toEqual(["q2"]);
});

test("tasks/cancel stops the run with the kill protocol's cancel, and the task ends cancelled", async () => {
  const { tasks } = setup();
  const { run, aborted } = standIn();
  const { task } = tasks.open("delegate", SID);
  tasks.start(task, run);
  tasks.cancel(SID[0]);
  expect(aborted).toEqual([cancelledBy("Cancelled: the MCP client cancelled the task")]);
  await run.outcomes;
  await Bun.sleep(0);
  const t = tasks.get(SID[0]);
  expect(t.status).toBe("cancelled");
  expect(t.result).toBeUndefined();
});

test("the time to live: a task still running when it ends is cancelled and forgotten; asked for, it has expired", async () => {
  const { tasks, now, index } = setup();
  const { run, aborted } = standIn();
  const { task } = tasks.open("delegate", SID);
  tasks.start(task, run);
  now.t += 60_001;
  expect(() => tasks.get(SID[0])).toThrow("Failed to retrieve task: Task has expired");
  expect(aborted).toEqual([cancelledBy("Cancelled: its MCP task's time to live ended")]);
  expect(index.read(SID[0])).toBeNull();
  expect(() => tasks.get("cccccccccccccccc")).toThrow("Failed to retrieve task: Task not found");
  expect(() => tasks.update("cccccccccccccccc", {})).toThrow("Task not found");
});

test("a task another server started: read back from its index entry and its sessions' records, and cancelled through their owner while running", async () => {
  const { tasks, store, index, now, cancelled } = setup();
  index.write(SID[0], { kind: "delegate", sessions: SID, createdAt: now.t, ttlMs: 60_000 });
  for (const [i, id] of SID.entries()) {
    store.queueRun({ id, name: `t${i}`, agent: "default", cwd: "/" }, { prompt: "p", ownerPid: 1, name: `t${i}` });
    const runId = store.startRun(id, { prompt: "p", ownerPid: 1 });
    store.finishRun(runId, runResult({ status: "completed", output: `out ${i}` }));
  }
  expect(tasks.get(SID[0])).toMatchObject({ status: "completed", result: { content: [{ text: "out 0|out 1" }] } });
  tasks.cancel(SID[0]);
  await Bun.sleep(0);
  expect(cancelled).toEqual(SID);
});
