// A resolved task (core/call/resolve.ts) on pi's defaults, for tests that hand the runner or scheduler tasks of their
// own: resolved by the real resolver, with only what the test is about written over it.
import { resolveTask } from "../../src/core/call/resolve.ts";
import { defaultSettings } from "../../src/core/settings.ts";
import type { ResolvedTask } from "../../src/core/run/task-types.ts";
import type { Host } from "../../src/core/host.ts";

export const resolvedTask = (
  t: Pick<ResolvedTask, "name" | "prompt" | "sessionId"> & Partial<ResolvedTask>,
): ResolvedTask => ({
  ...resolveTask(
    {
      profiles: new Map(),
      settings: defaultSettings(),
      call: {},
      host: { realpath: () => null } as unknown as Host,
      agentDir: "/",
      caches: {},
    },
    { name: t.name, prompt: t.prompt },
    { cwd: "/" },
    null,
    () => t.sessionId,
  ),
  ...t,
});
