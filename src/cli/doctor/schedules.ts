// doctor's `schedules` line: whether cron can run schedules here (a `crontab` command and a running daemon), and
// whether each schedule would really run: its crontab line is there, and the executable it calls still exists.
import * as fs from "node:fs";
import * as path from "node:path";
import { lineAgentDir, ourLines } from "../../core/schedule/crontab-lines.ts";
import type { CliContext } from "../engine.ts";
import { cronProblem, readCrontab } from "../schedule/crontab.ts";
import { listDefinitions } from "../schedule/files.ts";
import type { Check } from "./checks.ts";

export function schedulesCheck(ctx: CliContext): Check {
  const { defs, broken } = listDefinitions(ctx.agentDir);
  const cron = cronProblem();
  const count = `${defs.length} schedule${defs.length === 1 ? "" : "s"}`;
  if (cron) {
    if (!defs.length)
      return {
        name: "schedules",
        status: "warn",
        detail: `none; and schedules could not run here: ${cron.detail}`,
        fix: cron.fix,
      };
    return { name: "schedules", status: "fail", detail: `${count}, but none can run: ${cron.detail}`, fix: cron.fix };
  }
  let lines: Map<string, string>;
  try {
    // Lines of another agent dir (another PI_CODING_AGENT_DIR of this user) are that install's schedules, not ours.
    const here = path.resolve(ctx.agentDir);
    lines = new Map([...ourLines(readCrontab())].filter(([, l]) => (lineAgentDir(l) ?? here) === here));
  } catch (err) {
    return {
      name: "schedules",
      status: "fail",
      detail: (err as Error).message,
      fix: "check that you may use crontab (/etc/cron.allow, /etc/cron.deny)",
    };
  }
  const problems = [
    ...broken.map((b) => b.why),
    ...defs.filter((d) => !lines.has(d.name)).map((d) => `${d.name}: not in the crontab`),
    ...defs.filter((d) => !fs.existsSync(d.command[0])).map((d) => `${d.name}: calls ${d.command[0]}, which is gone`),
    ...[...lines.keys()]
      .filter((n) => !defs.some((d) => d.name === n) && !broken.some((b) => b.name === n))
      .map((n) => `${n}: a crontab line without its definition`),
  ];
  if (problems.length)
    return {
      name: "schedules",
      status: "fail",
      detail: `${count}; ${problems.join("; ")}`,
      fix: "subagents schedule rm NAME, then add it again (subagents schedule list)",
    };
  return {
    name: "schedules",
    status: "ok",
    detail: defs.length ? `${count} in the crontab; cron is running` : "none; cron is running (subagents schedule add)",
  };
}
