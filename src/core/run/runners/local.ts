// The default runner: the child is a process of this machine, optionally in the sandbox. Every transport and
// the control pipe (steering) work, since the sandbox keeps inherited file descriptors.
import { sandboxedChild } from "./sandbox-wrap.ts";
import { privateSessionFile } from "./child-files.ts";
import type { ChildRunner } from "./types.ts";

export const localRunner: ChildRunner = {
  name: "local",
  local: true,
  confined: false,
  health: async () => ({ status: "ok", detail: "children run on this machine (subagents.runner: local)" }),
  async place(req) {
    // pi would make its session file with the umask: it is made 0600 first (child-files.ts).
    if (!req.sandbox) {
      const closeSession = privateSessionFile(req.host, req.sessionFile);
      return { argv: req.argv, env: req.env, cleanup: async () => closeSession() };
    }
    const boxed = await sandboxedChild(req, { inline: true });
    if (typeof boxed === "string") return boxed;
    // Its own pid namespace hides the owner: the child cannot watch it by pid, and need not
    // (--die-with-parent ends the whole sandbox when the owner dies).
    const { PI_SUBAGENT_PARENT_PID: _, ...env } = boxed.env;
    return { ...boxed, env };
  },
};
