// The sandbox's trust boundary as an attacker inside it would test it, with the real bubblewrap and the real pi as
// child against the scripted model on 127.0.0.1, in an install laid out as a user's is (the store, owner records
// and logs in pi's agent dir). From inside, a child tries: to rewrite the user's auth.json with a `!command` key
// (pi would run it in the user's next unsandboxed pi), to read other providers' keys, to read the owner records,
// logs, schedules, the store and other sessions' transcripts, and to connect() to Unix sockets outside its folder —
// an unrelated background run's control socket (to cancel it), sockets under /run, /run/user/<uid>, /tmp and
// /var/tmp. Each fails, and is seen failing from outside; ordinary work still succeeds.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { childSessionFile } from "../../../src/core/run/session-file.ts";
import { cli, piWorld, requestsOfTask, summaryOf, type PiWorld, taskWhy, until } from "../../support/pi-env.ts";
import { ensureEngine, untilSleeping } from "../../support/engines.ts";
import { gitIn, makeRepo } from "../../support/git-repo.ts";

let world: PiWorld;
let skip: string | null = null;
const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-5)}`;
/** The user's auth.json: the child's provider as a `!command` key, another provider's key, a sign-in token. */
const keyOut = `sk-from-command-${tag}`;
const auth = {
  fake: { type: "api_key", key: `!printf ${keyOut}` },
  other: { type: "api_key", key: `sk-other-provider-${tag}` },
  anthropic: { type: "oauth", access: `acc-${tag}`, refresh: `ref-${tag}`, expires: Date.now() + 3_600_000 },
};
/** Sockets of "services" outside the child's folder, each listening; `hits` counts who connected. */
const uid = process.getuid?.() ?? 0;
const sockets = {
  runUser: `/run/user/${uid}/sa-boundary-${tag}.sock`,
  run: `/run/sa-boundary-${tag}.sock`,
  tmp: `/tmp/sa-boundary-${tag}.sock`,
  varTmp: `/var/tmp/sa-boundary-${tag}.sock`,
  allowed: `/run/sa-boundary-allowed-${tag}.sock`,
};
const hits = new Set<string>();
const servers: { stop(): void }[] = [];

// The store and the owner records in pi's agent dir, where a user's install keeps them.
const env = { SUBAGENTS_DB: "" };
const run = (args: string[], opts: Parameters<typeof cli>[2] = {}) =>
  cli(world, args, { binary: true, ...opts, env: { ...env, ...opts.env } });

beforeAll(async () => {
  skip = ensureEngine("bwrap");
  world = await piWorld();
  writeFileSync(join(world.agentDir, "auth.json"), JSON.stringify(auth, null, 2), { mode: 0o600 });
  for (const path of Object.values(sockets)) {
    mkdirSync(join(path, ".."), { recursive: true });
    rmSync(path, { force: true });
    servers.push(
      Bun.listen({
        unix: path,
        socket: {
          open() {
            hits.add(path);
          },
          data() {},
        },
      }),
    );
  }
}, 600_000);
afterAll(async () => {
  for (const s of servers) s.stop();
  for (const path of Object.values(sockets)) rmSync(path, { force: true });
  await world?.close();
});

/** What the child's commands printed (its tool results as its model got them), never the commands' own text. */
const seenBy = (marker: string) => {
  const last = requestsOfTask(world, `probe ${marker}`).at(-1);
  return (last?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");
};
const probe = (marker: string, command: string) =>
  `probe ${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`;

/**
 * A shell command that tries connect() on each Unix socket and prints `CONNECTED <path>` (then sends `line`) or
 * `REFUSED <path> <errno name>`. Perl, from Debian's perl-base, is in every sandbox's /usr: the suite's own bun may
 * live under /tmp (a clone there), which the sandbox replaces with a private folder.
 */
function connectProbe(paths: string[], line = ""): string {
  const script = `$| = 1; for my $p (@ARGV) { my $s = IO::Socket::UNIX->new(Peer => $p); if ($s) { print "CONNECTED $p\\n"; print $s $ENV{PROBE_LINE} . "\\n"; select(undef, undef, undef, 0.3); close $s; } else { my $c = $!{ENOENT} ? "ENOENT" : $!{ECONNREFUSED} ? "ECONNREFUSED" : 0 + $!; print "REFUSED $p $c\\n"; } }`;
  return `PROBE_LINE='${line}' perl -MIO::Socket::UNIX -e '${script}' ${paths.join(" ")}`;
}

test("credentials: the child gets its own provider's key only (the !command run outside), through a pipe (no file of it on disk); its rewrite with a !command never reaches the user's auth.json, and the model call works", async () => {
  if (skip) return console.warn(skip);
  const marker = `cred${tag}`;
  const pwned = join(world.root, `PWNED-${marker}`);
  const before = readFileSync(join(world.agentDir, "auth.json"), "utf8");
  const planted = JSON.stringify({ fake: { type: "api_key", key: `!touch ${pwned}; printf sk-planted` } });
  const command = [
    `cat "$PI_CODING_AGENT_DIR/auth.json"`,
    `printf '%s' '${planted}' > "$PI_CODING_AGENT_DIR/auth.json" && echo WROTE-OWN-COPY`,
    "sleep 0.2",
  ].join("; ");
  // While it runs, no file in any of our temp folders holds the key (it went through a pipe).
  let running = true;
  const onDisk = new Set<string>();
  const look = (async () => {
    while (running) {
      // Owners' private temp folders (`subagents-<pid>.<start>-XXXXXX`), where a copy used to be written.
      for (const d of readdirSync("/tmp").filter((n) => /^subagents-\d+\.\d+-/.test(n)))
        for (const f of (() => {
          try {
            return readdirSync(join("/tmp", d));
          } catch {
            return [];
          }
        })())
          if (/^auth/.test(f)) onDisk.add(join("/tmp", d, f));
      await Bun.sleep(20);
    }
  })();
  const r = await run(["run", "default", probe(marker, command), "--sandbox", "--json"]);
  running = false;
  await look;
  expect([...onDisk]).toEqual([]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  const seen = seenBy(marker);
  // The copy: the child's provider, its key already run outside (no `!` inside), nothing of the others.
  expect(seen, seen.slice(-1500)).toContain(keyOut);
  expect(seen).not.toContain("!printf");
  expect(seen).not.toContain(`sk-other-provider-${tag}`);
  expect(seen).not.toContain(`ref-${tag}`);
  expect(seen).toContain("WROTE-OWN-COPY");
  // The model call was made with that key, through the proxy.
  const keys = requestsOfTask(world, `probe ${marker}`).map((q) => q.authorization);
  expect(keys[0]).toBe(`Bearer ${keyOut}`);
  // The user's file is as it was: nothing the child wrote into its own comes back.
  expect(readFileSync(join(world.agentDir, "auth.json"), "utf8")).toBe(before);
  // The user's next pi, unsandboxed, reads the user's own file: nothing of the child's runs.
  const next = await run(["run", "default", `${marker}-next ${script([{ text: "plain" }])}`, "--json"]);
  expect(summaryOf(next.json)[0].status, taskWhy(summaryOf(next.json)[0], next)).toBe("completed");
  expect(existsSync(pwned)).toBe(false);
}, 120_000);

test("records: no owner records, logs, schedules, store or pi sessions in the sandbox, and no other session's transcript; its own session file is written", async () => {
  if (skip) return console.warn(skip);
  const marker = `rec${tag}`;
  const secret = `earlier-session-secret-${tag}`;
  // An earlier session of the same folder (its transcript is in the folder the child's session file is in) …
  const earlier = await run(["run", "default", `${secret} ${script([{ text: `answer ${secret}` }])}`, "--json"]);
  expect(summaryOf(earlier.json)[0].status).toBe("completed");
  // … a background run's log and owner record, a schedule, pi's own sessions.
  const bg = await run(["delegate", "--background", "--json", `${marker}-bg ${script([{ text: "bg" }])}`]);
  const bgId = bg.json.find((e) => e.type === "task_background")!.sessionId as string;
  expect((await run(["wait", bgId, "--json"])).code).toBe(0);
  mkdirSync(join(world.agentDir, "schedules"), { recursive: true });
  writeFileSync(join(world.agentDir, "schedules", "nightly.json"), `{"secret":"${secret}"}`);
  mkdirSync(join(world.agentDir, "sessions"), { recursive: true });
  writeFileSync(join(world.agentDir, "sessions", "mine.jsonl"), `{"secret":"${secret}"}\n`);
  const a = world.agentDir;
  const command = [
    `echo AGENT-DIR: $(ls -A "${a}" | tr '\\n' ' ')`,
    `echo SESSIONS: $(ls -A "${a}"/subagent-sessions/* | tr '\\n' ' ')`,
    `cat "${a}"/subagent-sessions/*/* "${a}"/logs/* "${a}"/schedules/* "${a}"/sessions/* "${a}"/control/* 2>&1 | head -c 2000`,
    `head -c 16 "${a}/subagents.db"`,
    `for f in "${a}"/subagent-sessions/*/*.jsonl; do echo x >> "$f" && echo "APPENDED $f"; done`,
  ].join("; ");
  const r = await run(["run", "default", probe(marker, command), "--sandbox", "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  const seen = seenBy(marker);
  const listed = /AGENT-DIR: (.*)/.exec(seen)?.[1] ?? "";
  expect(listed, seen.slice(-2000)).toContain("models.json");
  for (const hidden of ["control", "logs", "schedules", "sessions ", "subagents.db", "auth.json.lock"])
    expect(listed, `${hidden} is listed: ${listed}`).not.toContain(hidden);
  expect(seen).not.toContain(secret);
  expect(seen).not.toContain("SQLite format");
  // Its own session file, and only it, is there and writable.
  const own = childSessionFile(world.agentDir, world.workDir, "default", t.sessionId);
  const sessions = /SESSIONS: (.*)/.exec(seen)?.[1]?.trim().split(/\s+/) ?? [];
  expect(sessions.map((s) => s.split("/").at(-1))).toEqual([own.split("/").at(-1)]);
  expect(seen).toContain(`APPENDED ${own}`);
  expect(readFileSync(own, "utf8")).toContain(`done ${marker}`);
  // The earlier session's file outside is untouched.
  const earlierFile = childSessionFile(world.agentDir, world.workDir, "default", summaryOf(earlier.json)[0].sessionId);
  expect(readFileSync(earlierFile, "utf8")).not.toMatch(/\nx\n/);
}, 120_000);

test("sockets: an unrelated background run's control socket and sockets under /run, /run/user/<uid>, /tmp and /var/tmp cannot be reached; one the user lists in sandboxReadable can", async () => {
  if (skip) return console.warn(skip);
  const marker = `sock${tag}`;
  const hold = `sleep 7.${tag.length}${String(Date.now()).slice(-2)}`;
  const victim = await run([
    "delegate",
    "--background",
    "--json",
    `${marker}-victim ${script([{ tool: "bash", args: { command: `${hold}; echo slept` } }, { finalize: { status: "SUCCESS", result: "victim finished" } }])}`,
  ]);
  const victimId = victim.json.find((e) => e.type === "task_background")!.sessionId as string;
  expect(await untilSleeping(hold)).toBe(true);
  const controlDir = join(world.agentDir, "control");
  const record = await until("the victim's owner record with its socket", () =>
    readdirSync(controlDir)
      .filter((n) => n.endsWith(".json") && !n.startsWith("job-"))
      .map((n) => JSON.parse(readFileSync(join(controlDir, n), "utf8")))
      .find((o) => o.socket && o.sessions?.includes(victimId)),
  );
  const targets = [record.socket, sockets.runUser, sockets.run, sockets.tmp, sockets.varTmp, sockets.allowed];
  if (existsSync("/run/docker.sock")) targets.push("/run/docker.sock");
  // Connects to each; where it can, it cancels the victim through its owner (as `subagents cancel` does).
  world.setSubagentSettings({ sandboxReadable: [sockets.allowed] });
  try {
    const command = `ls -A "${controlDir}" /run /run/user /tmp /var/tmp 2>&1 | head -50; ${connectProbe(targets, JSON.stringify({ op: "cancel", sessionId: victimId }))}`;
    const r = await run(["run", "default", probe(marker, command), "--sandbox", "--json"]);
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const seen = seenBy(marker);
    for (const p of targets.filter((p) => p !== sockets.allowed))
      expect(seen, `${p} reachable: ${seen.slice(-1500)}`).toMatch(new RegExp(`REFUSED ${p} (ENOENT|ECONNREFUSED)`));
    expect(seen).toContain(`CONNECTED ${sockets.allowed}`);
    expect([...hits]).toEqual([sockets.allowed]);
  } finally {
    world.setSubagentSettings({});
  }
  // The victim was neither cancelled nor steered: it finishes its own work.
  const w = await run(["wait", victimId, "--json"]);
  expect(w.code, w.stderr).toBe(0);
  expect(w.stdout).toContain("victim finished");
}, 120_000);

test("ordinary work in the sandbox: edit, build with make, git commit (its content comes back, the commit stays behind), the model through the proxy", async () => {
  if (skip) return console.warn(skip);
  const marker = `work${tag}`;
  const repo = makeRepo(world.root, join(world.root, `repo-${marker}`), false);
  writeFileSync(join(repo, "Makefile"), "out.txt: in.txt\n\tcp in.txt out.txt\n");
  gitIn(world.root, repo, "add", "Makefile");
  gitIn(world.root, repo, "commit", "-q", "-m", "makefile");
  const command = `echo built-${marker} > in.txt && make -s && cat out.txt && git add in.txt out.txt && git commit -q -m "child ${marker}" && echo COMMITTED`;
  const r = await run(["run", "default", probe(marker, command), "--sandbox", "--json"], { cwd: repo });
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(t.output).toContain(`done ${marker}`);
  const seen = seenBy(marker);
  expect(seen, seen.slice(-1500)).toContain(`built-${marker}`);
  expect(seen).toContain("COMMITTED");
  // What it committed comes back as plain files (the owner takes back content only); the commit stays behind.
  expect(gitIn(world.root, repo, "log", "--format=%s")).not.toContain(`child ${marker}`);
  expect(readFileSync(join(repo, "out.txt"), "utf8")).toBe(`built-${marker}\n`);
  expect(gitIn(world.root, repo, "status", "--porcelain").trim().split("\n").sort()).toEqual([
    "?? in.txt",
    "?? out.txt",
  ]);
  expect(t.warnings ?? []).toEqual([
    "sandbox: the child's git commits, refs and config stay behind (in its layer or copy): what it changed in your files is in your folder, not committed",
  ]);
}, 120_000);

test("records kept outside the home (SUBAGENTS_DB in a folder of its own) are covered too: no owner records, logs or store, no control socket", async () => {
  if (skip) return console.warn(skip);
  const marker = `data${tag}`;
  const data = `/srv/subagents-boundary-${tag}`;
  const denv = { SUBAGENTS_DB: `${data}/subagents.db` };
  try {
    const hold = `sleep 6.${String(Date.now()).slice(-3)}`;
    const bg = await run(
      [
        "delegate",
        "--background",
        "--json",
        `${marker}-bg ${script([{ tool: "bash", args: { command: `${hold}; echo slept` } }, { text: "bg done" }])}`,
      ],
      { env: denv },
    );
    const bgId = bg.json.find((e) => e.type === "task_background")!.sessionId as string;
    expect(await untilSleeping(hold)).toBe(true);
    const sock = await until("the background run's control socket", () =>
      readdirSync(join(data, "control"))
        .filter((n) => n.endsWith(".sock"))
        .map((n) => join(data, "control", n))
        .at(0),
    );
    const command = [
      `echo DATA: $(ls -A ${data}/control | tr '\\n' ' ')$(ls -A ${data}/logs | tr '\\n' ' ')`,
      `head -c 16 ${data}/subagents.db; echo END-DB`,
      connectProbe([sock]),
    ].join("; ");
    const r = await run(["run", "default", probe(marker, command), "--sandbox", "--json"], { env: denv });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const seen = seenBy(marker);
    expect(/DATA:(.*)/.exec(seen)?.[1]?.trim(), seen.slice(-1500)).toBe("");
    expect(seen).not.toContain("SQLite format");
    expect(seen).toContain("END-DB");
    expect(seen).toMatch(new RegExp(`REFUSED ${sock} (ENOENT|ECONNREFUSED)`));
    expect((await run(["wait", bgId, "--json"], { env: denv })).code).toBe(0);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}, 120_000);
