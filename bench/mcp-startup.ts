// What an MCP server costs a child pi 1.x: one trivial `pi -p` run (Node 24, scripted model on 127.0.0.1) with no
// MCP server, a server answering after 2 s, and one that never answers; each with pi's default exposure
// (`codemode`) and with `direct` exposure (the first prompt then waits for the server, up to 10 s), and with
// `--no-mcp`. Run: `bun bench/mcp-startup.ts` (BENCH_ROUNDS, default 3).
import { writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { piCmd, piWorld, BUN, REPO } from "../test/support/pi-env.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FIXTURE = join(REPO, "test", "fixtures", "mcp-server.ts");

export async function mcpStartup(): Promise<string> {
  const world = await piWorld();
  const mcpFile = join(world.agentDir, "mcp.json");
  const setServer = (args: string[] | null, exposure?: string) => {
    if (!args) return rmSync(mcpFile, { force: true });
    writeFileSync(
      mcpFile,
      JSON.stringify({
        mcpServers: { fx: { command: BUN, args: [FIXTURE, ...args], ...(exposure ? { exposure } : {}) } },
      }),
    );
  };
  const once = async (extra: string[]): Promise<number> => {
    const t0 = performance.now();
    const proc = Bun.spawn({
      cmd: [...piCmd("current", "node"), "-p", "--no-session", ...extra, "hi"],
      cwd: world.workDir,
      env: world.env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    await new Response(proc.stdout).text();
    await proc.exited;
    return performance.now() - t0;
  };
  const median = async (extra: string[] = []) => {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) times.push(await once(extra));
    times.sort((a, b) => a - b);
    return (times[Math.floor(times.length / 2)] / 1000).toFixed(2);
  };
  const rows: string[][] = [];
  try {
    setServer(null);
    rows.push(["no mcp.json", await median(), "–"]);
    for (const [label, args] of [
      ["server answering at once", []],
      ["server answering after 2 s", ["--delay", "2000"]],
      ["server that never answers", ["--dead"]],
    ] as const) {
      setServer([...args]);
      const codemode = await median();
      setServer([...args], "direct");
      const direct = await median();
      rows.push([label, codemode, direct]);
    }
    setServer(["--dead"], "direct");
    rows.push(["never answers, child started with `--no-mcp`", await median(["--no-mcp"]), "–"]);
  } finally {
    await world.close();
  }
  return [
    "## MCP servers in a child pi 1.5.2",
    "",
    `One trivial \`pi -p\` (Node 24), whole-process wall time in seconds, median of ${ROUNDS}.`,
    "",
    "| mcp.json | default exposure (codemode) | `direct` exposure |",
    "|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
  ].join("\n");
}

if (import.meta.main) console.log(await mcpStartup());
