// The sandbox's protected paths (sandbox-guard.ts) on real folders and real git repositories, how bwrap and docker
// mount them, who may open one (subagents.sandboxWritable), and how a refused write is named in the warnings.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { sandboxGuard } from "../../../../src/core/run/runners/sandbox-guard.ts";
import { refusedWrites, setPlantedAside } from "../../../../src/core/run/runners/guard-report.ts";
import { bwrapArgv } from "../../../../src/core/run/runners/sandbox.ts";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";

const host = createBunHost(bunDbOpener(Database));
const root = mkdtempSync(join(tmpdir(), "guard-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const git = (cwd: string, ...a: string[]) =>
  execFileSync("git", a, { cwd, encoding: "utf8", env: { ...process.env, HOME: root } });

function repo(name: string): string {
  const r = join(root, name);
  mkdirSync(r);
  git(r, "init", "-q", "-b", "main");
  git(r, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "a");
  return r;
}
const guardOf = (cwd: string, writable = [cwd], open: string[] = []) =>
  sandboxGuard(host, { roots: [cwd], writable, home: root, cwd, open });
const how = (g: ReturnType<typeof guardOf>, p: string) => g.binds.find((b) => b.path === p)?.how;

test("a repository: .git is its own mount point, config and hooks read-only, a missing .pi and hooks folder get placeholders", () => {
  const r = repo("plain");
  rmSync(join(r, ".git", "hooks"), { recursive: true, force: true });
  mkdirSync(join(r, ".vscode"));
  const g = guardOf(r);
  expect(how(g, `${r}/.git`)).toBe("rw");
  expect(how(g, `${r}/.git/config`)).toBe("ro");
  expect(how(g, `${r}/.git/hooks`)).toBe("empty");
  expect(how(g, `${r}/.pi`)).toBe("empty");
  expect(how(g, `${r}/.vscode`)).toBe("ro");
  // Missing and without a placeholder: checked after the run.
  expect(g.missing).toContain(`${r}/.git/commondir`);
  expect(g.missing).toContain(`${r}/.envrc`);
  // Parents are mounted before what lies in them.
  expect(g.binds.findIndex((b) => b.path === `${r}/.git`)).toBeLessThan(
    g.binds.findIndex((b) => b.path === `${r}/.git/config`),
  );
  const argv = bwrapArgv({
    argv: ["pi"],
    cwd: r,
    home: root,
    agentDir: `${root}/agent`,
    agentEntries: [],
    writable: [r],
    readable: [],
    guard: g.binds,
  }).join(" ");
  expect(argv).toContain(`--bind ${r} ${r} --bind ${r}/.git ${r}/.git --ro-bind ${r}/.git/config ${r}/.git/config`);
  expect(argv).toContain(`--tmpfs ${r}/.pi --remount-ro ${r}/.pi`);
});

test("core.hooksPath inside the folder (husky style) is protected; an existing .pi is read-only but its agent memory stays writable", () => {
  const r = repo("husky");
  git(r, "config", "core.hooksPath", ".husky/_");
  mkdirSync(join(r, ".pi", "agent-memory"), { recursive: true });
  mkdirSync(join(r, ".pi", "agents"));
  const g = guardOf(r);
  expect(how(g, `${r}/.husky/_`)).toBe("empty");
  expect(how(g, `${r}/.pi`)).toBe("ro");
  expect(how(g, `${r}/.pi/agent-memory`)).toBe("rw");
  // Opened on purpose: writable again inside the read-only .pi; the rest of it stays protected.
  const opened = guardOf(r, [r], [".pi/agents"]);
  expect(how(opened, `${r}/.pi`)).toBe("ro");
  expect(how(opened, `${r}/.pi/agents`)).toBe("rw");
  expect(opened.watched).not.toContain(`${r}/.pi/agents`);
  expect(how(guardOf(r, [r], [".git/hooks"]), `${r}/.git/hooks`)).toBeUndefined();
});

test("a linked worktree: its .git file read-only; the shared git folder read-only with objects, refs, logs and its own folder writable", () => {
  const r = repo("main");
  const wt = join(root, "wt");
  git(r, "worktree", "add", "-q", "--detach", wt);
  const gd = `${r}/.git/worktrees/wt`;
  const g = guardOf(wt, [wt, gd]);
  expect(how(g, `${wt}/.git`)).toBe("ro");
  const order = ["", "/worktrees/wt", "/objects", "/refs", "/logs"].map((s) =>
    g.binds.findIndex((b) => b.path === `${r}/.git${s}`),
  );
  expect(order.every((i) => i >= 0)).toBe(true);
  expect(order[0]).toBeLessThan(order[1]);
  expect(g.binds.map((b) => `${b.path}:${b.how}`)).toEqual(
    expect.arrayContaining([
      `${r}/.git:ro`,
      `${gd}:rw`,
      `${r}/.git/objects:rw`,
      `${r}/.git/refs:rw`,
      `${gd}/commondir:ro`,
    ]),
  );
  expect(g.watched).toContain(`${r}/.git/hooks`);
});

test("repositories one level down are protected too", () => {
  const top = join(root, "many");
  mkdirSync(top);
  const r = repo("many/one");
  expect(how(guardOf(top), `${r}/.git/config`)).toBe("ro");
});

test("refused writes are named in the warnings (EROFS, EBUSY, relative, absolute and ~/ forms); a created .git/commondir is removed", () => {
  const r = repo("report");
  const g = guardOf(r);
  const text = [
    `/bin/bash: line 1: .git/hooks/pre-commit: Read-only file system`,
    `error: could not write config file ${r}/.git/config: Device or resource busy`,
    `mkdir: cannot create directory ‘.pi/extensions’: Read-only file system`,
    `touch: cannot touch '/etc/x': Read-only file system`,
    `.git/hooks/pre-commit mentioned without an error`,
  ].join("\n");
  const [w] = refusedWrites(g, [{ role: "toolResult", name: "bash", text, isError: true }]);
  expect(w).toContain(".git/hooks/pre-commit");
  expect(w).toContain(`${r}/.git/config`);
  expect(w).toContain(".pi/extensions");
  expect(w).not.toContain("/etc/x");
  const home = refusedWrites({ ...g, home: root }, [
    { role: "toolResult", name: "bash", text: `~/report/.git/config: Read-only file system`, isError: true },
  ]);
  expect(home[0]).toContain("~/report/.git/config");
  expect(refusedWrites(g, [{ role: "toolResult", name: "bash", text: "all fine", isError: false }])).toEqual([]);
  writeFileSync(`${r}/.git/commondir`, "/elsewhere\n");
  const after = setPlantedAside(host, g);
  expect(after.join("\n")).toContain(".git/commondir");
  expect(existsSync(`${r}/.git/commondir`)).toBe(false);
  git(r, "status");
});

test("settings: sandboxWritable is the person's alone; a project cannot open its own protections", () => {
  expect(mergeSettings(defaultSettings(), { sandboxWritable: [".pi/agents/"] }).settings.sandboxWritable).toEqual([
    ".pi/agents",
  ]);
  const project = mergeSettings(defaultSettings(), { sandboxWritable: [".git/hooks"] }, "proj", false);
  expect(project.settings.sandboxWritable).toEqual([]);
  expect(project.warnings.join("\n")).toContain("subagents.sandboxWritable may be set only in your own settings");
  expect(mergeSettings(defaultSettings(), { sandboxWritable: "x" }).warnings[0]).toContain(
    "sandboxWritable must be a list of paths",
  );
});

test("protected names that are links: a dangling one (tracked pkg/.vscode) gets no mount (bubblewrap would fail the run on it) and its target is looked at after the run; one leading inside protects its target; one leading out or through a link on the way is not mounted", () => {
  const r = repo("links");
  const outside = mkdtempSync(join(root, "outside-"));
  mkdirSync(join(r, "pkg"));
  mkdirSync(join(r, "real-vscode"));
  symlinkSync("../no-such-folder", join(r, "pkg", ".vscode"));
  symlinkSync("real-vscode", join(r, ".vscode"));
  symlinkSync(outside, join(r, ".idea"));
  symlinkSync(outside, join(r, "via"));
  mkdirSync(join(outside, ".claude"));
  symlinkSync("no-such-pi", join(r, ".pi"));
  const g = guardOf(r);
  const paths = g.binds.map((b) => b.path);
  // Nothing mounted at a link, through a link, or out of the folder.
  for (const p of paths) expect(host.realpath(p) ?? p, p).toBe(p);
  expect(paths).not.toContain(`${r}/pkg/.vscode`);
  expect(paths).not.toContain(`${r}/.idea`);
  expect(paths).not.toContain(`${r}/.pi`);
  expect(paths.some((p) => p.startsWith(outside))).toBe(false);
  // The link inside: its target is read-only.
  expect(how(g, `${r}/real-vscode`)).toBe("ro");
  // Dangling: where it leads is checked after the run (the child could make it there).
  expect(g.missing).toContain(`${r}/no-such-folder`);
  expect(g.missing).toContain(`${r}/no-such-pi`);
  // The links themselves are the person's, tracked: not moved aside after a run that did not touch them.
  expect(setPlantedAside(host, g)).toEqual([]);
  expect(lstatSync(join(r, "pkg", ".vscode")).isSymbolicLink()).toBe(true);
  // The child made the dangling one's target: moved aside and named.
  mkdirSync(join(r, "no-such-folder"));
  expect(setPlantedAside(host, g).join("\n")).toContain(`${r}/no-such-folder`);
  expect(existsSync(join(r, "no-such-folder.quarantined"))).toBe(true);
});
