// The pi inside the executable does what the user's pi does: loads their own extensions (TypeScript, importing
// typebox) and runs codemode. Its bundle expects jiti, its codemode worker and QuickJS wasm next to it on disk:
// without them every child failed on a user extension and codemode could not start, so all three are compiled in.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("an embedded pi loads a user's TypeScript extension from <agentDir>/extensions", async () => {
  mkdirSync(join(world.agentDir, "extensions"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "extensions", "hello.ts"),
    `import { Type } from "@sinclair/typebox";\nexport default function (pi: any) {\n  pi.registerTool({ name: "hello_tool", label: "hello", description: "says hi", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "hi" }] }) });\n}\n`,
  );
  const before = world.server.requests.length;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "-p", "--no-session", `user ext ${script([{ text: "ok" }])}`],
    cwd: world.workDir,
    env: { ...world.env, SUBAGENTS_ROLE: "pi" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(stdout).toContain("ok");
  const tools = (world.server.requests[before]?.tools ?? []).map(
    (t: { function?: { name?: string } }) => t.function?.name,
  );
  expect(tools).toContain("hello_tool");
}, 60_000);

test("an embedded pi runs codemode: its sandbox worker and QuickJS wasm travel inside the executable", async () => {
  const before = world.server.requests.length;
  const steps = [{ tool: "codemode", args: { code: "return 40 + 2" } }, { text: "done" }];
  const proc = Bun.spawn({
    cmd: [
      join(REPO, "dist", "subagents"),
      "-p",
      "--no-session",
      "--tools",
      "read,bash,codemode",
      `codemode ${script(steps as never)}`,
    ],
    cwd: world.workDir,
    env: { ...world.env, SUBAGENTS_ROLE: "pi" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = await new Response(proc.stderr).text();
  expect(await proc.exited, stderr).toBe(0);
  const last = world.server.requests.slice(before).at(-1)!;
  const result = JSON.stringify(last.messages?.at(-1));
  expect(result).toContain("Script completed");
  expect(result).toContain("42");
}, 60_000);
