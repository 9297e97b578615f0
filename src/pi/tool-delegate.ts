// delegate_to_subagents (spec 000): 1–16 tasks in parallel, live windows through throttled onUpdate, and a
// result that carries each task's status line AND its output (bounded; get_subagent_output has the rest).
import { InputError, parseDelegateParams } from "../core/delegate-input.ts";
import { realClock } from "../core/host.ts";
import { runScheduled } from "../core/run/scheduler.ts";
import { checkProfileSkills, checkResumable, effectiveTimeout, type TaskInput, type TaskOutcome } from "../core/run/task.ts";
import { delegateResultText } from "../core/run/outcome-text.ts";
import { gateFolderProblem } from "../core/run/gate-check.ts";
import { isolationDetails } from "../core/run/launch/isolation.ts";
import { CallWindows } from "../ui/call-windows.ts";
import type { WindowedDetails } from "../ui/windows.ts";
import { renderDelegateCall, renderWindowsResult, type ThemeLike } from "./render.ts";
import { DELEGATE_SCHEMA } from "./schemas.ts";
import { Throttle, UPDATE_INTERVAL_MS } from "./throttle.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { startInBackground } from "./background.ts";
import { withWorkflow } from "./workflow-call.ts";
import { attachFork, type ForkEntry } from "../core/run/fork.ts";
import { childrenResultFields, refusedTasks, TASKS_OUTPUT_SCHEMA } from "./tool-results.ts";
import { duplicateTasks } from "../core/session-caps.ts";
import type { ErrorCode } from "../core/types.ts";
import { fanoutRefusal } from "./confirm-fanout.ts";

/** A call refused before anything started, with the spec's error shape in details (and pi's error flag). The tool
 * declares an outputSchema, so pi 1.x codemode hands a script `structuredContent` when there is one — without it a
 * refusal with isError rejected the script's call with the bare text, and the code was lost. */
export function refusedCall(code: ErrorCode, message: string) {
  return { content: [{ type: "text", text: message }], details: { error: { code, message } }, isError: true, structuredContent: refusedTasks(code, message) };
}


export function delegateTool(env: ToolEnv) {
  return {
    name: "delegate_to_subagents",
    label: "Delegate to sub-agents",
    description:
      "Run 1–16 independent tasks in parallel, each in an isolated sub-agent (its own pi process, context, tools and model). " +
      "Returns each task's status and output; get_subagent_output / get_subagent_session fetch more by session id.",
    // pi ≥ 0.80 lists a custom tool in the system prompt only with a snippet; the guidelines say *when* to use it.
    promptSnippet: "Run independent tasks in parallel sub-agents, each with a fresh context; returns their outputs",
    promptGuidelines: [
      "Use delegate_to_subagents when work splits into independent parts (surveys of many files, reviews, research); keep small or sequential edits yourself.",
      'Sub-agents see none of this conversation (unless context: "fork"): make each prompt self-contained (paths, goal, expected answer).',
    ],
    parameters: DELEGATE_SCHEMA,
    outputSchema: TASKS_OUTPUT_SCHEMA,
    async execute(_id: string, rawParams: unknown, signal: AbortSignal | undefined, onUpdate: ((r: unknown) => void) | undefined, ctx: ToolContext) {
      const call = env.begin(ctx);
      let params;
      try {
        params = parseDelegateParams(await withWorkflow(rawParams, ctx, () => call.engine()));
      } catch (err) {
        if (err instanceof InputError) throw new Error(`Invalid delegate_to_subagents call: ${err.message}`);
        throw err;
      }
      const engine = await call.engine();
      const inputs: TaskInput[] = params.tasks.map((t) => ({
        name: t.name,
        prompt: t.prompt,
        cwd: t.cwd ?? ctx.cwd,
        profile: t.profile ?? params.profile,
        timeoutSec: t.timeout,
        resume: t.resume,
        files: t.files,
        isolation: t.isolation,
        sandbox: t.sandbox,
        keepProcesses: t.keepProcesses,
        runner: t.runner,
        sessionId: t.resume ?? engine.store.newSessionId(),
        budget: t.budget,
        after: t.after,
        gate: t.gate,
        gateTimeout: t.gateTimeout,
        gateRetries: t.gateRetries,
        outputSchema: t.outputSchema,
      }));
      const duplicate = duplicateTasks(inputs);
      if (duplicate) return refusedCall("INVALID_INPUT", duplicate);
      // Spec 000: resume problems and skill conflicts fail the whole call before anything starts.
      for (const t of inputs) {
        const problem = t.resume ? checkResumable(engine, t.resume) : null;
        if (problem) throw new Error(problem);
      }
      const conflict =
        checkProfileSkills(engine, inputs.map((t) => t.profile)) ??
        gateFolderProblem(engine, inputs) ??
        attachFork(engine.profiles, params.tasks, inputs, () => ctx.sessionManager?.getBranch?.() as ForkEntry[] | undefined);
      if (conflict) throw new Error(conflict);
      // A project-local profile that may not run fails only the tasks that name it; the others go on.
      const refused = await call.refusedProfiles(inputs.map((t) => t.profile));
      for (const t of inputs) if (t.profile && refused.has(t.profile)) t.refused = refused.get(t.profile);
      const limit = (await call.check(engine, { tasks: inputs.length, maxCost: params.maxCost })) ?? (await fanoutRefusal(ctx, engine.settings, inputs.length)) ?? (await call.admit(engine, { tasks: inputs.length, maxCost: params.maxCost }));
      if (limit) return refusedCall(limit.code, limit.message);
      if (params.background) return startInBackground(call, engine, inputs, params.maxCost);
      const windows = new CallWindows(
        inputs.map((t) => ({ name: t.name, sessionId: t.sessionId!, profile: t.profile, timeoutSec: effectiveTimeout(engine, t), after: t.after })),
        engine.settings.maxLinesPerWindow,
      );
      windows.pi = engine.piDescribe;
      const update = (details: WindowedDetails) => onUpdate?.({ content: [{ type: "text", text: `Sub-agents: ${details.status}` }], details });
      const throttle = new Throttle(update, UPDATE_INTERVAL_MS, realClock);
      const tick = setInterval(() => throttle.push(windows.snapshot(Date.now())), 1000);
      const release = await call.adopt(inputs);
      let outcomes: TaskOutcome[];
      try {
        outcomes = await runScheduled(inputs, engine.settings.concurrency, (input, hooks) => call.run(engine, input, hooks), {
          rateLimitWaitSec: engine.settings.rateLimitWait,
          signal,
          maxCost: params.maxCost,
          onTaskStart: (i) => {
            call.persistStart(inputs[i]);
            windows.start(i, Date.now());
            throttle.push(windows.snapshot(Date.now()));
          },
          onTaskWarnings: (i, warnings) => windows.warn(i, warnings),
          onTaskEvent: (i, state) => {
            windows.event(i, state);
            throttle.push(windows.snapshot(Date.now()));
          },
          onTaskEnd: (i, outcome) => {
            windows.end(i, outcome, Date.now());
            call.persist(outcome, inputs[i]);
            throttle.push(windows.snapshot(Date.now()));
          },
        });
      } finally {
        clearInterval(tick);
        throttle.cancel();
        release();
      }
      const details = windows.snapshot(Date.now());
      const isolated = isolationDetails(outcomes);
      return { content: [{ type: "text", text: delegateResultText(outcomes) }], details: isolated ? { ...details, isolation: isolated } : details, ...childrenResultFields(outcomes) };
    },
    renderCall: (args: { tasks?: { profile?: string }[]; profile?: string }, theme: ThemeLike) => renderDelegateCall(args, theme),
    renderResult: (result: { details?: WindowedDetails; content?: { text?: string }[] }, opts: { expanded: boolean }, theme: ThemeLike) =>
      renderWindowsResult(result.details, opts.expanded, theme, result.content?.[0]?.text ?? ""),
  };
}
