// Corrective messages (strict finalize contract): delivered inside the running child as pi follow-ups, against
// the previous way, a new child process per message that reloads the session file. Same scripted model, same
// conversation; what differs is process starts and the time they take.
import { runRealChild } from "../test/support/real-child.ts";
import type { ScriptStep } from "../src/scripted/model-server.ts";
import { ROUNDS, benchWorld, fmt, stat, table } from "./lib.ts";

export async function nudge(): Promise<string> {
  const world = await benchWorld();
  const rows: string[][] = [];
  const workloads: [string, ScriptStep[]][] = [
    [
      "forgets once, then finalizes (1 message)",
      [{ text: "I am done." }, { finalize: { status: "SUCCESS", result: "ok" } }],
    ],
    ["never finalizes (2 messages, FINALIZE_MISSING)", [{ text: "draft" }, { text: "OK." }, { text: "OK." }]],
  ];
  try {
    for (const [name, steps] of workloads) {
      for (const [release, runtime] of [
        ["current", "bun"],
        ["current", "node"],
        ["old", "bun"],
      ] as const) {
        const ways = { "in the child": undefined, "new process each": "optional" } as const;
        const measured: Record<string, { wall: number[]; spawns: number }> = {};
        for (const [way, childFinalize] of Object.entries(ways)) {
          const wall: number[] = [];
          let spawns = 0;
          for (let i = 0; i < ROUNDS; i++) {
            const r = await runRealChild(world, steps, {
              finalize: "required",
              release,
              childRuntime: runtime,
              childFinalize,
            });
            wall.push(r.wallMs);
            spawns = r.spawns;
          }
          measured[way] = { wall, spawns };
        }
        const inChild = stat(measured["in the child"].wall);
        const before = stat(measured["new process each"].wall);
        rows.push([
          name,
          `${release === "current" ? "current" : "0.73.1"} pi, ${runtime}`,
          `${fmt(inChild, " ms")} · ${measured["in the child"].spawns} process`,
          `${fmt(before, " ms")} · ${measured["new process each"].spawns} processes`,
          `${(before.median - inChild.median).toFixed(0)} ms`,
        ]);
      }
    }
  } finally {
    await world.close();
  }
  return [
    "## Corrective messages",
    "",
    "A child under the strict finalize contract that ends in plain text. Wall time of the whole run (median, min–max",
    `of ${ROUNDS}), and how many child processes were started.`,
    "",
    table(["workload", "child", "in the child (pi follow-up)", "new process per message (before)", "saved"], rows),
    "",
  ].join("\n");
}

if (import.meta.main) console.log(await nudge());
