// `subagents mcp`: serves the delegation tools to any MCP client on stdio (src/mcp/, docs/mcp.md). This command
// only gathers what the front runs on — the executable's host, store, pi and owner endpoint — and hands it over.
import pkg from "../../../package.json" with { type: "json" };
import { startOwner, type Owner } from "../../control/owner.ts";
import { discoverProfiles } from "../../core/profiles/profile-discovery.ts";
import { loadSettings } from "../../core/settings.ts";
import { serveMcp } from "../../mcp/server.ts";
import { holdOutput } from "../terminal/closed-output.ts";
import type { McpServices } from "../../mcp/services.ts";
import { selfCommand } from "../self-command.ts";
import { buildEngine, cliContext, dataDir, openStore, sharedEngineParts } from "../engine.ts";
import { EXIT } from "../errors.ts";
import { noPositionals, parse, workingFolder } from "../flags/args.ts";
import { MCP_FLAGS } from "../flags/command-flags.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";

export const MCP_HELP = `Usage: subagents mcp [--cwd DIR]

Serves the delegation tools over the Model Context Protocol on standard input and output, for any MCP client
(Claude Code, Codex, Cursor, opencode, Gemini CLI, VS Code): delegate_to_subagents, subagent,
get_subagent_output, get_subagent_session and list_subagent_profiles, with the same parameters and results as
inside pi. Add it to your client as a stdio server whose command is "subagents mcp" (docs/mcp.md has each
client's snippet). Standard output carries protocol messages only; logs go to standard error.

Tasks run in the client's working directory (or --cwd), within the roots the client gives; a task whose cwd
is outside them is refused. Children's questions reach the client as forms (elicitations) when it supports
them. A client that speaks MCP Tasks (Claude Code) gets a delegation as a task: its handle at once, its
progress, questions and result when it asks; a task's id is its first session id. Results are at most 50 KB,
every task's status, error and session id first. The server's children stop when the client closes the
connection; \`subagents sessions --running\`, attach, steer and cancel reach them from a terminal meanwhile.

${optionsBlock(MCP_FLAGS)}`;

export async function cmdMcp(argv: string[]): Promise<number> {
  const { values, positionals } = parse("mcp", argv, parseOptions(MCP_FLAGS));
  if (values.help) {
    console.log(MCP_HELP);
    return EXIT.ok;
  }
  noPositionals("mcp", positionals);
  const cwd = workingFolder("mcp", values.cwd);
  // stdout is the protocol channel: a stray console.log anywhere below goes to stderr instead.
  console.log = console.error;
  const ctx = cliContext(cwd);
  for (const w of ctx.warnings) process.stderr.write(`subagents mcp: warning: ${w}\n`);
  const store = openStore(ctx, true);
  const shared = sharedEngineParts(ctx, store);
  let owner: Promise<Owner> | undefined;
  const services: McpServices = {
    host: ctx.host,
    agentDir: ctx.agentDir,
    store,
    dataDir: dataDir(ctx),
    cwd,
    version: pkg.version,
    settingsFor: (dir) => loadSettings(ctx.host, { agentDir: ctx.agentDir, cwd: dir }).settings,
    profilesFor: (dir) => discoverProfiles(ctx.host, { cwd: dir, agentDir: ctx.agentDir }),
    // One probe (it remembers which MCP servers answered) and one sweep of stale worktrees for the server's life.
    engineFor: (dir) => buildEngine(cliContext(dir), dir, store, shared),
    owner: () => (owner ??= startOwner(dataDir(ctx), "mcp", [])),
    command: selfCommand(),
  };
  // Its client going away is told by stdin's end (server.ts): a closed stdout alone does not end the calls under way.
  holdOutput();
  return serveMcp(services);
}
