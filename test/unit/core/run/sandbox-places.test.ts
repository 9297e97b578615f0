// What a sandboxed child must not see beyond its hidden home (src/core/run/runners/sandbox-places.ts), asked of this
// machine: the socket places become empty private folders (with /run's symlinks made again and the resolver's file
// kept), and our records kept outside the hidden places are covered — never a folder bound for the child.
import { afterAll, expect, test } from "bun:test";
import {
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
  lstatSync,
  readdirSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import { dataDirOf, hiddenPlaces, recordMasks } from "../../../../src/core/run/runners/sandbox-places.ts";

const host = createBunHost(() => {
  throw new Error("no db");
});
const root = mkdtempSync(join(tmpdir(), "places-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("the socket places of this machine: /run once (with /var/run), /var/tmp; /run's symlinks made again; the resolver's file kept", () => {
  const h = hiddenPlaces(host);
  expect(h.dirs).toContain("/run");
  expect(h.dirs).toContain(realpathSync("/var/tmp"));
  expect(h.dirs.filter((d) => d === "/run")).toHaveLength(1);
  const links = readdirSync("/run").filter((n) => lstatSync(join("/run", n)).isSymbolicLink());
  expect(h.links.map((l) => l.path).sort()).toEqual(links.map((n) => `/run/${n}`).sort());
  for (const l of h.links) expect(l.target).toBe(readlinkSync(l.path));
  const resolv = realpathSync("/etc/resolv.conf");
  expect(h.files).toEqual(resolv.startsWith("/run/") ? [resolv] : []);
});

test("our records outside the hidden places are covered; inside them, or holding a bound folder, they are not", () => {
  const data = join(root, "srv");
  for (const d of ["control", "logs", "worktrees/abc"]) mkdirSync(join(data, d), { recursive: true });
  for (const f of ["subagents.db", "subagents.db-wal"]) writeFileSync(join(data, f), "");
  const env = { SUBAGENTS_DB: join(data, "subagents.db") };
  expect(dataDirOf(env, "/a")).toBe(data);
  expect(dataDirOf({}, "/home/u/.pi/agent")).toBe("/home/u/.pi/agent");
  const visible = recordMasks(host, {
    env,
    agentDir: "/a",
    hidden: ["/home/u"],
    bound: [join(data, "worktrees", "abc")],
  });
  expect(visible.before).toEqual([join(data, "worktrees")]);
  expect(visible.after).toEqual([
    { path: join(data, "control"), dir: true },
    { path: join(data, "logs"), dir: true },
    { path: join(data, "subagents.db"), dir: false },
    { path: join(data, "subagents.db-wal"), dir: false },
  ]);
  // Under a hidden place (the home, /tmp, the agent dir): nothing to cover.
  expect(recordMasks(host, { env, agentDir: "/a", hidden: [root], bound: [] })).toEqual({ before: [], after: [] });
  // The task folder inside the data dir's logs (odd, but possible): that folder is not covered over it.
  const inLogs = recordMasks(host, { env, agentDir: "/a", hidden: [], bound: [join(data, "logs", "task")] });
  expect(inLogs.after.map((m) => m.path)).not.toContain(join(data, "logs"));
});
