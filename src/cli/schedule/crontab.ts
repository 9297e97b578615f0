// The user's crontab, through the `crontab` command (Linux and macOS alike): read with `crontab -l`, written whole
// with `crontab -`. Whether a cron daemon runs at all is asked of the process table: without one a schedule is a
// line that never fires, which is said as an error, not found out the next morning.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ConfigError } from "../errors.ts";

/** Names the cron daemon runs under (Debian/macOS `cron`, Fedora/Arch `crond`, busybox `crond`). */
const DAEMONS = ["cron", "crond"];

export function crontabBinary(env: Record<string, string | undefined> = process.env): string | null {
  const dirs = [...(env.PATH ?? "").split(path.delimiter), "/usr/bin", "/bin", "/usr/sbin"];
  for (const d of dirs) {
    if (!d) continue;
    const p = path.join(d, "crontab");
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** Whether a cron daemon is running on this machine. */
export function cronDaemonRunning(): boolean {
  return DAEMONS.some((name) => spawnSync("pgrep", ["-x", name], { stdio: "ignore" }).status === 0);
}

/** Why schedules cannot work here, or null. */
export function cronProblem(): { detail: string; fix: string } | null {
  if (!crontabBinary())
    return {
      detail: "no `crontab` command on PATH: schedules go into the user's crontab",
      fix: "install cron (Debian/Ubuntu: apt install cron; Fedora: dnf install cronie), or use a systemd user timer (docs/automation.md)",
    };
  if (!cronDaemonRunning())
    return {
      detail: "no cron daemon is running (pgrep -x cron / crond found none): scheduled lines would never fire",
      fix: "start it (systemctl enable --now cron, or run `cron` as root), or use a systemd user timer (docs/automation.md)",
    };
  return null;
}

export function readCrontab(): string {
  const bin = crontabBinary();
  if (!bin) throw new ConfigError(cronProblem()!.detail);
  const r = spawnSync(bin, ["-l"], { encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return r.stdout;
  // "no crontab for USER": an empty table, not a failure.
  if (/no crontab/i.test(r.stderr)) return "";
  throw new ConfigError(`crontab -l failed (exit ${r.status}): ${r.stderr.trim() || r.error?.message || "no message"}`);
}

export function writeCrontab(table: string): void {
  const bin = crontabBinary();
  if (!bin) throw new ConfigError(cronProblem()!.detail);
  const r = spawnSync(bin, ["-"], { input: table, encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0)
    throw new ConfigError(
      `crontab - refused the new table (exit ${r.status}): ${r.stderr.trim() || r.error?.message || "no message"}; the crontab is unchanged`,
    );
}
