// Settings of the sandbox and the runners (`subagents.sandbox`, `subagents.runner`, `subagents.docker.*`,
// `subagents.slurm.*`). A project's settings may turn the sandbox on, never off, and may not choose a runner
// or its arguments: a repository must not decide what runs its children, or where.
export type RunnerName = "local" | "docker" | "slurm";
export const RUNNER_NAMES: RunnerName[] = ["local", "docker", "slurm"];

export type SandboxNetwork = "none" | "model" | "all";
export const SANDBOX_NETWORKS: SandboxNetwork[] = ["none", "model", "all"];

export type EngineSettings = {
  sandbox: "off" | "on";
  /** More of the hidden home the sandbox shows read-only (toolchains: ~/.cargo, ~/.rustup, ~/.nvm, …). */
  sandboxReadable: string[];
  /** Protected paths the person opens on purpose (`.pi/agents`, `.vscode`): relative to the task folder, or absolute. */
  sandboxWritable: string[];
  /** What a sandboxed (or container) child reaches on the network: its model and the allow list, nothing, or all. */
  sandboxNetwork: SandboxNetwork;
  /** More destinations a sandboxed child may reach through the proxy: "host", "host:port", "*.example.com". */
  sandboxAllowHosts: string[];
  runner: RunnerName;
  docker: { image: string; network: string; args: string[] };
  slurm: { partition?: string; args: string[] };
};

export const defaultEngineSettings = (): EngineSettings => ({
  sandbox: "off",
  sandboxReadable: [],
  sandboxWritable: [],
  sandboxNetwork: "model",
  sandboxAllowHosts: [],
  runner: "local",
  docker: { image: "debian:bookworm-slim", network: "host", args: [] },
  slurm: { args: [] },
});

const strList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export function mergeEngineSettings(
  base: EngineSettings,
  r: Record<string, unknown>,
  where: string,
  userScope: boolean,
  warnings: string[],
): EngineSettings {
  const out: EngineSettings = {
    ...base,
    sandboxReadable: [...base.sandboxReadable],
    sandboxWritable: [...base.sandboxWritable],
    sandboxAllowHosts: [...base.sandboxAllowHosts],
    docker: { ...base.docker, args: [...base.docker.args] },
    slurm: { ...base.slurm, args: [...base.slurm.args] },
  };
  if (r.sandbox !== undefined) {
    const v = r.sandbox === true ? "on" : r.sandbox === false ? "off" : r.sandbox;
    if (v !== "on" && v !== "off") warnings.push(`${where}: subagents.sandbox must be "off" or "on"; ignored`);
    else if (v === "off" && !userScope && base.sandbox === "on")
      warnings.push(`${where}: a project cannot turn subagents.sandbox off; it stays on`);
    else out.sandbox = v;
  }
  const userOnly = (key: string) => {
    if (r[key] === undefined || userScope) return r[key] !== undefined;
    warnings.push(`${where}: subagents.${key} may be set only in your own settings; ignored`);
    return false;
  };
  if (userOnly("sandboxReadable")) {
    const v = r.sandboxReadable;
    if (strList(v) && v.every((p) => p.startsWith("/") || p.startsWith("~/"))) out.sandboxReadable = v;
    else warnings.push(`${where}: subagents.sandboxReadable must be a list of absolute or ~/ paths; ignored`);
  }
  // A repository must not open its own protections: only the person's settings may.
  if (userOnly("sandboxWritable")) {
    const v = r.sandboxWritable;
    if (strList(v) && v.every((p) => p.trim() && p !== "." && p !== "/"))
      out.sandboxWritable = v.map((p) => p.trim().replace(/\/+$/, ""));
    else
      warnings.push(
        `${where}: subagents.sandboxWritable must be a list of paths (relative to the task folder, absolute, or ~/); ignored`,
      );
  }
  // A project may close the network further ("none"), never open it: the order is none < model < all.
  if (r.sandboxNetwork !== undefined) {
    const v = r.sandboxNetwork;
    if (!(SANDBOX_NETWORKS as unknown[]).includes(v))
      warnings.push(
        `${where}: subagents.sandboxNetwork must be one of ${SANDBOX_NETWORKS.map((n) => `"${n}"`).join(", ")}; ignored`,
      );
    else if (
      !userScope &&
      SANDBOX_NETWORKS.indexOf(v as SandboxNetwork) > SANDBOX_NETWORKS.indexOf(base.sandboxNetwork)
    )
      warnings.push(
        `${where}: a project cannot open subagents.sandboxNetwork wider than "${base.sandboxNetwork}"; it stays`,
      );
    else out.sandboxNetwork = v as SandboxNetwork;
  }
  if (userOnly("sandboxAllowHosts")) {
    const v = r.sandboxAllowHosts;
    const bad = strList(v) ? v.find((h) => !isHostPattern(h)) : undefined;
    if (strList(v) && bad === undefined) out.sandboxAllowHosts = v.map((h) => h.trim().toLowerCase());
    else
      warnings.push(
        `${where}: subagents.sandboxAllowHosts must be a list of "host", "host:port" or "*.domain" entries${bad !== undefined ? ` (not ${JSON.stringify(bad).slice(0, 60)})` : ""}; ignored`,
      );
  }
  if (userOnly("runner")) {
    if (typeof r.runner === "string" && (RUNNER_NAMES as string[]).includes(r.runner))
      out.runner = r.runner as RunnerName;
    else warnings.push(`${where}: subagents.runner must be one of ${RUNNER_NAMES.join(", ")}; ignored`);
  }
  if (userOnly("docker")) {
    const d = r.docker;
    if (!isObj(d)) warnings.push(`${where}: subagents.docker must be an object (image, network, args); ignored`);
    else {
      if (typeof d.image === "string" && d.image.trim()) out.docker.image = d.image.trim();
      else if (d.image !== undefined) warnings.push(`${where}: subagents.docker.image must be an image name; ignored`);
      if (typeof d.network === "string" && d.network.trim()) out.docker.network = d.network.trim();
      else if (d.network !== undefined)
        warnings.push(`${where}: subagents.docker.network must be a network name (host, bridge, …); ignored`);
      if (strList(d.args)) out.docker.args = d.args;
      else if (d.args !== undefined)
        warnings.push(`${where}: subagents.docker.args must be a list of strings; ignored`);
    }
  }
  if (userOnly("slurm")) {
    const s = r.slurm;
    if (!isObj(s)) warnings.push(`${where}: subagents.slurm must be an object (partition, args); ignored`);
    else {
      if (typeof s.partition === "string" && s.partition.trim()) out.slurm.partition = s.partition.trim();
      else if (s.partition !== undefined)
        warnings.push(`${where}: subagents.slurm.partition must be a partition name; ignored`);
      if (strList(s.args)) out.slurm.args = s.args;
      else if (s.args !== undefined) warnings.push(`${where}: subagents.slurm.args must be a list of strings; ignored`);
    }
  }
  return out;
}

/** "host", "host:port", "*.example.com", "*.example.com:443", "[::1]:8080": no scheme, path or other wildcard. */
export function isHostPattern(h: string): boolean {
  return (
    /^(\*\.)?([a-z0-9_-]+(\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/i.test(h.trim()) && !/^\*\.\[/.test(h.trim())
  );
}
