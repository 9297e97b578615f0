// `subagents batch` (docs/batch.md, BENCHMARKS.md "Batch jobs"), against the scripted model on 127.0.0.1:
//   1. 1,000 trivial items at 16 vs `xargs -P 16` over the same `pi -p` calls (the Bun pi: the faster floor).
//      Goal ≤ 0.5× the floor's time.
//   2. The owner's peak RSS at 1,000 and at 10,000 items. Goal: flat, ≤ 200 MB.
//   3. Resuming a 10,000-item job that is 90% done: the time from the command's start to its first new item's
//      start. Goal ≤ 2 s.
// BENCH_PARTS=1,2,3 picks parts; BENCH_ROUNDS (default 1) rounds of part 1.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { BIN, benchWorld, measure, piCmd, ratio, table, type Sample } from "./lib.ts";

const PARTS = new Set((process.env.BENCH_PARTS ?? "1,2,3").split(","));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);

const itemsFile = (dir: string, n: number, tag: string) => {
  const file = join(dir, `items-${tag}-${n}.jsonl`);
  writeFileSync(file, `${Array.from({ length: n }, (_, i) => JSON.stringify({ id: `i${i}`, n: i })).join("\n")}\n`);
  return file;
};

export async function batchBench(): Promise<string> {
  const world = await benchWorld();
  const { env, workDir: cwd } = world;
  const out: string[] = [];
  const batch = (file: string, job: string, c: number) =>
    measure(
      [BIN, "batch", file, "--prompt", "trivial item {{n}}", "--job", job, "--concurrency", String(c), "--json"],
      {
        env,
        cwd,
      },
    );
  try {
    if (PARTS.has("1")) {
      const rows: string[][] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const file = itemsFile(world.root, 1000, `r${r}`);
        const ours = await batch(file, `bench-${r}`, 16);
        const prompts = join(world.root, `prompts-${r}.txt`);
        writeFileSync(prompts, `${Array.from({ length: 1000 }, (_, i) => `trivial item ${i}`).join("\n")}\n`);
        const floor = await measure(
          [
            "bash",
            "-c",
            `xargs -P 16 -I{} sh -c 'echo "{}" | ${piCmd("bun").join(" ")} -p --no-session > /dev/null' < ${prompts}`,
          ],
          { env, cwd },
        );
        rows.push(sampleRow("1,000 items at 16", ours, floor));
      }
      out.push(table(["workload", "batch", "xargs -P 16 pi -p (Bun)", "ratio (wall)", "CPU ratio"], rows));
    }
    if (PARTS.has("2")) {
      const rows: string[][] = [];
      for (const n of [1000, 10000]) {
        const s = await batch(itemsFile(world.root, n, "rss"), `rss-${n}`, 16);
        rows.push([
          `${n.toLocaleString("en")} items at 16`,
          `${(s.wallMs / 1000).toFixed(1)} s`,
          `${s.peakRssMB.toFixed(0)} MB`,
        ]);
      }
      out.push(table(["job", "wall", "owner peak RSS"], rows));
    }
    if (PARTS.has("3")) out.push(await resumeBench(world.root, env, cwd, world.env.SUBAGENTS_DB));
  } finally {
    await world.close();
  }
  return out.join("\n\n");
}

function sampleRow(what: string, ours: Sample, floor: Sample): string[] {
  return [
    what,
    `${(ours.wallMs / 1000).toFixed(1)} s (CPU ${(ours.cpuMs / 1000).toFixed(1)} s)`,
    `${(floor.wallMs / 1000).toFixed(1)} s (CPU ${(floor.cpuMs / 1000).toFixed(1)} s)`,
    ratio(ours.wallMs, floor.wallMs),
    ratio(ours.cpuMs, floor.cpuMs),
  ];
}

/** A 10,000-item job recorded, 9,000 of its items marked completed in its records; then the same command again:
 *  the time until its first new item starts (the first `running` item in the store). */
async function resumeBench(root: string, env: Record<string, string>, cwd: string, dbFile: string): Promise<string> {
  const file = itemsFile(root, 10000, "resume");
  const args = [BIN, "batch", file, "--prompt", "trivial item {{n}}", "--job", "resume", "--concurrency", "16"];
  // Record the job (its first run stopped once every item is recorded), then mark 90% of it done.
  const first = Bun.spawn({ cmd: args, cwd, env, stdout: "ignore", stderr: "ignore" });
  let db: Database | null = null;
  for (;;) {
    try {
      db ??= new Database(dbFile);
      const n = db.query("SELECT COUNT(*) AS n FROM batch_items WHERE job_id = 'resume'").get() as { n: number };
      if (n.n >= 10000) break;
    } catch {
      // not created yet
    }
    await Bun.sleep(20);
  }
  first.kill("SIGINT");
  await first.exited;
  db.run(
    "UPDATE batch_items SET status = 'completed', attempts = 1, result = 'done' WHERE job_id = 'resume' AND seq <= 9000",
  );
  db.run("UPDATE batch_items SET status = 'pending' WHERE job_id = 'resume' AND seq > 9000");
  db.run("UPDATE batch_jobs SET status = 'stopped', owner_pid = NULL WHERE id = 'resume'");
  const t0 = performance.now();
  const proc = Bun.spawn({ cmd: args, cwd, env, stdout: "ignore", stderr: "ignore" });
  let firstMs = 0;
  while (!firstMs) {
    const row = db
      .query("SELECT 1 FROM batch_items WHERE job_id = 'resume' AND seq > 9000 AND status != 'pending' LIMIT 1")
      .get();
    if (row) firstMs = performance.now() - t0;
    else await Bun.sleep(5);
  }
  proc.kill("SIGINT");
  await proc.exited;
  db.close();
  return table(["resume", "to the first new item"], [["10,000 items, 9,000 done", `${(firstMs / 1000).toFixed(2)} s`]]);
}

if (import.meta.main) console.log(await batchBench());
