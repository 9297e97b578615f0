// The pi inside the executable loads a user's own extensions (TypeScript, importing typebox) as their pi would:
// jiti is compiled in (pi's bundle would otherwise look for it next to the executable and fail every child).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { piWorld, REPO, type PiWorld } from "./support/pi-env.ts";

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
  const proc = Bun.spawn({ cmd: [join(REPO, "dist", "subagents"), "-p", "--no-session", `user ext ${script([{ text: "ok" }])}`], cwd: world.workDir, env: { ...world.env, SUBAGENTS_ROLE: "pi" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(stdout).toContain("ok");
  const tools = (world.server.requests[before]?.tools ?? []).map((t: { function?: { name?: string } }) => t.function?.name);
  expect(tools).toContain("hello_tool");
}, 60_000);
