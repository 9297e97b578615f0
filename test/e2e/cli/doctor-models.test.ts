// `doctor` checks every model the setup names against the pi children run (`pi --list-models`): pi's default, an
// agent's model and the fallback models. Real pi (the embedded one and the current pi), no network.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listed, parseModelList } from "../../../src/cli/doctor/models.ts";
import {
  cli,
  CURRENT_PI_RE,
  CURRENT_PI_VERSION,
  PI_PACKAGE_DIRS,
  piWorld,
  setModels,
  type PiWorld,
} from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  setModels(world, [{ id: "fake-model" }, { id: "spare-model" }]);
});
afterAll(() => world.close());

const modelsCheck = async (binary: boolean) => {
  const r = await cli(world, ["doctor", "--json"], { binary });
  return { code: r.code, check: (JSON.parse(r.stdout).checks as any[]).find((c) => c.name === "models") };
};

test("pi's model table parses to provider/model; names match as pi matches them", () => {
  const rows = parseModelList(
    "provider  model       context  max-out  thinking  images\nfake      fake-model  128K     16.4K    no        no    \nfake      spare-model  128K  16.4K  no  no\n",
  );
  expect(rows).toEqual(["fake/fake-model", "fake/spare-model"]);
  expect(listed("fake/spare-model", rows)).toBe(true);
  expect(listed("spare", rows)).toBe(true);
  expect(listed("fake/spare", rows)).toBe(false);
  expect(listed("ghost-model", rows)).toBe(false);
});

for (const [label, settings, binary, version] of [
  ["the embedded pi", { childPi: "embedded" }, true, new RegExp(`pi ${CURRENT_PI_RE}`)],
  [
    `pi ${CURRENT_PI_VERSION}`,
    { childPi: PI_PACKAGE_DIRS.current, childRuntime: "node" },
    false,
    new RegExp(`pi ${CURRENT_PI_RE}`),
  ],
] as const) {
  test(`doctor against ${label}: ✓ when every named model is offered, ✗ naming each one that is not`, async () => {
    const agents = join(world.agentDir, "agents");
    mkdirSync(agents, { recursive: true });
    world.setSubagentSettings({ ...settings, fallbackModels: ["fake/spare-model"] });
    const good = await modelsCheck(binary);
    expect(good.check.status, good.check.detail).toBe("ok");
    expect(good.check.detail).toMatch(version);
    writeFileSync(
      join(agents, "ghostly.md"),
      "---\nname: ghostly\ndescription: On a model pi lacks\nmodel: fake/phantom-model\n---\nBoo.\n",
    );
    world.setSubagentSettings(
      { ...settings, fallbackModels: ["fake/spare-model", "fake/gone-model"] },
      { defaultProvider: "fake", defaultModel: "ghost-model" },
    );
    try {
      const bad = await modelsCheck(binary);
      expect(bad.check.status, bad.check.detail).toBe("fail");
      expect(bad.code).toBe(1);
      expect(bad.check.detail).toMatch(version);
      expect(bad.check.detail).toContain("fake/ghost-model (pi's default model)");
      expect(bad.check.detail).toContain("fake/phantom-model (agent ghostly)");
      expect(bad.check.detail).toContain("fake/gone-model (subagents.fallbackModels)");
      expect(bad.check.detail).not.toContain("spare-model");
    } finally {
      rmSync(join(agents, "ghostly.md"), { force: true });
      world.setSubagentSettings({});
    }
  }, 60_000);
}
