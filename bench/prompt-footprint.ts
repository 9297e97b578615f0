// The parent prompt footprint: how much our tools add to every request a parent pi sends, measured from the real
// requests the scripted model server received: system prompt + tool declarations, with the extension against
// the same pi without it (tokens estimated at 4 characters a token; no tokenizer is installed offline). Side by
// side: pi's example subagent extension on the same pi. Goal: ours ≤ 2× the example on a request that does not
// delegate, in the current pi (which declares our retrieval tools only when useful, tool-exposure.ts); the older
// pi (1.5.2) declares all five as before.
import { join } from "node:path";
import { script, type ScriptStep } from "../src/scripted/model-server.ts";
import { piCmd as piCommand, type PiRelease } from "../test/support/pi-env.ts";
import { benchWorld, EXAMPLE_EXT, REPO, table, type PiWorld } from "./lib.ts";

const GOAL = 2;
const OURS = ["-e", join(REPO, "dist", "extension.js")];

type Size = { system: number; tools: number; declared: string[] };

/** What one request of a parent run carried: its system prompt and tool declarations, by size. */
async function sizes(
  world: PiWorld,
  o: { release?: PiRelease; args: string[]; steps?: ScriptStep[] },
): Promise<Size[]> {
  const marker = `footprint-${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const before = world.server.requests.length;
  const proc = Bun.spawn({
    // No extension is installed in the bench world: only the ones given here load (and pi's built-in ones).
    cmd: [...piCommand(o.release ?? "current", "node"), "-p", "--no-session", ...o.args],
    cwd: world.workDir,
    env: { ...world.env, PI_OFFLINE: "1" },
    stdin: new TextEncoder().encode(`${marker} ${script(o.steps ?? [{ text: "ok" }])}`),
    stdout: "ignore",
    stderr: "ignore",
  });
  await proc.exited;
  return world.server.requests
    .slice(before)
    .filter((q) => JSON.stringify(q.messages ?? []).includes(marker))
    .map((q) => ({
      system: (q.messages ?? [])
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
        .join("").length,
      tools: JSON.stringify(q.tools ?? []).length,
      declared: (q.tools ?? []).map((t: { function?: { name?: string } }) => t.function?.name ?? ""),
    }));
}

const added = (a: Size, base: Size) => a.system - base.system + (a.tools - base.tools);

export async function promptFootprint(): Promise<string> {
  const world = await benchWorld();
  try {
    const [base] = await sizes(world, { args: [] });
    const [basePrior] = await sizes(world, { release: "prior", args: [] });
    const [example] = await sizes(world, { args: ["-e", EXAMPLE_EXT] });
    const [ours] = await sizes(world, { args: OURS });
    const [prior] = await sizes(world, { release: "prior", args: OURS });
    // The request after a delegation: the output and transcript tools are declared from then on.
    const delegating = await sizes(world, {
      args: OURS,
      steps: [{ tool: "delegate_to_subagents", args: { tasks: [{ name: "a", prompt: "hi" }] } }, { text: "ok" }],
    });
    // With pi's tool_search on, the retrieval tools wait for it to load them: they are never declared up front.
    world.setSubagentSettings({}, { defaultTools: ["+tool_search"] });
    const [baseSearch] = await sizes(world, { args: [] });
    const [oursSearch] = await sizes(world, { args: OURS });
    world.setSubagentSettings({});
    const ex = added(example, base);
    const row = (label: string, s: Size, b: Size) => {
      const n = added(s, b);
      return [
        label,
        String(s.system - b.system),
        String(s.tools - b.tools),
        `${n} (≈ ${Math.round(n / 4)})`,
        `${(n / ex).toFixed(2)}×`,
        s.declared.filter((t) => !b.declared.includes(t)).join(", "),
      ];
    };
    const oursTotal = added(ours, base);
    return [
      "## Parent prompt footprint",
      "",
      "What each extension adds to a parent pi's request (system prompt + tool declarations), from the requests the",
      "scripted model server received, against the same pi without it. Characters (≈ tokens at 4 a token).",
      "",
      table(
        ["extension, request", "system prompt", "tools", "total", "vs example", "declared"],
        [
          row("ours, current pi, a request that does not delegate", ours, base),
          row("ours, current pi, the request after a delegation", delegating.at(-1)!, base),
          row("ours, current pi with tool_search on", oursSearch, baseSearch),
          row("ours, pi 1.5.2 (all five declared, as before)", prior, basePrior),
          row("pi's example subagent extension, current pi", example, base),
        ],
      ),
      "",
      `Goal: ours ≤ ${GOAL}× the example on a request that does not delegate: ${(oursTotal / ex).toFixed(2)}× ${oursTotal <= ex * GOAL ? "✓" : "✗"}`,
      "",
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await promptFootprint());
