// CLI entry: dispatches subcommands. The only place that exits the process (DESIGN §1).
// Commands are imported on demand: `--version` and `--help` then load almost nothing (startup time is a goal).
import pkg from "../../package.json" with { type: "json" };
import { ConfigError, EXIT, UsageError } from "./errors.ts";
import { MAIN_HELP } from "./help.ts";
import { setStartupJitPolicy } from "../host/jit-policy.ts";

type Command = (argv: string[]) => number | Promise<number>;
const COMMANDS: Record<string, () => Promise<Command>> = {
  delegate: async () => (await import("./cmd-delegate.ts")).cmdDelegate,
  run: async () => (await import("./cmd-run.ts")).cmdRun,
  output: async () => (await import("./cmd-sessions.ts")).cmdOutput,
  session: async () => (await import("./cmd-sessions.ts")).cmdSession,
  sessions: async () => (await import("./cmd-sessions.ts")).cmdSessions,
  profiles: async () => (await import("./cmd-profiles.ts")).cmdProfiles,
  demo: async () => (await import("./cmd-demo.ts")).cmdDemo,
  install: async () => (await import("./cmd-install.ts")).cmdInstall,
  wait: async () => (await import("./cmd-wait.ts")).cmdWait,
  steer: async () => (await import("./cmd-steer.ts")).cmdSteer,
  cancel: async () => (await import("./cmd-cancel.ts")).cmdCancel,
  logs: async () => (await import("./cmd-logs.ts")).cmdLogs,
};

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    console.log(MAIN_HELP);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    // `subagents 0.2.0 · pi 0.87.1 inside`: the version, and the pi its children run by default.
    const { EMBEDDED_PI_VERSION } = await import("../embedded/version.ts");
    console.log(`subagents ${pkg.version}${EMBEDDED_PI_VERSION ? ` · pi ${EMBEDDED_PI_VERSION} inside` : ""}`);
    // --verbose also says which pi children would run (resolving it costs a few ms, so only when asked).
    if (rest.includes("--verbose")) console.log(`children: ${(await import("./engine.ts")).childPiLine(process.cwd())}`);
    return EXIT.ok;
  }
  const load = COMMANDS[first];
  if (!load) {
    process.stderr.write(`subagents: unknown command "${first}". Commands: ${Object.keys(COMMANDS).join(", ")}. See 'subagents --help'.\n`);
    return EXIT.usage;
  }
  try {
    const command = await load();
    return await command(rest);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`subagents: ${err.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`subagents: internal error: ${(err as Error).stack ?? err}\n`);
    return EXIT.taskFailed;
  }
}

// Start-up code runs once: keep it in the interpreter instead of paying JIT compilation for it (measured on a
// pi child: −10% CPU at the minimum, −18% at the median). The child extension (pi role) and the engine (CLI runs)
// restore the normal policy once the long-running part begins.
setStartupJitPolicy();

// No top-level await: the compiled binary is built as bytecode, which needs a plain module body.
if (process.env.SUBAGENTS_ROLE === "pi") {
  // The pi role (a child started from this same executable): pi runs the process from here on and exits it.
  void import("../embedded/pi-role.ts").then((m) => m.runPiRole(pkg.version));
} else if (process.env.SUBAGENTS_ROLE === "supervisor") {
  // A background supervisor (see supervisor.ts): started detached by `delegate --background`.
  void import("./supervisor.ts").then((m) => m.runSupervisor(process.argv.slice(2))).then((code) => process.exit(code));
} else {
  void main(process.argv.slice(2)).then((code) => {
    // Flush stdout before exiting: a pipe reader must get every JSON line.
    process.stdout.write("", () => process.exit(code));
  });
}
