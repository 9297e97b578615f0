// The pure parts of the sandbox and the runners: settings, agent front matter, task fields, the bwrap and
// docker/srun command lines, and the shared-filesystem test.
import { expect, test } from "bun:test";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";
import { parseProfile } from "../../../../src/core/profiles/profile.ts";
import { parseDelegateParams } from "../../../../src/core/delegate-input.ts";
import { bwrapArgv, hiddenArgvPaths } from "../../../../src/core/run/runners/sandbox.ts";
import { dockerArgv } from "../../../../src/core/run/runners/docker.ts";
import { fsTypeOf, srunArgv } from "../../../../src/core/run/runners/slurm.ts";
import type { PlaceRequest } from "../../../../src/core/run/runners/types.ts";
import { runnerNamed } from "../../../../src/core/run/runners/index.ts";
import { RUNNER_NAMES } from "../../../../src/core/runner-settings.ts";

test("settings: sandbox on/off, runner and engine options from the user's settings", () => {
  const { settings, warnings } = mergeSettings(defaultSettings(), {
    sandbox: "on",
    runner: "docker",
    docker: { image: "img:1", network: "bridge", args: ["--memory", "2g"] },
    slurm: { partition: "gpu", args: ["--time=10"] },
  });
  expect(warnings).toEqual([]);
  expect(settings.sandbox).toBe("on");
  expect(settings.runner).toBe("docker");
  expect(settings.docker).toEqual({ image: "img:1", network: "bridge", args: ["--memory", "2g"] });
  expect(settings.slurm).toEqual({ partition: "gpu", args: ["--time=10"] });
  expect(defaultSettings().sandbox).toBe("off");
  expect(defaultSettings().runner).toBe("local");
});

test("settings: a project may turn the sandbox on, never off, and may not choose the runner or its arguments", () => {
  const user = mergeSettings(defaultSettings(), { sandbox: "on" }).settings;
  const project = mergeSettings(
    user,
    { sandbox: "off", runner: "docker", docker: { image: "evil" }, slurm: { args: ["x"] } },
    "proj",
    false,
  );
  expect(project.settings.sandbox).toBe("on");
  expect(project.settings.runner).toBe("local");
  expect(project.settings.docker.image).toBe(defaultSettings().docker.image);
  expect(project.warnings.join("\n")).toContain("cannot turn subagents.sandbox off");
  expect(project.warnings.join("\n")).toContain("subagents.runner may be set only in your own settings");
  expect(mergeSettings(defaultSettings(), { sandbox: "on" }, "proj", false).settings.sandbox).toBe("on");
  // Which parts of the home a child may read is the user's choice alone.
  expect(
    mergeSettings(defaultSettings(), { sandboxReadable: ["~/.ssh"] }, "proj", false).settings.sandboxReadable,
  ).toEqual([]);
  expect(
    mergeSettings(defaultSettings(), { sandboxReadable: ["~/.cargo", "/opt/x"] }).settings.sandboxReadable,
  ).toEqual(["~/.cargo", "/opt/x"]);
  expect(mergeSettings(defaultSettings(), { sandboxReadable: ["relative"] }).warnings[0]).toContain(
    "sandboxReadable must be a list of absolute or ~/ paths",
  );
  expect(mergeSettings(defaultSettings(), { runner: "k8s", sandbox: "yes" }).warnings).toEqual([
    'settings: subagents.sandbox must be "off" or "on"; ignored',
    "settings: subagents.runner must be one of local, docker, slurm; ignored",
  ]);
});

test("agent front matter: sandbox and runner, a wrong value is a warning", () => {
  const good = parseProfile("---\ndescription: d\nsandbox: true\nrunner: slurm\n---\nBody\n", "/a/x.md", "user")
    .profile!;
  expect(good.sandbox).toBe(true);
  expect(good.runner).toBe("slurm");
  expect(good.warnings).toBeUndefined();
  const bad = parseProfile("---\ndescription: d\nsandbox: maybe\nrunner: k8s\n---\nBody\n", "/a/y.md", "user").profile!;
  expect(bad.sandbox).toBeUndefined();
  expect(bad.runner).toBeUndefined();
  expect(bad.warnings!.join("\n")).toContain("sandbox must be true or false");
  expect(bad.warnings!.join("\n")).toContain("runner must be one of local, docker, slurm");
});

test("task fields: sandbox and runner are validated with the field named", () => {
  const p = parseDelegateParams({ tasks: [{ name: "a", prompt: "p", sandbox: true, runner: "docker" }] });
  expect(p.tasks[0]).toMatchObject({ sandbox: true, runner: "docker" });
  expect(() => parseDelegateParams({ tasks: [{ name: "a", prompt: "p", sandbox: "yes" }] })).toThrow(
    "tasks[0].sandbox must be true or false",
  );
  expect(() => parseDelegateParams({ tasks: [{ name: "a", prompt: "p", runner: "k8s" }] })).toThrow(
    "tasks[0].runner must be one of local, docker, slurm",
  );
});

test("bwrap argv: socket places and home hidden first, agent dir rebuilt without our records, the credentials copy and the own session file bound alone, no capabilities", () => {
  const argv = bwrapArgv({
    argv: ["/home/u/.bun/bin/pi", "-p"],
    cwd: "/home/u/proj",
    home: "/home/u",
    agentDir: "/home/u/.pi/agent",
    agentEntries: [
      "settings.json",
      "auth.json",
      "auth.json.lock",
      "sessions",
      "subagent-sessions",
      "subagents.db",
      "subagents.db-wal",
      "control",
      "logs",
      "schedules",
      "worktrees",
      "extensions",
    ],
    writable: ["/home/u/proj"],
    sessionFile: "/home/u/.pi/agent/subagent-sessions/--home-u-proj--/default_1.jsonl",
    auth: { fd: 5 },
    readable: ["/home/u/.bun/bin/pi", "/tmp/p/prompt.md"],
    hidden: {
      dirs: ["/run", "/var/tmp"],
      links: [{ path: "/run/shm", target: "/dev/shm" }],
      files: ["/run/systemd/resolve/stub-resolv.conf"],
    },
    masks: {
      before: ["/srv/data/worktrees"],
      after: [
        { path: "/srv/data/control", dir: true },
        { path: "/srv/data/subagents.db", dir: false },
      ],
    },
  });
  const s = argv.join(" ");
  expect(argv.slice(0, 10)).toEqual([
    "bwrap",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
  ]);
  expect(s).toContain(
    "--tmpfs /run --tmpfs /var/tmp --symlink /dev/shm /run/shm --ro-bind-try /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf --tmpfs /home/u ",
  );
  expect(s.indexOf("--tmpfs /home/u ")).toBeLessThan(s.indexOf("--tmpfs /home/u/.pi/agent"));
  expect(s.indexOf("--tmpfs /home/u/.pi/agent")).toBeLessThan(s.indexOf("--ro-bind /home/u/.pi/agent/settings.json"));
  // The child's own auth.json read from fd 5 into the sandbox (no file of the owner's), after the agent dir's tmpfs.
  expect(s).toContain("--perms 0600 --file 5 /home/u/.pi/agent/auth.json");
  expect(s.indexOf("--tmpfs /home/u/.pi/agent")).toBeLessThan(s.indexOf("--file 5"));
  expect(s).toContain("--ro-bind /home/u/.pi/agent/extensions /home/u/.pi/agent/extensions");
  for (const hidden of [
    "agent/sessions",
    "agent/subagents.db",
    "agent/control",
    "agent/logs",
    "agent/schedules",
    "agent/worktrees",
    "auth.json.lock",
    "--ro-bind /home/u/.pi/agent/auth.json",
  ])
    expect(s, hidden).not.toContain(hidden);
  expect(s).toContain("--bind /home/u/proj /home/u/proj");
  // The session file alone, not its folder (the other sessions' transcripts).
  expect(s).toContain(
    "--bind /home/u/.pi/agent/subagent-sessions/--home-u-proj--/default_1.jsonl /home/u/.pi/agent/subagent-sessions/--home-u-proj--/default_1.jsonl",
  );
  expect(s).not.toContain("--bind /home/u/.pi/agent/subagent-sessions/--home-u-proj-- ");
  expect(s).toContain("--ro-bind-try /tmp/p/prompt.md /tmp/p/prompt.md");
  // A folder that may hold the task's own (worktrees) before the writable binds; the records after everything.
  expect(s.indexOf("--tmpfs /srv/data/worktrees")).toBeLessThan(s.indexOf("--bind /home/u/proj"));
  expect(s.indexOf("--tmpfs /srv/data/control --remount-ro /srv/data/control")).toBeGreaterThan(
    s.indexOf("--bind /home/u/proj"),
  );
  expect(s).toContain("--ro-bind /dev/null /srv/data/subagents.db");
  expect(s).toContain("--cap-drop ALL");
  expect(s).toContain("--die-with-parent");
  expect(s).toContain("--share-net");
  expect(argv.slice(-3)).toEqual(["--", "/home/u/.bun/bin/pi", "-p"]);
  expect(
    hiddenArgvPaths(
      ["/usr/bin/node", "/home/u/app/node_modules/pi/dist/cli.js", "/tmp/x/ext.js", "/run/user/1/x.js", "-p"],
      ["/home/u", "/tmp", "/run"],
    ),
  ).toEqual(["/home/u/app", "/tmp/x/ext.js", "/run/user/1/x.js"]);
});

const req = (over: Partial<PlaceRequest> = {}): PlaceRequest => ({
  host: {} as PlaceRequest["host"],
  argv: ["/opt/subagents", "--mode", "json", "-p"],
  env: {
    HOME: "/home/u",
    PI_OFFLINE: "1",
    OPENAI_API_KEY: "k",
    SECRET_THING: "no",
    PI_SUBAGENT_PARENT_PID: "7",
    PATH: "/usr/bin",
  },
  cwd: "/work/proj",
  sessionFile: "/home/u/.pi/agent/subagent-sessions/s/a_1.jsonl",
  agentDir: "/home/u/.pi/agent",
  files: ["/tmp/p/1.md"],
  sandbox: false,
  name: "subagents-abc-1",
  settings: {
    ...defaultSettings(),
    docker: { image: "img", network: "host", args: ["--memory", "1g"] },
    slurm: { partition: "debug", args: ["--time=5"] },
  },
  ...over,
});

test("docker argv: named and labelled, read-only, mounts at the same paths (the task's copy at its folder's), env by name only", () => {
  const argv = dockerArgv(
    req({ tree: { writable: [{ path: "/work/proj", from: "/d/w/abc" }], readable: ["/work/proj/.git/objects"] } }),
    {
      docker: "/usr/bin/docker",
      user: "1000:1000",
      owner: 42,
      host: "vm",
      agentEntries: ["settings.json", "auth.json", "sessions", "subagents.db", "control", "logs"],
      caches: [],
      files: { sessionFile: "/home/u/.pi/agent/subagent-sessions/s/a_1.jsonl", auth: { file: "/tmp/s-1/auth-c.json" } },
    },
  );
  const s = argv.join(" ");
  expect(argv.slice(0, 7)).toEqual(["/usr/bin/docker", "run", "--rm", "-i", "--init", "--name", "subagents-abc-1"]);
  expect(s).toContain("--label subagents.owner=42 --label subagents.host=vm");
  expect(s).toContain(
    "--network host --read-only --tmpfs /tmp:exec --tmpfs /home/u:exec --tmpfs /home/u/.pi/agent:exec --cap-drop ALL --security-opt no-new-privileges --user 1000:1000",
  );
  expect(s).toContain(
    "-v /opt/subagents:/opt/subagents:ro -v /home/u/.pi/agent/settings.json:/home/u/.pi/agent/settings.json:ro -v /home/u/.pi/agent/subagent-sessions/s/a_1.jsonl:/home/u/.pi/agent/subagent-sessions/s/a_1.jsonl:rw -v /d/w/abc:/work/proj:rw -v /work/proj/.git/objects:/work/proj/.git/objects:ro",
  );
  expect(s).toContain("-v /tmp/p/1.md:/tmp/p/1.md:ro");
  // The credentials copy in place of the user's auth.json; none of our records.
  expect(s).toContain("-v /tmp/s-1/auth-c.json:/home/u/.pi/agent/auth.json:rw");
  expect(s).not.toContain("-v /home/u/.pi/agent/auth.json");
  expect(s).not.toContain("agent/control");
  expect(s).not.toContain("agent/logs");
  expect(s).toContain("-e HOME -e OPENAI_API_KEY -e PI_OFFLINE");
  expect(s).not.toContain("SECRET_THING");
  expect(s).not.toContain("sessions:");
  expect(s).not.toContain("subagents.db");
  expect(s).not.toContain("PI_SUBAGENT_PARENT_PID");
  expect(s).not.toContain("=k");
  expect(s.endsWith("-w /work/proj --memory 1g img /opt/subagents --mode json -p")).toBe(true);
});

test("srun argv and the shared-filesystem test", () => {
  expect(srunArgv(req(), "/usr/bin/srun", ["/opt/subagents", "-p"])).toEqual([
    "/usr/bin/srun",
    "--job-name",
    "subagents-abc-1",
    "--ntasks",
    "1",
    "--quiet",
    "--chdir",
    "/work/proj",
    "--partition",
    "debug",
    "--time=5",
    "--",
    "/opt/subagents",
    "-p",
  ]);
  const mounts = "/dev/sda1 / ext4 rw 0 0\nserver:/export /shared nfs4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n";
  expect(fsTypeOf(mounts, "/shared/proj")).toBe("nfs4");
  expect(fsTypeOf(mounts, "/sharedx")).toBe("ext4");
  expect(fsTypeOf(mounts, "/tmp/a")).toBe("tmpfs");
});

test("macOS profile: writes only in the task's folders and temp, home unreadable except pi's agent dir", () => {
  const { seatbeltProfile } = require("../../../../src/core/run/runners/sandbox-wrap.ts");
  const p: string = seatbeltProfile("/Users/u", "/Users/u/.pi/agent", [
    "/Users/u/proj",
    "/Users/u/.pi/agent/subagent-sessions/x",
  ]);
  expect(p).toContain("(deny file-write*)");
  expect(p).toContain(
    '(allow file-write* (subpath "/Users/u/proj") (subpath "/Users/u/.pi/agent/subagent-sessions/x") (subpath "/private/tmp")',
  );
  expect(p).toContain('(deny file-read* (subpath "/Users/u"))');
  expect(p).toContain('(allow file-read* (subpath "/Users/u/.pi/agent") (subpath "/Users/u/proj")');
  // Later rules win in sandbox-exec: the allows come after the denies.
  expect(p.indexOf("(deny file-read*")).toBeLessThan(p.indexOf("(allow file-read*"));
  // Our records and the other sessions denied again, then the child's own folder and session file.
  const own = "/Users/u/.pi/agent/subagent-sessions/x/a_1.jsonl";
  const h: string = seatbeltProfile(
    "/Users/u",
    "/Users/u/.pi/agent",
    ["/Users/u/proj", own],
    [],
    ["/Users/u/.pi/agent/subagent-sessions", "/Users/u/.pi/agent/control"],
  );
  const deny = h.indexOf(
    '(deny file-read* file-write* (subpath "/Users/u/.pi/agent/subagent-sessions") (subpath "/Users/u/.pi/agent/control"))',
  );
  expect(deny).toBeGreaterThan(h.indexOf('(allow file-read* (subpath "/Users/u/.pi/agent")'));
  expect(h.indexOf(`(allow file-read* file-write* (subpath "/Users/u/proj") (subpath "${own}"))`)).toBeGreaterThan(
    deny,
  );
});

test("nothing outside runners/ asks a runner's name: it asks what the runner can do (a new runner is its file, a registry entry and its settings)", () => {
  const { readdirSync, readFileSync } = require("node:fs") as typeof import("node:fs");
  const { join } = require("node:path") as typeof import("node:path");
  const src = join(import.meta.dir, "../../../../src");
  const names = RUNNER_NAMES.join("|");
  const asksName = new RegExp(
    `\\brunner(?:\\.name)?\\s*[!=]==\\s*"(?:${names})"|"(?:${names})"\\s*[!=]==\\s*[\\w.]*runner\\b`,
  );
  const found: string[] = [];
  for (const file of readdirSync(src, { recursive: true }) as string[]) {
    if (!file.endsWith(".ts") || file.startsWith("core/run/runners/")) continue;
    for (const [i, line] of readFileSync(join(src, file), "utf8").split("\n").entries())
      if (asksName.test(line)) found.push(`src/${file}:${i + 1}: ${line.trim()}`);
  }
  expect(found).toEqual([]);
  for (const name of RUNNER_NAMES) {
    const r = runnerNamed(name);
    expect(typeof r.local === "boolean" && typeof r.confined === "boolean", name).toBe(true);
  }
});
