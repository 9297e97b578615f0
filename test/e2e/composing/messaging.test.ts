// Siblings of one call message each other (core/team.ts, docs/messaging.md): real pi children driven by the
// scripted model. A recipient waits in a bash loop the test controls, so the message is known to arrive while a
// tool call runs and must reach its next model request, framed with its sender.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, summaryOf, taskWhy, until, type PiWorld } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(() => world.close());

/** A running CLI whose --json lines are read as they come. */
function startCli(args: string[]) {
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), ...args],
    cwd: world.workDir,
    env: world.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: Record<string, any>[] = [];
  const stderr = new Response(proc.stderr).text();
  const read = (async () => {
    let buf = "";
    for await (const c of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(c);
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("{")) lines.push(JSON.parse(line));
      }
    }
  })();
  return {
    proc,
    lines,
    async done() {
      const code = await proc.exited;
      await read;
      return { code, json: lines, stderr: await stderr };
    },
  };
}

const wait = (file: string) => ({
  tool: "bash",
  args: { command: `until [ -e "${file}" ]; do sleep 0.1; done; echo go` },
});
const send = (to: string, message: string) => ({ tool: "send_message", args: { to, message } });
const done = (result: string) => ({ finalize: { status: "SUCCESS", result } });
const task = (marker: string, steps: ScriptStep[]) => `${marker} ${script(steps)}`;
const touch = (file: string) => writeFileSync(file, "");

/** The model requests of the task whose prompt starts with `marker`, in order. */
const requestsOf = (marker: string) =>
  world.server.requests.filter((q) => {
    const first = (q.messages ?? []).find((m) => m.role === "user");
    return !!first && messageText(first).startsWith(marker);
  });
const userTexts = (q: (typeof world.server.requests)[number] | undefined) =>
  (q?.messages ?? []).filter((m) => m.role === "user").map(messageText);
const toolTexts = (q: (typeof world.server.requests)[number] | undefined) =>
  (q?.messages ?? []).filter((m) => m.role === "tool").map(messageText);
const toolNames = (q: (typeof world.server.requests)[number] | undefined) =>
  (q?.tools ?? []).map((t) => t.function?.name ?? "");

test("delegate: a message reaches a sibling at its next turn with its sender; '*' reaches every running sibling; an unknown or finished name fails naming the running siblings; --json and `session` show it", async () => {
  const f = (n: string) => join(world.root, `team1-${n}`);
  const a = task("msg-a", [
    wait(f("a1")),
    send("zed", "hello"),
    send("b", "the API changed: use /v2"),
    send("*", "scouting done"),
    wait(f("a2")),
    send("b", "too late"),
    done("a done"),
  ]);
  const b = task("msg-b", [wait(f("b")), done("b done")]);
  const c = task("msg-c", [wait(f("c")), done("c done")]);
  const run = startCli([
    "delegate",
    "--json",
    "--concurrency",
    "3",
    "--name",
    "a",
    "--name",
    "b",
    "--name",
    "c",
    a,
    b,
    c,
  ]);
  // b and c are in their bash loops: a goes on.
  await until(
    "b and c to make their first request",
    () => requestsOf("msg-b").length >= 1 && requestsOf("msg-c").length >= 1,
  );
  touch(f("a1"));
  await until("a to have sent its three messages", () => requestsOf("msg-a").length >= 5);
  touch(f("b"));
  await until("b to end", () => run.lines.find((l) => l.type === "task_end" && l.task === "b"));
  touch(f("a2"));
  await until("a to have sent to b after it ended", () => requestsOf("msg-a").length >= 7);
  touch(f("c"));
  const r = await run.done();
  expect(r.code, r.stderr).toBe(0);
  const [ta, tb, tc] = summaryOf(r.json);
  for (const t of [ta, tb, tc]) expect(t.status, taskWhy(t, r)).toBe("completed");

  // The sender's tool calls and what each returned.
  const aResults = toolTexts(requestsOf("msg-a").at(-1));
  expect(aResults[1]).toContain('Not sent: no sibling is named "zed". Running siblings: b, c.');
  expect(aResults[2]).toBe("Sent to b (delivered at its next turn).");
  expect(aResults[3]).toBe("Sent to b, c (delivered at their next turn).");
  expect(aResults[5]).toContain("Not sent: b has finished. Running siblings: c.");
  // The recipient's next request after its bash call holds the messages, framed with the sender.
  const bReqs = requestsOf("msg-b");
  expect(userTexts(bReqs[0]).length).toBe(1);
  // Both arrived during one bash call: they go in together, as one message at the turn's end (pi would otherwise
  // deliver one steer per turn).
  expect(userTexts(bReqs[1]).slice(1)).toEqual([
    "Message from sibling a: the API changed: use /v2\n\nMessage from sibling a: scouting done",
  ]);
  expect(bReqs.length).toBe(2);
  expect(userTexts(requestsOf("msg-c")[1]).slice(1)).toEqual(["Message from sibling a: scouting done"]);
  // Who is on the team: the prompt names the siblings, the tool is offered.
  const aFirst = userTexts(requestsOf("msg-a")[0])[0];
  expect(aFirst).toContain('You are "a", one of 3 sub-agents');
  expect(aFirst).toContain("- b: msg-b [[script:");
  expect(aFirst).toContain("- c: msg-c");
  expect(toolNames(requestsOf("msg-a")[0])).toContain("send_message");
  // --json: one sibling_message per delivery.
  const events = r.json.filter((l) => l.type === "sibling_message").map((l) => [l.task, l.from, l.to, l.text]);
  expect(events).toContainEqual(["b", "a", "b", "the API changed: use /v2"]);
  expect(events).toContainEqual(["b", "a", "b", "scouting done"]);
  expect(events).toContainEqual(["c", "a", "c", "scouting done"]);
  expect(events.length).toBe(3);
  // The record: the recipient's transcript holds the message with its sender; the sender's holds its call.
  const sb = await cli(world, ["session", tb.sessionId]);
  expect(sb.stdout).toContain("Message from sibling a: the API changed: use /v2");
  const sa = await cli(world, ["session", ta.sessionId]);
  expect(sa.stdout).toContain("send_message");

  // A lone task has no one to message: no tool, no team note.
  const lone = await cli(world, ["delegate", "--json", task("msg-lone", [done("ok")])], { binary: true });
  expect(lone.code, lone.stderr).toBe(0);
  expect(toolNames(requestsOf("msg-lone")[0])).not.toContain("send_message");
  expect(userTexts(requestsOf("msg-lone")[0])[0]).not.toContain("Your siblings");
}, 180_000);

test("the call's message budget (subagents.maxMessages) refuses past it, clearly, and the refusal is recorded", async () => {
  world.setSubagentSettings({ maxMessages: 1 });
  try {
    const go = join(world.root, "budget-go");
    const a = task("bud-a", [send("b", "one"), send("b", "two"), done("a done")]);
    const b = task("bud-b", [wait(go), done("b done")]);
    const run = startCli(["delegate", "--json", "--name", "a", "--name", "b", a, b]);
    await until("a to have sent twice", () => requestsOf("bud-a").length >= 3);
    touch(go);
    const r = await run.done();
    expect(r.code, r.stderr).toBe(0);
    const [ta, tb] = summaryOf(r.json);
    expect(tb.status, taskWhy(tb, r)).toBe("completed");
    const results = toolTexts(requestsOf("bud-a").at(-1));
    expect(results[1]).toContain("Not sent: this call's message budget is spent (1 messages, subagents.maxMessages)");
    expect(ta.warnings, taskWhy(ta, r)).toContain(
      "1 message refused: the call's message budget (1, subagents.maxMessages) was spent",
    );
    const got = requestsOf("bud-b").flatMap(userTexts);
    expect(got).toContain("Message from sibling a: one");
    expect(got.some((t) => t.includes("two"))).toBe(false);
    // Too long: refused with the cap, nothing sent.
    const long = task("long-a", [send("b", "x".repeat(8001)), done("a done")]);
    const r2 = await cli(
      world,
      ["delegate", "--json", "--name", "a", "--name", "b", long, task("long-b", [done("b")])],
      { binary: true },
    );
    expect(r2.code, r2.stderr).toBe(0);
    expect(toolTexts(requestsOf("long-a").at(-1))[0]).toContain(
      "more than 8000. Put long content in a file and send its path.",
    );
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("a killed sender's message still arrives; Ctrl-C with a message in flight records it undelivered on the recipient", async () => {
  const f = (n: string) => join(world.root, `rel-${n}`);
  const a = task("rel-a", [send("b", "note from a"), wait(f("never-a"))]);
  const b = task("rel-b", [wait(f("b")), wait(f("never-b"))]);
  const c = task("rel-c", [wait(f("c")), send("b", "note from c"), wait(f("never-c"))]);
  const run = startCli([
    "delegate",
    "--json",
    "--concurrency",
    "3",
    "--name",
    "a",
    "--name",
    "b",
    "--name",
    "c",
    a,
    b,
    c,
  ]);
  await until("a to have sent", () => requestsOf("rel-a").length >= 2);
  const aId = run.lines.find((l) => l.type === "task_start" && l.task === "a")!.sessionId;
  const cancel = await cli(world, ["cancel", aId]);
  expect(cancel.code, cancel.stderr).toBe(0);
  await until("a to end cancelled", () => run.lines.find((l) => l.type === "task_end" && l.task === "a"));
  touch(f("b"));
  await until("b's next request", () => requestsOf("rel-b").length >= 2);
  expect(userTexts(requestsOf("rel-b")[1])).toContain("Message from sibling a: note from a");
  touch(f("c"));
  await until("c to have sent", () => requestsOf("rel-c").length >= 3);
  expect(toolTexts(requestsOf("rel-c")[2]).at(-1)).toBe("Sent to b (delivered at its next turn).");
  run.proc.kill("SIGINT");
  const r = await run.done();
  expect(r.code).toBe(130);
  const [ta, tb, tc] = summaryOf(r.json);
  expect(ta.errorCode, taskWhy(ta, r)).toBe("SUBAGENT_CANCELLED");
  expect([tb.errorCode, tc.errorCode]).toEqual(["SUBAGENT_CANCELLED", "SUBAGENT_CANCELLED"]);
  expect(tb.warnings, taskWhy(tb, r)).toContain(
    "undelivered message from c (the task ended before its next turn): note from c",
  );
  // Recorded: `session` shows it under b's run.
  const sb = await cli(world, ["session", tb.sessionId]);
  expect(sb.stdout).toContain("undelivered message from c");
}, 180_000);

test("kept children (2 tasks at 1): a message to a queued sibling is held and delivered when it starts in the kept child", async () => {
  const a = task("kept-a", [send("b", "start from the cache module"), done("a done")]);
  const b = task("kept-b", [{ tool: "bash", args: { command: "echo b" } }, done("b done")]);
  const r = await cli(world, ["delegate", "--json", "--concurrency", "1", "--name", "a", "--name", "b", a, b], {
    binary: true,
  });
  expect(r.code, r.stderr).toBe(0);
  const [ta, tb] = summaryOf(r.json);
  expect(ta.status, taskWhy(ta, r)).toBe("completed");
  expect(tb.status, taskWhy(tb, r)).toBe("completed");
  expect(toolTexts(requestsOf("kept-a").at(-1))[0]).toBe("Held for b, not started yet: delivered when it starts.");
  expect(requestsOf("kept-b").flatMap(userTexts)).toContain("Message from sibling a: start from the cache module");
  expect(r.json.filter((l) => l.type === "sibling_message").map((l) => [l.from, l.to])).toEqual([["a", "b"]]);
  const sb = await cli(world, ["session", tb.sessionId]);
  expect(sb.stdout).toMatch(/kept child \(task 2 of pid \d+\)/);
}, 120_000);

test("inside a parent pi (delegate_to_subagents): siblings message each other the same way", async () => {
  const go = join(world.root, "pi-go");
  const tasks = [
    { name: "writer", prompt: task("pi-writer", [wait(go), done("client written")]) },
    { name: "reviewer", prompt: task("pi-reviewer", [send("writer", "the endpoint is /v2 now"), done("reviewed")]) },
  ];
  const parent = runParentPi(world, {
    runtime: "node",
    steps: [{ tool: "delegate_to_subagents", args: { tasks } }, { text: "parent done" }],
    env: { PI_OFFLINE: "1" },
  });
  await until("the reviewer to have sent", () => requestsOf("pi-reviewer").length >= 2);
  touch(go);
  const p = await parent;
  expect(p.code, p.stderr).toBe(0);
  const result = p.results.find((x) => x.toolName === "delegate_to_subagents");
  expect(result?.isError, result?.text).toBe(false);
  expect(toolTexts(requestsOf("pi-reviewer").at(-1))[0]).toBe("Sent to writer (delivered at its next turn).");
  expect(userTexts(requestsOf("pi-writer")[1])).toContain("Message from sibling reviewer: the endpoint is /v2 now");
}, 180_000);
