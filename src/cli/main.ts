// CLI entry: dispatches subcommands. The only place that exits the process (docs/architecture.md).
// Commands are imported on demand: `--version` and `--help` then load almost nothing (startup time is a goal).
import pkg from "../../package.json" with { type: "json" };
import { didYouMean } from "./flags/suggest.ts";
import { ConfigError, EXIT, fileSystemLine, UsageError } from "./errors.ts";
import { StoreError } from "../core/store/store-error.ts";
import { printable } from "../core/sanitize.ts";
import { MAIN_HELP } from "./main-help.ts";
import { setStartupJitPolicy } from "../host/jit-policy.ts";
import { guardOutput, onOutputClosed, outputClosed, outputHeld } from "./terminal/closed-output.ts";
// Static, unlike the commands: a dynamic import costs --version ~8 ms of CPU in the compiled binary.
import { versionLine } from "./version-info.ts";

type Command = (argv: string[]) => number | Promise<number>;
/** First arguments whose whole output goes through console.log. */
const PRINT_ONLY = new Set(["", "-h", "--help", "-v", "--version"]);
const COMMANDS: Record<string, () => Promise<Command>> = {
  delegate: async () => (await import("./commands/delegate.ts")).cmdDelegate,
  flow: async () => (await import("./commands/flow.ts")).cmdFlow,
  run: async () => (await import("./commands/run.ts")).cmdRun,
  output: async () => (await import("./commands/sessions.ts")).cmdOutput,
  session: async () => (await import("./commands/sessions.ts")).cmdSession,
  sessions: async () => (await import("./commands/sessions.ts")).cmdSessions,
  usage: async () => (await import("./commands/usage.ts")).cmdUsage,
  profiles: async () => (await import("./commands/profiles.ts")).cmdProfiles,
  demo: async () => (await import("./commands/demo.ts")).cmdDemo,
  install: async () => (await import("./commands/install.ts")).cmdInstall,
  doctor: async () => (await import("./commands/doctor.ts")).cmdDoctor,
  prune: async () => (await import("./commands/prune.ts")).cmdPrune,
  apply: async () => (await import("./commands/apply.ts")).cmdApply,
  completion: async () => (await import("./commands/completion.ts")).cmdCompletion,
  wait: async () => (await import("./commands/wait.ts")).cmdWait,
  steer: async () => (await import("./commands/steer.ts")).cmdSteer,
  answer: async () => (await import("./commands/answer.ts")).cmdAnswer,
  cancel: async () => (await import("./commands/cancel.ts")).cmdCancel,
  logs: async () => (await import("./commands/logs.ts")).cmdLogs,
  attach: async () => (await import("./commands/attach.ts")).cmdAttach,
  schedule: async () => (await import("./commands/schedule.ts")).cmdSchedule,
  mcp: async () => (await import("./commands/mcp.ts")).cmdMcp,
  batch: async () => (await import("./commands/batch.ts")).cmdBatch,
  // Internal, not in --help: compiles the user's pi in the background (src/host/compiled-pi.ts).
  "__compile-pi": async () => (await import("./commands/compile-pi.ts")).cmdCompilePi,
};

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help") {
    console.log(MAIN_HELP);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    // The version, the pi its children run by default, and the commit it was built from.
    console.log(versionLine());
    // --verbose also says which pi children would run (resolving it costs a few ms, so only when asked).
    // When they run the user's pi as it is although a compiled copy would be faster, why and the fix.
    if (rest.includes("--verbose")) {
      const { line, slow } = (await import("./engine.ts")).childPiStatus(process.cwd());
      console.log(`children: ${line}`);
      if (slow) console.log(`  ${slow.detail}\n  fix: ${slow.fix}`);
    }
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
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof StoreError) {
      // Names and texts from files and children can be in it: nothing of them acts on the terminal.
      process.stderr.write(`subagents: ${printable(err.message)}\n`);
      return EXIT.usage;
    }
    if (cwdGone(err)) {
      process.stderr.write(
        "subagents: the current folder no longer exists (it was deleted or moved): cd into a folder that exists, or name one with --cwd DIR\n",
      );
      return EXIT.usage;
    }
    const fsLine = fileSystemLine(err);
    if (fsLine) {
      process.stderr.write(`subagents: ${fsLine}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`subagents: internal error: ${printable(String((err as Error).stack ?? err))}\n`);
    return EXIT.taskFailed;
  }
}

/** The shell's folder was removed under it: process.cwd() fails (uv_cwd), whichever command asked first. */
const cwdGone = (err: unknown) => {
  const e = err as { code?: string; syscall?: string; message?: string };
  return e?.code === "ENOENT" && (e.syscall === "uv_cwd" || /process\.cwd|uv_cwd/.test(e.message ?? ""));
};

function unknownCommand(word: string): number {
  const names = Object.keys(COMMANDS).filter((n) => !n.startsWith("__"));
  const what = word.startsWith("-") ? `unknown option ${word}` : `unknown command "${word}"`;
  process.stderr.write(
    `subagents: ${what}.${didYouMean(word.replace(/^-+/, ""), names)} Commands: ${names.join(", ")}. See 'subagents --help'.\n`,
  );
  return EXIT.usage;
}

// Start-up code runs once: keep it in the interpreter instead of paying JIT compilation for it (measured on a
// pi child: −10% CPU at the minimum, −18% at the median). The child extension (pi role) and the engine (CLI runs)
// restore the normal policy once the long-running part begins.
setStartupJitPolicy();

// No top-level await: the compiled binary is built as bytecode, which needs a plain module body.
if (process.env.SUBAGENTS_ROLE === "pi") {
  // The pi role (a child started from this same executable): pi runs the process from here on and exits it.
  void import("../embedded/pi-role.ts").then((m) => m.runPiRole(pkg.version));
} else if (process.env.SUBAGENTS_ROLE === "net-forward") {
  // Inside a sandbox with the network closed, in front of a child that is not our pi (net-forward-role.ts).
  void import("./net-forward-role.ts")
    .then((m) => m.runNetForward(process.argv.slice(2)))
    .then((code) => process.exit(code));
} else if (process.env.SUBAGENTS_ROLE === "supervisor") {
  // A background supervisor (see supervisor.ts): started detached by `delegate --background`.
  void import("./background/supervisor.ts")
    .then((m) => m.runSupervisor(process.argv.slice(2)))
    .catch((err) => {
      // Its log gets one line: a database it cannot use, or what else ended it before its tasks.
      console.error(`supervisor: ${err instanceof StoreError ? err.message : ((err as Error).stack ?? err)}`);
      return err instanceof StoreError ? EXIT.usage : EXIT.taskFailed;
    })
    .then((code) => process.exit(code));
} else {
  const argv = process.argv.slice(2);
  // A reader that goes away (`… | head -1`) is no crash: what is written to its stream is dropped from then on.
  // (--version and --help print with console.log, which process.exit flushes; touching process.stdout would build
  // Node's stream machinery first: ~25 ms of CPU, most of --version's time.)
  if (!PRINT_ONLY.has(argv[0] ?? "")) {
    guardOutput();
    // A command that only shows something ends quietly with its reader, with a SIGPIPE's status; one running work
    // holds its output and goes on (closed-output.ts).
    onOutputClosed((which) => {
      if (which === "stdout" && !outputHeld()) process.exit(EXIT.closedPipe);
    });
  }
  void main(argv).then((code) => {
    if (PRINT_ONLY.has(argv[0] ?? "") || outputClosed("stdout")) process.exit(code);
    // Flush stdout before exiting: a pipe reader must get every JSON line. Bun calls an empty write's callback before
    // the earlier writes have reached a pipe (a 4 MB --json summary was cut at 64 KB); end() waits for all of them.
    process.stdout.once("error", () => process.exit(code));
    process.stdout.end(() => process.exit(code));
  });
}
