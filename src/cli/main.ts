// CLI entry: dispatches subcommands. The only place that exits the process (DESIGN §1).
import pkg from "../../package.json" with { type: "json" };
import { cmdDelegate } from "./cmd-delegate.ts";
import { cmdDemo } from "./cmd-demo.ts";
import { cmdInstall } from "./cmd-install.ts";
import { cmdProfiles } from "./cmd-profiles.ts";
import { cmdRun } from "./cmd-run.ts";
import { cmdOutput, cmdSession, cmdSessions } from "./cmd-sessions.ts";
import { ConfigError, EXIT, UsageError } from "./errors.ts";
import { MAIN_HELP } from "./help.ts";

const COMMANDS: Record<string, (argv: string[]) => number | Promise<number>> = {
  delegate: cmdDelegate,
  run: cmdRun,
  output: cmdOutput,
  session: cmdSession,
  sessions: cmdSessions,
  profiles: cmdProfiles,
  demo: cmdDemo,
  install: cmdInstall,
};

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    console.log(MAIN_HELP);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    console.log(pkg.version);
    return EXIT.ok;
  }
  const command = COMMANDS[first];
  if (!command) {
    process.stderr.write(`subagents: unknown command "${first}". Commands: ${Object.keys(COMMANDS).join(", ")}. See 'subagents --help'.\n`);
    return EXIT.usage;
  }
  try {
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

const code = await main(process.argv.slice(2));
// Flush stdout before exiting: a pipe reader must get every JSON line.
process.stdout.write("", () => process.exit(code));
