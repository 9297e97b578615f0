// `doctor` lines for the sandbox and the runner (src/core/run/runners/): is bubblewrap there, does the chosen
// runner's engine answer. Read-only; each engine is asked one cheap question.
import { spawnSync } from "node:child_process";
import { onPath } from "../../core/run/runners/commands.ts";
import { runnerNamed } from "../../core/run/runners/index.ts";
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

/** Whether the chosen runner's engine answers here (each runner says how: runners/). */
export async function runnerCheck(ctx: CliContext): Promise<Check> {
  const health = await runnerNamed(ctx.settings.runner).health(ctx.host, ctx.settings);
  return { name: "runner", ...health };
}
