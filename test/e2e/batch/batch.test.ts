// `subagents batch` end to end: the compiled executable, its embedded pi as every item's child, against the scripted
// model server. A 1,000-item job (4 at once: on two cores more kept children cost more CPU per item); its owner SIGKILLed in the middle and the same command run
// again (every item one result, none that had finished ran twice); a changed prompt reruns only the items it
// changed; failures retried, then recorded; two shards merged.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { connectMcp } from "../../support/mcp-client.ts";
import { runParentPi } from "../../support/parent-pi.ts";
import { cli, piWorld, priceModel, REPO, setModels, type PiWorld, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world?.close();
});

const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

/** The model requests whose conversation names this item's marker (one per model turn of its child). */
const requestsFor = (marker: string) =>
  world.server.requests.filter((q) => JSON.stringify(q.messages ?? []).includes(marker)).length;

test("1,000 items: each one result line, resumed after the owner is SIGKILLed, none that finished ran again", async () => {
  const items = join(world.root, "thousand.jsonl");
  writeFileSync(items, Array.from({ length: 1000 }, (_, i) => JSON.stringify({ id: `k${i}`, n: i })).join("\n"));
  const out = join(world.root, "thousand-out.jsonl");
  const args = ["batch", items, "--prompt", "item {{id}} number {{n}}", "--out", out, "--concurrency", "4"];
  // The first run is killed once a fifth of the items have finished.
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), ...args, "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  await until(
    "200 result lines",
    () => {
      try {
        return lines(out).length >= 200;
      } catch {
        return false;
      }
    },
    120_000,
    50,
  );
  proc.kill("SIGKILL");
  await proc.exited;
  const before = new Map(lines(out).map((l) => [l.id, l]));
  const r = await cli(world, [...args, "--json"], { binary: true });
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  const summary = r.json.at(-1)!;
  expect(summary).toMatchObject({ type: "summary", status: "done", counts: { completed: 1000, failed: 0 } });
  const after = lines(out);
  expect(after.length).toBe(1000);
  expect(new Set(after.map((l) => l.id)).size).toBe(1000);
  for (const l of after) expect(l.result).toBe(`Done: item ${l.id} number ${l.id.slice(1)}`);
  // What had finished before the kill kept its session: it did not run again.
  for (const [id, l] of before) expect(after.find((a) => a.id === id)?.sessionId).toBe(l.sessionId);
  for (const id of [...before.keys()].slice(0, 20)) expect(requestsFor(`item ${id} number`)).toBe(1);
  // status and export read the same records.
  const status = await cli(world, ["batch", "status", r.json[0].job, "--json"], { binary: true });
  expect(status.json[0]).toMatchObject({ status: "done", counts: { completed: 1000, total: 1000 } });
  const exported = await cli(world, ["batch", "export", r.json[0].job], { binary: true });
  expect(exported.stdout.split("\n").filter(Boolean).length).toBe(1000);
}, 300_000);

test("a changed prompt reruns only the items whose prompt it changed; a CSV's quoted fields are one value", async () => {
  const items = join(world.root, "notes.csv");
  writeFileSync(items, 'id,title,note\na1,"first, with a comma",\na2,second,\na3,third,"has a ""note"""\n');
  const prompt = join(world.root, "prompt.md");
  writeFileSync(prompt, "tmpl-v1 {{title}}");
  const out = join(world.root, "notes-out.jsonl");
  const args = ["batch", items, "--prompt-file", prompt, "--out", out, "--json"];
  const first = await cli(world, args, { binary: true });
  expect(first.code, first.stderr).toBe(0);
  expect(lines(out).find((l) => l.id === "a1")?.result).toBe("Done: tmpl-v1 first, with a comma");
  const sessions = new Map(lines(out).map((l) => [l.id, l.sessionId]));
  // {{note}} is empty for a1 and a2: their prompts stay the same; a3's changes.
  writeFileSync(prompt, "tmpl-v1 {{title}}{{note}}");
  const second = await cli(world, args, { binary: true });
  expect(second.code, second.stderr).toBe(0);
  expect(second.json[0]).toMatchObject({ type: "job", job: first.json[0].job, items: 3, toRun: 1 });
  const after = lines(out);
  expect(after.map((l) => l.id)).toEqual(["a1", "a2", "a3"]);
  expect(after[0].sessionId).toBe(sessions.get("a1"));
  expect(after[1].sessionId).toBe(sessions.get("a2"));
  expect(after[2].sessionId).not.toBe(sessions.get("a3"));
  expect(after[2].result).toBe('Done: tmpl-v1 thirdhas a "note"');
}, 120_000);

test("failures worth retrying run again up to --max-attempts, then are recorded failed; --csv export", async () => {
  const items = join(world.root, "flaky.jsonl");
  const fail = (n: number) =>
    script([{ status: 400, message: `flaky-${n}`, times: n, then: { text: `ok after ${n}` } }]);
  writeFileSync(
    items,
    [
      { id: "once", task: `f1 ${fail(1)}` },
      { id: "never", task: `f9 ${fail(9)}` },
      { id: "fine", task: "plain" },
    ]
      .map((o) => JSON.stringify(o))
      .join("\n"),
  );
  const out = join(world.root, "flaky-out.jsonl");
  const r = await cli(world, ["batch", items, "--prompt", "{{task}}", "--out", out, "--max-attempts", "2", "--json"], {
    binary: true,
  });
  expect(r.code, r.stderr).toBe(1);
  expect(r.json.at(-1)).toMatchObject({ status: "done", counts: { completed: 2, failed: 1 } });
  const byId = new Map(lines(out).map((l) => [l.id, l]));
  expect(byId.get("once")).toMatchObject({ status: "completed", attempts: 2, result: "ok after 1" });
  expect(byId.get("never")).toMatchObject({ status: "failed", attempts: 2, errorCode: "SUBAGENT_FAILED" });
  expect(byId.get("never")!.error).toContain("flaky-9");
  expect(byId.get("fine")).toMatchObject({ status: "completed", attempts: 1 });
  // The same command again: the failed item has no attempts left, nothing runs.
  const again = await cli(
    world,
    ["batch", items, "--prompt", "{{task}}", "--out", out, "--max-attempts", "2", "--json"],
    {
      binary: true,
    },
  );
  expect(again.json[0]).toMatchObject({ toRun: 0 });
  expect(lines(out).length).toBe(3);
  const csv = await cli(world, ["batch", "export", r.json[0].job, "--csv"], { binary: true });
  const rows = csv.stdout.trim().split("\n");
  expect(rows[0]).toBe("id,status,attempts,result,data,error,sessionId,tokens,cost");
  expect(rows.find((l) => l.startsWith("never,failed,2,"))).toBeTruthy();
}, 120_000);

test("two shards, each a job of its own, merged into one line per id", async () => {
  const items = join(world.root, "sharded.jsonl");
  writeFileSync(items, Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `s${i}` })).join("\n"));
  const runs = await Promise.all(
    [1, 2].map((i) =>
      cli(
        world,
        ["batch", items, "--prompt", "shard item {{id}}", "--shard", `${i}/2`, "--out", `${items}.out.${i}`, "--json"],
        {
          binary: true,
        },
      ),
    ),
  );
  for (const r of runs) expect(r.code, r.stderr).toBe(0);
  expect(runs[0].json[0].job).not.toBe(runs[1].json[0].job);
  const sizes = runs.map((r) => r.json.at(-1)!.counts.total as number);
  expect(sizes[0] + sizes[1]).toBe(12);
  expect(Math.min(...sizes)).toBeGreaterThan(0);
  const merged = join(world.root, "merged.jsonl");
  const m = await cli(world, ["batch", "merge", `${items}.out.1`, `${items}.out.2`, "--out", merged], { binary: true });
  expect(m.code, m.stderr).toBe(0);
  const all = lines(merged);
  expect(all.map((l) => l.id).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `s${i}`).sort());
  expect(all.every((l) => l.status === "completed")).toBe(true);
}, 120_000);

test("subagent_batch over MCP (named in subagents.tools): start in the background, status and export by job id; the CLI sees the same job", async () => {
  world.setSubagentSettings({
    tools: [
      "delegate_to_subagents",
      "get_subagent_output",
      "get_subagent_session",
      "list_subagent_profiles",
      "subagent",
      "subagent_batch",
    ],
  });
  const items = join(world.root, "mcp-items.jsonl");
  // m4 answers with the span id of the TRACEPARENT its bash sees: with tracing off, the batch process's own.
  const traced = script([
    { tool: "bash", args: { command: "printenv TRACEPARENT" } },
    { finalize: { status: "SUCCESS", result: "{{lastSessionId}}" } },
  ]);
  writeFileSync(
    items,
    [...["m1", "m2", "m3"].map((id) => ({ id, task: `mcp item ${id}` })), { id: "m4", task: traced }]
      .map((o) => JSON.stringify(o))
      .join("\n"),
  );
  const c = await connectMcp(world);
  try {
    const text = (r: any) => String(r.content?.[0]?.text ?? "");
    const started: any = await c.client.callTool({
      name: "subagent_batch",
      arguments: { action: "start", items, prompt: "{{task}}", job: "from-mcp" },
      // The client's trace: the job's process continues it (as a call over MCP does).
      _meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    expect(started.isError, text(started)).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ job: "from-mcp", items: 4 });
    const done = await until("the job done", async () => {
      const s: any = await c.client.callTool({
        name: "subagent_batch",
        arguments: { action: "status", job: "from-mcp" },
      });
      // Done, not only its items: the owner records the job's end after its kept children have ended.
      return s.structuredContent?.status === "done" ? s : null;
    });
    expect(text(done)).toContain("batch from-mcp");
    expect(done.structuredContent.counts).toMatchObject({ completed: 4, total: 4 });
    const exported: any = await c.client.callTool({
      name: "subagent_batch",
      arguments: { action: "export", job: "from-mcp" },
    });
    expect(
      text(exported)
        .split("\n")
        .map((l) => JSON.parse(l).result),
    ).toEqual(["Done: mcp item m1", "Done: mcp item m2", "Done: mcp item m3", "00f067aa0ba902b7"]);
    const status = await cli(world, ["batch", "status", "from-mcp", "--json"], { binary: true });
    expect(status.json[0]).toMatchObject({ job: "from-mcp", status: "done", counts: { completed: 4 } });
  } finally {
    await c.close();
    world.setSubagentSettings({});
  }
}, 120_000);

test("--max-cost for the job: no item starts once it is spent, and it says so; the same command with more budget goes on", async () => {
  priceModel(world, { input: 1000, output: 1000 });
  try {
    const items = join(world.root, "priced.jsonl");
    writeFileSync(items, Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `p${i}` })).join("\n"));
    const args = (budget: string) => [
      "batch",
      items,
      "--prompt",
      "priced {{id}}",
      "--concurrency",
      "1",
      "--max-cost",
      budget,
      "--json",
    ];
    const first = await cli(world, args("0.5"), { binary: true });
    expect(first.code, first.stderr).toBe(1);
    const summary = first.json.at(-1)!;
    expect(summary.status).toBe("stopped");
    expect(summary.stoppedBy).toContain("budget of $0.5 is spent");
    expect(summary.counts.pending).toBeGreaterThan(0);
    expect(summary.counts.completed).toBeGreaterThan(0);
    const second = await cli(world, args("1000"), { binary: true });
    expect(second.code, second.stderr).toBe(0);
    expect(second.json.at(-1)).toMatchObject({ status: "done", counts: { completed: 12, pending: 0 } });
    // The items' spend is their sessions' spend: the figures `subagents usage` adds up (every priced run is this job's).
    const exported = await cli(world, ["batch", "export", first.json[0].job], { binary: true });
    const itemsCost = exported.stdout
      .trim()
      .split("\n")
      .reduce((n, l) => n + JSON.parse(l).cost, 0);
    const usage = await cli(world, ["usage", "--json"], { binary: true });
    const runsCost = usage.json.reduce((n, r) => n + r.cost, 0);
    expect(itemsCost).toBeGreaterThan(0.5);
    expect(itemsCost).toBeCloseTo(runsCost, 6);
  } finally {
    setModels(world, [{ id: "fake-model" }]);
  }
}, 120_000);

test("--background: returns once the job is recorded, with its id; the detached run finishes it", async () => {
  const items = join(world.root, "bg.jsonl");
  writeFileSync(items, ["b1", "b2"].map((id) => JSON.stringify({ id })).join("\n"));
  const r = await cli(world, ["batch", items, "--prompt", "bg {{id}}", "--background", "--json"], { binary: true });
  expect(r.code, r.stderr).toBe(0);
  const { job, log } = r.json[0];
  expect(r.json[0]).toMatchObject({ type: "job", background: true });
  const done = await until("the background job done", async () => {
    const s = await cli(world, ["batch", "status", job, "--json"], { binary: true });
    return s.json[0]?.status === "done" ? s.json[0] : null;
  });
  expect(done.counts, readFileSync(log, "utf8")).toMatchObject({ completed: 2 });
}, 120_000);

test("subagent_batch inside pi (named in subagents.tools): a start from a parent pi's model runs the job, status reports it", async () => {
  world.setSubagentSettings({
    tools: ["delegate_to_subagents", "get_subagent_output", "subagent_batch"],
  });
  const items = join(world.root, "pi-items.jsonl");
  writeFileSync(items, ["q1", "q2"].map((id) => JSON.stringify({ id })).join("\n"));
  try {
    const r = await runParentPi(world, {
      runtime: "bun",
      steps: [
        { tool: "subagent_batch", args: { action: "start", items, prompt: "pi item {{id}}", job: "from-pi" } },
        // The job runs in a process of its own: wait for its records to say done, then ask for its status.
        {
          tool: "bash",
          args: {
            command: `for i in $(seq 1 600); do ${join(REPO, "dist", "subagents")} batch status from-pi | grep -q ': done' && break; sleep 0.1; done`,
          },
        },
        { tool: "subagent_batch", args: { action: "status", job: "from-pi" } },
        { text: "parent done" },
      ],
    });
    const [start, status] = r.results.filter((x) => x.toolName === "subagent_batch");
    expect(start?.isError, r.stderr).toBe(false);
    expect(start.text).toContain("Batch from-pi started in the background (2 items)");
    expect(status.text).toContain("batch from-pi: done");
    expect(status.details.counts).toMatchObject({ completed: 2 });
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);
