// The extension's background mode end to end: a real parent pi (current pi under Node and under Bun) loads
// dist/extension.js; the scripted model calls delegate_to_subagents with background: true, then works on
// (a bash call) while the real child runs; the child's end reaches the parent model as a notice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { piCmd, piWorld, REPO, type PiWorld } from "./support/pi-env.ts";

const EXTENSION = join(REPO, "dist", "extension.js");

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const text = (req: { messages?: { content?: unknown }[] }) => JSON.stringify(req.messages ?? []);

for (const runtime of (process.env.ONLY_RT ? [process.env.ONLY_RT] : ["node", "bun"]) as ("node" | "bun")[]) {
  test(`background: true under ${runtime} pi returns at once; the CLI steers the pi-owned child; the completion notice reaches the busy parent`, async () => {
    const marker = `bgext-${runtime}-${Date.now()}`;
    const child = `bg child ${marker} ${script([{ tool: "bash", args: { command: "sleep 4" } }, { finalize: { status: "SUCCESS", result: `not steered ${marker}` } }])}`;
    // The parent, busy in one bash call: steers its child from the CLI (through the pi session's control socket; the
    // steer is retried until the child is up), then waits until nothing runs any more, plus a moment for the notice.
    const cliBin = join(REPO, "dist", "subagents");
    const steer = `printf '%s' 'Change of plan ${script([{ finalize: { status: "SUCCESS", result: `bg result ${marker}` } }])}'`;
    const busy =
      `for i in $(seq 1 120); do ${steer} | ${cliBin} steer {{lastSessionId}} - && break; sleep 0.5; done; ` +
      `for i in $(seq 1 300); do ${cliBin} sessions --running | grep -q "Nothing is running" && break; sleep 0.2; done; ${cliBin} sessions --running; sleep 1`;
    const sessionFile = join(world.root, `parent-${marker}.jsonl`);
    const steps = [{ tool: "delegate_to_subagents", args: { tasks: [{ name: "bgone", prompt: child }], background: true } }, { tool: "bash", args: { command: busy } }, { text: `parent done ${marker}` }];
    const proc = Bun.spawn({
      cmd: [...piCmd("current", runtime), "-p", "--session", sessionFile, "-e", EXTENSION],
      cwd: world.workDir,
      env: world.env,
      stdin: new TextEncoder().encode(`parent task ${marker} ${script(steps)}`),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(await proc.exited, stderr).toBe(0);

    const reqs = world.server.requests;
    // The tool returned before the child finished: the parent's bash turn was asked for before the child's last turn.
    const toolReturned = reqs.findIndex((r) => text(r).includes("started in the background") && text(r).includes(`parent task ${marker}`));
    const childLast = reqs.map((r) => text(r).includes(`bg child ${marker}`)).lastIndexOf(true);
    expect(toolReturned).toBeGreaterThanOrEqual(0);
    expect(toolReturned).toBeLessThan(childLast);
    // The notice came in while the parent was busy and went to the model in its next request.
    const withNotice = reqs.find((r) => text(r).includes(`parent task ${marker}`) && text(r).includes("Background sub-agent finished: ✓ bgone: completed"));
    if (!withNotice) console.log(stderr, reqs.filter((r) => text(r).includes(`parent task ${marker}`)).map((r) => text(r).slice(-1500)).join("\n-----\n"));
    expect(withNotice).toBeDefined();
    const notice = JSON.stringify((withNotice!.messages ?? []).filter((m) => JSON.stringify(m.content ?? "").includes("Background sub-agent finished")));
    expect(notice).toContain(`bg result ${marker}`);
    // The steer was delivered (the child's answer is the steered one), and the wait loop ended because the task did.
    expect(text(withNotice!)).toContain("delivered to");
    expect(notice).not.toContain(`not steered ${marker}`);
    expect(text(withNotice!)).toContain("Nothing is running.");
    // The parent's session shows the notice as a message of ours.
    const entries = readFileSync(sessionFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(entries.some((e) => e.message?.customType === "subagents-done" || e.customType === "subagents-done")).toBe(true);
  }, 180_000);
}
