// This checkout as a pi package (`pi install <checkout>`, or npm): pi 1.x warns on every start when a package
// lists a host-provided package (@sinclair/typebox) as a dependency. Our bundle is self-contained, so it is a peer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { script } from "../../../src/scripted/model-server.ts";
import { piCmd, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  world.setSubagentSettings({}, { packages: [REPO] });
});
afterAll(async () => {
  await world.close();
});

test("pi 1.x loads the checkout as a package without a peerDependencies warning, and gets our tools", async () => {
  const before = world.server.requests.length;
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "node"), "-p", "--no-session", `package ${script([{ text: "ok" }])}`],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(stdout).toContain("ok");
  expect(stderr).not.toContain("peerDependencies");
  const tools = (world.server.requests[before]?.tools ?? []).map(
    (t: { function?: { name?: string } }) => t.function?.name,
  );
  expect(tools).toContain("delegate_to_subagents");
}, 60_000);
