// Structured results (outputSchema) end to end: real pi children against the scripted model server. pi's own
// tool-argument validation sends a mismatch back to the child, which corrects it in the same conversation.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import {
  CURRENT_PI_VERSION,
  cli,
  piCmd,
  piWorld,
  type PiWorld,
  summaryOf,
  taskWhy,
  userTexts as userTextsOf,
} from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const userTexts = () => userTextsOf(world);
const toolTexts = () =>
  world.server.requests.flatMap((r) => (r.messages ?? []).filter((m) => m.role === "tool").map(messageText));

const SCHEMA = {
  type: "object",
  properties: { files: { type: "array", items: { type: "string" } }, count: { type: "integer" } },
  required: ["files", "count"],
  additionalProperties: false,
};
const fin = (args: Record<string, unknown>): ScriptStep => ({
  tool: "subagent_finalize",
  args: { status: "SUCCESS", ...args },
});

for (const [label, env] of [
  ["embedded/default pi", {}],
  ["pi 1.x under Node", { SUBAGENTS_PI: piCmd("current", "node").join(" ") }],
] as const) {
  test(`a schema mismatch goes back to the child, which corrects it; the result carries structured (${label}); a dependent gets it as JSON`, async () => {
    const marker = `M${Math.random().toString(16).slice(2, 8)}`;
    const file = join(world.root, `structured-${marker}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        tasks: [
          {
            name: "scout",
            outputSchema: SCHEMA,
            prompt: `${marker} list files ${script([fin({ data: { files: ["a.ts"], count: "one" } }), fin({ result: "text only" }), fin({ data: { files: ["a.ts", "b.ts"], count: 2 } })])}`,
          },
          { name: "use", after: ["scout"], prompt: `${marker} use {{scout}}` },
        ],
      }),
    );
    const r = await cli(world, ["delegate", "--tasks", file, "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const [scout] = summaryOf(r.json);
    expect(scout.status, taskWhy(scout)).toBe("completed");
    expect(scout.structured).toEqual({ files: ["a.ts", "b.ts"], count: 2 });
    expect(r.json.find((e) => e.type === "task_end" && e.task === "scout")?.structured).toEqual({
      files: ["a.ts", "b.ts"],
      count: 2,
    });
    // Both wrong calls were answered with errors the model saw: pi's schema validation, then our missing-data rule.
    const errors = toolTexts().filter((t) => /Validation failed|must be integer|Expected integer|data/.test(t));
    expect(errors.some((t) => t.includes("count"))).toBe(true);
    expect(toolTexts().some((t) => t.includes("SUCCESS requires `data`"))).toBe(true);
    // The dependent got the structured result as JSON.
    const handed = userTexts().find((t) => t.startsWith(`${marker} use `))!;
    expect(JSON.parse(handed.slice(`${marker} use `.length))).toEqual({ files: ["a.ts", "b.ts"], count: 2 });
  }, 90_000);
}

test("an invalid outputSchema is refused before anything starts (task field and agent front matter)", async () => {
  const before = world.server.requests.length;
  const file = join(world.root, "bad-schema.json");
  writeFileSync(file, JSON.stringify({ tasks: [{ name: "t", prompt: "x", outputSchema: { type: "objekt" } }] }));
  const r = await cli(world, ["delegate", "--tasks", file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("tasks[0].outputSchema.type must be one of object");
  mkdirSync(join(world.agentDir, "agents"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "agents", "shaped.md"),
    "---\nname: shaped\ndescription: d\noutputSchema:\n  type: object\n  required: files\n---\nBe shaped.",
  );
  const p = await cli(world, ["run", "shaped", "x", "--json"]);
  expect(p.code).not.toBe(0);
  expect(`${p.stdout}${p.stderr}`).toContain('outputSchema".required must be a list of property names');
  expect(world.server.requests.length).toBe(before);
}, 30_000);

test("delegate_to_subagents in a parent pi: outputSchema → details carry structured", async () => {
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "s", outputSchema: SCHEMA, prompt: `go ${script([fin({ data: { files: ["x"], count: 1 } })])}` },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [res] = r.results;
  expect(res.isError).toBe(false);
  expect(res.details.windows[0].structured).toEqual({ files: ["x"], count: 1 });
  expect(res.text).toContain('"count": 1');
}, 90_000);

test(`a codemode script in pi ${CURRENT_PI_VERSION} reads a task's structured result as data (structuredContent)`, async () => {
  const tasks = [
    { name: "s", outputSchema: SCHEMA, prompt: `cm-7741 ${script([fin({ data: { files: ["y"], count: 7 } })])}` },
  ];
  const code = `const r = await tools.delegate_to_subagents(${JSON.stringify({ tasks })}); return "DATA=" + JSON.stringify(r.tasks[0].data);`;
  const { code: exit, results } = await runParentPi(world, {
    runtime: "node",
    args: ["--tools", "+codemode"],
    steps: [{ tool: "codemode", args: { code } }, { text: "ok" }],
  });
  expect(exit).toBe(0);
  expect(results.find((x) => x.toolName === "codemode")!.text).toContain('DATA={"files":["y"],"count":7}');
}, 90_000);
