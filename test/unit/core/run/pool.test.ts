// The pool of kept children (core/run/process/pool.ts) driven by the real runner against a real child process
// (test/fake-pi/fake-pi-rpc.ts) for what a real pi will not do on demand: refuse a prompt or a session switch,
// die while idle, hang, open an editor dialog. Each case checks which process the next task runs in.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../../src/core/host.ts";
import { runChild, type RunSpec } from "../../../../src/core/run/process/runner.ts";
import { ChildPool, reuseKey, rpcArgv } from "../../../../src/core/run/process/pool.ts";
import { RpcLines } from "../../../../src/core/run/process/rpc-lines.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { NODE24, taskWhy, until } from "../../../support/pi-env.ts";

const host = createBunHost(() => {
  throw new Error("no database in pool tests");
});
const dir = mkdtempSync(join(tmpdir(), "subagents-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FAKE = join(import.meta.dir, "..", "..", "..", "fake-pi", "fake-pi-rpc.ts");

let n = 0;
function spec(pool: ChildPool, prompt: string, over: Partial<RunSpec> = {}): RunSpec {
  const sessionFile = over.sessionFile ?? join(dir, `s${++n}.jsonl`);
  return {
    argv: [process.execPath, FAKE, "-p", "--session", sessionFile],
    env: { PATH: process.env.PATH ?? "" },
    sessionFile,
    cwd: dir,
    prompt,
    transport: "compact",
    finalize: "optional",
    timeoutSec: 30,
    extendDebounceSec: 30,
    maxRuntimeSec: 60,
    loopingToolCount: 5,
    settles: true,
    killGraceMs: 500,
    ...over,
    reuse: over.reuse ?? { pool: pool.ticket(), files: [] },
  };
}
/** The pid and session a task's output names (the fake puts both in its result). */
const where = (output: string) => /\(pid (\d+), (.+)\)$/.exec(output)?.slice(1) ?? [];
const run = async (pool: ChildPool, prompt: string, over: Partial<RunSpec> = {}) => {
  const r = await runChild(host, realClock, spec(pool, prompt, over));
  return { ...r, pid: Number(where(r.output)[0] ?? 0), session: where(r.output)[1] };
};

test("tasks run one after another in one process, each in its own session; close ends it", async () => {
  const pool = new ChildPool(realClock);
  const a = await run(pool, "ok first");
  const b = await run(pool, "ok second");
  expect([a.status, b.status]).toEqual(["completed", "completed"]);
  expect(a.output).toStartWith("first");
  expect(b.pid).toBe(a.pid);
  expect(b.session).not.toBe(a.session);
  expect(`${b.session}`).toBe(`${b.sessionFile?.split("/").pop()}`);
  expect(pool.stats).toEqual({ started: 1, tasks: 2 });
  expect(host.isAlive(a.pid)).toBe(true);
  await pool.close();
  expect(host.isAlive(a.pid)).toBe(false);
});

test("a kept child's task is looked at for leftovers once, by its pool as it settles (the runner had looked again)", async () => {
  const looks: (string | undefined)[] = [];
  const counting = {
    ...host,
    marked: (run?: string) => {
      looks.push(run);
      return host.marked?.(run) ?? [];
    },
  };
  const pool = new ChildPool(realClock);
  for (const prompt of ["ok one", "ok two"]) {
    const r = await runChild(counting, realClock, spec(pool, prompt));
    expect(r.status, taskWhy(r)).toBe("completed");
  }
  // One look per task, each under that task's session mark: a scan of every process per task, not two.
  expect(looks.length).toBe(2);
  expect(new Set(looks).size).toBe(2);
  expect(looks.every((m) => /\/s[0-9a-z]+$/.test(m ?? ""))).toBe(true);
  await pool.close();
});

test("no more idle children than the call runs at once: the one idle longest ends to make room", async () => {
  const pool = new ChildPool(realClock, 1);
  const env = (tag: string) => ({ env: { PATH: process.env.PATH ?? "", TASK_KIND: tag } });
  const a = await run(pool, "ok a", env("a"));
  expect(host.isAlive(a.pid)).toBe(true);
  // Tasks that differ cannot share a process: each kind had kept one idle until the call ended.
  const b = await run(pool, "ok b", env("b"));
  expect(b.pid).not.toBe(a.pid);
  await until("the child idle longest ended once another went idle", () => !host.isAlive(a.pid));
  const again = await run(pool, "ok b again", env("b"));
  expect(again.pid).toBe(b.pid);
  expect(pool.stats).toEqual({ started: 2, tasks: 3 });
  await pool.close();
});

test("an extension's editor dialog is declined (no one is there), as in print mode", async () => {
  const pool = new ChildPool(realClock);
  const r = await run(pool, "editor");
  expect(r.output).toStartWith("editor cancelled=true");
  await pool.close();
});

test("a process that dies while idle is not given the next task", async () => {
  const pool = new ChildPool(realClock);
  const a = await run(pool, "die-idle");
  expect(a.status, taskWhy(a)).toBe("completed");
  await Bun.sleep(400);
  const b = await run(pool, "ok after");
  expect(b.status, taskWhy(b)).toBe("completed");
  expect(b.pid).not.toBe(a.pid);
  await pool.close();
});

test("a prompt pi refuses fails its task with pi's reason and ends the process; the next task gets a new one", async () => {
  const pool = new ChildPool(realClock);
  const a = await run(pool, "ok first");
  const b = await runChild(host, realClock, spec(pool, "refuse"));
  expect(b.status).toBe("error");
  expect(b.error).toContain("fake refusal: no API key");
  await Bun.sleep(200);
  expect(host.isAlive(a.pid)).toBe(false);
  const c = await run(pool, "ok third");
  expect(c.status, taskWhy(c)).toBe("completed");
  expect(c.pid).not.toBe(a.pid);
  await pool.close();
});

test("a session switch an extension cancels fails that task; a hung task is stopped by its timeout with its process", async () => {
  const pool = new ChildPool(realClock);
  const a = await run(pool, "ok first");
  const b = await runChild(host, realClock, spec(pool, "ok never", { sessionFile: join(dir, "cancel-me.jsonl") }));
  expect(b.status).toBe("error");
  expect(b.error).toContain("could not open the session");
  const c = await run(pool, "hang", { timeoutSec: 0.3, extendDebounceSec: 0 });
  expect(c.errorCode).toBe("SUBAGENT_TIMEOUT");
  const d = await run(pool, "ok last");
  expect(d.status, taskWhy(d)).toBe("completed");
  expect(new Set([a.pid, d.pid]).size).toBe(2);
  await pool.close();
  expect(host.isAlive(d.pid)).toBe(false);
});

test("only children that would start exactly alike share a process: files count by content, the session does not", () => {
  const f1 = join(dir, "p1.md");
  const f2 = join(dir, "p2.md");
  writeFileSync(f1, "same");
  writeFileSync(f2, "same");
  const start = (session: string, file: string, model = "m") => ({
    cmd: ["pi", "-p", "--session", session, "--model", model],
    cwd: dir,
    env: { PI_SUBAGENT_APPEND_PROMPT: file },
    stdin: "task",
    fd3: true,
  });
  const key = (session: string, file: string, model?: string) =>
    reuseKey(start(session, file, model), session, [file], ["same"]);
  expect(key("/s/a.jsonl", f1)).toBe(key("/s/b.jsonl", f2));
  expect(key("/s/a.jsonl", f1)).not.toBe(key("/s/b.jsonl", f2, "other"));
  expect(reuseKey(start("/s/a", f1), "/s/a", [f1], ["same"])).not.toBe(
    reuseKey(start("/s/a", f1), "/s/a", [f1], ["different"]),
  );
  // A traced task's TRACEPARENT names its own span (a kept child makes it from the session): not a difference.
  const traced = (span: string) => {
    const s = start("/s/a", f1);
    return reuseKey(
      { ...s, env: { ...s.env, TRACEPARENT: `00-${"a".repeat(32)}-${span}-01` } },
      "/s/a",
      [f1],
      ["same"],
    );
  };
  expect(traced("1".repeat(16))).toBe(traced("2".repeat(16)));
  expect(rpcArgv(["pi", "-p", "--session", "x"])).toEqual(["pi", "--mode", "rpc", "--session", "x"]);
  expect(rpcArgv(["pi", "--mode", "json", "-p"])).toBeNull();
});

test.each([
  ["Bun", process.execPath],
  ["Node 24", NODE24],
])(
  "the child's control reader (%s): only lines for its session (or naming none); after a switch, the next instance gets the next task's",
  async (_name, runtime) => {
    const listener = join(import.meta.dir, "..", "..", "..", "fixtures", "control-listener.ts");
    const proc = host.spawn({
      cmd: [runtime, listener, "/s/mine.jsonl", "/s/next.jsonl"],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", PI_SUBAGENT_CONTROL_FD: "4" },
      stdin: null,
      fd3: true,
      control: true,
    });
    const seen: Record<string, unknown>[] = [];
    const reading = (async () => {
      let buf = "";
      for await (const chunk of proc.fd3!) {
        buf += new TextDecoder().decode(chunk);
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          seen.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      }
    })();
    const until = async (p: (l: Record<string, unknown>) => boolean) => {
      while (!seen.some(p)) await Bun.sleep(20);
    };
    const send = (o: object) => proc.sendControl!(JSON.stringify(o));
    const steer = (text: string, session?: string) =>
      send({ ...(session ? { session } : {}), type: "steer", id: text, text });
    await until((l) => l.ready === "/s/mine.jsonl");
    steer("for the task before", "/s/before.jsonl");
    steer("for this task", "/s/mine.jsonl");
    steer("from an owner that names no session");
    send({ type: "hold", until: 1 });
    await until((l) => !!l.switched);
    steer("late, for the first task", "/s/mine.jsonl");
    steer("for the next task", "/s/next.jsonl");
    await proc.exited;
    await reading;
    expect(seen.filter((l) => l.delivered).map((l) => [l.delivered, l.session])).toEqual([
      ["for this task", "/s/mine.jsonl"],
      ["from an owner that names no session", "/s/mine.jsonl"],
      ["for the next task", "/s/next.jsonl"],
    ]);
  },
);

test("a kept child's RPC output: only replies and dialogs are read, whatever the chunking; long lines are passed over", () => {
  const lines = [
    JSON.stringify({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "x".repeat(300) } }),
    JSON.stringify({ id: "prompt-1", type: "response", command: "prompt", success: true }),
    JSON.stringify({ type: "agent_end", messages: [{ role: "assistant", content: "ok" }] }),
    JSON.stringify({ type: "extension_ui_request", id: "ui-1", method: "confirm", title: "Allow?" }),
    JSON.stringify({
      id: "switch-2",
      type: "response",
      command: "switch_session",
      success: false,
      error: "é".repeat(100),
    }),
    JSON.stringify({ id: "huge", type: "response", data: "y".repeat(5000) }),
    JSON.stringify({ id: "switch-3", type: "response", command: "switch_session", success: true }),
  ];
  const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
  const wanted = [lines[1], lines[3], lines[4], lines[6]];
  for (const size of [1, 2, 7, 64, 1000, bytes.length]) {
    const seen: string[] = [];
    const reader = new RpcLines((l) => seen.push(l), 1024);
    for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
    expect(seen).toEqual(wanted);
  }
});

test("a closing pool keeps an idle child for a task under way that has not leased yet, then ends the rest", async () => {
  const pool = new ChildPool(realClock);
  const a = await run(pool, "ok first");
  // The call has nothing more to start, but one task is under way (prepared, not yet spawned).
  const late = pool.ticket();
  pool.drain();
  expect(host.isAlive(a.pid)).toBe(true);
  const b = await runChild(host, realClock, spec(pool, "ok late", { reuse: { pool: late, files: [] } }));
  expect(Number(where(b.output)[0])).toBe(a.pid);
  late.done();
  // Its task over and nothing under way: the child ends.
  const deadline = Date.now() + 5000;
  while (host.isAlive(a.pid) && Date.now() < deadline) await Bun.sleep(20);
  expect(host.isAlive(a.pid)).toBe(false);
  await pool.close();
});
