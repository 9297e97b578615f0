// Stage "run": the child itself. What every attempt shares is gathered here once (MCP servers, a cache-true fork's
// prompt, the finalize contract, the rate-limit gate); child-launch.ts launches an attempt, fallback.ts decides
// whether another model gets one, child-notes.ts adds what the record should say besides the result.
// Whatever happens, the stage ends with a result on the task (a thrown error becomes a failed result).
import type { RunResult } from "../types.ts";
import { childLauncher, type LaunchPlan } from "./child-launch.ts";
import { withCredentialsAdvice } from "./child-notes.ts";
import { runWithFallbacks } from "./fallback.ts";
import { childMcp } from "./mcp-select.ts";
import { runCheckpoints } from "./process/checkpoint.ts";
import { rateGateFor } from "./process/rate-gate.ts";
import { maskTranscript } from "./session-file.ts";
import type { TaskContext } from "./task-context.ts";
import { failedResult, TaskError } from "./task-error.ts";

export async function runTaskChild(task: TaskContext): Promise<void> {
  const { engine, runId } = task;
  const checkpoints = runCheckpoints(engine.store, engine.clock, runId);
  let result: RunResult;
  try {
    result = await runWithFallbacks(task, childLauncher(task, await launchPlan(task, checkpoints)));
  } catch (err) {
    result =
      err instanceof TaskError
        ? failedResult(err.message, err.code)
        : failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED");
  } finally {
    checkpoints.stop();
  }
  // The child's own transcript, like everything else shown of the run, without its included secrets.
  if (task.secrets?.length && !maskTranscript(engine.host, task.sessionFile, task.secrets))
    task.warnings.push(
      `its session file could not be rewritten without the .worktreeinclude secrets: ${task.sessionFile} may hold them`,
    );
  task.result = withCredentialsAdvice(task, result);
}

async function launchPlan(task: TaskContext, checkpoints: LaunchPlan["checkpoints"]): Promise<LaunchPlan> {
  const { engine, input, profile, wiring } = task;
  return {
    // pi 1.x MCP servers for this child (the agent's or settings' `mcp`, minus servers the owner found dead).
    mcp: await childMcp(engine, profile, task.cwd),
    forkPrompt: input.cacheTrueFork ? engine.call.parentPrompt : undefined,
    finalize: input.finalize,
    // A call's gate comes from the scheduler; a lone task gets its own.
    rateGate: wiring.rateGate ?? rateGateFor(1, engine.clock, engine.settings.rateLimitWait),
    checkpoints,
  };
}
