// A confined task's layer over the user's own folder, written back by its owner (host/harvest-apply.ts) against
// real folders: a file the user changed meanwhile and one another task wrote first are conflicts (the user's
// version stays, the task's is kept aside and named), a folder the task deleted keeps the user's repository inside
// it, a folder the user swapped for a link meanwhile is not written through, names that are not UTF-8 come back,
// and the copy a container's child gets is read back the same way.
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktreeHost } from "../../../src/host/git-worktree.ts";
import { overlayWay, removalsDone } from "../../../src/host/cow-probe.ts";
import { gitIn as git } from "../../support/git-repo.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-apply-"));
// The layers' removal runs in the background (cow-probe.ts removeLater): waited for before the folder goes.
afterAll(async () => {
  await removalsDone();
  rmSync(root, { recursive: true, force: true });
});

function folder(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "src", "a.ts"), "a\n");
  writeFileSync(join(dir, "src", "b.ts"), "b\n");
  writeFileSync(join(dir, "notes.md"), "notes\n");
  mkdirSync(join(dir, "vendor", "lib"), { recursive: true });
  git(root, join(dir, "vendor", "lib"), "init", "-q");
  writeFileSync(join(dir, "vendor", "lib", "x.c"), "x\n");
  mkdirSync(join(dir, "d"));
  return dir;
}

function inView(enter: string[] | undefined, cwd: string, script: string): void {
  const argv = [...(enter ?? []), "/bin/sh", "-c", script];
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
}

const layered = async (data: string) => typeof (await overlayWay(join(data, "worktrees"))) === "object";

test("written back: the task's work; a file the user or another task changed meanwhile is a conflict, kept aside; a deleted folder keeps the repository in it; a folder swapped for a link is not written through", async () => {
  const dir = folder("inplace");
  const data = join(root, "data");
  if (!(await layered(data))) return console.warn("*** SKIPPING: no overlay here ***");
  const host = createWorktreeHost(data);
  const a = await host.inPlace({ cwd: dir, id: "aaaaaaaaaaaaaaaa", name: "a", local: true });
  const b = await host.inPlace({ cwd: dir, id: "bbbbbbbbbbbbbbbb", name: "b", local: true });
  expect([a.view?.mechanism, a.path]).toEqual(["overlay", dir]);
  inView(
    a.view?.enter,
    dir,
    `echo task-a > src/a.ts && echo task-a > src/b.ts && echo new > d/new.txt && rm -rf vendor && printf x > "$(printf 'n\\377')"`,
  );
  inView(b.view?.enter, dir, "echo task-b > src/b.ts");
  // While the tasks ran: the user changed a.ts and swapped d/ for a link to somewhere else.
  writeFileSync(join(dir, "src", "a.ts"), "the user's\n");
  const elsewhere = join(root, "elsewhere");
  mkdirSync(elsewhere);
  rmSync(join(dir, "d"), { recursive: true });
  symlinkSync(elsewhere, join(dir, "d"));
  const rb = await host.finish(b);
  expect(rb.left ?? []).toEqual([]);
  expect(readFileSync(join(dir, "src", "b.ts"), "utf8")).toBe("task-b\n");
  const ra = await host.finish(a);
  const said = (ra.left ?? []).join("\n");
  // a.ts (the user's change) and b.ts (task b's): not overwritten; the task's versions kept aside.
  expect(readFileSync(join(dir, "src", "a.ts"), "utf8")).toBe("the user's\n");
  expect(readFileSync(join(dir, "src", "b.ts"), "utf8")).toBe("task-b\n");
  const conflicts = /changed in your folder while the task ran \(by you or another task\): ([^—]*) —/.exec(said)?.[1];
  expect(conflicts?.split(", ").sort(), said).toEqual(["d", "src/a.ts", "src/b.ts"]);
  expect(readFileSync(join(data, "conflicts", a.id, "src", "a.ts"), "utf8")).toBe("task-a\n");
  // Through the link: nothing.
  expect(existsSync(join(elsewhere, "new.txt"))).toBe(false);
  expect(said).toContain("the way there in your folder is not a plain folder (a link, a file): d/new.txt");
  // The deleted folder: its files went, the repository in it stayed (and is named).
  expect(existsSync(join(dir, "vendor", "lib", "x.c"))).toBe(false);
  expect(lstatSync(join(dir, "vendor", "lib", ".git")).isDirectory()).toBe(true);
  expect(said).toContain("vendor/lib/.git");
  // A name that is not UTF-8 comes back as the same bytes.
  expect(readFileSync(Buffer.from(join(dir, `n${"\xff"}`), "latin1"), "utf8")).toBe("x");
});

test("a container's child gets a copy shown at the folder's path; the owner reads back what changed in it", async () => {
  const dir = folder("copied");
  const host = createWorktreeHost(join(root, "data-copy"));
  const c = await host.inPlace({ cwd: dir, id: "cccccccccccccccc", name: "c", local: false });
  expect(c.view?.mechanism === "copy" || c.view?.mechanism === "reflink").toBe(true);
  expect(c.path).toBe(dir);
  const copy = c.made!.copy!;
  writeFileSync(join(copy, "src", "a.ts"), "in the container\n");
  rmSync(join(copy, "notes.md"));
  mkdirSync(join(copy, ".pi"));
  writeFileSync(join(copy, ".pi", "settings.json"), "{}");
  symlinkSync("/etc/passwd", join(copy, "pw"));
  const r = await host.finish(c);
  expect(readFileSync(join(dir, "src", "a.ts"), "utf8")).toBe("in the container\n");
  expect(existsSync(join(dir, "notes.md"))).toBe(false);
  expect(existsSync(join(dir, ".pi"))).toBe(false);
  expect(existsSync(join(dir, "pw"))).toBe(false);
  expect((r.left ?? []).join("\n")).toContain(".pi — protected");
  expect(existsSync(copy)).toBe(false);
});

test("a task in a subfolder of a repository: the layer covers the repository (git works there), what it wrote outside its folder stays, named", async () => {
  const repo = join(root, "sub-repo");
  mkdirSync(join(repo, "pkg"), { recursive: true });
  git(root, repo, "init", "-q");
  writeFileSync(join(repo, "pkg", "a.ts"), "a\n");
  writeFileSync(join(repo, "shared.ts"), "shared\n");
  const data = join(root, "data-sub");
  if (!(await layered(data))) return console.warn("*** SKIPPING: no overlay here ***");
  const host = createWorktreeHost(data);
  const t = await host.inPlace({ cwd: join(repo, "pkg"), id: "dddddddddddddddd", name: "d", local: true });
  expect([t.path, t.cwd]).toEqual([repo, join(repo, "pkg")]);
  inView(t.view?.enter, t.cwd, "echo task > a.ts && echo task > ../shared.ts && git status --short >/dev/null");
  const r = await host.finish(t);
  expect(readFileSync(join(repo, "pkg", "a.ts"), "utf8")).toBe("task\n");
  expect(readFileSync(join(repo, "shared.ts"), "utf8")).toBe("shared\n");
  expect((r.left ?? []).join("\n")).toContain("shared.ts — outside the task's folder");
});
