// Real git repositories in temp folders for the isolation tests, and a look at what the user would see.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** git in `cwd`, with HOME pointing at `home` so no user's global config leaks in. */
export const gitIn = (home: string, cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, HOME: home } });

/** A repo with one commit; `dirty` adds an uncommitted edit, an untracked file and an ignored one. */
export function makeRepo(home: string, repo: string, dirty = true): string {
  mkdirSync(join(repo, "sub"), { recursive: true });
  gitIn(home, repo, "init", "-q", "-b", "main");
  gitIn(home, repo, "config", "user.email", "me@example.com");
  gitIn(home, repo, "config", "user.name", "Me");
  writeFileSync(join(repo, "a.txt"), "one\n");
  writeFileSync(join(repo, ".gitignore"), "*.log\n");
  writeFileSync(join(repo, "sub", "keep.txt"), "k\n");
  gitIn(home, repo, "add", "-A");
  gitIn(home, repo, "commit", "-q", "-m", "first");
  if (!dirty) return repo;
  writeFileSync(join(repo, "a.txt"), "one\ntwo (uncommitted)\n");
  writeFileSync(join(repo, "new.txt"), "untracked\n");
  writeFileSync(join(repo, "debug.log"), "ignored\n");
  return repo;
}

/** The index is read first, and status may not refresh it (--no-optional-locks): only we could have changed it. */
export function userState(home: string, repo: string) {
  const index = join(repo, ".git", "index");
  const before = { mtime: statSync(index).mtimeMs, bytes: readFileSync(index).toString("base64") };
  return {
    ...before,
    status: gitIn(home, repo, "--no-optional-locks", "status", "--porcelain"),
    head: gitIn(home, repo, "rev-parse", "HEAD"),
  };
}

export const subagentBranches = (home: string, repo: string) =>
  gitIn(home, repo, "branch", "--list", "subagents/*", "--format=%(refname:short)").split("\n").filter(Boolean);
export const worktreeList = (home: string, repo: string) =>
  gitIn(home, repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "));

/** A fingerprint of a folder as its owner would check it: every entry's path (as bytes), kind, mode and content
 *  (a link's target), `.git` included except what git rewrites on its own (`git branch` in the branch-making tests
 *  is checked through the refs named). Equal before and after: nothing was written there. */
export function treeHash(dir: string, skip: (rel: string) => boolean = () => false): string {
  const h = createHash("sha256");
  const walk = (rel: Buffer) => {
    const at = rel.length ? Buffer.concat([Buffer.from(`${dir}/`), rel]) : Buffer.from(dir);
    const names = (readdirSync(at, { encoding: "buffer" }) as Buffer[]).sort(Buffer.compare);
    for (const n of names) {
      const p = rel.length ? Buffer.concat([rel, Buffer.from("/"), n]) : n;
      if (skip(p.toString())) continue;
      const abs = Buffer.concat([Buffer.from(`${dir}/`), p]);
      const st = lstatSync(abs);
      h.update(p).update(`\0${st.mode}\0`);
      if (st.isDirectory()) walk(p);
      else if (st.isSymbolicLink()) h.update(readlinkSync(abs, { encoding: "buffer" }));
      else if (st.isFile()) h.update(readFileSync(abs));
    }
  };
  walk(Buffer.alloc(0));
  return h.digest("hex");
}
