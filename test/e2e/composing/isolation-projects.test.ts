// Isolated tasks build like the user's tree: a monorepo installed from the registry (test/support/real-projects.ts:
// TypeScript projects built with `tsc -b`, a pnpm project, a yarn 4 PnP project whose cache is reached by relative
// paths, a Python venv) run by the real pi as child, as root and as an ordinary user. In one task: `tsc -b` is
// incremental from the user's build info, a build deletes and makes its output again, `npm install <pkg>`, pnpm's
// links and yarn PnP resolve with no setup, `pip install` into the venv, `rm -rf node_modules`. The user's tree is
// fingerprinted before and after: unchanged. The branch holds the tracked changes only.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, requestsOfTask, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { gitIn, treeHash } from "../../support/git-repo.ts";
import { monorepo, monorepoTools } from "../../support/real-projects.ts";
import { asUser, chownTree, ensureTestUser, type TestUser } from "../../support/test-user.ts";
import { ensureEngine } from "../../support/engines.ts";

let world: PiWorld;
let skip: string | null = null;
beforeAll(async () => {
  // Debian's python3-venv for the monorepo's Python package (engines.sh installs it as root).
  skip = ensureEngine("python");
  world = await piWorld();
  world.env.NPM_CONFIG_UPDATE_NOTIFIER = "false";
}, 600_000);
afterAll(() => world?.close());

/** The owner adds the branch and its objects to the user's git folder, and git refreshes its index: nothing else. */
const fingerprint = (repo: string) =>
  treeHash(repo, (p) =>
    [".git/index", ".git/logs", ".git/objects", ".git/refs/heads/subagents"].some((s) => p.startsWith(s)),
  );

function work(repo: string): string {
  const { npmCache } = monorepoTools(repo);
  return [
    "set -e",
    // The user's build info is there: nothing to build.
    'cd ts && npx tsc -b --verbose 2>&1 | grep -q "is up to date because" && echo INCREMENTAL',
    // A build that cleans its own output, and makes it again.
    "echo 'export const answer = (): number => 42;' > lib/src/index.ts && npx tsc -b --clean && rm -rf lib/dist app/dist && npx tsc -b && echo ANSWER=$(node app/dist/main.js)",
    `npm install --offline --no-audit --no-fund --cache ${npmCache} is-odd@3.0.1 >/dev/null && node -e "console.log('IS-ODD=' + require('is-odd')(3))"`,
    "cd ../pn && node -e \"console.log('PNPM=' + require('left-pad')(1, 3, 0))\"",
    "cd ../yp && node -r ./.pnp.cjs -e \"console.log('PNP=' + require('left-pad')(2, 3, 0))\"",
    "cd ../py && .venv/bin/pip install --no-index --quiet ./greet-1.0-py3-none-any.whl && .venv/bin/python -c \"import greet; print('PIP=' + greet.hello())\"",
    "cd ../ts && rm -rf node_modules && echo MODULES-GONE",
  ].join("\n");
}

async function buildInTask(name: string, user?: TestUser): Promise<void> {
  if (skip) return console.warn(skip);
  const repo = monorepo(join(world.root, name));
  if (user) chownTree(world.root, user);
  try {
    const before = fingerprint(repo);
    const marker = `BUILD-${name}`;
    const r = await cli(
      world,
      [
        "run",
        "default",
        `${marker} ${script([{ tool: "bash", args: { command: work(repo) } }, { text: "built" }])}`,
        "--isolation",
        "worktree",
        "--json",
      ],
      { binary: true, cwd: repo, ...(user ? { prefix: asUser(user, []) } : {}) },
    );
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const seen = JSON.stringify(requestsOfTask(world, marker).at(-1)?.messages);
    for (const said of [
      "INCREMENTAL",
      "ANSWER=42",
      "IS-ODD=true",
      "PNPM=001",
      "PNP=002",
      "PIP=hello from greet",
      "MODULES-GONE",
    ])
      expect(seen, seen.slice(-2500)).toContain(said);
    expect(t.isolation.view.mechanism).toBe("overlay");
    // Its branch: the tracked changes — the edit, and what `npm install <pkg>` wrote into package.json and its lock;
    // never the build output, build info or installed packages (ignored files).
    expect(t.isolation.files.map((f: { path: string }) => f.path)).toEqual([
      "ts/lib/src/index.ts",
      "ts/package-lock.json",
      "ts/package.json",
    ]);
    expect(
      gitIn(world.root, repo, "-c", "safe.directory=*", "show", `${t.isolation.branch}:ts/lib/src/index.ts`),
    ).toContain("42");
    expect(fingerprint(repo)).toBe(before);
  } finally {
    if (user) chownTree(world.root, { name: "root", uid: 0, gid: 0 });
  }
}

test("root: tsc -b incremental and a clean build, npm install, pnpm, yarn PnP, pip install, rm -rf node_modules — in an isolated task, the user's tree unchanged", async () => {
  await buildInTask("mono-root");
}, 180_000);

test("an ordinary user (a user namespace, userxattr): the same", async () => {
  const user = ensureTestUser();
  if (typeof user === "string") return console.warn(user);
  await buildInTask("mono-user", user);
}, 180_000);
