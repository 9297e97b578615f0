// A schedule's definition, kept as <agentDir>/schedules/NAME.json: what to run (a subagents command line), where
// (the folder it was added from) and with what environment. The crontab line only says where to find it, so
// nothing more than two paths is written into the crontab; the file is the user's own (0600).
export const SCHEDULE_VERSION = 1;

/** The commands a schedule may run: the ones that start sub-agents. */
export const SCHEDULABLE = ["run", "flow", "delegate"];

export type ScheduleDefinition = {
  version: number;
  name: string;
  cron: string;
  /** The subagents arguments, e.g. ["run", "reviewer", "review today's changes"]. */
  args: string[];
  cwd: string;
  /** The executable (and its script, when run from source) that runs the arguments. */
  command: string[];
  /** The environment the run gets on top of cron's own: PATH, the pi agent dir, the database, subagents' and pi's
   *  own variables as they were when it was added (names that look secret are left out: scheduleEnv). */
  env: Record<string, string>;
  createdAt: number;
};

/** Variable names that look like a secret: never written into a schedule. OTLP headers carry a backend's API key. */
const SECRET = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION_ID|^OTEL_EXPORTER_OTLP_(TRACES_)?HEADERS$/i;
/** A child's own variables (set for each child) and the schedule's own: not a setting. */
const NOT_SETTINGS =
  /^(PI_SUBAGENT|SUBAGENTS_MARK$|SUBAGENTS_SCHEDULE$|SUBAGENTS_ROLE$|SUBAGENTS_HOOK_EVENT$|SUBAGENTS_SESSION_ID$)/;

/** What of the adding shell's environment a schedule keeps, and the names left out because they look secret. */
export function scheduleEnv(env: Record<string, string | undefined>): {
  env: Record<string, string>;
  secret: string[];
} {
  const out: Record<string, string> = {};
  const secret: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    // OTEL_*: a scheduled run is traced as the shell that added it would be (each run a trace of its own).
    const wanted =
      k === "PATH" || k === "NO_COLOR" || k.startsWith("SUBAGENTS_") || k.startsWith("PI_") || k.startsWith("OTEL_");
    if (!wanted || NOT_SETTINGS.test(k)) continue;
    if (SECRET.test(k)) secret.push(k);
    else out[k] = v;
  }
  return { env: out, secret };
}

/** The arguments' problem as a schedule, or null. */
export function argsProblem(args: string[]): string | null {
  if (!args.length)
    return 'nothing to run: give the subagents arguments after "--", e.g. -- run reviewer "review today\'s changes"';
  if (!SCHEDULABLE.includes(args[0])) return `a schedule runs ${SCHEDULABLE.join(", ")} (got "${args[0]}")`;
  if (args.includes("--background"))
    return "--background has no place in a schedule: the schedule's run is already unattended, and its lock needs the run to last as long as its tasks";
  return null;
}

/** A definition file's text as a definition, or why it is not one. */
export function parseDefinition(text: string): ScheduleDefinition | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  const d = v as Partial<ScheduleDefinition> | null;
  if (!d || typeof d !== "object") return "not a schedule definition";
  const strings = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === "string");
  if (typeof d.name !== "string" || typeof d.cron !== "string" || typeof d.cwd !== "string")
    return "name, cron and cwd must be strings";
  if (!strings(d.args) || !strings(d.command) || !(d.command as string[]).length)
    return "args and command must be lists of strings";
  if (!d.env || typeof d.env !== "object" || !Object.values(d.env).every((x) => typeof x === "string"))
    return "env must be an object of strings";
  return {
    version: d.version ?? SCHEDULE_VERSION,
    name: d.name,
    cron: d.cron,
    args: d.args as string[],
    cwd: d.cwd,
    command: d.command as string[],
    env: d.env as Record<string, string>,
    createdAt: typeof d.createdAt === "number" ? d.createdAt : 0,
  };
}
