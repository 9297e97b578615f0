// A batch job's pure parts (template, shards, job ids, how an attempt counts) and its records: what a resumed run
// keeps, reruns and retries (core/batch/, core/store/batch-records.ts), on a real SQLite store.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attemptEnd, deriveJobId, inShard, itemKey, parseShard } from "../../../../src/core/batch/job.ts";
import { betterLine, type ItemLine } from "../../../../src/core/batch/lines.ts";
import { countShards, recordItems } from "../../../../src/core/batch/record-items.ts";
import { missingColumns, renderPrompt, templateColumns } from "../../../../src/core/batch/template.ts";
import { Store } from "../../../../src/core/store/store.ts";
import { emptyUsage, runResult } from "../../../../src/core/types.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { jobStatus, progressLines, rateOf, statusLines } from "../../../../src/ui/batch-summary.ts";
import { plainStyle } from "../../../../src/ui/windows.ts";

const open = bunDbOpener(Database);
// One folder for the file's stores, removed at its end (each store had left a folder in /tmp).
const dir = mkdtempSync(join(tmpdir(), "subagents-batch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let stores = 0;
const store = (alive = false) => new Store(open(join(dir, `s${++stores}.db`)), { isAlive: () => alive });

test("the template: {{column}} takes the item's value (JSON for non-strings), {{id}} the id; missing fields are named", () => {
  expect(templateColumns("a {{x}} b {{ y }} {{x}}")).toEqual(["x", "y"]);
  expect(renderPrompt("{{id}}: {{title}} {{n}} {{tags}} [{{none}}]", { title: "T", n: 3, tags: ["a"] }, "7")).toBe(
    '7: T 3 ["a"] []',
  );
  expect(renderPrompt("{{id}}", { id: "own" }, "line-3")).toBe("own");
  expect(missingColumns("{{id}} {{title}} {{body}}", { title: "x" })).toEqual(["body"]);
});

test("shards split any ids into disjoint parts covering all; --shard is checked; job ids are stable", async () => {
  const ids = Array.from({ length: 200 }, (_, i) => `item-${i}`);
  const parts = [1, 2, 3].map((index) => ids.filter((id) => inShard(id, { index, count: 3 })));
  expect(parts.reduce((n, p) => n + p.length, 0)).toBe(200);
  for (const p of parts) expect(p.length).toBeGreaterThan(40);
  expect(parseShard("2/4")).toEqual({ index: 2, count: 4 });
  for (const bad of ["0/2", "3/2", "x", "1/0"]) expect(typeof parseShard(bad)).toBe("string");
  expect(deriveJobId("/d/issues.jsonl", "p")).toBe(deriveJobId("/d/issues.jsonl", "p"));
  expect(deriveJobId("/d/issues.jsonl", "p")).toMatch(/^issues-[0-9a-f]{8}$/);
  expect(deriveJobId("/d/issues.jsonl", "q")).not.toBe(deriveJobId("/d/issues.jsonl", "p"));
  expect(deriveJobId("/d/issues.jsonl", "p", { index: 1, count: 2 })).toMatch(/\.1of2$/);
  expect(await itemKey("p", "a", "m", null)).not.toBe(await itemKey("p", "a", "m2", null));
});

test("an attempt's end: completed; worth retrying while attempts are left; a child's own ERROR is final; a stop or the job's budget puts it back uncounted", () => {
  const outcome = (r: Parameters<typeof runResult>[0]) => ({
    sessionId: "s",
    name: "n",
    agent: "a",
    result: runResult(r),
  });
  const o = { maxAttempts: 3, stopping: false, budgetSpent: false };
  expect(attemptEnd(outcome({ status: "completed", output: "ok", structured: { a: 1 } }), 1, o).end).toMatchObject({
    status: "completed",
    result: "ok",
    data: { a: 1 },
  });
  const failed = outcome({ status: "error", error: "503", errorCode: "SUBAGENT_FAILED" });
  expect(attemptEnd(failed, 2, o).end.status).toBe("pending");
  expect(attemptEnd(failed, 3, o).end.status).toBe("failed");
  const said = outcome({ status: "error", error: "no", errorCode: "SUBAGENT_FAILED", finalize: { status: "ERROR" } });
  expect(attemptEnd(said, 1, o).end.status).toBe("failed");
  expect(attemptEnd(outcome({ status: "error", errorCode: "GATE_FAILED" }), 1, o).end.status).toBe("failed");
  expect(attemptEnd(failed, 3, { ...o, stopping: true })).toMatchObject({ end: { status: "pending" }, uncount: true });
  const cut = outcome({ status: "error", errorCode: "BUDGET_EXCEEDED" });
  expect(attemptEnd(cut, 1, { ...o, budgetSpent: true })).toMatchObject({ end: { status: "pending" }, uncount: true });
  // Put back, not failed: no error is kept ("Cancelled" had been listed among the job's failures).
  const stopped = attemptEnd(outcome({ status: "error", error: "Cancelled", errorCode: "SUBAGENT_CANCELLED" }), 1, {
    ...o,
    stopping: true,
  });
  expect(stopped.end.error).toBeUndefined();
  expect(stopped.end.errorCode).toBeUndefined();
  expect(attemptEnd(cut, 1, { ...o, budgetSpent: true }).end.error).toBeUndefined();
});

const entries = async function* (items: Record<string, unknown>[]) {
  for (const [i, values] of items.entries()) yield { values, line: i + 1 };
};
const spec = { template: "do {{id}} {{v}}", idColumn: "id" };
const keyOf = { agent: "default", model: "", schema: null };

test("records: a resumed job keeps what is done with the same key, reruns a changed item, drops a removed one, refuses an id twice", async () => {
  const s = store();
  const b = s.batches;
  const owner = { pid: 1, start: null };
  const pass1 = b.claim("j", "/items", {}, owner);
  expect(pass1).toEqual({ pass: 1 });
  const first = [
    { id: "a", v: 1 },
    { id: "b", v: 2 },
    { id: "c", v: 3 },
  ];
  expect(await recordItems(b, "j", 1, entries(first), spec, keyOf, "items")).toEqual({ count: 3 });
  for (const id of ["a", "b"]) {
    b.start("j", id, `s-${id}`);
    b.finish("j", id, { status: "completed", result: `r-${id}`, usage: { ...emptyUsage(), cost: 0.5 } });
  }
  b.release("j", "stopped");
  const pass2 = b.claim("j", "/items", {}, owner) as { pass: number };
  // b changed, c removed, d new.
  const second = [
    { id: "a", v: 1 },
    { id: "b", v: 20 },
    { id: "d", v: 4 },
  ];
  expect(await recordItems(b, "j", pass2.pass, entries(second), spec, keyOf, "items")).toEqual({ count: 3 });
  b.prepareRun("j", pass2.pass, { maxAttempts: 3, retryable: ["SUBAGENT_FAILED"] });
  const items = b.page("j", 0, 10);
  expect(items.map((i) => [i.id, i.status, i.attempts])).toEqual([
    ["a", "completed", 1],
    ["b", "pending", 0],
    ["d", "pending", 0],
  ]);
  expect(items[0]).toMatchObject({ result: "r-a", sessionId: "s-a", cost: 0.5 });
  expect(items[1].result).toBeUndefined();
  expect(b.counts("j")).toMatchObject({ completed: 1, pending: 2, total: 3, cost: 0.5 });
  const twice = await recordItems(
    b,
    "j",
    pass2.pass + 1,
    entries([
      { id: "x", v: 1 },
      { id: "x", v: 2 },
    ]),
    spec,
    keyOf,
    "f",
  );
  expect(twice).toEqual({
    refusal: { code: "INVALID_INPUT", message: expect.stringContaining('"x" appears more than once') },
  });
  const typo = await recordItems(b, "j", 9, entries([{ id: "y" }]), { ...spec, template: "{{titel}}" }, keyOf, "f");
  expect("refusal" in typo && typo.refusal.message).toContain(
    "uses {{titel}}, which the first item (line 1) does not have",
  );
  // An item without an id is named by its line: the refusal says so when it meets an item whose id that is.
  const clash = await recordItems(b, "j", 10, entries([{ id: "2", v: 0 }, { v: 1 }]), spec, keyOf, "f");
  expect("refusal" in clash && clash.refusal.message).toContain(
    'item id "2" appears more than once (ids name items; see --id; an item without "id" is named by its line number)',
  );
});

test("records: a file without items is refused, and the job keeps every item and result it had", async () => {
  const b = store().batches;
  b.claim("e", "/items", {}, { pid: 1, start: null });
  await recordItems(
    b,
    "e",
    1,
    entries([
      { id: "a", v: 1 },
      { id: "b", v: 2 },
    ]),
    spec,
    keyOf,
    "items",
  );
  b.prepareRun("e", 1, { maxAttempts: 3, retryable: [] });
  b.start("e", "a", "s-a");
  b.finish("e", "a", { status: "completed", result: "kept", usage: emptyUsage() });
  b.release("e", "stopped");
  // The same command over a file emptied meanwhile (a truncated copy, a regenerating pipeline): it had dropped every
  // item, results included, and exited 0.
  const empty = await recordItems(b, "e", 2, entries([]), spec, keyOf, "items.jsonl");
  expect("refusal" in empty && empty.refusal.message).toContain("items.jsonl has no items");
  expect(b.page("e", 0, 10).map((i) => [i.id, i.status, i.result])).toEqual([
    ["a", "completed", "kept"],
    ["b", "pending", undefined],
  ]);
});

test("submit checks the items as every shard would, before any node starts, and counts each shard's share", async () => {
  const items = Array.from({ length: 50 }, (_, i) => ({ id: `i${i}`, v: i }));
  const counted = await countShards(entries(items), spec, 3, "f");
  if (!("perShard" in counted)) throw new Error(JSON.stringify(counted));
  expect(counted.perShard).toEqual(
    [1, 2, 3].map((index) => items.filter((x) => inShard(x.id, { index, count: 3 })).length),
  );
  // Refused here, not by each array task on the cluster: an id twice (in any shards), a typo, an empty file.
  const twice = await countShards(entries([...items, { id: "i7", v: 0 }]), spec, 3, "f");
  expect("refusal" in twice && twice.refusal.message).toContain('item id "i7" appears more than once');
  const typo = await countShards(entries(items), { ...spec, template: "{{titel}}" }, 3, "f");
  expect("refusal" in typo && typo.refusal.message).toContain("uses {{titel}}");
  const empty = await countShards(entries([]), spec, 3, "f");
  expect("refusal" in empty && empty.refusal.message).toContain("f has no items");
});

test("status of a submitted job: its shards' results against each shard's share, running while Slurm lists it", () => {
  const b = store().batches;
  b.submitted("sl", "/i.jsonl", {}, { jobId: "61", shards: 2, out: "/r/out.jsonl", items: [3, 2] });
  const job = b.job("sl")!;
  const shard = (index: number, completed: number, failed: number) => ({
    index,
    file: `/r/out.jsonl.${index}`,
    written: completed + failed > 0,
    completed,
    failed,
    cost: 0.25 * (completed + failed),
    failures: failed ? [{ id: `x${index}`, error: "boom", attempts: 3 }] : [],
  });
  const running = jobStatus(b, job, job.updatedAt + 10_000, {
    state: { running: 1, pending: 1 },
    shards: [shard(1, 2, 1), shard(2, 0, 0)],
  });
  expect(running).toMatchObject({ status: "submitted", live: true, etaSec: 7 });
  expect(running.counts).toMatchObject({ completed: 2, failed: 1, pending: 2, total: 5, cost: 0.75 });
  const lines = statusLines(job, running, plainStyle);
  expect(lines[1]).toContain("3/5 60%");
  expect(lines.slice(2)).toEqual([
    "  slurm job 61: 1 running, 1 queued",
    "  shard 1/2: 3/3  ✓ 2  ✗ 1  → /r/out.jsonl.1",
    "  shard 2/2: no results yet  → /r/out.jsonl.2",
    "  ✗ x1 (failed, attempt 3): boom",
  ]);
  const ended = (shards: ReturnType<typeof shard>[]) => jobStatus(b, job, job.updatedAt, { state: "ended", shards });
  expect(ended([shard(1, 3, 0), shard(2, 2, 0)]).status).toBe("done");
  expect(ended([shard(1, 3, 0), shard(2, 0, 0)])).toMatchObject({ status: "stopped", etaSec: null });
});

test("status of a job nobody runs: what its dead owner left running waits again, no ETA; a stop is not a failure", () => {
  const b = store(false).batches;
  b.claim("s", "/i.jsonl", {}, { pid: 5, start: null });
  b.record(
    "s",
    1,
    ["a", "b", "c", "d"].map((id, i) => ({ id, seq: i + 1, key: id, prompt: id })),
  );
  b.start("s", "a", "s-a");
  b.finish("s", "a", { status: "failed", error: "real failure", errorCode: "LOOP_DETECTED", usage: emptyUsage() });
  b.start("s", "b", "s-b");
  b.finish("s", "b", { status: "pending", usage: emptyUsage() }, true);
  b.start("s", "c", "s-c");
  const job = b.job("s")!;
  const v = jobStatus(b, job, job.updatedAt + 60_000);
  expect(v).toMatchObject({ status: "stopped", live: false, etaSec: null });
  expect(v.counts).toMatchObject({ pending: 3, running: 0, failed: 1 });
  expect(v.failures.map((f) => f.id)).toEqual(["a"]);
  const lines = statusLines(job, v, plainStyle);
  expect(lines[0]).toBe("batch s: stopped · /i.jsonl");
  expect(lines[1]).not.toContain("ETA");
  expect(lines.slice(2)).toEqual(["  ✗ a (failed, attempt 1): real failure"]);
});

test("records: in flight when the owner died runs again; failures worth retrying while attempts last; a live owner keeps the job", async () => {
  const b = store().batches;
  b.claim("k", "/i", {}, { pid: 2, start: null });
  await recordItems(
    b,
    "k",
    1,
    entries([{ id: "run" }, { id: "flaky" }, { id: "spent" }, { id: "bad" }]),
    { ...spec, template: "do {{id}}" },
    keyOf,
    "i",
  );
  b.start("k", "run", "s1");
  const fail = (id: string, code: string, times: number) => {
    for (let n = 0; n < times; n++) {
      b.start("k", id, `s-${id}-${n}`);
      b.finish("k", id, { status: "failed", error: "e", errorCode: code, usage: emptyUsage() });
    }
  };
  fail("flaky", "SUBAGENT_FAILED", 1);
  fail("spent", "SUBAGENT_FAILED", 3);
  fail("bad", "GATE_FAILED", 1);
  b.prepareRun("k", 1, { maxAttempts: 3, retryable: ["SUBAGENT_FAILED"] });
  const status = Object.fromEntries(b.page("k", 0, 10).map((i) => [i.id, i.status]));
  expect(status).toEqual({ run: "pending", flaky: "pending", spent: "failed", bad: "failed" });
  b.prepareRun("k", 1, { maxAttempts: 3, retryable: ["SUBAGENT_FAILED"], retryFailed: true });
  expect(b.item("k", "bad")).toMatchObject({ status: "pending", attempts: 0 });
  // Another process claims a job whose owner is alive: refused with that owner.
  const live = store(true).batches;
  live.claim("m", "/i", {}, { pid: 3, start: null });
  expect(live.claim("m", "/i", {}, { pid: 4, start: null })).toEqual({ busy: { pid: 3, start: null } });
});

test("merging lines: a finished one over one that is not, completed over failed", () => {
  const l = (status: ItemLine["status"]) =>
    ({ id: "x", status, attempts: 1, usage: emptyUsage(), cost: 0 }) as ItemLine;
  expect(betterLine(l("failed"), l("completed")).status).toBe("completed");
  expect(betterLine(l("completed"), l("failed")).status).toBe("completed");
  expect(betterLine(l("pending"), l("failed")).status).toBe("failed");
});

test("the live summary: one bar and counts line, the running items that fit, the last failures, why items stopped", () => {
  const counts = { pending: 370, running: 3, completed: 600, failed: 27, total: 1000, cost: 0.42, endedThisRun: 100 };
  const progress = {
    job: "labels",
    counts,
    running: new Map(
      ["a", "b", "c"].map((id, i) => [
        id,
        { id, sessionId: id, attempt: i === 2 ? 2 : 1, startedAt: 0, activity: "reading" },
      ]),
    ),
    failures: [{ id: "x9", error: "503 \u001b[31mbusy", final: false }],
    startedAt: 0,
    live: new Map([["a", 0.01]]),
    stoppedBy: "the job's budget of $1 is spent",
  };
  const lines = progressLines(progress, 10_000, 120, 5, plainStyle);
  expect(lines[0]).toContain("batch labels");
  expect(lines[0]).toContain("627/1000 62%");
  expect(lines[0]).toContain("10.0/s");
  expect(lines[0]).toContain("ETA 37s");
  expect(lines[0]).toContain("$0.4300");
  // Five rows: the counts, one running and "… 2 more", the failure, the stop.
  expect(lines.length).toBe(5);
  expect(lines[1]).toContain("● a  10s  reading");
  expect(lines.join("\n")).toContain("… 2 more running");
  expect(lines.join("\n")).toContain("✗ x9: 503 busy (to retry)");
  expect(lines.at(-1)).toContain("no more items start: the job's budget of $1 is spent");
  expect(rateOf({ ...counts, pending: 0, running: 0 }, 1000).etaSec).toBe(0);
});
