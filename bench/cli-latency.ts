// CLI latency: `--version`, `profiles` with 100 profile files, `sessions` with 10,000 sessions in the database,
// `output` of a session with 10,000 messages. Each measured 10 times; median (min–max).
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Store } from "../src/core/store/store.ts";
import { emptyUsage, type StoredMessage } from "../src/core/types.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { BIN, benchWorld, fmt, measure, rounds, stat, table } from "./lib.ts";

const GOALS: Record<string, number> = { "--version": 30, profiles: 150, sessions: 150, output: 150 };

export async function cliLatency(): Promise<string> {
  const world = await benchWorld();
  try {
    const agents = join(world.agentDir, "agent-profiles");
    mkdirSync(agents, { recursive: true });
    for (let i = 0; i < 100; i++)
      writeFileSync(
        join(agents, `p${i}.md`),
        `---\nname: p${i}\ndescription: profile ${i}\ntools: read, grep, find\n---\nYou are profile ${i}.\n`,
      );
    const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => true });
    const big: StoredMessage[] = Array.from({ length: 10_000 }, (_, i) =>
      i % 2
        ? { role: "assistant", text: `answer ${i}`, toolCalls: [{ name: "read", args: '{"path":"a"}' }] }
        : { role: "toolResult", name: "read", text: `result ${i}`, isError: false },
    );
    let bigId = "";
    for (let i = 0; i < 10_000; i++) {
      const id = store.newSessionId();
      store.createSession({ id, name: `s${i}`, agent: "scout", cwd: "/" });
      const messages = i === 0 ? big : [];
      if (i === 0) bigId = id;
      store.finishRun(store.startRun(id, { prompt: "p", ownerPid: 1 }), {
        status: "completed",
        output: `output ${i}`,
        usage: emptyUsage(),
        exitCode: 0,
        toolCount: 0,
        messages,
        stderrTail: "",
        durationMs: 1,
      });
    }
    const cases: [string, string[]][] = [
      ["--version", ["--version"]],
      ["profiles", ["profiles"]],
      ["sessions", ["sessions", "--limit", "20"]],
      ["output", ["output", bigId]],
      ["session (10,000-message transcript)", ["session", bigId]],
    ];
    const rows: string[][] = [];
    for (const [label, args] of cases) {
      const s = stat(
        (await rounds(10, () => measure([BIN, ...args], { env: world.env, cwd: world.workDir }))).map((x) => x.wallMs),
      );
      const goal = GOALS[label];
      rows.push([
        `\`subagents ${args.join(" ").replace(bigId, "ID")}\``,
        fmt(s, " ms", 1),
        goal ? `≤ ${goal} ms: ${s.median <= goal ? "met" : `missed by ${(s.median - goal).toFixed(1)} ms`}` : "—",
      ]);
    }
    return ["### CLI latency (10 runs: median (min–max))", "", table(["command", "wall", "goal"], rows), ""].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await cliLatency());
