// Live updates: how often delegate_to_subagents calls onUpdate, and what each render costs, while one real pi
// child streams 5,000 deltas. The tool is called in-process exactly as pi calls it.
import { createServices } from "../src/pi/services.ts";
import { renderWindowsResult } from "../src/pi/render.ts";
import { delegateTool } from "../src/pi/tool-delegate.ts";
import { makeToolEnv } from "../src/pi/tool-env.ts";
import { script } from "../src/scripted/model-server.ts";
import type { WindowedDetails } from "../src/ui/windows.ts";
import { benchWorld, table } from "./lib.ts";

const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };

export async function updates(): Promise<string> {
  const world = await benchWorld();
  try {
    for (const [k, v] of Object.entries(world.env)) process.env[k] = v;
    const env = makeToolEnv({ services: createServices, appendEntry: () => {} });
    const tool = delegateTool(env);
    const stamps: number[] = [];
    let renderMs = 0;
    const onUpdate = (r: unknown) => {
      stamps.push(performance.now());
      const t = performance.now();
      renderWindowsResult((r as { details: WindowedDetails }).details, false, theme, "").render(120);
      renderMs += performance.now() - t;
    };
    const prompt = `stream ${script([{ text: "z".repeat(20_000), chunks: 5000, chunkDelayMs: 1, finalize: { status: "SUCCESS", result: "ok" } }])}`;
    const t0 = performance.now();
    await tool.execute("bench", { tasks: [{ name: "streamer", prompt }] }, undefined, onUpdate, {
      cwd: world.workDir,
      hasUI: false,
    });
    const seconds = (performance.now() - t0) / 1000;
    // The densest second: the most updates inside any 1-second window.
    let densest = 0;
    for (let i = 0, j = 0; j < stamps.length; j++) {
      while (stamps[j] - stamps[i] > 1000) i++;
      densest = Math.max(densest, j - i + 1);
    }
    return [
      "### Live updates: one child streaming 5,000 deltas",
      "",
      table(
        ["run time", "onUpdate calls", "most calls in any 1 s", "render time per call (width 120)"],
        [
          [
            `${seconds.toFixed(2)} s`,
            String(stamps.length),
            `${densest} (goal ≤ 10: ${densest <= 10 ? "met" : "missed"})`,
            `${(renderMs / Math.max(1, stamps.length)).toFixed(3)} ms`,
          ],
        ],
      ),
      "",
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await updates());
