// The Tasks extension of `subagents mcp` (docs/mcp.md "Tasks") driven by the official requester
// (`@modelcontextprotocol/ext-tasks` over the SDK's client, 2026-07-28): a delegation answered with its handle at
// once (its id the first task's session id, listed by `subagents sessions`), followed with tasks/get to its result;
// a child's question as an input request answered through tasks/update; tasks/cancel stopping the children with
// the kill protocol; and a task read back by a server started after the first one ended.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { processesWithEnv } from "../../../src/host/proc-marks.ts";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import type { TaskId } from "@modelcontextprotocol/ext-tasks/core";
import { connectTasksMcp } from "../../support/mcp-client.ts";
import { cli, piWorld, type PiWorld, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

type Structured = { summary?: string; tasks: Record<string, any>[] };
const textOf = (r: any) => ((r?.content as { text?: string }[] | undefined) ?? [])[0]?.text ?? "";

const childrenOf = (serverPid: number) =>
  processesWithEnv("SUBAGENTS_TEST_WORLD")
    .filter((p) => p.value === world.root && p.pid !== serverPid)
    .map((p) => p.pid);

const holdUntil = (file: string) => ({ tool: "bash", args: { command: `until [ -e ${file} ]; do sleep 0.1; done` } });

test("a delegation is a task: its handle at once, named by its first session id and listed by `subagents sessions`, then its result through tasks/get; a question is an input request the client answers", async () => {
  const asked: string[] = [];
  const c = await connectTasksMcp(world, {
    answer: (message) => {
      asked.push(message);
      return { action: "accept", content: { answer: "b" } };
    },
  });
  try {
    const marker = `task-${Date.now()}`;
    const go = join(world.root, `go-${marker}`);
    const execution = await c.tasks.callTool("delegate_to_subagents", {
      tasks: [
        {
          name: `asker-${marker}`,
          prompt: `ask ${script([
            holdUntil(go),
            { tool: "ask_parent", args: { question: `Which for ${marker}?`, options: ["a", "b"] } },
            { text: `went with it ${marker}` },
          ])}`,
        },
        { name: `quiet-${marker}`, prompt: `quiet ${script([{ text: `quiet done ${marker}` }])}` },
      ],
    });
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    // The handle came before the first child could finish (it waits for `go`): the task is the running session.
    const row = await until(`${taskId} listed`, async () =>
      (await cli(world, ["sessions", "--running", "--json"])).json.find((r) => r.id === taskId),
    );
    expect(row).toMatchObject({ name: `asker-${marker}`, role: "mcp", ownerPid: c.pid });
    const seen: string[] = [];
    const settled = execution.settle({
      onEvent: (e) => {
        if (e.type === "task") seen.push(`${e.task.status}: ${e.task.statusMessage ?? ""}`);
      },
    });
    mkdirSync(go);
    const { outcome } = await settled;
    expect(outcome.status, JSON.stringify(outcome)).toBe("completed");
    const result = (outcome as { result: any }).result;
    const s = result.structuredContent as Structured;
    expect(s.tasks.map((t) => [t.name, t.status])).toEqual([
      [`asker-${marker}`, "completed"],
      [`quiet-${marker}`, "completed"],
    ]);
    expect(s.tasks[0].sessionId).toBe(taskId);
    expect(textOf(result)).toContain(`went with it ${marker}`);
    // The question went out as the task's input request and its answer reached the child.
    expect(asked).toEqual([`Sub-agent asker-${marker} (session ${taskId}) asks: Which for ${marker}? (a | b)`]);
    expect(
      world.server.requests.some((q) =>
        (q.messages ?? []).some((m) => m.role === "tool" && messageText(m) === "Answer: b"),
      ),
    ).toBe(true);
    expect(seen.some((m) => m.startsWith("working: Sub-agents: "))).toBe(true);
    expect(seen.some((m) => m.startsWith("input_required"))).toBe(true);
  } finally {
    await c.close();
  }
}, 120_000);

test("tasks/cancel stops the task's children with the kill protocol: nothing left, recorded cancelled, the task cancelled", async () => {
  const c = await connectTasksMcp(world);
  try {
    const marker = `task-cancel-${Date.now()}`;
    const never = join(world.root, `never-${marker}`);
    const execution = await c.tasks.callTool("delegate_to_subagents", {
      tasks: [{ name: marker, prompt: `hold ${script([holdUntil(never)])}` }],
    });
    const taskId = execution.handle!.taskId;
    await until("its child's bash command", () => childrenOf(c.pid).length > 1);
    await c.tasks.task(taskId).cancel();
    await until(
      () => `no process of the task left (left: ${childrenOf(c.pid).join(", ")})`,
      () => childrenOf(c.pid).length === 0,
    );
    const view = await until("the task cancelled", async () => {
      const v = await c.tasks.task(taskId).snapshot();
      return v.status === "cancelled" ? v : undefined;
    });
    expect(view.statusMessage).toBe("Cancelled by the MCP client: its sub-agents were stopped");
    const session = (await cli(world, ["session", taskId, "--json"])).json[0];
    expect(session.status).toBe("error");
    expect(session.transcript).toContain("Cancelled: the MCP client cancelled the task");
  } finally {
    await c.close();
  }
}, 120_000);

test("a task outlives its server as a record: a server started after the first one ended answers tasks/get with its result", async () => {
  const first = await connectTasksMcp(world);
  const marker = `task-later-${Date.now()}`;
  let taskId: TaskId;
  try {
    const execution = await first.tasks.callTool("subagent", {
      agent: "worker",
      task: `do ${script([{ finalize: { status: "SUCCESS", result: `kept ${marker}` } }])}`,
    });
    taskId = execution.handle!.taskId;
    expect((await execution.settle()).outcome.status).toBe("completed");
  } finally {
    await first.close();
  }
  await until("the first server gone", () => childrenOf(0).every((pid) => pid !== first.pid));
  const second = await connectTasksMcp(world);
  try {
    const outcome = await second.tasks.task(taskId).result();
    expect(outcome.status).toBe("completed");
    const result = (outcome as { result: any }).result;
    expect(textOf(result)).toStartWith(`**Status:** SUCCESS\n**Session ID:** \`${taskId}\``);
    expect(textOf(result)).toContain(`kept ${marker}`);
    await expect(second.tasks.task("0123456789abcdef" as TaskId).snapshot()).rejects.toThrow("Task not found");
  } finally {
    await second.close();
  }
}, 120_000);
