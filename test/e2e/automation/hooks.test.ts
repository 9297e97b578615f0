// Task hooks (settings subagents.hooks, an agent file's taskStart/taskEnd): real shell commands, run with the task's
// event object on stdin, beside the task. A failing hook and a hanging one are warnings on the run and change
// nothing of the task; a project's hooks run only with the user's consent. The CLI runs the real pi as its child
// against the scripted model server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { runParentPi } from "../../support/parent-pi.ts";
import { cli, piWorld, summaryOf, taskWhy, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
let out: string;
beforeAll(async () => {
  world = await piWorld();
  out = join(world.root, "hook-out");
  mkdirSync(out, { recursive: true });
});
afterAll(async () => {
  await world.close();
});

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** Runs one task and returns its summary row and its `session --json` record. */
async function runOne(prompt: string, args: string[] = []) {
  const r = await cli(world, ["run", "default", prompt, "--json", ...args]);
  expect(r.stderr).not.toContain("internal error");
  const [t] = summaryOf(r.json);
  const s = await cli(world, ["session", t.sessionId, "--json"]);
  return { task: t, session: s.json[0], stderr: r.stderr };
}

test("taskStart and taskEnd hooks get the task's event object on stdin; a failing and a hanging hook are warnings, the task completes", async () => {
  const hang = `sleep 6${process.pid % 100}1`;
  world.setSubagentSettings({
    hooks: {
      taskStart: `cat > ${out}/start-$SUBAGENTS_SESSION_ID.json`,
      taskEnd: [`cat > ${out}/end-$SUBAGENTS_SESSION_ID.json`, "echo hook-broke-here >&2; exit 3", `exec ${hang}`],
      timeout: 2,
    },
  });
  const { task, session, stderr } = await runOne("hooks see this task");
  expect(task.status, taskWhy(task, { stderr })).toBe("completed");
  const id = task.sessionId;
  const start = readJson(join(out, `start-${id}.json`));
  expect(start).toMatchObject({
    event: "taskStart",
    sessionId: id,
    name: "default",
    agent: "default",
    status: "running",
    cwd: world.workDir,
  });
  const end = readJson(join(out, `end-${id}.json`));
  expect(end).toMatchObject({
    event: "taskEnd",
    sessionId: id,
    name: "default",
    agent: "default",
    status: "completed",
    cwd: world.workDir,
  });
  expect(end.output).toContain("Done: hooks see this task");
  expect(end.usage.turns).toBeGreaterThan(0);
  expect(end.schedule).toBeUndefined();
  // The run's record keeps both troubles as warnings; its status is the task's own.
  expect(session.status).toBe("completed");
  const warnings: string[] = session.warnings ?? [];
  expect(
    warnings.some((w) => /taskEnd hook .*failed \(exit 3\): hook-broke-here/.test(w)),
    JSON.stringify(warnings),
  ).toBe(true);
  expect(
    warnings.some((w) => /taskEnd hook `exec sleep .*did not end within 2 s/.test(w)),
    JSON.stringify(warnings),
  ).toBe(true);
  // The hanging hook was ended with the run: nothing of it is left.
  expect(spawnSync("pgrep", ["-f", `^${hang}$`]).status, "the hanging hook is still running").toBe(1);
}, 120_000);

test("a task that fails tells its end hook so (status, error), and the output the hook gets is bounded", async () => {
  world.setSubagentSettings({ hooks: { taskEnd: `cat > ${out}/fail-$SUBAGENTS_SESSION_ID.json` } });
  const long = "x".repeat(6000);
  const { task } = await runOne(
    `fail with a long answer ${script([{ finalize: { status: "ERROR", error: "the check found 3 problems", result: long } }])}`,
  );
  expect(task.status).toBe("error");
  const end = readJson(join(out, `fail-${task.sessionId}.json`));
  expect(end).toMatchObject({ event: "taskEnd", status: "error" });
  expect(end.error).toContain("the check found 3 problems");
  expect(end.output.length).toBe(4096);
  expect(end.outputTruncated).toBe(true);
}, 120_000);

test("an agent file's taskEnd runs after the settings' hooks, for that agent's tasks only", async () => {
  world.setSubagentSettings({});
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "hooked.md"),
    `---\nname: hooked\ndescription: an agent with a hook\ntaskEnd: cat > ${out}/agent-end.json\n---\nYou are hooked.\n`,
  );
  const r = await cli(world, ["run", "hooked", "agent hook task", "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(readJson(join(out, "agent-end.json"))).toMatchObject({
    event: "taskEnd",
    agent: "hooked",
    status: "completed",
  });
  rmSync(join(out, "agent-end.json"));
  const d = await runOne("a default task");
  expect(d.task.status).toBe("completed");
  expect(existsSync(join(out, "agent-end.json")), "the agent's hook ran for another agent's task").toBe(false);
}, 120_000);

test("a project's hooks need the user's consent (subagents.projectAgents in the user's own settings); a project cannot grant it itself", async () => {
  const project = join(world.workDir, ".pi");
  mkdirSync(project, { recursive: true });
  const ran = join(out, "project-ran");
  writeFileSync(
    join(project, "settings.json"),
    JSON.stringify({ subagents: { projectAgents: "allow", hooks: { taskEnd: `touch ${ran}` } } }),
  );
  try {
    world.setSubagentSettings({});
    const refused = await runOne("project hook task");
    expect(refused.task.status).toBe("completed");
    expect(existsSync(ran), "the project's hook ran without consent").toBe(false);
    const warnings: string[] = refused.session.warnings ?? [];
    expect(
      warnings.some((w) =>
        /taskEnd hook `touch .*` from .*\.pi\/settings\.json not run: a project's hooks need consent/.test(w),
      ),
      JSON.stringify(warnings),
    ).toBe(true);

    world.setSubagentSettings({ projectAgents: "deny" });
    const denied = await runOne("project hook task denied");
    expect(existsSync(ran)).toBe(false);
    expect(
      (denied.session.warnings ?? []).some((w: string) =>
        /not allowed: your settings' subagents.projectAgents is "deny"/.test(w),
      ),
    ).toBe(true);

    world.setSubagentSettings({ projectAgents: "allow" });
    const allowed = await runOne("project hook task allowed");
    expect(allowed.task.status).toBe("completed");
    expect(existsSync(ran), "the project's hook did not run with the user's consent").toBe(true);
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}, 180_000);

for (const runtime of ["bun", "node"] as const) {
  test(`pi under ${runtime}: another extension hears subagents:task_start / subagents:task_end on pi.events, with the object a hook gets`, async () => {
    const events = join(out, `pi-events-${runtime}.jsonl`);
    world.setSubagentSettings({ hooks: { taskEnd: `cat > ${out}/pi-end-${runtime}-$SUBAGENTS_SESSION_ID.json` } });
    const r = await runParentPi(world, {
      runtime,
      args: ["-e", join(import.meta.dir, "..", "..", "fixtures", "task-events-extension.ts")],
      env: { TASK_EVENTS_OUT: events },
      steps: [
        { tool: "delegate_to_subagents", args: { tasks: [{ name: "heard", prompt: "a task others hear of" }] } },
        { text: "parent done" },
      ],
    });
    world.setSubagentSettings({});
    expect(r.code, r.stderr).toBe(0);
    expect(r.results[0]?.isError, r.results[0]?.text).toBe(false);
    const got = readFileSync(events, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(got.map((e) => e.channel)).toEqual(["subagents:task_start", "subagents:task_end"]);
    const [start, end] = got.map((e) => e.data);
    expect(start).toMatchObject({
      event: "taskStart",
      name: "heard",
      agent: "default",
      status: "running",
      cwd: world.workDir,
    });
    expect(end).toMatchObject({ event: "taskEnd", name: "heard", sessionId: start.sessionId, status: "completed" });
    expect(end.output).toContain("Done: a task others hear of");
    // The same object the task's end hook got on its stdin (the pi session's shutdown waited for the hook).
    expect(readJson(join(out, `pi-end-${runtime}-${start.sessionId}.json`))).toEqual(end);
  }, 120_000);
}
