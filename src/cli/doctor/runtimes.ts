// `doctor`'s check of other harnesses' CLIs: for each runtime other than pi that a discovered agent
// names, is its program on PATH (the same lookup a child's start does)? Only looked up, never run: no network.
import { discoverProfiles } from "../../core/profiles/profile-discovery.ts";
import { FOREIGN_RUNTIMES } from "../../core/run/runtimes/index.ts";
import type { ForeignRuntimeName } from "../../core/run/runtimes/types.ts";
import { onPath } from "../../core/run/runners/commands.ts";
import type { Check } from "./checks.ts";
import type { CliContext } from "../engine.ts";

/** One line per runtime the agents use; none when every agent runs on pi. */
export function runtimesCheck(ctx: CliContext, cwd: string): Check[] {
  const { profiles } = discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir });
  const users = new Map<ForeignRuntimeName, string[]>();
  for (const p of [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!p.runtime || p.runtime === "pi") continue;
    users.set(p.runtime, [...(users.get(p.runtime) ?? []), p.name]);
  }
  return [...users].map(([name, agents]): Check => {
    const rt = FOREIGN_RUNTIMES[name];
    const program = onPath(ctx.host, rt.bin);
    if (program) return { name: "runtime", status: "ok", detail: `${name}: ${program} (agents: ${agents.join(", ")})` };
    return {
      name: "runtime",
      status: "fail",
      detail: `${name}: "${rt.bin}" not found on PATH, needed by agents: ${agents.join(", ")}`,
      fix: `npm install -g ${rt.npmPackage}`,
    };
  });
}
