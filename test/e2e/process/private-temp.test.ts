// Where the runner keeps its temp files (system-prompt files, each run's TMPDIR): a private folder another local user
// can neither create first nor read, removed when the process exits (REAL pi child, scripted model).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
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

test("prompt files live in a private 0700 folder with a random name, removed when the CLI exits", async () => {
  const tmp = join(world.root, "tmp");
  mkdirSync(tmp, { recursive: true });
  // The child lists the folder its system-prompt file is in, while the CLI is still running: its own TMPDIR is a
  // folder of its run inside it.
  const r = await cli(
    world,
    [
      "run",
      "default",
      `look ${script([{ tool: "bash", args: { command: 'ls -ld "$(dirname "$TMPDIR")"' } }, { text: "looked" }])}`,
      "--json",
    ],
    { env: { TMPDIR: tmp } },
  );
  expect(r.code).toBe(0);
  const listing = JSON.stringify(world.server.requests.at(-1)!.messages);
  // Named for its process (PID and start time, so a killed one's is found: host/temp-dirs.ts) and a random part.
  expect(listing).toMatch(new RegExp(`drwx------ [^\\n]*${tmp}/subagents-\\d+\\.\\d+-[A-Za-z0-9]{6}`));
  expect(readdirSync(tmp).filter((n) => n.startsWith("subagents-"))).toEqual([]);
}, 60_000);
