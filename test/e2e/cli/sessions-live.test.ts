// Session lookups against the REAL pi: the latest run names the session, and a session still running already
// shows what its child has done so far (the runner checkpoints messages into the store while it runs).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { BUN, cli, piWorld, REPO, type PiWorld, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("a resumed session is named by its latest run's task", async () => {
  const first = await cli(world, [
    "delegate",
    "--name",
    "first-name",
    `one ${script([{ text: "one done" }])}`,
    "--json",
  ]);
  const id = first.json.at(-1)!.tasks[0].sessionId;
  await cli(world, [
    "delegate",
    "--name",
    "second-name",
    "--resume",
    id,
    `two ${script([{ text: "two done" }])}`,
    "--json",
  ]);
  const s = await cli(world, ["session", id, "--json"]);
  expect(s.json[0]).toMatchObject({ taskName: "second-name", runCount: 2 });
}, 60_000);

test("a running session's transcript shows what has happened so far", async () => {
  const marker = `live-${Date.now()}`;
  const proc = Bun.spawn({
    cmd: [
      BUN,
      join(REPO, "src", "cli", "main.ts"),
      "run",
      "default",
      `go ${script([{ tool: "bash", args: { command: `echo ${marker}; sleep 4` } }, { text: "slept" }])}`,
      "--json",
    ],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  let buffered = "";
  let id = "";
  while (!id) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += new TextDecoder().decode(value);
    id = /"type":"task_start"[^\n]*"sessionId":"([0-9a-f]{16})"/.exec(buffered)?.[1] ?? "";
  }
  expect(id).not.toBe("");
  let transcript = "";
  for (let i = 0; i < 40 && !transcript.includes("→ bash"); i++) {
    await Bun.sleep(200);
    const s = await cli(world, ["session", id, "--json"]);
    expect(s.json[0].status).toBe("running");
    transcript = s.json[0].transcript;
  }
  // The task and the bash call are there while `sleep 4` still runs.
  expect(transcript).toContain("go [[script:");
  expect(transcript).toContain(`→ bash: {"command":"echo ${marker}; sleep 4"}`);
  reader.releaseLock();
  await proc.exited;
}, 60_000);

test("a pi call's queued tasks are listed by name before they start, can be cancelled there, and are gone after the call", async () => {
  const { runParentPi } = await import("../../support/parent-pi.ts");
  world.setSubagentSettings({ concurrency: 1 });
  try {
    const marker = `queued-${Date.now()}`;
    // The first task holds the queue until the test lets it go: nothing here depends on how fast the machine is.
    const release = join(world.root, `release-${marker}`);
    const tasks = ["first", "second", "third"].map((n) => ({
      name: `${n}-${marker}`,
      prompt: `${n} ${script(n === "first" ? [{ tool: "bash", args: { command: `until [ -e ${release} ]; do sleep 0.1; done` } }, { text: "first done" }] : [{ text: `${n} done` }])}`,
    }));
    const parent = runParentPi(world, {
      runtime: "node",
      steps: [{ tool: "delegate_to_subagents", args: { tasks } }, { text: "parent done" }],
    });
    const shape = (rows: Record<string, any>[]) =>
      rows
        .map((r) => `${String(r.name).split("-")[0]}:${r.status}:${r.role}`)
        .sort()
        .join(" ");
    let rows: Record<string, any>[] = [];
    await until(
      () => `the first task running and two queued; sessions --running: ${shape(rows)}`,
      async () => {
        rows = (await cli(world, ["sessions", "--running", "--json"])).json.filter((r) =>
          String(r.name).endsWith(marker),
        );
        return shape(rows) === "first:running:pi second:queued:pi third:queued:pi";
      },
    );
    // A queued task is cancelled from another terminal before it starts.
    const third = rows.find((r) => String(r.name).startsWith("third"))!;
    expect((await cli(world, ["cancel", third.id])).code).toBe(0);
    writeFileSync(release, "");
    const { code, results } = await parent;
    expect(code).toBe(0);
    const text = results.find((r) => r.toolName === "delegate_to_subagents")!.text;
    expect(text).toContain("second done");
    expect(text).not.toContain("third done");
    expect(text).toContain(`third-${marker}: error — Cancelled before it started`);
    const ended = (await cli(world, ["session", third.id, "--json"])).json[0];
    expect(ended.status).toBe("error");
    expect(ended.transcript).toContain("Cancelled before it started");
    expect((await cli(world, ["sessions", "--running"])).stdout.trim()).toBe("Nothing is running.");
  } finally {
    world.setSubagentSettings({});
  }
}, 90_000);
