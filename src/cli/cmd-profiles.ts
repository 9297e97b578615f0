// `subagents profiles`: every profile we can see from a directory, plus a line per broken profile file.
import * as path from "node:path";
import { discoverProfiles } from "../core/profiles/profile-discovery.ts";
import { profileSummary } from "../core/profiles/profile.ts";
import { parse } from "./args.ts";
import { childPiLine, cliContext } from "./engine.ts";
import { EXIT, UsageError } from "./errors.ts";
import { PROFILES_HELP } from "./help.ts";

export function cmdProfiles(argv: string[]): number {
  const { values, positionals } = parse("profiles", argv, { cwd: { type: "string" }, json: { type: "boolean" } });
  if (values.help) {
    console.log(PROFILES_HELP);
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`profiles: unexpected argument "${positionals[0]}". See 'subagents profiles --help'.`);
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const ctx = cliContext(cwd);
  const { profiles, diagnostics } = discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir });
  const list = [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
  if (values.json) {
    for (const p of list) {
      const { systemPrompt, apiKey, ...rest } = p;
      console.log(JSON.stringify({ type: "profile", ...rest, hasApiKey: apiKey !== undefined, promptChars: systemPrompt.length }));
    }
    for (const d of diagnostics) console.log(JSON.stringify({ type: "diagnostic", ...d }));
    return EXIT.ok;
  }
  for (const p of list) console.log(`${profileSummary(p)}  [${p.source}${p.filePath ? `: ${p.filePath}` : ""}]`);
  for (const d of diagnostics) process.stderr.write(`✗ ${d.file}: ${d.reason}\n`);
  process.stderr.write(`children run: ${childPiLine(cwd)}\n`);
  return EXIT.ok;
}
