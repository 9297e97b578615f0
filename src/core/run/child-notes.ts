// What a child's run adds to its task's record besides its own result: where the sandbox or the closed network
// stopped it (proxy reports, said as warnings), the network its proxy lets through, and credentials
// advice when its model could not be used.
import { credentialsError } from "../credentials.ts";
import type { RunResult } from "../types.ts";
import { expectedDefaultModel } from "./default-model.ts";
import { modelEndpoints, providerOf } from "./model-endpoint.ts";
import { composeEnv } from "./process/gate.ts";
import { refusedWarning } from "./runners/network.ts";
import { confined } from "./runners/where.ts";
import type { Placed, PlaceRequest } from "./runners/types.ts";
import { childPiCaps } from "./launch/child-tools.ts";
import { foreignEndpoints } from "./runtimes/providers.ts";
import type { ForeignRuntimeName } from "./runtimes/types.ts";
import type { TaskContext } from "./task-context.ts";
import { userModels } from "./engine.ts";

const note = (task: TaskContext, warning: string | null | undefined) => {
  if (warning && !task.warnings.includes(warning)) task.warnings.push(warning);
};

/** After an attempt: connections the closed network's proxy refused, and what the runner says of its placement — the
 *  person sees them. (What the child wrote comes back, or not, when its task's layer is harvested: task-record.ts.) */
export function notePlacement(task: TaskContext, placed: Placed): void {
  const refused = refusedWarning(placed.netRefused?.());
  if (refused) task.warnings.push(refused);
  for (const w of placed.warnings?.() ?? []) note(task, w);
}

/**
 * The provider of the model a pi child runs, when known here (its auth.json holds that provider's entry only): the
 * model it is started with, else its agent's provider (`--provider`), else the default model in its folder — the
 * user's, or a project's only where pi trusts that project (the child is told the same decision, and its model guard
 * stops it before any model call should its pi pick another model: src/child-extension/model-guard.ts).
 */
export function childProvider(task: TaskContext, childModel: string | null | undefined): string | undefined {
  const { engine, profile } = task;
  const agentProvider = childModel === undefined && !profile?.model ? profile?.provider : undefined;
  if (agentProvider) return agentProvider;
  const model = childModel ?? expectedDefaultModel(engine, task.cwd, task.trust);
  return model ? providerOf(model, { ...userModels(engine), defaultModel: undefined }) : undefined;
}

/** What a confined pi child's auth.json is made from: its provider, and the user's pi to refresh a sign-in token
 *  first (child-auth.ts). */
export function childAuthFor(task: TaskContext, childModel: string | null | undefined): PlaceRequest["piAuth"] {
  const { engine } = task;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...engine.host.env, ...engine.piEnv })) if (v !== undefined) env[k] = v;
  return {
    provider: childProvider(task, childModel),
    refresher: {
      piCommand: engine.piCommand,
      env,
      available: childPiCaps(engine.piVersion).authRefresh,
    },
  };
}

/** A failed run whose model had no credentials says how to give it some (credentials.ts). */
export function withCredentialsAdvice(task: TaskContext, result: RunResult): RunResult {
  if (result.status !== "error") return result;
  const model = result.model ?? task.model.model ?? expectedDefaultModel(task.engine, task.cwd, task.trust);
  const advice = credentialsError(result.error, model);
  return advice ? { ...result, error: advice } : result;
}

/**
 * What a sandboxed (or container) child's proxy lets through when its network is closed (runners/network.ts): its
 * model's endpoints, and with "model" the settings' allow list. Unset when the network stays open.
 */
export function childNetwork(
  task: TaskContext,
  childModel: string | null | undefined,
): { allow: string[]; forwarder?: string[] } | undefined {
  const { engine, where } = task;
  const mode = engine.settings.sandboxNetwork;
  if (mode === "all" || !confined(where)) return undefined;
  const foreign =
    task.input.runtime === "pi"
      ? null
      : foreignEndpoints(task.input.runtime as ForeignRuntimeName, {
          ...engine.host.env,
          ...composeEnv(task.input),
        });
  const model = foreign
    ? { allow: foreign }
    : modelEndpoints(engine.host, engine.agentDir, childModel, userModels(engine));
  note(task, model.warning);
  const allow = [...model.allow, ...(mode === "model" ? engine.settings.sandboxAllowHosts : [])];
  const forwarder = engine.netForwarder ?? (engine.piEnv.SUBAGENTS_ROLE === "pi" ? engine.piCommand : undefined);
  return { allow, forwarder };
}
