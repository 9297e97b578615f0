// `subagents flow [NAME ["input"]] [delegate options]`: runs a saved workflow (core/profiles/workflows.ts) through
// `delegate` — every delegate option applies — or, without a name, lists the workflows visible from here.
import { discoverWorkflows, loadWorkflow, WorkflowError } from "../../core/profiles/workflows.ts";
import { cmdDelegate } from "./delegate.ts";
import { cliContext } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";

/** The workflow as delegate parameters, or null once the list was printed (no name given). */
function flowParams(cwd: string, positionals: string[], json: boolean): Record<string, unknown> | null {
  const ctx = cliContext(cwd);
  if (!positionals.length) {
    const all = discoverWorkflows(ctx.host, ctx.agentDir, cwd);
    if (json) for (const w of all) console.log(JSON.stringify({ type: "workflow", ...w }));
    else if (!all.length)
      console.log(
        "No workflows. Save one as .pi/workflows/NAME.yaml (this project) or <agentDir>/workflows/NAME.yaml.",
      );
    else
      for (const w of all)
        console.log(
          `${w.name.padEnd(20)} ${w.source.padEnd(8)} ${w.problem ? `✗ ${w.problem}` : `${w.taskCount} task${w.taskCount === 1 ? "" : "s"}${w.description ? ` — ${w.description}` : ""}`}  ${w.file}`,
        );
    return null;
  }
  const [name, ...words] = positionals;
  try {
    const { params, workflow } = loadWorkflow(ctx.host, ctx.agentDir, cwd, name, words.join(" "));
    // The same rule as project agents: a repository's files run only if the settings do not forbid it.
    if (workflow.source === "project" && ctx.settings.projectAgents === "deny") {
      throw new UsageError(
        `flow: project workflow "${name}" (${workflow.file}) is not allowed: settings subagents.projectAgents is "deny".`,
      );
    }
    return params;
  } catch (err) {
    if (err instanceof WorkflowError) throw new UsageError(`flow: ${err.message}`);
    throw err;
  }
}

export async function cmdFlow(argv: string[]): Promise<number> {
  const code = await cmdDelegate(argv, flowParams);
  return code ?? EXIT.ok;
}
