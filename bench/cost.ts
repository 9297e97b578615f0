// What sub-agents cost (issue 35): tokens and dollars per workload, side by side with pi's example subagent
// extension where it has the workload. The scripted server bills like a provider (src/scripted/prompt-cache.ts):
// a request's repeated prefix (tools → system prompt → messages) is a cache read. Each workload starts with a
// cold cache, runs once (token counts are deterministic: no rounds needed), and is priced at a real model's
// prices from pi's own model list. "No caching" prices the same requests with every prompt token uncached: the
// server's answers do not depend on billing, so that is exactly what a run with caching off is billed.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheText, commonPrefix } from "../src/scripted/prompt-cache.ts";
import { messageText, script, type ModelServer, type ScriptStep } from "../src/scripted/model-server.ts";
import { EXTENSION } from "../test/support/parent-pi.ts";
import { benchWorld, BIN, EXAMPLE_EXT, PI_DIST, piCmd, table, type PiWorld } from "./lib.ts";

type Req = ModelServer["requests"][number];
export type Price = { model: string; input: number; output: number; cacheRead: number };

/** A model's prices (USD per million tokens) as pi's bundled model list has them. */
export function piModelPrice(provider: string, id: string): Price {
  const dir = join(PI_DIST, "bundle", "chunks");
  const re = new RegExp(
    `"chat:${id.replace(/[.]/g, "\\.")}":\\{id:"${id.replace(/[.]/g, "\\.")}",name:"([^"]*)",[^{}]*?provider:"${provider}"[^{}]*?cost:\\{([^}]*)\\}`,
  );
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".js")) continue;
    const m = re.exec(readFileSync(join(dir, f), "utf8"));
    if (!m) continue;
    const cost = Object.fromEntries(m[2].split(",").map((kv) => [kv.split(":")[0], Number(kv.split(":")[1])]));
    return { model: `${provider}/${id} (${m[1]})`, input: cost.input, output: cost.output, cacheRead: cost.cacheRead };
  }
  throw new Error(`pi's model list has no ${provider}/${id}`);
}

type Bill = { requests: number; uncached: number; cached: number; output: number; dollars: number; ceiling: number };

export function bill(reqs: Req[], p: Price): Bill {
  const b: Bill = { requests: 0, uncached: 0, cached: 0, output: 0, dollars: 0, ceiling: 0 };
  for (const r of reqs) {
    if (!r.usage) continue;
    const { prompt, cached, output } = r.usage;
    b.requests++;
    b.uncached += prompt - cached;
    b.cached += cached;
    b.output += output;
    b.dollars += ((prompt - cached) * p.input + cached * p.cacheRead + output * p.output) / 1e6;
    b.ceiling += (prompt * p.input + output * p.output) / 1e6;
  }
  return b;
}

const firstUser = (r: Req) => messageText((r.messages ?? []).find((m) => m.role === "user") ?? { role: "user" });
const systemText = (r: Req) =>
  (r.messages ?? [])
    .filter((m) => m.role === "system" || m.role === "developer")
    .map(messageText)
    .join("");
/** Characters of tool definitions and system prompt: what every request of that agent carries before any message. */
export const fixedChars = (r: Req) => JSON.stringify(r.tools ?? []).length + systemText(r).length;
/** How much of `parent` (its whole request as a provider's cache reads it) `child` repeats as an identical prefix. */
export function prefixShare(parent: Req, child: Req): number {
  const a = cacheText(parent);
  return commonPrefix(a, cacheText(child)) / a.length;
}

type Run = { parent: Req[]; children: Req[]; code: number; stderr: string };

/** One parent pi (`-p`, current pi under Node 24) with one extension, cold cache; its requests and its children's. */
async function runParent(
  world: PiWorld,
  ext: "ours" | "example",
  steps: ScriptStep[],
  opts: { context?: string } = {},
): Promise<Run> {
  world.server.promptCache.clear();
  const marker = `cost-${ext}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
  const from = world.server.requests.length;
  const args = ext === "ours" ? ["--no-extensions", "-e", EXTENSION] : ["--no-extensions", "-e", EXAMPLE_EXT];
  const session = join(world.root, `${marker}.jsonl`);
  const proc = Bun.spawn({
    cmd: [...piCmd("node"), "-p", "--session", session, ...args],
    cwd: world.workDir,
    env: { ...world.env, PI_OFFLINE: "1" },
    stdin: new TextEncoder().encode(`${marker} ${opts.context ?? ""}${script(steps)}`),
    stdout: "ignore",
    stderr: "pipe",
  });
  const stderr = await new Response(proc.stderr).text();
  const code = await proc.exited;
  const reqs = world.server.requests.slice(from);
  // A forked child's conversation starts with the parent's first message too: the parent's requests are those
  // with that one user message only.
  const isParent = (r: Req) =>
    firstUser(r).startsWith(marker) && (r.messages ?? []).filter((m) => m.role === "user").length === 1;
  return { parent: reqs.filter(isParent), children: reqs.filter((r) => !isParent(r)), code, stderr };
}

/** Tokens the parent's conversation grew by from its delegating request to the next one (the call and its result). */
function parentGrowth(run: Run, at: number): number {
  const [a, b] = [run.parent[at], run.parent[at + 1]];
  if (!a?.usage || !b?.usage) return Number.NaN;
  return b.usage.prompt - a.usage.prompt;
}

const tok = (n: number) => Math.round(n).toLocaleString("en-US");
const usd = (n: number) => `$${n.toFixed(4)}`;
const pct = (n: number) => `${(n * 100).toFixed(0)}%`;

/** A ~40k-token conversation (160,000 characters of varied text) for the forked children to inherit. */
function bigContext(): string {
  const words = [
    "cache",
    "prefix",
    "token",
    "parent",
    "child",
    "delegate",
    "session",
    "budget",
    "request",
    "model",
    "tool",
    "prompt",
  ];
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < 160_000; i++)
    lines.push(
      `note ${i}: ${Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(" ")} (${(i * 2654435761) % 100_000})`,
    );
  return `Here is the project log you must keep in mind:\n${lines.join("\n")}\n\n`;
}

/** A fresh child whose questions someone can answer (a background run: `subagents answer`): its first request. */
async function backgroundChild(world: PiWorld): Promise<Req | undefined> {
  const marker = `asking-${Date.now()}`;
  const run = (args: string[]) =>
    Bun.spawn({ cmd: [BIN, ...args], cwd: world.workDir, env: world.env, stdout: "pipe", stderr: "ignore" });
  const started = run(["delegate", "--background", "--json", `${marker} ${script([{ text: "ok" }])}`]);
  const out = await new Response(started.stdout).text();
  await started.exited;
  const id = /"sessionId":"([^"]+)"/.exec(out)?.[1];
  if (id) await run(["wait", id, "--json"]).exited;
  return world.server.requests.find((r) => firstUser(r).startsWith(marker));
}

/** A child's work: one tool call and its answer (so a child has a second turn that can read its first). */
const childWork = (label: string, last?: ScriptStep): string =>
  `${label} ${script([{ tool: "bash", args: { command: `echo ${label}` } }, ...(last ? [last] : [])])}`;

export async function cost(): Promise<string> {
  const price = piModelPrice("openai", "gpt-5");
  const world = await benchWorld();
  world.server.billing.cache = true;
  world.setSubagentSettings({ concurrency: 4 });
  const rows: string[][] = [];
  const growth: string[][] = [];
  const notes: string[] = [];
  const add = (workload: string, who: string, run: Run, growthAt: number[]) => {
    if (run.code !== 0) notes.push(`${workload} (${who}): the parent exited ${run.code}: ${run.stderr.slice(-300)}`);
    const all = bill([...run.parent, ...run.children], price);
    const kids = bill(run.children, price);
    rows.push([
      workload,
      who,
      String(all.requests),
      tok(all.uncached),
      tok(all.cached),
      tok(all.output),
      usd(all.dollars),
      usd(all.ceiling),
      pct(1 - all.dollars / all.ceiling),
      usd(kids.dollars),
    ]);
    const g = growthAt.map((i) => parentGrowth(run, i));
    growth.push([workload, who, g.map(tok).join(", "), tok(g.reduce((a, b) => a + b, 0) / g.length)]);
  };
  const shares: string[][] = [];
  let fixed = "";
  try {
    // 1. Eight fresh siblings, one delegation.
    const eight = Array.from({ length: 8 }, (_, i) => `sibling ${i}`);
    add(
      "8 fresh siblings",
      "subagents",
      await runParent(world, "ours", [
        {
          tool: "delegate_to_subagents",
          args: { tasks: eight.map((t, i) => ({ name: `s${i}`, prompt: childWork(t) })) },
        },
        { text: "done" },
      ]),
      [0],
    );
    const exampleEight = await runParent(world, "example", [
      { tool: "subagent", args: { tasks: eight.map((t) => ({ agent: "bench", task: childWork(t) })) } },
      { text: "done" },
    ]);
    add("8 fresh siblings", "pi's example", exampleEight, [0]);

    // 2. Four forked children of a ~40k-token conversation (pi's example has no fork), three ways: the default
    // (the parent's tools and system prompt, a plain answer); with a structured result (the finalize tool, which
    // only the child has, joins the tool list); and an agent that picks its tools (the child's own tools and
    // system prompt, as every fork was before issue 35).
    const context = bigContext();
    mkdirSync(join(world.agentDir, "agents"), { recursive: true });
    writeFileSync(
      join(world.agentDir, "agents", "own-tools.md"),
      "---\nname: own-tools\ndescription: forks with its own tools\ntools: read, bash, edit, write\nsystemPromptMode: append\n---\nKeep it short.\n",
    );
    const structured: ScriptStep = { finalize: { status: "SUCCESS", data: { ok: true } } as never };
    const variants: [string, Record<string, unknown>, ScriptStep?][] = [
      ["4 forks of a 40k-token conversation", {}],
      [
        "… with a structured result (outputSchema: + finalize tool)",
        { outputSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } },
        structured,
      ],
      ["… with the child's own tools and system prompt (agent with `tools:`)", { profile: "own-tools" }],
    ];
    for (const [label, extra, last] of variants) {
      const forks = await runParent(
        world,
        "ours",
        [
          {
            tool: "delegate_to_subagents",
            args: {
              tasks: [0, 1, 2, 3].map((i) => ({
                name: `f${i}`,
                context: "fork",
                prompt: childWork(`forked ${i}`, last),
                ...extra,
              })),
            },
          },
          { text: "done" },
        ],
        { context },
      );
      add(label, "subagents", forks, [0]);
      const s = forks.children
        .filter((c) => c.messages?.at(-1)?.role === "user")
        .map((c) => prefixShare(forks.parent[0], c));
      shares.push([label, s.length ? `${pct(Math.min(...s))}–${pct(Math.max(...s))}` : "n/a"]);
    }
    // The same four tasks as fresh children that are told the context in their prompt (what a fork saves).
    const retold = await runParent(
      world,
      "ours",
      [
        {
          tool: "delegate_to_subagents",
          args: {
            tasks: [0, 1, 2, 3].map((i) => ({ name: `r${i}`, prompt: `${context}${childWork(`retold ${i}`)}` })),
          },
        },
        { text: "done" },
      ],
      { context },
    );
    add("4 fresh children re-told the 40k context", "subagents", retold, [0]);

    // 3. A three-step hand-off chain.
    add(
      "3-step chain",
      "subagents",
      await runParent(world, "ours", [
        {
          tool: "delegate_to_subagents",
          args: {
            tasks: [
              { name: "a", prompt: childWork("step a") },
              { name: "b", after: ["a"], prompt: `${childWork("step b")} from {{a}}` },
              { name: "c", after: ["b"], prompt: `${childWork("step c")} from {{b}}` },
            ],
          },
        },
        { text: "done" },
      ]),
      [0],
    );
    add(
      "3-step chain",
      "pi's example",
      await runParent(world, "example", [
        {
          tool: "subagent",
          args: {
            chain: [
              { agent: "bench", task: childWork("step a") },
              { agent: "bench", task: `${childWork("step b")} from {previous}` },
              { agent: "bench", task: `${childWork("step c")} from {previous}` },
            ],
          },
        },
        { text: "done" },
      ]),
      [0],
    );

    // 4. A resumed `subagent` session: a first task, then a follow-up in the same child session.
    add(
      "subagent + resume",
      "subagents",
      await runParent(world, "ours", [
        { tool: "subagent", args: { agent: "worker", task: childWork("first") } },
        { tool: "subagent", args: { agent: "worker", sessionId: "{{lastSessionId}}", task: childWork("follow-up") } },
        { text: "done" },
      ]),
      [0, 1],
    );

    // The fixed prompt of a fresh child (tools + system prompt), ours vs the example's, in the same pi.
    const oursChild = (
      await runParent(world, "ours", [
        { tool: "delegate_to_subagents", args: { tasks: [{ name: "t", prompt: "trivial" }] } },
        { text: "done" },
      ])
    ).children[0];
    const askingChild = await backgroundChild(world);
    const exampleChild = exampleEight.children[0];
    const row = (label: string, r: Req | undefined): string[] =>
      r
        ? [
            label,
            String(JSON.stringify(r.tools ?? []).length),
            String(systemText(r).length),
            String(fixedChars(r)),
            tok(fixedChars(r) / 4),
            `${(fixedChars(r) / fixedChars(exampleChild)).toFixed(2)}×`,
          ]
        : [label, "n/a", "", "", "", ""];
    fixed = table(
      ["child of", "tools (chars)", "system prompt (chars)", "fixed total", "≈ tokens", "vs example"],
      [
        row(
          "subagents, `delegate_to_subagents` in a parent without a UI (no one can answer: no `ask_parent`)",
          oursChild,
        ),
        row(
          "subagents, `delegate --background` (questions wait for `subagents answer`: with `ask_parent`)",
          askingChild,
        ),
        row("pi's example (agent `bench`)", exampleChild),
      ],
    );
  } finally {
    await world.close();
  }
  return [
    "## What sub-agents cost",
    "",
    `Priced at ${price.model}: $${price.input} per million input tokens, $${price.cacheRead} cached, $${price.output} output (pi's model list).`,
    "Tokens are the scripted server's estimate (4 characters a token) of what a provider with prefix caching bills:",
    "the longest prefix (tools → system prompt → messages) a request repeats of one sent in the last 5 minutes is",
    "a cache read. Each workload starts with a cold cache. Every child does one tool call and answers.",
    "",
    table(
      [
        "workload",
        "extension",
        "requests",
        "uncached input",
        "cache reads",
        "output",
        "cost",
        "cost without caching",
        "saved by caching",
        "of which children",
      ],
      rows,
    ),
    "",
    "How much of the parent's delegating request a forked child's first request repeats as an identical prefix",
    "(what a provider can bill as a cache read):",
    "",
    table(["fork", "prefix repeated"], shares),
    "",
    "What the parent's own context grows by per delegation (the tool call and its result, in tokens; every later",
    "parent request carries it):",
    "",
    table(["workload", "extension", "per delegation", "mean"], growth),
    "",
    "A fresh child's fixed prompt (tool definitions + system prompt) for a trivial task:",
    "",
    fixed,
    "",
    ...(notes.length ? ["Problems:", ...notes.map((n) => `- ${n}`), ""] : []),
  ].join("\n");
}

if (import.meta.main) console.log(await cost());
