// CLI entry: dispatches subcommands. The only place that exits the process (DESIGN §1).
// Commands are imported on demand: `--version` and `--help` then load almost nothing (startup time is a goal).
import pkg from "../../package.json" with { type: "json" };
import { didYouMean } from "./args.ts";
import { ConfigError, EXIT, UsageError } from "./errors.ts";
import { MAIN_HELP } from "./help.ts";

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
};

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help") {
    console.log(MAIN_HELP);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    console.log(pkg.version);
    return EXIT.ok;
  }
  // `subagents help CMD` is `subagents CMD --help`.
  if (first === "help") {
    if (!rest.length) {
      console.log(MAIN_HELP);
      return EXIT.ok;
    }
    if (!COMMANDS[rest[0]]) return unknownCommand(rest[0]);
    return main([rest[0], "--help"]);
  }
  const load = COMMANDS[first];
  if (!load) return unknownCommand(first);
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

function unknownCommand(word: string): number {
  const names = Object.keys(COMMANDS);
  const what = word.startsWith("-") ? `unknown option ${word}` : `unknown command "${word}"`;
  process.stderr.write(`subagents: ${what}.${didYouMean(word.replace(/^-+/, ""), names)} Commands: ${names.join(", ")}. See 'subagents --help'.\n`);
  return EXIT.usage;
}

// No top-level await: the compiled binary is built as bytecode, which needs a plain module body.
void main(process.argv.slice(2)).then((code) => {
  // Flush stdout before exiting: a pipe reader must get every JSON line.
  process.stdout.write("", () => process.exit(code));
});
