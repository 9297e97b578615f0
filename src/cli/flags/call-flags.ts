// The flags `delegate`, `flow` and `run` share, read into the call's defaults (core/call/request.ts), and what
// the CLI gives the call module's checks: the --fork session, this invocation's caps. A refusal is a usage error.
import type { CallFront } from "../../core/call/prepare.ts";
import type { CallDefaults, Refusal } from "../../core/call/request.ts";
import type { CapGuard } from "../../core/run/cap-guard.ts";
import type { Engine } from "../../core/run/engine.ts";
import { isolationFlag, positiveNumber } from "./args.ts";
import { budgetFlags } from "./budget-flags.ts";
import { engineFlags } from "./runner-flags.ts";
import { CLI_FORK_NEEDS, readForkSession } from "./fork-session.ts";
import { gateFlags } from "./gate-flags.ts";
import { UsageError } from "../errors.ts";

type Values = Record<string, unknown> & {
  model?: string;
  timeout?: string;
  isolation?: string;
  fork?: string;
  sandbox?: boolean;
  runner?: string;
  runtime?: string;
};

export function callDefaults(command: string, cwd: string, values: Values): CallDefaults {
  return {
    cwd,
    ...(values.model !== undefined ? { model: values.model } : {}),
    timeout: positiveNumber(command, "timeout", values.timeout),
    isolation: isolationFlag(command, values.isolation),
    budget: budgetFlags(command, values),
    ...engineFlags(command, values),
    ...gateFlags(command, values),
    ...(values.fork ? { context: "fork" as const } : {}),
  };
}

export function cliFront(command: string, engine: Engine, caps: CapGuard, fork: string | undefined): CallFront {
  return {
    forkBranch: () => (fork ? readForkSession(engine.agentDir, fork, command) : undefined),
    forkNeeds: CLI_FORK_NEEDS,
    caps,
  };
}

/** A refusal before anything started: exit 2, as every usage error (a cap names its code, as in pi's result). */
export function refusalError(command: string, r: Refusal): UsageError {
  return new UsageError(
    r.code === "INVALID_INPUT" ? `${command}: ${r.message}` : `${command}: ${r.code}: ${r.message}`,
  );
}
