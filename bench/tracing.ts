// Traces on vs off: `subagents delegate` of 8 tasks (each a bash call, then its finalize: 5 spans a task), all at
// once, with OTLP/HTTP protobuf export to a receiver on 127.0.0.1 (the spans decoded there, as a collector would)
// against no tracing, alternated round by round (medians; CPU of the whole process tree). A third column sends to a
// collector that never answers: the run may wait at most the 2 s bound for it.
// `BENCH_ROUNDS=7 bun bench/tracing.ts`
import { script } from "../src/scripted/model-server.ts";
import { startOtlpReceiver } from "../test/support/otlp-receiver.ts";
import { BIN, ROUNDS, benchWorld, measure, stat, table, type Sample } from "./lib.ts";

const world = await benchWorld();
const receiver = await startOtlpReceiver();
const hung = await startOtlpReceiver();
hung.mode = "hang";
const ms = (v: number) => `${Math.round(v)} ms`;
try {
  const prompts = Array.from(
    { length: 8 },
    (_, i) =>
      `traced task ${i} ${script([
        { tool: "bash", args: { command: `echo step ${i}` } },
        { finalize: { status: "SUCCESS", result: `done ${i}` } },
      ])}`,
  );
  const modes = {
    off: {},
    on: { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    "collector hangs": { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: hung.url },
  } as const;
  const samples: Record<keyof typeof modes, Sample[]> = { off: [], on: [], "collector hangs": [] };
  for (let r = 0; r < ROUNDS; r++)
    for (const [mode, env] of Object.entries(modes) as [keyof typeof modes, Record<string, string>][])
      samples[mode].push(
        await measure([BIN, "delegate", ...prompts, "--concurrency", "8", "--json"], {
          env: { ...world.env, ...env },
          cwd: world.workDir,
        }),
      );
  const med = (mode: keyof typeof modes) => ({
    wall: stat(samples[mode].map((s) => s.wallMs)).median,
    cpu: stat(samples[mode].map((s) => s.cpuMs)).median,
  });
  const off = med("off");
  const rows = (Object.keys(modes) as (keyof typeof modes)[]).map((mode) => {
    const m = med(mode);
    return [
      mode,
      `${ms(m.wall)} (CPU ${ms(m.cpu)})`,
      `${(m.wall / off.wall).toFixed(2)}× (CPU ${(m.cpu / off.cpu).toFixed(2)}×)`,
    ];
  });
  const perRun = receiver.spans.length / ROUNDS;
  console.log(`### Traces on vs off: 8 tasks at once (median of ${ROUNDS} alternating rounds)\n`);
  console.log(table(["tracing", "wall (CPU)", "/ off"], rows));
  console.log(`\n${perRun} spans a run reached the receiver (OTLP/HTTP protobuf).`);
} finally {
  await Promise.all([world.close(), receiver.close(), hung.close()]);
}
