// Stream ingest: one child streaming a long answer in many deltas. Total CPU (parent + child), the parent's
// peak RSS, and the bytes that cross the pipe: our compact transport (fd 3), our json transport, the example.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { ChildProcess, Host } from "../src/core/host.ts";
import { realClock } from "../src/core/host.ts";
import { runChild } from "../src/core/run/process/runner.ts";
import { script, type ScriptStep } from "../src/scripted/model-server.ts";
import { createBunHost } from "../src/host/bun.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { BIN, EXAMPLE_EXT, REPO, ROUNDS, benchWorld, fmt, measure, piCmd, rounds, stat, table } from "./lib.ts";

/** Wraps a host so every byte read from the child's event channel is counted. */
function countingHost(base: Host, counter: { bytes: number }): Host {
  const wrap = (it: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> => ({
    async *[Symbol.asyncIterator]() {
      for await (const c of it) {
        counter.bytes += c.byteLength;
        yield c;
      }
    },
  });
  return {
    ...base,
    spawn(spec) {
      const p: ChildProcess = base.spawn(spec);
      return {
        ...p,
        pid: p.pid,
        kill: p.kill,
        exited: p.exited,
        stdout: spec.fd3 ? p.stdout : wrap(p.stdout),
        stderr: p.stderr,
        fd3: p.fd3 ? wrap(p.fd3) : null,
      };
    },
  };
}

export async function stream(): Promise<string> {
  const world = await benchWorld();
  const host = createBunHost(bunDbOpener(Database));
  const rows: string[][] = [];
  const workloads: [string, ScriptStep][] = [
    [
      "20 KB in 5,000 deltas",
      { text: "x".repeat(20_000), chunks: 5000, finalize: { status: "SUCCESS", result: "ok" } },
    ],
    [
      "100 KB in 1,000 deltas",
      { text: "y".repeat(100_000), chunks: 1000, finalize: { status: "SUCCESS", result: "ok" } },
    ],
  ];
  try {
    for (const [label, step] of workloads) {
      const task = `stream ${script([step])}`;
      // Bytes on the wire, measured inside our runner for both transports.
      const bytes: Record<string, number> = {};
      for (const transport of ["compact", "json"] as const) {
        const counter = { bytes: 0 };
        const pi = piCmd("bun");
        const argv = [
          pi[0],
          "--no-install",
          ...pi.slice(1),
          ...(transport === "json" ? ["--mode", "json"] : []),
          "-p",
          "--session",
          join(world.root, `b-${transport}-${Date.now()}.jsonl`),
          "-e",
          join(REPO, "src", "child-extension", "extension.ts"),
        ];
        await runChild(countingHost(host, counter), realClock, {
          argv,
          env: { ...world.env, PI_SUBAGENT_CHILD: "1", PI_SUBAGENT_TRANSPORT: transport },
          sessionFile: join(world.root, "x.jsonl"),
          cwd: world.workDir,
          prompt: task,
          transport,
          finalize: "required",
          timeoutSec: 120,
          extendDebounceSec: 30,
          maxRuntimeSec: 600,
          loopingToolCount: 5,
        });
        bytes[transport] = counter.bytes;
      }
      const example = await measure(["bash", "-c", `${piCmd("bun").join(" ")} --mode json -p --no-session | wc -c`], {
        env: world.env,
        cwd: world.workDir,
        stdin: `Task: ${task}`,
      });
      bytes.example = Number(example.stdout.trim());

      // CPU and parent RSS of whole runs: our CLI per transport, and the example in a parent pi.
      const cli = async (transport: "compact" | "json") => {
        world.setSubagentSettings({ transport });
        return rounds(ROUNDS, () =>
          measure([BIN, "run", "default", task, "--json"], { env: world.env, cwd: world.workDir }),
        );
      };
      const compact = await cli("compact");
      const json = await cli("json");
      world.setSubagentSettings({});
      const parentScript = script([{ tool: "subagent", args: { agent: "bench", task } }, { text: "done" }]);
      const ex = await rounds(ROUNDS, () =>
        measure([...piCmd("node"), "-p", "--no-session", "-e", EXAMPLE_EXT], {
          env: world.env,
          cwd: world.workDir,
          stdin: `go ${parentScript}`,
        }),
      );
      const cpu = (s: typeof compact) => stat(s.map((x) => x.cpuMs));
      const rss = (s: typeof compact) => stat(s.map((x) => x.peakRssMB));
      const mb = (n: number) => `${(n / 1048576).toFixed(2)} MB`;
      rows.push([
        label,
        "ours, compact (fd 3)",
        fmt(cpu(compact), " ms"),
        fmt(rss(compact), " MB"),
        mb(bytes.compact),
        `${(cpu(compact).median / cpu(ex).median).toFixed(2)}×`,
      ]);
      rows.push([
        label,
        "ours, json transport",
        fmt(cpu(json), " ms"),
        fmt(rss(json), " MB"),
        mb(bytes.json),
        `${(cpu(json).median / cpu(ex).median).toFixed(2)}×`,
      ]);
      rows.push([label, "example in Node pi", fmt(cpu(ex), " ms"), fmt(rss(ex), " MB"), mb(bytes.example), "1.00×"]);
    }
  } finally {
    await world.close();
  }
  return [
    `### Stream ingest (${ROUNDS} rounds: median (min–max))`,
    "",
    "CPU is the whole process tree (parent + child). Parent RSS is the peak of the top process only (our CLI; the example's parent pi).",
    "",
    table(["child answer", "runner", "total CPU", "parent peak RSS", "bytes over the pipe", "CPU vs example"], rows),
    "",
  ].join("\n");
}

if (import.meta.main) console.log(await stream());
