// A sandboxed task writes a layer; its owner takes back plain content (docs/sandbox-runners.md "What comes back"):
// with the real bubblewrap, the real pi as child against the scripted model, as root and as an ordinary user. The
// child tries what got out before — code planted through git's own data (plumbing commits of .pi/extensions and
// .envrc, a moved branch, a split index, config with core.fsmonitor), repositories and project config planted below
// the top in places a walk did not look (a folder named with an invalid UTF-8 byte, a bare-looking folder, more
// than 4,000 folders, a `.git` that is a link, a dangling `.envrc` link, hooks linked into the user's home), and
// variants (a FIFO, a link out of the folder, a file turned into a folder, a folder renamed) — and nothing of it
// reaches the user's folder, while its ordinary work (edits, a new and a binary file, a rename, a deletion, a build
// output, a `git commit`) comes back as plain files; two tasks changing one file: a conflict, not an overwrite.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, requestsOfTask, summaryOf, taskWhy, type PiWorld } from "../../support/pi-env.ts";
import { ensureEngine } from "../../support/engines.ts";
import { gitIn, makeRepo } from "../../support/git-repo.ts";
import { asUser, chownTree, ensureTestUser } from "../../support/test-user.ts";

let world: PiWorld;
let skip: string | null = null;
const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
beforeAll(async () => {
  skip = ensureEngine("bwrap");
  world = await piWorld();
}, 600_000);
afterAll(() => world?.close());

const probe = (marker: string, command: string) =>
  `probe ${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`;
const seenBy = (marker: string) =>
  (requestsOfTask(world, `probe ${marker}`).at(-1)?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

/** What the child does: ordinary work, and every way of planting code the issue found, at once. */
const WORK = [
  // Ordinary work.
  "echo edited >> a.txt && echo new > new.txt && printf '\\000\\001\\002binary' > bin.dat",
  "mv sub/keep.txt sub/moved.txt && rm gone.txt && mkdir -p dist/js && echo built > dist/js/app.js",
  "rm turned && mkdir turned && echo inside > turned/f",
  "git add -A && git -c user.email=c@c -c user.name=c commit -qm child && echo COMMITTED",
  // Code through git's own data: plumbing commits of .pi/extensions/x.js and .envrc, another branch moved.
  "b=$(echo 'evil()' | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$b,.pi/extensions/x.js",
  "git update-index --add --cacheinfo 100644,$b,.envrc && git -c user.email=c@c -c user.name=c commit -qm plant",
  "git update-ref refs/heads/release HEAD && git config core.fsmonitor /tmp/pwned-fsmonitor-hook && git update-index --split-index",
  // Below the top, where a walk did not look: a non-UTF-8 folder, a bare-looking folder, past 4,000 folders.
  "mkdir -p \"$(printf 'odd\\377')\" && echo evil > \"$(printf 'odd\\377')/.envrc\" && git init -q \"$(printf 'odd\\377')/r\"",
  "mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned-bare\\n' > bare/config",
  "mkdir -p $(seq -f 'many/d%g' 4100) && echo evil > many/d4100/.envrc",
  // Links: a .git that is a link, a dangling .envrc, hooks and config linked to the user's files, a link out.
  "mkdir -p linked && ln -s /tmp linked/.git && ln -s /nonexistent/evil .envrc2 && mv .envrc2 .envrc",
  'git init -q r2 && rm -rf r2/.git/hooks && ln -s "$VICTIM/hooks" r2/.git/hooks && ln -sf "$VICTIM/config" r2/.git/config',
  'ln -s "$VICTIM" out && mkfifo pipe && echo PLANTED',
].join(" && ");

function project(name: string): string {
  const repo = makeRepo(world.root, join(world.root, name), false);
  writeFileSync(join(repo, "gone.txt"), "to delete\n");
  writeFileSync(join(repo, "turned"), "a file, then a folder\n");
  writeFileSync(join(repo, ".gitignore"), "dist/\n");
  gitIn(world.root, repo, "add", "-A");
  gitIn(world.root, repo, "commit", "-q", "-m", "more");
  return repo;
}

/** The user's repository after the run: its log and refs as they were, the child's work as plain files. */
function checkUserTree(repo: string, victim: string, log: string, refs: string, warnings: string): void {
  expect(gitIn(world.root, repo, "log", "--format=%s")).toBe(log);
  expect(gitIn(world.root, repo, "for-each-ref", "--format=%(refname)")).toBe(refs);
  expect(gitIn(world.root, repo, "config", "--default", "none", "--get", "core.fsmonitor").trim()).toBe("none");
  expect(existsSync(join(repo, ".git", "sharedindex.0000000000000000000000000000000000000000"))).toBe(false);
  expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("one\nedited\n");
  expect(readFileSync(join(repo, "new.txt"), "utf8")).toBe("new\n");
  expect(readFileSync(join(repo, "bin.dat"))).toEqual(Buffer.from("\x00\x01\x02binary", "latin1"));
  expect(readFileSync(join(repo, "sub", "moved.txt"), "utf8")).toBe("k\n");
  expect(existsSync(join(repo, "sub", "keep.txt"))).toBe(false);
  expect(existsSync(join(repo, "gone.txt"))).toBe(false);
  expect(readFileSync(join(repo, "dist", "js", "app.js"), "utf8")).toBe("built\n");
  expect(readFileSync(join(repo, "turned", "f"), "utf8")).toBe("inside\n");
  // The child's commit is not the user's: its content is, uncommitted (empty folders do not show here).
  const ls = (d: string) => (existsSync(d) ? readdirSync(d).join(" ") : "none");
  expect(
    gitIn(world.root, repo, "status", "--porcelain").split("\n").filter(Boolean).sort(),
    `${ls(repo)} | turned: ${ls(join(repo, "turned"))}`,
  ).toEqual(
    // (git lists no untracked folder where a tracked file was: turned/f is checked above.)
    [" D gone.txt", " D sub/keep.txt", " D turned", " M a.txt", "?? bin.dat", "?? new.txt", "?? sub/moved.txt"].sort(),
  );
  // Nothing planted: no project config, no repository, no link, no FIFO.
  const odd = (rest: string) => Buffer.concat([Buffer.from(`${repo}/odd`), Buffer.from([0xff]), Buffer.from(rest)]);
  for (const p of [".pi", ".envrc", "bare", "many/d4100/.envrc", "linked/.git", "r2/.git", "out", "pipe"])
    expect(lstatOrNull(join(repo, p)), p).toBeNull();
  for (const p of ["/.envrc", "/r/.git"]) expect(lstatOrNull(odd(p)), `odd\\377${p}`).toBeNull();
  expect(readdirSync(join(repo, "many"))).toHaveLength(4100);
  // The user's files the links pointed at: as they were.
  expect(readFileSync(join(victim, "hooks", "authorized_keys"), "utf8")).toBe("ssh-ed25519 KEEP\n");
  expect(readFileSync(join(victim, "config"), "utf8")).toBe("[alias]\n\tco = checkout\n");
  // Each kind of what stayed is named.
  for (const w of [
    "the child's git commits, refs and config stay behind",
    "— protected",
    "— git data",
    "— symbolic links that point out of the folder",
    "pipe — not a regular file",
  ])
    expect(warnings, warnings).toContain(w);
}

function lstatOrNull(p: string | Buffer) {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

function victimFolder(name: string): string {
  const victim = join(world.root, name);
  mkdirSync(join(victim, "hooks"), { recursive: true });
  writeFileSync(join(victim, "hooks", "authorized_keys"), "ssh-ed25519 KEEP\n");
  writeFileSync(join(victim, "config"), "[alias]\n\tco = checkout\n");
  return victim;
}

test("the child writes a layer; the owner takes back its plain work and none of what it planted (root)", async () => {
  if (skip) return console.warn(skip);
  const repo = project(`repo-${tag}`);
  const victim = victimFolder(`victim-${tag}`);
  const [log, refs] = [
    gitIn(world.root, repo, "log", "--format=%s"),
    gitIn(world.root, repo, "for-each-ref", "--format=%(refname)"),
  ];
  const marker = `root${tag}`;
  const r = await cli(world, ["run", "default", probe(marker, WORK), "--sandbox", "--json"], {
    binary: true,
    cwd: repo,
    env: { VICTIM: victim },
  });
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(seenBy(marker)).toContain("COMMITTED");
  expect(seenBy(marker)).toContain("PLANTED");
  checkUserTree(repo, victim, log, refs, (t.warnings ?? []).join("\n"));
}, 120_000);

test("an ordinary user (a user namespace with userxattr, then bubblewrap): the same", async () => {
  if (skip) return console.warn(skip);
  const user = ensureTestUser();
  if (typeof user === "string") return console.warn(user);
  const repo = project(`repo-user-${tag}`);
  const victim = victimFolder(`victim-user-${tag}`);
  const [log, refs] = [
    gitIn(world.root, repo, "log", "--format=%s"),
    gitIn(world.root, repo, "for-each-ref", "--format=%(refname)"),
  ];
  chownTree(world.root, user);
  const marker = `user${tag}`;
  let r: Awaited<ReturnType<typeof cli>>;
  try {
    r = await cli(world, ["run", "default", probe(marker, WORK), "--sandbox", "--json"], {
      binary: true,
      cwd: repo,
      env: { VICTIM: victim },
      prefix: asUser(user, []),
    });
  } finally {
    chownTree(world.root, { name: "root", uid: 0, gid: 0 });
  }
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(seenBy(marker)).toContain("PLANTED");
  checkUserTree(repo, victim, log, refs, (t.warnings ?? []).join("\n"));
}, 120_000);
