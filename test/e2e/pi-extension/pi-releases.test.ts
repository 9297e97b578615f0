// Smoke set for the pi releases users may still have as their system pi: 1.5.2 (the 1.x before the embedded one,
// "prior"), 0.87.1 (the last 0.x, "previous") and 0.73.1 (the last under the old name, "old"). Each runs a CLI child
// (childPi pointing at it) and a parent pi with our extension, whose children run the executable beside the bundle
// (the newer pi) or, with childPi "system", that same pi. The full e2e suite runs on current pi (1.x).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { runParentPi } from "../../support/parent-pi.ts";
import { cli, PI_PACKAGE_DIRS, piWorld, REPO, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const piOfRun = (prompt: string) => {
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  try {
    return (
      db.query("SELECT pi FROM runs WHERE prompt LIKE ? ORDER BY id DESC LIMIT 1").get(`${prompt}%`) as {
        pi: string;
      } | null
    )?.pi;
  } finally {
    db.close();
  }
};

for (const [release, version, runtime] of [
  ["prior", "1.5.2", "node"],
  ["previous", "0.87.1", "node"],
  ["old", "0.73.1", "bun"],
] as const) {
  describe(`pi ${version} (${release}) as the system pi`, () => {
    test("a CLI child runs it (childPi names its package) and the run records it", async () => {
      world.setSubagentSettings({ childPi: PI_PACKAGE_DIRS[release] });
      try {
        const prompt = `cli child on ${version}`;
        const r = await cli(
          world,
          [
            "delegate",
            `${prompt} ${script([{ tool: "bash", args: { command: "echo hi" } }, { text: `answer from ${version}` }])}`,
            "--json",
          ],
          { binary: true },
        );
        expect(r.code, r.stderr).toBe(0);
        const [task] = summaryOf(r.json);
        expect(task.status, taskWhy(task)).toBe("completed");
        expect(task.output).toBe(`answer from ${version}`);
        expect(piOfRun(prompt)).toStartWith(`pi ${version} · ${runtime} `);
      } finally {
        world.setSubagentSettings({});
      }
    }, 90_000);

    const kept = release !== "old";
    test(`three tasks at 1: ${kept ? "kept in one child (pi reports agent_settled)" : "a child each (no agent_settled: never kept)"}`, async () => {
      const pids = join(world.root, `pids-${release}`);
      mkdirSync(pids, { recursive: true });
      world.setSubagentSettings({ childPi: PI_PACKAGE_DIRS[release] });
      try {
        const task = (n: string) =>
          `${n} on ${version} ${script([{ tool: "bash", args: { command: `echo $PPID > "$PIDS_DIR/${n}"` } }, { text: `answer ${n}` }])}`;
        const r = await cli(world, ["delegate", "--json", "--concurrency", "1", task("a"), task("b"), task("c")], {
          binary: true,
          env: { PIDS_DIR: pids },
        });
        expect(r.code, r.stderr).toBe(0);
        expect(summaryOf(r.json).map((t) => [t.status, t.output])).toEqual(
          ["a", "b", "c"].map((n) => ["completed", `answer ${n}`]),
        );
        const used = new Set(["a", "b", "c"].map((n) => readFileSync(join(pids, n), "utf8").trim()));
        expect(used.size).toBe(kept ? 1 : 3);
      } finally {
        world.setSubagentSettings({});
      }
    }, 90_000);

    test("a parent pi with our extension (-e dist/extension.js) delegates: by default to the newer embedded pi beside the bundle, with childPi system to its own pi", async () => {
      const ran = async (prompt: string) => {
        const r = await runParentPi(world, {
          runtime,
          release,
          steps: [
            { tool: "delegate_to_subagents", args: { tasks: [{ name: "one", prompt }] } },
            { text: "parent done" },
          ],
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.results[0].text).toMatch(/^✓ one: completed/);
        return piOfRun(prompt);
      };
      // Under Node 20 (0.73.1's node on CI) the store is in memory; the record is checked where there is one.
      const auto = await ran(`parent on ${version}, auto`);
      if (auto !== undefined) expect(auto).toContain(`embedded (${join(REPO, "dist", "subagents")})`);
      world.setSubagentSettings({ childPi: "system" });
      try {
        const own = await ran(`parent on ${version}, system`);
        if (own !== undefined) expect(own).toStartWith(`pi ${version} · `);
      } finally {
        world.setSubagentSettings({});
      }
    }, 90_000);
  });
}
