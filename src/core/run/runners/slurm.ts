// The slurm runner: each child is one job step (`srun`) on the user's cluster. The task folder, pi's agent dir,
// the session folder and our executable must be at the same paths on the compute node: a shared filesystem
// (checked: a partition whose nodes are all this machine is fine; elsewhere the task folder must be on a network
// filesystem). `srun` forwards stdin/stdout/stderr only: events use pi's json mode on stdout, and there is no
// control pipe (no steering). Stopping signals srun, which passes the signal to the step; every end path then
// runs `scancel` on the job (named for the child), so nothing is left in squeue. With the sandbox, bubblewrap
// runs inside the step (it must be installed on the compute nodes). Its closed network (network.ts) needs the
// owner's proxy socket on the node, which only a partition of this machine has (a Unix socket does not cross
// machines, not even on a shared filesystem): elsewhere a sandboxed step needs subagents.sandboxNetwork "all".
import type { Host } from "../../host.ts";
import { ask, onPath, runCommand } from "./commands.ts";
import { sandboxedChild } from "./sandbox-wrap.ts";
import type { ChildRunner, PlaceRequest, RunnerHealth } from "./types.ts";
import type { EngineSettings } from "../../runner-settings.ts";

const NETWORK_FS =
  /^(nfs4?|cifs|smb3|lustre|gpfs|beegfs|ceph|fuse\.glusterfs|glusterfs|fuse\.sshfs|panfs|wekafs|9p|virtiofs|fuse\.juicefs|afs)$/;

/** The filesystem type holding path (longest mount point of /proc/mounts that contains it). */
export function fsTypeOf(mounts: string, path: string): string {
  let best = "";
  let type = "";
  for (const line of mounts.split("\n")) {
    const [, mnt, t] = line.split(" ");
    if (!mnt || !t) continue;
    const m = mnt.replace(/\\040/g, " ");
    if ((path === m || path.startsWith(m.endsWith("/") ? m : `${m}/`)) && m.length >= best.length) {
      best = m;
      type = t;
    }
  }
  return type;
}

const localOnly = new Map<string, boolean>();
/** Whether every node of the partition is this machine (then any folder is "shared"). */
async function partitionIsThisHost(host: Host, sinfo: string, partition: string | undefined): Promise<boolean> {
  const key = partition ?? "";
  const known = localOnly.get(key);
  if (known !== undefined) return known;
  const out = await runCommand(host, [sinfo, "-h", "-N", "-o", "%N", ...(partition ? ["-p", partition] : [])], {
    timeoutMs: 15_000,
  });
  const me = (host.readText("/proc/sys/kernel/hostname") ?? "").trim().split(".")[0];
  const nodes = [
    ...new Set(
      out.stdout
        .split("\n")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const answer = out.code === 0 && nodes.length > 0 && nodes.every((n) => n === me || n === "localhost");
  localOnly.set(key, answer);
  return answer;
}

export function srunArgv(req: PlaceRequest, srun: string, command: string[]): string[] {
  const { partition, args } = req.settings.slurm;
  return [
    srun,
    "--job-name",
    req.name,
    "--ntasks",
    "1",
    "--quiet",
    "--chdir",
    req.cwd,
    ...(partition ? ["--partition", partition] : []),
    ...args,
    "--",
    ...command,
  ];
}

export const slurmRunner: ChildRunner = {
  name: "slurm",
  local: false,
  confined: false,
  transport: "json",
  health: slurmHealth,
  notes: [
    "runner slurm: no steering (srun forwards only stdin/stdout/stderr); budgets stop the child without a wrap-up message",
  ],
  async place(req) {
    const srun = onPath(req.host, "srun");
    const scancel = onPath(req.host, "scancel");
    const sinfo = onPath(req.host, "sinfo");
    if (!srun || !scancel || !sinfo)
      return "The slurm runner needs srun, scancel and sinfo (Debian/Ubuntu package slurm-client), which are not on PATH. Nothing was run.";
    const here = await partitionIsThisHost(req.host, sinfo, req.settings.slurm.partition);
    if (!here && req.sandbox && req.settings.sandboxNetwork !== "all") {
      return `The slurm runner cannot close a sandboxed step's network on other machines: its way out is a Unix socket of this machine. Set subagents.sandboxNetwork to "all" for slurm runs (the node's network), or use the local or docker runner. Nothing was run.`;
    }
    if (!here) {
      const mounts = req.host.readText("/proc/mounts") ?? "";
      for (const p of [req.cwd, req.agentDir]) {
        const type = fsTypeOf(mounts, p);
        if (!NETWORK_FS.test(type))
          return `The slurm runner needs ${p} on a filesystem the compute nodes share (NFS, Lustre, GPFS, CephFS, …), but it is on ${type || "an unknown filesystem"} here. Put the task folder and pi's agent dir on a shared filesystem. Nothing was run.`;
      }
    }
    const boxed = req.sandbox ? await sandboxedChild(req) : { argv: req.argv, env: req.env };
    if (typeof boxed === "string") return boxed;
    // The step's parent is slurmstepd, not the owner: the child cannot watch the owner by pid.
    const { PI_SUBAGENT_PARENT_PID: _, ...env } = boxed.env;
    return {
      ...boxed,
      argv: srunArgv(req, srun, boxed.argv),
      env,
      cleanup: async () => {
        await runCommand(req.host, [scancel, "--quiet", "--name", req.name], { timeoutMs: 15_000 });
        if ("cleanup" in boxed) await boxed.cleanup();
      },
    };
  },
};

/** srun and sinfo on PATH, and the partition answering. */
async function slurmHealth(host: Host, settings: EngineSettings): Promise<RunnerHealth> {
  const sinfo = onPath(host, "sinfo");
  if (!sinfo || !onPath(host, "srun"))
    return {
      status: "fail",
      detail: "subagents.runner is slurm, but srun/sinfo are not on PATH",
      fix: "apt-get install slurm-client",
    };
  const p = settings.slurm.partition;
  const info = await ask(host, [sinfo, "-h", "-o", "%P %a %D", ...(p ? ["-p", p] : [])]);
  if (!info.ok || !info.out)
    return {
      status: "fail",
      detail: `slurm does not answer${p ? ` for partition ${p}` : ""}: ${info.out}`,
      fix: "check slurmctld, or subagents.slurm.partition",
    };
  return { status: "ok", detail: `slurm partition ${info.out}` };
}
