// The sandbox's closed network (subagents.sandboxNetwork) with the real bubblewrap and the real pi as child,
// against the scripted model server on 127.0.0.1: the child reaches its model through the owner's proxy, and a
// local service on another port only when subagents.sandboxAllowHosts names it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";
import { ensureEngine } from "../../support/engines.ts";

let world: PiWorld;
let skip: string | null = null;
// A local service the child must not reach unless allowed: it records every request it gets.
let service: ReturnType<typeof Bun.serve>;
const hits: string[] = [];
beforeAll(async () => {
  skip = ensureEngine("bwrap");
  world = await piWorld();
  service = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      hits.push(path);
      return new Response(`SERVICE-SAYS-${path.slice(1)}\n`);
    },
  });
}, 600_000);
afterAll(async () => {
  await service?.stop(true);
  world?.close();
});

const transcript = (q: { messages?: { content?: unknown }[] }) => JSON.stringify(q.messages ?? []);
const seenBy = (marker: string) =>
  world.server.requests
    .filter((q) => transcript(q).includes(marker))
    .map(transcript)
    .join("\n");
const probe = (marker: string, command: string) =>
  `probe ${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`;

/** curl through the proxy variables, curl ignoring them, and bash's /dev/tcp, each to the local service. */
function reachCommand(marker: string): string {
  const url = `http://127.0.0.1:${service.port}`;
  return [
    `curl -fsS --max-time 5 ${url}/${marker}-proxy || echo CURL-FAILED`,
    `curl -fsS --max-time 5 --noproxy '*' ${url}/${marker}-direct || echo NOPROXY-FAILED`,
    `(exec 3<>/dev/tcp/127.0.0.1/${service.port} && printf 'GET /${marker}-tcp HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3) || echo DEVTCP-FAILED`,
  ].join("; ");
}

for (const binary of [true, false]) {
  test(`closed network (${binary ? "embedded pi" : "pi from source"}): the child completes against its model; curl, curl --noproxy and /dev/tcp to another local port fail, and the refusal is a warning`, async () => {
    if (skip) return console.warn(skip);
    world.setSubagentSettings({});
    const marker = `nc${binary ? "b" : "s"}${Date.now()}`;
    const r = await cli(world, ["run", "default", probe(marker, reachCommand(marker)), "--sandbox", "--json"], {
      binary,
    });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(t.output).toContain(`done ${marker}`);
    const seen = seenBy(marker);
    expect(seen, "curl through the proxy must be refused").toContain("CURL-FAILED");
    expect(seen, "curl --noproxy must find no route").toContain("NOPROXY-FAILED");
    expect(seen, "/dev/tcp must find no route").toContain("DEVTCP-FAILED");
    expect(seen).not.toContain("SERVICE-SAYS");
    expect(
      hits.filter((h) => h.includes(marker)),
      "the service got a request from the sandbox",
    ).toEqual([]);
    expect((t.warnings ?? []).join("\n"), taskWhy(t, r)).toContain(
      `sandbox network: refused 1 connection to 127.0.0.1:${service.port} (1×)`,
    );
  }, 120_000);
}

test("with the service's host:port in subagents.sandboxAllowHosts, curl and /dev/tcp reach it (and nothing else opens)", async () => {
  if (skip) return console.warn(skip);
  world.setSubagentSettings({ sandboxAllowHosts: [`127.0.0.1:${service.port}`] });
  try {
    const marker = `na${Date.now()}`;
    const other = `curl -fsS --max-time 5 http://127.0.0.1:1/ || echo OTHER-FAILED`;
    const r = await cli(
      world,
      ["run", "default", probe(marker, `${reachCommand(marker)}; ${other}`), "--sandbox", "--json"],
      { binary: true },
    );
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const seen = seenBy(marker);
    expect(seen).toContain(`SERVICE-SAYS-${marker}-proxy`);
    expect(seen).toContain(`SERVICE-SAYS-${marker}-direct`);
    expect(seen).toContain(`SERVICE-SAYS-${marker}-tcp`);
    expect(seen).toContain("OTHER-FAILED");
    expect(hits).toContain(`/${marker}-proxy`);
    expect((t.warnings ?? []).join("\n")).toContain("refused 1 connection to 127.0.0.1:1 (1×)");
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test('subagents.sandboxNetwork "all" keeps the host network (the probe can fail)', async () => {
  if (skip) return console.warn(skip);
  world.setSubagentSettings({ sandboxNetwork: "all" });
  try {
    const marker = `nall${Date.now()}`;
    const r = await cli(world, ["run", "default", probe(marker, reachCommand(marker)), "--sandbox", "--json"], {
      binary: true,
    });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(seenBy(marker)).toContain(`SERVICE-SAYS-${marker}-direct`);
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test('subagents.sandboxNetwork "none": the model only, the allow list is not used', async () => {
  if (skip) return console.warn(skip);
  world.setSubagentSettings({ sandboxNetwork: "none", sandboxAllowHosts: [`127.0.0.1:${service.port}`] });
  try {
    const marker = `nnone${Date.now()}`;
    const r = await cli(world, ["run", "default", probe(marker, reachCommand(marker)), "--sandbox", "--json"], {
      binary: true,
    });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const seen = seenBy(marker);
    expect(seen).toContain("CURL-FAILED");
    expect(seen).toContain("DEVTCP-FAILED");
    expect(seen).not.toContain("SERVICE-SAYS");
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

const ourSockets = (dir: string) => {
  try {
    return readdirSync(dir).filter((n) => n.endsWith(".sock"));
  } catch {
    return [];
  }
};

test("Ctrl-C on a sandboxed run with a closed network: the child, its commands and the proxy are gone", async () => {
  if (skip) return console.warn(skip);
  world.setSubagentSettings({});
  const marker = `sleep 4${String(Date.now()).slice(-5)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const tmp = join(world.root, "tmp");
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--sandbox", "--json"],
    cwd: world.workDir,
    env: { ...world.env, TMPDIR: tmp },
    stdout: "pipe",
    stderr: "pipe",
  });
  spawnSync("mkdir", ["-p", tmp]);
  const sleeping = () =>
    spawnSync("pgrep", ["-f", `^${marker}`])
      .stdout.toString()
      .trim();
  const sockets = () => readdirSync(tmp).flatMap((d) => ourSockets(join(tmp, d)));
  const t0 = Date.now();
  while (!sleeping() && Date.now() - t0 < 60_000) await Bun.sleep(100);
  expect(sleeping(), "the task's sleep never started").not.toBe("");
  expect(sockets().length, "the proxy's socket should exist while the child runs").toBe(1);
  proc.kill("SIGINT");
  expect(await proc.exited).toBe(130);
  // Poll with a deadline: nothing of the run is left — no process with the marker, no proxy socket.
  const t1 = Date.now();
  while ((spawnSync("pgrep", ["-f", marker]).stdout.toString().trim() || sockets().length) && Date.now() - t1 < 20_000)
    await Bun.sleep(100);
  expect(spawnSync("pgrep", ["-f", marker], { encoding: "utf8" }).stdout.trim()).toBe("");
  expect(sockets()).toEqual([]);
}, 120_000);
