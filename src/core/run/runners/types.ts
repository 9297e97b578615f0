// Where a child runs (docs/sandbox-runners.md). The owner — CLI, pi session or background supervisor — keeps
// everything it does (windows, store, budgets, steering, kill protocol); a runner only turns the child's command
// into one that runs somewhere else, and says what that costs: which transport crosses, whether the control pipe
// does, and what must be cleaned up after every end path. One runner is one file of this folder: a Kubernetes
// runner (a Job per child, `kubectl run --attach` style) would be one more.
import type { Host } from "../../host.ts";
import type { Transport } from "../process/transport.ts";
import type { EngineSettings } from "../../runner-settings.ts";
import type { RunnerName } from "../../runner-settings.ts";
import type { TokenRefresher } from "./child-auth.ts";
export type { RunnerName };

export type PlaceRequest = {
  host: Host;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  sessionFile: string;
  agentDir: string;
  /** Files written for this child just before it starts (its prompt file): they must be readable where it runs. */
  files: string[];
  sandbox: boolean;
  /** Unique per child start: containers and jobs carry it so they can be found and removed by name. */
  name: string;
  /** Another harness's own folders (its configuration, credentials, sessions: runtimes/), kept writable inside the
   *  sandbox's private home when they exist. */
  ownConfig?: string[];
  /** The task's own tree (a layer over the user's folder, or its copy: launch/worktree-view.ts): writable as a
   *  whole, since what the child writes there comes back only as the owner harvests it — a copy shown at the
   *  folder's own path (`from` the copy) where the runner can; and what the child reads there that lives elsewhere
   *  (a copy's borrowed git objects), read-only. */
  tree?: { writable: { path: string; from?: string }[]; readable: string[] };
  /** Set when the child is a sandboxed or container pi, which reads pi's auth.json: the provider of the model it
   *  runs, when known, and how the owner refreshes a sign-in token first. It gets that provider's credentials only
   *  (child-auth.ts). */
  piAuth?: { provider?: string; refresher?: TokenRefresher };
  settings: EngineSettings;
  /** A sandboxed child's way out when its network is closed (network.ts): the destinations its proxy lets through
   *  ("host:port", "host", "*.domain"), and our executable's command for its forwarder role. */
  network?: { allow: string[]; forwarder?: string[] };
};

export type Placed = {
  argv: string[];
  env: Record<string, string>;
  /** Runs after the child ended, on every end path (success, error, timeout, cancel, Ctrl-C). Never throws. */
  cleanup?: () => Promise<void>;
  /** With a closed network: the destinations its proxy refused, and how often (reported as task warnings). */
  netRefused?: () => Map<string, number>;
  /** What else the person should know once the child ended (a sign-in token that could not be refreshed). */
  warnings?: () => string[];
  /** Handed to the child's fd 5 through a pipe, then closed (the sandbox copies it in: its auth.json). */
  fd5?: string;
};

/** How a runner's engine fares here (`subagents doctor`): one line, and how to mend it when it does not answer. */
export type RunnerHealth = { status: "ok" | "warn" | "fail"; detail: string; fix?: string };

/**
 * A runner, by what it can do: code outside this folder asks these, never a runner's name. Adding a runner is its
 * file here, one entry in the registry (index.ts) and its settings (core/runner-settings.ts).
 */
export type ChildRunner = {
  name: RunnerName;
  /** The child is a process of this machine started by our own spawn: every descriptor crosses (fd 3 events, the
   *  fd 4 control pipe), it can be started inside an overlay's namespace, a kept child can host it, and it gets a
   *  temp folder of this run in the owner's. */
  local: boolean;
  /** The child has a machine of its own (a container): its folder is all it may write, its credentials a copy, its
   *  network the owner's proxy. (The sandbox confines a child of any runner.) */
  confined: boolean;
  /** The transport this runner needs; undefined: the settings' choice (fd 3 only crosses a local spawn). */
  transport?: Transport;
  /** What this runner cannot give, said in every window and record of its runs (e.g. no steering). */
  notes?: string[];
  /** Builds the command; a string is a clear error (missing tool, unshared folder): nothing was started. */
  place(req: PlaceRequest): Promise<Placed | string>;
  /** Whether its engine answers here (read-only, one cheap question). */
  health(host: Host, settings: EngineSettings): Promise<RunnerHealth>;
};
