// Spec 000's timeout with the REAL pi: once `timeout` has passed, only new tool calls extend it, so a tool call that
// hangs (a dev server, a `sleep`) no longer holds a task until maxRuntime; and the window shows the timeout that
// really applies, a profile's included.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("a bash call that hangs past the timeout stops the child after the debounce; the message names the tool", async () => {
  world.setSubagentSettings({ extendTimeoutDebounce: 2 });
  const started = Date.now();
  const r = await cli(world, [
    "run",
    "default",
    `hang ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
    "--timeout",
    "8",
    "--json",
  ]);
  const took = Date.now() - started;
  world.setSubagentSettings({});
  expect(r.code).toBe(1);
  const t = r.json.at(-1)!.tasks[0];
  expect(t.errorCode).toBe("SUBAGENT_TIMEOUT");
  expect(t.error).toStartWith("Timed out after 8s. Consider resuming with a longer timeout.");
  expect(t.error).toMatch(/The tool call "bash" had been running for \d+s without finishing\./);
  // 8 s timeout (room for a slow start on a busy machine) + 2 s debounce + the kill protocol: far from 60 s.
  expect(took).toBeLessThan(30_000);
}, 60_000);

test("delegate_to_subagents windows show the profile's timeout, not the 600 s default", async () => {
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "quick.md"),
    "---\nname: quick\ndescription: short-lived\ntimeout: 3\n---\nYou are quick.\n",
  );
  const { delegateTool } = await import("../../../src/pi/tool-delegate.ts");
  const { makeToolEnv } = await import("../../../src/pi/tool-env.ts");
  const { createServices } = await import("../../../src/pi/services.ts");
  for (const [k, v] of Object.entries(world.env)) process.env[k] = v;
  const tool = delegateTool(makeToolEnv({ services: createServices, appendEntry: () => {} }));
  const seen = new Set<number>();
  const result = (await tool.execute(
    "t",
    {
      tasks: [
        { name: "q", prompt: `hi ${script([{ text: "quick answer" }])}`, profile: "quick" },
        { name: "own", prompt: `hi ${script([{ text: "own answer" }])}`, profile: "quick", timeout: 7 },
      ],
    },
    undefined,
    (u: any) => seen.add(u.details.windows[0].timeoutSec),
    { cwd: world.workDir, hasUI: false },
  )) as { content: { text: string }[]; details: { windows: { timeoutSec: number }[] } };
  expect(result.content[0].text).toContain("✓ q: completed");
  expect(result.details.windows.map((w) => w.timeoutSec)).toEqual([3, 7]);
  expect([...seen]).toEqual([3]);
}, 60_000);
