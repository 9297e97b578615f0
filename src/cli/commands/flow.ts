// `subagents flow [NAME ["input"]] [delegate options]`: runs a saved workflow (core/profiles/workflows.ts) as a
// delegate call — every delegate option applies — or, without a name, lists the workflows visible from here.
import { discoverWorkflows } from "../../core/profiles/workflows.ts";
import { callFlags, DELEGATE_OPTIONS, runDelegate } from "./delegate.ts";
import { parse, workingFolder } from "../flags/args.ts";
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

export async function cmdFlow(argv: string[]): Promise<number> {
  const { values, positionals } = parse("flow", argv, DELEGATE_OPTIONS);
  if (values.help) {
    console.log(FLOW_HELP);
    return EXIT.ok;
  }
  const cwd = workingFolder("flow", values.cwd);
  const flags = callFlags(values, cwd);
  // One context for the call: the workflow is read with the settings and agent dir it then runs under.
  const ctx = cliContext(cwd);
  if (!positionals.length) {
    listWorkflows(ctx, cwd, !!values.json);
    return EXIT.ok;
  }
  if (values.tasks !== undefined) throw new UsageError("flow: --tasks does not apply: the workflow gives the tasks.");
  // The same document as delegate_to_subagents {workflow: "NAME input"}: read, and consented to, the same way.
  return runDelegate(ctx, "flow", values, flags, { workflow: positionals.join(" ") });
}
