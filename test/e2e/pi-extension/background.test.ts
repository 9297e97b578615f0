// The extension's background mode end to end: a real parent pi (current pi under Node and under Bun) loads
// dist/extension.js; the scripted model calls delegate_to_subagents with background: true, then works on
// (a bash call) while the real child runs; the child's end reaches the parent model as a notice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import { piCmd, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

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
    const steps = [
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "bgone", prompt: child }], background: true } },
      { tool: "bash", args: { command: busy } },
      { text: `parent done ${marker}` },
    ];
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
    const toolReturned = reqs.findIndex(
      (r) => text(r).includes("started in the background") && text(r).includes(`parent task ${marker}`),
    );
    const childLast = reqs.map((r) => text(r).includes(`bg child ${marker}`)).lastIndexOf(true);
    expect(toolReturned).toBeGreaterThanOrEqual(0);
    expect(toolReturned).toBeLessThan(childLast);
    // The notice came in while the parent was busy and went to the model in its next request.
    const withNotice = reqs.find(
      (r) =>
        text(r).includes(`parent task ${marker}`) &&
        text(r).includes("Background sub-agent finished: ✓ bgone: completed"),
    );
    if (!withNotice)
      console.log(
        stderr,
        reqs
          .filter((r) => text(r).includes(`parent task ${marker}`))
          .map((r) => text(r).slice(-1500))
          .join("\n-----\n"),
      );
    expect(withNotice).toBeDefined();
    const notice = JSON.stringify(
      (withNotice!.messages ?? []).filter((m) =>
        JSON.stringify(m.content ?? "").includes("Background sub-agent finished"),
      ),
    );
    expect(notice).toContain(`bg result ${marker}`);
    // The steer was delivered (the child's answer is the steered one), and the wait loop ended because the task did.
    expect(text(withNotice!)).toContain("delivered to");
    expect(notice).not.toContain(`not steered ${marker}`);
    expect(text(withNotice!)).toContain("Nothing is running.");
    // The parent's session shows the notice as a message of ours.
    const entries = readFileSync(sessionFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(entries.some((e) => e.message?.customType === "subagents-done" || e.customType === "subagents-done")).toBe(
      true,
    );
  }, 180_000);
}

/** A user agent for `subagent` (it needs a named agent). */
function writeWorker(): void {
  mkdirSync(join(world.agentDir, "agents"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "agents", "worker.md"),
    "---\nname: worker\ndescription: Does what it is told\n---\nYou do what you are told.\n",
  );
}

/** A parent pi run (support/parent-pi.ts) and how long it took. */
async function runParent(runtime: "node" | "bun", steps: ScriptStep[]) {
  const t0 = performance.now();
  const r = await runParentPi(world, { runtime, steps });
  return {
    ...r,
    ms: performance.now() - t0,
    result: (tool: string) => r.results.find((x) => x.toolName === tool)?.text ?? "",
  };
}

/** The parent's bash step that waits until the child is inside its own bash call, then repeats the session id. */
const untilChildBusy = (flag: string) =>
  `for i in $(seq 1 600); do [ -f ${flag} ] && break; sleep 0.1; done; echo {{lastSessionId}}`;

for (const runtime of (process.env.ONLY_RT ? [process.env.ONLY_RT] : ["node", "bun"]) as ("node" | "bun")[]) {
  test(`subagent background: true under ${runtime} pi; get_subagent_output steers the running child and waits for its end (no duplicate notice)`, async () => {
    writeWorker();
    const marker = `sgw-${runtime}-${Date.now()}`;
    const flag = join(world.root, `${marker}.busy`);
    const child = `worker job ${marker} ${script([{ tool: "bash", args: { command: `touch ${flag}; sleep 4` } }, { finalize: { status: "SUCCESS", result: `not steered ${marker}` } }])}`;
    const steer = `Change of plan ${marker} ${script([{ finalize: { status: "SUCCESS", result: `steered ${marker}` } }])}`;
    const steps = [
      { tool: "subagent", args: { agent: "worker", task: child, background: true } },
      { tool: "bash", args: { command: untilChildBusy(flag) } },
      { tool: "get_subagent_output", args: { sessionId: "{{lastSessionId}}", steer, wait: true } },
      { text: `parent done ${marker}` },
    ];
    const r = await runParent(runtime, steps);
    expect(r.code, r.stderr).toBe(0);
    // subagent returned at once, with the spec's header and a status of its own.
    expect(r.result("subagent")).toStartWith("**Status:** RUNNING");
    const id = /`([0-9a-f]{16})`/.exec(r.result("subagent"))![1];
    // The steer reached the child inside its bash call, it acted on it, and the wait returned its final output.
    expect(r.result("get_subagent_output")).toBe(`Steer delivered to ${id}.\n\nsteered ${marker}`);
    // The model waited for the end and got the output: no notice repeats it.
    const parentReqs = world.server.requests.filter((q) => text(q).includes("parent task") && text(q).includes(marker));
    expect(text(parentReqs.at(-1)!)).not.toContain("Background sub-agent finished");
  }, 180_000);

  test(`pi ${runtime} shutting down stops its background sub-agents and records them as interrupted, not cancelled`, async () => {
    writeWorker();
    const marker = `sdn-${runtime}-${Date.now()}`;
    const flag = join(world.root, `${marker}.busy`);
    const child = `long job ${marker} ${script([{ tool: "bash", args: { command: `touch ${flag}; sleep 60` } }])}`;
    // Once the child is busy, the parent attaches to it from a terminal command for 3 s (through this pi's
    // control socket), then ends.
    const attach = `timeout --preserve-status 3 ${join(REPO, "dist", "subagents")} attach {{lastSessionId}}; echo attach-exit=$?`;
    const steps = [
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "longone", prompt: child }], background: true } },
      { tool: "bash", args: { command: `${untilChildBusy(flag)}; ${attach}` } },
      { text: `parent done ${marker}` },
    ];
    const r = await runParent(runtime, steps);
    expect(r.code, r.stderr).toBe(0);
    expect(r.ms).toBeLessThan(60_000);
    const id = /\b[0-9a-f]{16}\b/.exec(r.result("delegate_to_subagents"))![0];
    // attach showed the pi-owned child's window (its bash call so far) and detached on SIGTERM, exit 0.
    const attached = r.result("bash");
    expect(attached).toContain(`● longone • default • ${id}`);
    expect(attached).toContain(`${marker}.busy; sleep 60`);
    expect(attached).toContain(`Detached from ${id}; it keeps running.`);
    expect(attached).toContain("attach-exit=0");
    const { Database } = require("bun:sqlite");
    const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
    const run = db
      .query("SELECT status, error, error_code FROM runs WHERE session_id = ? ORDER BY id DESC LIMIT 1")
      .get(id) as { status: string; error: string; error_code: string };
    db.close();
    expect(run).toEqual({
      status: "error",
      error: "Session was interrupted (main agent session ended)",
      error_code: "SUBAGENT_FAILED",
    });
    // Nothing of the child is left: no process holds the flag's sleep.
    const left = Bun.spawnSync(["pgrep", "-f", `touch ${flag}`])
      .stdout.toString()
      .trim();
    expect(left).toBe("");
  }, 180_000);
}
