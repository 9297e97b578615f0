// A cache-true fork (core/run/fork.ts): the child sends its parent's tools and system prompt byte for byte, so its
// first request repeats the parent's delegating request as a prefix (tools → system prompt → the copied
// conversation) and a provider bills that as a cache read. The parent's tools the child does not have (the
// delegation tools, the parent's own extensions' tools) are stand-ins that refuse: a fork does its task with the
// tools it really has. The task and the child's own instructions come after the copy, in its first message.
import * as fs from "node:fs";

type Api = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void;
  registerTool(def: Record<string, unknown>): void;
  getAllTools(): { name: string }[];
  setActiveTools(names: string[]): void;
};
type ParentPrompt = { systemPrompt: string; tools: { name: string; description: string; parameters: unknown }[] };

/** The child's own tools that stay active after the parent's (registered only when its contract needs them). */
const OWN_TOOLS = ["subagent_finalize", "ask_parent"];

function readParent(file: string): ParentPrompt | null {
  try {
    const p = JSON.parse(fs.readFileSync(file, "utf8")) as ParentPrompt;
    return typeof p?.systemPrompt === "string" && Array.isArray(p.tools) ? p : null;
  } catch {
    return null;
  }
}

export function installForkPrompt(pi: Api): void {
  const file = process.env.PI_SUBAGENT_FORK_PROMPT;
  const parent = file ? readParent(file) : null;
  // A pi without these (older than the parent) sends its own tools; the parent's system prompt alone would then
  // describe tools the child does not have, so it keeps its own prompt too.
  if (!parent || typeof pi.getAllTools !== "function" || typeof pi.setActiveTools !== "function") return;
  let ready = false;
  // After every extension has registered its tools (session_start), so a real tool is never shadowed.
  const prepare = () => {
    if (ready) return;
    ready = true;
    const have = new Set(pi.getAllTools().map((t) => t.name));
    for (const t of parent.tools) {
      if (have.has(t.name)) continue;
      pi.registerTool({
        name: t.name,
        label: t.name,
        description: t.description,
        parameters: t.parameters ?? { type: "object", properties: {} },
        async execute() {
          throw new Error(`${t.name} is not available to a forked sub-agent: do your task with the other tools.`);
        },
      });
    }
    pi.setActiveTools([...parent.tools.map((t) => t.name), ...OWN_TOOLS.filter((n) => have.has(n))]);
  };
  pi.on("session_start", prepare);
  pi.on("before_agent_start", () => {
    prepare();
    return { systemPrompt: parent.systemPrompt };
  });
}
