// The embedded pi reads images through photon, whose wasm it must take from its own asset cache (the copy in
// the executable), not from the node_modules of the machine that built it. Shown by spoiling the cached copy:
// then, and only then, the child's image read fails.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PHOTON_WASM } from "../../../src/embedded/photon-wasm.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  // A 1×1 PNG.
  writeFileSync(
    join(world.workDir, "dot.png"),
    Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    ),
  );
});
afterAll(async () => {
  await world.close();
});

/** What the embedded child's read tool gave the model for dot.png. */
async function readImage(marker: string): Promise<string> {
  const r = await cli(
    world,
    [
      "run",
      "default",
      `${marker} ${script([{ tool: "read", args: { path: "dot.png" } }, { text: "seen" }])}`,
      "--json",
    ],
    { binary: true },
  );
  expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
  const req = world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker)).at(-1)!;
  return JSON.stringify(
    (req.messages ?? []).filter(
      (m) => (m.role !== "system" && m.role !== "user") || JSON.stringify(m.content).includes("image"),
    ),
  );
}

test("an embedded child reads an image with the wasm from its own asset cache", async () => {
  const ok = await readImage(`img-ok-${Date.now()}`);
  expect(ok).not.toContain("Image omitted");

  // The cache folder the pi role materialized under this world's HOME.
  const base = join(world.root, ".cache", "subagents");
  const version = readdirSync(base)[0];
  const wasm = join(base, version, readdirSync(join(base, version))[0], PHOTON_WASM);
  const good = readFileSync(wasm);
  writeFileSync(wasm, "not wasm");
  try {
    const spoiled = await readImage(`img-bad-${Date.now()}`);
    expect(spoiled).toContain("Image omitted");
  } finally {
    writeFileSync(wasm, good);
  }
}, 90_000);
