// An isolated task's view of the ignored folders where the mechanism differs: inside the sandbox (bubblewrap runs in
// the view's namespace), as an ordinary user (an overlay needs a user namespace then, and the child must still run
// with the user's own ids), and on the docker runner (a container's daemon cannot see our namespace: the folders
// are copied, or cloned where the filesystem can). Real engines and a user made with useradd; the real pi against
// the scripted model; each project's own gate.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, requestsOfTask, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { LEFTPAD, npmProject as makeNpmProject, worktreesLeft } from "../../support/projects.ts";
import { ensureEngine } from "../../support/engines.ts";
import { asUser, chownTree, ensureTestUser } from "../../support/test-user.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  world.env.NPM_CONFIG_UPDATE_NOTIFIER = "false";
}, 600_000);
afterAll(() => world?.close());

const npmProject = (dir: string) => makeNpmProject(world.root, dir);
const ourWorktrees = () => worktreesLeft(world.root);

/** The child patches the dependency, says who it runs as, and changes one tracked file. */
const patcher = (marker: string) =>
  `${marker} ${script([
    {
      tool: "bash",
      args: {
        command: `echo 'module.exports.patched = true;' >> node_modules/leftpad/index.js && echo "uid=$(id -u) patched=$(grep -c patched node_modules/leftpad/index.js)"`,
      },
    },
    { tool: "write", args: { path: "test.js", content: "require('leftpad');\nconsole.log('tests passed');\n" } },
    { text: "done" },
  ])}`;

test("sandboxed: bubblewrap runs inside the view; the gate finds node_modules, the patch stays in the task", async () => {
  const skip = ensureEngine("bwrap");
  if (skip) return console.warn(skip);
  const repo = npmProject(join(world.root, "sandboxed"));
  const r = await cli(
    world,
    ["run", "default", patcher("SANDBOXED"), "--sandbox", "--isolation", "worktree", "--gate", "npm test", "--json"],
    { binary: true, cwd: repo },
  );
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(t.gate).toEqual({ passed: true, attempts: 1 });
  expect(JSON.stringify(requestsOfTask(world, "SANDBOXED").at(-1)?.messages)).toContain("patched=1");
  expect(readFileSync(join(repo, "node_modules", "leftpad", "index.js"), "utf8")).toBe(LEFTPAD);
  expect(t.isolation.files.map((f: { path: string }) => f.path)).toEqual(["test.js"]);
  expect(ourWorktrees()).toEqual([]);
}, 120_000);

test("an ordinary user: the overlay in a user namespace, the child and its gate with the user's own ids, the user's copy untouched", async () => {
  const user = ensureTestUser();
  if (typeof user === "string") return console.warn(user);
  const repo = npmProject(join(world.root, "as-user"));
  // The whole world (agent folder, database, repository) is the user's, as on their own machine.
  chownTree(world.root, user);
  try {
    const r = await cli(
      world,
      ["run", "default", patcher("ASUSER"), "--isolation", "worktree", "--gate", "npm test", "--json"],
      { binary: true, cwd: repo, prefix: asUser(user, []) },
    );
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(t.gate).toEqual({ passed: true, attempts: 1 });
    expect(t.isolation.view).toEqual({ mechanism: "overlay", included: [".env"] });
    expect(JSON.stringify(requestsOfTask(world, "ASUSER").at(-1)?.messages)).toContain(`uid=${user.uid} patched=1`);
    expect(readFileSync(join(repo, "node_modules", "leftpad", "index.js"), "utf8")).toBe(LEFTPAD);
    expect(ourWorktrees()).toEqual([]);
    const doctor = await cli(world, ["doctor", "--json", "--cwd", repo], { binary: true, prefix: asUser(user, []) });
    expect(doctor.json[0].checks.find((c: { name: string }) => c.name === "worktrees").detail).toContain(
      "through a layer at its own path (an overlay in a user namespace)",
    );
  } finally {
    chownTree(world.root, { name: "root", uid: 0, gid: 0 });
  }
}, 120_000);

test("the docker runner: the container gets the folders as a copy (or clones), and the child's patch stays in it", async () => {
  const skip = ensureEngine("docker");
  if (skip) return console.warn(skip);
  world.setSubagentSettings({ docker: { image: "subagents-test/base" } });
  try {
    const repo = npmProject(join(world.root, "docker"));
    // No gate here: a container's child runs on pi's json mode, which gates need more than (composing.md).
    const r = await cli(
      world,
      ["run", "default", patcher("DOCKER"), "--runner", "docker", "--isolation", "worktree", "--json"],
      {
        binary: true,
        cwd: repo,
      },
    );
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(JSON.stringify(requestsOfTask(world, "DOCKER").at(-1)?.messages)).toContain("uid=0 patched=1");
    expect(["copy", "reflink"]).toContain(t.isolation.view.mechanism);
    if (t.isolation.view.mechanism === "copy")
      expect(t.warnings.join("\n")).toContain("the task got a copy of the repository");
    expect(readFileSync(join(repo, "node_modules", "leftpad", "index.js"), "utf8")).toBe(LEFTPAD);
    expect(ourWorktrees()).toEqual([]);
  } finally {
    world.setSubagentSettings({});
  }
}, 600_000);
