// `delegate_to_subagents` with `workflow: "NAME input text"`: the call's tasks come from a saved workflow
// (core/profiles/workflows.ts). One string field is the whole surface: every field of a tool schema is in every
// request the parent makes. A project workflow is repo-controlled, so it needs the same consent as a project
// agent (subagents.projectAgents, else the user is asked once per file and pi session).
import type { ConfirmContext } from "./confirm-fanout.ts";
import { projectFileRefusal } from "./project-consent.ts";
import { discoverWorkflows, loadWorkflow, WorkflowError } from "../profiles/workflows.ts";
import type { Engine } from "../run/engine.ts";

/** What asking for consent needs of a front: its folder, and a person to confirm when there is one. */
export type ConsentContext = ConfirmContext & { cwd: string };

/** Why a workflow does not give the call's tasks: a call or workflow that is not one (`consent`: false), or a
 *  project workflow the user did not allow (`consent`: true). The message names no tool: the front says whose. */
export class WorkflowRefusal extends Error {
  constructor(
    message: string,
    readonly consent = false,
  ) {
    super(message);
  }
}

/** The call's parameters with the workflow's tasks in place of `workflow`; other fields of the call win.
 * `allowed`: the project workflows the user allowed in this front's session (pi's PiSession.allowedWorkflows). */
export async function withWorkflow(
  raw: unknown,
  ctx: ConsentContext,
  getEngine: () => Promise<Engine>,
  allowed: Set<string> = new Set(),
): Promise<unknown> {
  if (!raw || typeof raw !== "object" || typeof (raw as { workflow?: unknown }).workflow !== "string") return raw;
  const engine = await getEngine();
  const { workflow: spec, ...call } = raw as Record<string, unknown> & { workflow: string };
  if (call.tasks !== undefined) throw new WorkflowRefusal('give either "tasks" or "workflow", not both');
  const [name, ...words] = spec.trim().split(/\s+/);
  const input = spec.trim().slice(name.length).trim();
  let loaded: ReturnType<typeof loadWorkflow>;
  try {
    loaded = loadWorkflow(engine.host, engine.agentDir, ctx.cwd, name, words.length ? input : "");
  } catch (err) {
    if (err instanceof WorkflowError) throw new WorkflowRefusal(err.message);
    throw err;
  }
  const { workflow, params } = loaded;
  if (workflow.source === "project") {
    const ui = ctx.hasUI ? ctx.ui : undefined;
    const why = await projectFileRefusal(
      engine.settings.projectAgents,
      workflow.file,
      `Project workflow "${name}"`,
      {
        title: "Run a project workflow?",
        message: `Workflow "${name}" comes from this repository (${workflow.file}) and sets the sub-agents' prompts. Run it?`,
      },
      allowed,
      ui && ((title, message) => ui.confirm(title, message)),
    );
    if (why) throw new WorkflowRefusal(why, true);
  }
  return { ...params, ...call };
}

/** Lines for list_subagent_profiles: the workflows the parent model may name. */
export function workflowLines(engine: Pick<Engine, "host" | "agentDir">, cwd: string): string[] {
  const all = discoverWorkflows(engine.host, engine.agentDir, cwd).filter((w) => !w.problem);
  if (!all.length) return [];
  return [
    "",
    'Workflows (delegate_to_subagents workflow: "NAME input"):',
    ...all.map((w) => `- ${w.name} (${w.source}, ${w.taskCount} tasks)${w.description ? `: ${w.description}` : ""}`),
  ];
}
