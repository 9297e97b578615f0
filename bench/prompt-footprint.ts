// The parent prompt footprint: how much our tools add to every request a parent pi sends. Measured from the real
// request a parent pi (current pi, Node 24) makes with and without dist/extension.js: system prompt + tool
// schemas, in characters and in tokens (estimated at 4 characters a token; no tokenizer is installed offline).
// Goal: ≤ 1,500 tokens (composition fields came in under that bound: issue 23).
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { piCmd } from "../test/support/pi-env.ts";
import { benchWorld, REPO, table } from "./lib.ts";

const GOAL_TOKENS = 1500;

export async function promptFootprint(): Promise<string> {
  const world = await benchWorld();
  try {
    const sizeOf = async (extension: string[]) => {
      const before = world.server.requests.length;
      const proc = Bun.spawn({
        cmd: [...piCmd("current", "node"), "-p", "--no-session", ...extension],
        cwd: world.workDir,
        env: world.env,
        stdin: new TextEncoder().encode(`hi ${script([{ text: "ok" }])}`),
        stdout: "ignore",
        stderr: "ignore",
      });
      await proc.exited;
      const req = world.server.requests[before];
      const system = (req.messages ?? [])
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
        .join("");
      return {
        system: system.length,
        tools: JSON.stringify(req.tools ?? []).length,
        listed: system.includes("delegate_to_subagents"),
      };
    };
    const base = await sizeOf([]);
    const ours = await sizeOf(["-e", join(REPO, "dist", "extension.js")]);
    const sys = ours.system - base.system;
    const tools = ours.tools - base.tools;
    const tokens = Math.round((sys + tools) / 4);
    return [
      "## Parent prompt footprint",
      "",
      "What registering our tools adds to each request of a parent pi (current pi under Node 24), from the real request.",
      "",
      table(
        ["part", "characters", "≈ tokens"],
        [
          ["system prompt (tool list snippets + guidelines)", String(sys), String(Math.round(sys / 4))],
          ["tool schemas (5 tools)", String(tools), String(Math.round(tools / 4))],
          ["total", String(sys + tools), `${tokens} (goal ≤ ${GOAL_TOKENS}) ${tokens <= GOAL_TOKENS ? "✓" : "✗"}`],
        ],
      ),
      "",
      `Our tools listed in the system prompt's tool list: ${ours.listed ? "yes" : "NO"}.`,
      "",
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await promptFootprint());
