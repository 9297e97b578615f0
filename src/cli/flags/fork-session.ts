// `--fork SESSION` in the CLI: the pi session (a file, or an id found under <agentDir>/sessions) whose current
// conversation forked tasks start from (core/run/fork.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { branchOfFile, type ForkEntry } from "../../core/run/fork.ts";
import { UsageError } from "../errors.ts";

function findById(agentDir: string, id: string): string | null {
  const root = path.join(agentDir, "sessions");
  if (id.length < 6 || !fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) return null;
  const hits = fs
    .readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".jsonl") && path.basename(f).includes(id));
  if (hits.length > 1)
    throw new UsageError(`--fork ${id} matches ${hits.length} pi sessions; give more of the id or the file`);
  return hits.length ? path.join(root, hits[0]) : null;
}

export function readForkSession(agentDir: string, spec: string, command: string): ForkEntry[] {
  const file = fs.statSync(spec, { throwIfNoEntry: false })?.isFile() ? spec : findById(agentDir, spec);
  if (!file)
    throw new UsageError(
      `${command}: --fork ${spec} is neither a pi session file nor the id of a session under ${path.join(agentDir, "sessions")}`,
    );
  const branch = branchOfFile(fs.readFileSync(file, "utf8"));
  if (!branch.length) throw new UsageError(`${command}: --fork ${file} holds no conversation to copy`);
  return branch;
}

export const CLI_FORK_NEEDS = 'context "fork" needs --fork SESSION (a pi session file or id) in the CLI';
