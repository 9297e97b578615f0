// `subagents demo`: real pi children and the real engine, against a scripted model on 127.0.0.1, so anyone can
// watch the windows work on a fresh machine with no API key. Everything lives in a temp dir, removed after.
import { DEMO_FLAGS } from "../flags/command-flags.ts";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { piAgentConfig, script, startModelServer, type ScriptStep } from "../../scripted/model-server.ts";
import { cmdDelegate } from "./delegate.ts";
import { noPositionals, parse } from "../flags/args.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { EXIT } from "../errors.ts";

export const DEMO_HELP = `Usage: subagents demo [options]

A demonstration: runs four scripted sub-agents through the real pi, in parallel, against a scripted model
server on 127.0.0.1 (no API key, no network). Nothing outside a temporary directory is touched.

${optionsBlock(DEMO_FLAGS)}

Exit codes: 0 the demo ran (one task fails on purpose), 2 usage error, 129/130/143 stopped by a signal (SIGHUP/SIGINT/SIGTERM).`;

const slow = (text: string, extra: ScriptStep = {}): ScriptStep => ({
  text,
  chunks: Math.ceil(text.length / 6),
  chunkDelayMs: 40,
  ...extra,
});

function demoTasks(): { name: string; prompt: string; profile?: string }[] {
  return [
    {
      name: "scout-files",
      profile: "scout",
      prompt: `List the project files and say what they are. ${script([
        { tool: "ls", args: { path: "." }, delayMs: 300 },
        { tool: "read", args: { path: "README.md" }, delayMs: 300 },
        slow("Three files: a README, notes and a small script.", {
          finalize: { status: "SUCCESS", result: "The project has a README.md, notes.md and build.sh." },
        }),
      ])}`,
    },
    {
      name: "count-lines",
      prompt: `Count the lines of every file. ${script([
        { tool: "bash", args: { command: "wc -l *" }, delayMs: 500 },
        slow("Counting done.", {
          finalize: { status: "SUCCESS", result: "README.md 3 lines, notes.md 2 lines, build.sh 2 lines." },
        }),
      ])}`,
    },
    {
      name: "draft-summary",
      prompt: `Write a short summary of the notes. ${script([
        { tool: "read", args: { path: "notes.md" }, delayMs: 300 },
        slow(
          "The notes describe a build that runs a script,\nchecks the output,\nand publishes the result when the checks pass.",
          {
            finalize: { status: "SUCCESS", result: "Build → check → publish, gated on the checks." },
          },
        ),
      ])}`,
    },
    {
      name: "fails-on-purpose",
      prompt: `Try something impossible. ${script([
        { tool: "bash", args: { command: "cat missing-file.txt" }, delayMs: 400 },
        slow("That file does not exist.", {
          finalize: { status: "ERROR", error: "demo: this task fails on purpose (missing-file.txt)" },
        }),
      ])}`,
    },
  ];
}

export async function cmdDemo(argv: string[]): Promise<number> {
  const { values, positionals } = parse("demo", argv, parseOptions(DEMO_FLAGS));
  if (values.help) {
    console.log(DEMO_HELP);
    return EXIT.ok;
  }
  noPositionals("demo", positionals);
  const passThrough = [values.json && "--json", values.quiet && "--quiet", values["no-color"] && "--no-color"].filter(
    (a): a is string => !!a,
  );
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "subagents-demo-"));
  const server = await startModelServer();
  const saved = { agentDir: process.env.PI_CODING_AGENT_DIR, db: process.env.SUBAGENTS_DB };
  try {
    const agentDir = path.join(root, "agent");
    const work = path.join(root, "project");
    fs.mkdirSync(agentDir, { recursive: true });
    fs.mkdirSync(work, { recursive: true });
    for (const [file, text] of Object.entries(piAgentConfig(server.baseUrl)))
      fs.writeFileSync(path.join(agentDir, file), text);
    fs.writeFileSync(path.join(work, "README.md"), "# demo project\n\nA tiny project for the subagents demo.\n");
    fs.writeFileSync(
      path.join(work, "notes.md"),
      "Build runs build.sh, checks the output,\nthen publishes when checks pass.\n",
    );
    fs.writeFileSync(path.join(work, "build.sh"), "#!/bin/sh\necho building\n");
    const tasksFile = path.join(root, "tasks.json");
    fs.writeFileSync(tasksFile, JSON.stringify({ tasks: demoTasks() }));
    process.env.PI_CODING_AGENT_DIR = agentDir;
    process.env.SUBAGENTS_DB = path.join(root, "demo.db");
    process.stderr.write(
      `DEMO — scripted model on 127.0.0.1:${server.port}; no API key, no network. Real pi children, real engine.\n`,
    );
    const code = await cmdDelegate(["--tasks", tasksFile, "--cwd", work, ...passThrough]);
    // Interrupted: say so with the exit code, as delegate does (one task failing is part of the show).
    if (code === EXIT.sigint || code === EXIT.sigterm) return code;
    process.stderr.write(
      'DEMO finished (one task fails on purpose to show an error). Run your own: subagents delegate "task" …\n',
    );
    return EXIT.ok;
  } finally {
    restore("PI_CODING_AGENT_DIR", saved.agentDir);
    restore("SUBAGENTS_DB", saved.db);
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function restore(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}
