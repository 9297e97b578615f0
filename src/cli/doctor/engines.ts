// `doctor` lines for the sandbox and the runner (src/core/run/runners/): is bubblewrap there, does the chosen
// runner's engine answer. Read-only; each engine is asked one cheap question.
import { spawnSync } from "node:child_process";
import { onPath } from "../../core/run/runners/commands.ts";
import type { Check } from "./checks.ts";
import type { CliContext } from "../engine.ts";

function ask(argv: string[]): { ok: boolean; out: string } {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n")[0] ?? "" };
}

export function sandboxCheck(ctx: CliContext): Check {
  const on = ctx.settings.sandbox === "on";
  if (process.platform === "darwin")
    return { name: "sandbox", status: "ok", detail: `sandbox-exec (macOS)${on ? ", on for every child" : ""}` };
  const bwrap = onPath(ctx.host, "bwrap");
  if (bwrap) {
    // Installed is not enough: some systems forbid the user namespaces it needs (Ubuntu 24.04's AppArmor rule).
    const trial = ask([
      bwrap,
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--unshare-all",
      "--share-net",
      "--die-with-parent",
      "--cap-drop",
      "ALL",
      "true",
    ]);
    const version = ask([bwrap, "--version"]).out || "bwrap";
    if (!trial.ok) {
      const fix =
        "allow unprivileged user namespaces for bwrap (Ubuntu ≥ 24.04: an AppArmor profile for /usr/bin/bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0)";
      return {
        name: "sandbox",
        status: on ? "fail" : "warn",
        detail: `${version} (${bwrap}) cannot start a sandbox here: ${trial.out}`,
        fix,
      };
    }
    return {
      name: "sandbox",
      status: "ok",
      detail: `${version} (${bwrap})${on ? ", on for every child" : ", used with --sandbox"}`,
    };
  }
  const fix = "install bubblewrap: apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)";
  if (on)
    return {
      name: "sandbox",
      status: "fail",
      detail: "subagents.sandbox is on, but bubblewrap (bwrap) is not installed: every child will fail",
      fix,
    };
  return { name: "sandbox", status: "warn", detail: "bubblewrap (bwrap) is not installed: --sandbox will fail", fix };
}

export function runnerCheck(ctx: CliContext): Check {
  const r = ctx.settings.runner;
  if (r === "local")
    return { name: "runner", status: "ok", detail: "children run on this machine (subagents.runner: local)" };
  if (r === "docker") {
    const docker = onPath(ctx.host, "docker");
    if (!docker)
      return {
        name: "runner",
        status: "fail",
        detail: "subagents.runner is docker, but the docker CLI is not on PATH",
        fix: "apt-get install docker.io",
      };
    const info = ask([docker, "version", "--format", "{{.Server.Version}}"]);
    if (!info.ok)
      return {
        name: "runner",
        status: "fail",
        detail: `docker daemon not reachable${ctx.host.env.DOCKER_HOST ? ` at DOCKER_HOST=${ctx.host.env.DOCKER_HOST}` : ""}: ${info.out}`,
        fix: "start dockerd, or set DOCKER_HOST",
      };
    const image = ask([docker, "image", "inspect", "--format", "{{.Id}}", ctx.settings.docker.image]);
    const detail = `docker ${info.out}, image ${ctx.settings.docker.image}${image.ok ? "" : " (not pulled yet)"}, network ${ctx.settings.docker.network}`;
    return {
      name: "runner",
      status: image.ok ? "ok" : "warn",
      detail,
      ...(image.ok ? {} : { fix: `docker pull ${ctx.settings.docker.image}` }),
    };
  }
  const sinfo = onPath(ctx.host, "sinfo");
  if (!sinfo || !onPath(ctx.host, "srun"))
    return {
      name: "runner",
      status: "fail",
      detail: "subagents.runner is slurm, but srun/sinfo are not on PATH",
      fix: "apt-get install slurm-client",
    };
  const p = ctx.settings.slurm.partition;
  const info = ask([sinfo, "-h", "-o", "%P %a %D", ...(p ? ["-p", p] : [])]);
  if (!info.ok || !info.out)
    return {
      name: "runner",
      status: "fail",
      detail: `slurm does not answer${p ? ` for partition ${p}` : ""}: ${info.out}`,
      fix: "check slurmctld, or subagents.slurm.partition",
    };
  return { name: "runner", status: "ok", detail: `slurm partition ${info.out}` };
}
