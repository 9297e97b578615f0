// `subagents flow [NAME ["input"]] [delegate options]`: runs a saved workflow (core/profiles/workflows.ts) as a
// delegate call — every delegate option applies — or, without a name, lists the workflows visible from here.
import { discoverWorkflows, loadWorkflow, WorkflowError } from "../../core/profiles/workflows.ts";
import { DELEGATE_OPTIONS, delegateRequest, runDelegate } from "./delegate.ts";
import { parse } from "../flags/args.ts";
import { cliContext, type CliContext } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { FLOW_HELP } from "../help.ts";

/** Lists the workflows visible from `cwd`. */
function listWorkflows(ctx: CliContext, cwd: string, json: boolean): void {
  const all = discoverWorkflows(ctx.host, ctx.agentDir, cwd);
  if (json) for (const w of all) console.log(JSON.stringify({ type: "workflow", ...w }));
  else if (!all.length)
    console.log("No workflows. Save one as .pi/workflows/NAME.yaml (this project) or <agentDir>/workflows/NAME.yaml.");
  else
    for (const w of all)
      console.log(
        `${w.name.padEnd(20)} ${w.source.padEnd(8)} ${w.problem ? `✗ ${w.problem}` : `${w.taskCount} task${w.taskCount === 1 ? "" : "s"}${w.description ? ` — ${w.description}` : ""}`}  ${w.file}`,
      );
}

/** The workflow NAME with its input as delegate parameters. */
function workflowParams(ctx: CliContext, cwd: string, [name, ...words]: string[]): Record<string, unknown> {
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
  const { values, positionals } = parse("flow", argv, DELEGATE_OPTIONS);
  if (values.help) {
    console.log(FLOW_HELP);
    return EXIT.ok;
  }
  // One context for the call: the workflow is read with the settings and agent dir it then runs under.
  let ctx: CliContext | undefined;
  const read = delegateRequest(values, positionals, (cwd) => {
    ctx = cliContext(cwd);
    if (positionals.length) return workflowParams(ctx, cwd, positionals);
    listWorkflows(ctx, cwd, !!values.json);
    return null;
  });
  if (!read || !ctx) return EXIT.ok;
  return runDelegate(ctx, read, values);
}
