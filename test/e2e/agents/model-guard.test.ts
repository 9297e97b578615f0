// The model the user asked for, or a clear no (issue 21, item 5). pi quietly runs another model when the default
// model in its settings is one it does not know (a model newer than that pi); our child stops before any model
// call and the task fails naming the model and the pi — or continues on a fallback model with a visible warning.
// Children are real current pi (node_modules, under Node 24) and the embedded pi (the compiled executable), on the scripted model.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import {
  cli,
  CURRENT_PI_RE,
  CURRENT_PI_VERSION,
  PI_PACKAGE_DIRS,
  piWorld,
  setModels,
  summaryOf,
  type PiWorld,
  taskWhy,
} from "../../support/pi-env.ts";

let world: PiWorld;
const requestsWith = (marker: string) =>
  world.server.requests.filter((r) => JSON.stringify(r.messages ?? []).includes(marker));
const CHILD_PI = { childPi: PI_PACKAGE_DIRS.current, childRuntime: "node" };

beforeAll(async () => {
  world = await piWorld();
  setModels(world, [{ id: "fake-model" }, { id: "spare-model" }]);
});
afterAll(() => world.close());

test("a default model the child's pi does not know fails the task, naming the model and the pi; nothing ran on another model", async () => {
  // pi itself, asked for this default, silently runs fake/fake-model (measured on 1.x and 0.87.1).
  world.setSubagentSettings(CHILD_PI, { defaultProvider: "fake", defaultModel: "ghost-model" });
  try {
    const r = await cli(world, ["run", "default", `ghost-8801 ${script([{ text: "should not run" }])}`, "--json"]);
    expect(r.code).toBe(1);
    const [t] = summaryOf(r.json);
    expect(t.status).toBe("error");
    expect(t.error).toContain(
      `Model "fake/ghost-model" not found by pi ${CURRENT_PI_VERSION}: it resolved "fake/fake-model" instead`,
    );
    expect(requestsWith("ghost-8801")).toHaveLength(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("with fallbackModels, the task continues on the fallback and says so in the record and --json", async () => {
  world.setSubagentSettings(
    { ...CHILD_PI, fallbackModels: ["fake/spare-model"] },
    { defaultProvider: "fake", defaultModel: "ghost-model" },
  );
  try {
    const r = await cli(world, ["run", "default", `ghost-8802 ${script([{ text: "spare answered" }])}`, "--json"]);
    expect(r.code).toBe(0);
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t)).toBe("completed");
    expect(requestsWith("ghost-8802").map((q) => q.model)).toEqual(["spare-model"]);
    expect(t.warnings.join("\n")).toContain('model "fake/ghost-model" is not known to pi here');
    expect(t.warnings.join("\n")).toContain("continued on fake/spare-model");
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("the embedded pi gets the same guard: no silent substitution there either", async () => {
  world.setSubagentSettings({ childPi: "embedded" }, { defaultProvider: "fake", defaultModel: "ghost-model" });
  try {
    const r = await cli(world, ["run", "default", `ghost-8803 ${script([{ text: "should not run" }])}`, "--json"], {
      binary: true,
    });
    expect(r.code).toBe(1);
    expect(summaryOf(r.json)[0].error).toMatch(
      new RegExp(`Model "fake/ghost-model" not found by pi ${CURRENT_PI_RE}: it resolved "fake/fake-model" instead`),
    );
    expect(requestsWith("ghost-8803")).toHaveLength(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("a model the child's pi knows runs as asked, also when named by part of its id", async () => {
  world.setSubagentSettings(CHILD_PI);
  const agents = join(world.agentDir, "agents");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "spare.md"),
    "---\nname: spare\ndescription: On the spare model\nmodel: spare\n---\nYou are spare.\n",
  );
  const r = await cli(world, ["run", "spare", `known-8804 ${script([{ text: "fine" }])}`, "--json"]);
  expect(r.code).toBe(0);
  expect(requestsWith("known-8804").map((q) => q.model)).toEqual(["spare-model"]);
  expect(summaryOf(r.json)[0].warnings).toBeUndefined();
}, 60_000);
