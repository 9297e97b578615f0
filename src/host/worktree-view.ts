// What git says about an isolated task's repository besides what it tracks, asked of git itself (its own ignore
// rules, never a matcher of ours): the ignored folders (node_modules, .venv, vendor/, build caches: what a copy of
// the tree costs, and where a copy's virtual environments are), and what `.worktreeinclude` names — ignored files
// whose secrets are masked in everything shown of the task, and untracked files it names that git does not ignore,
// which are kept out of the task's snapshot and branch.
import * as fs from "node:fs";
import * as path from "node:path";
import { git, lastLine, must } from "./git-command.ts";

/** Python's byte-code caches: made again as needed. */
const NOT_CARRIED = new Set(["__pycache__"]);

const split0 = (s: string) => s.split("\0").filter(Boolean);
const strip = (e: string) => e.replace(/\/$/, "");
const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/** Of the given paths (relative to the top, folders with a trailing slash), those git's own rules really ignore. */
async function reallyIgnored(repo: string, paths: string[]): Promise<string[]> {
  if (!paths.length) return [];
  const r = await git(["check-ignore", "-z", "--stdin"], repo, {}, `${paths.join("\0")}\0`);
  // Exit 1: none of them is ignored.
  if (r.code !== 0 && r.code !== 1) throw new Error(`git check-ignore failed: ${lastLine(r.stderr)}`);
  return split0(r.stdout);
}

/** The outermost entries only: an entry inside another is already carried with it. */
function outermost(entries: string[]): string[] {
  const sorted = [...new Set(entries.map(strip))].sort();
  const out: string[] = [];
  for (const e of sorted) if (!out.some((o) => inside(e, o))) out.push(e);
  return out;
}

/** The repository's ignored folders (untracked, each one git collapses to a folder), never one holding our data. */
export async function ignoredFolders(repo: string, dataRoot: string): Promise<string[]> {
  const listedDirs = split0(
    await must(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], repo),
  ).filter((e) => e.endsWith("/"));
  const data = realOr(dataRoot);
  return outermost(await reallyIgnored(repo, listedDirs)).filter(
    (f) => !NOT_CARRIED.has(path.basename(f)) && !inside(data, path.join(repo, f)),
  );
}

/** The repository's ignored entries, files and folders (the outermost of each), never one holding our data. */
export async function ignoredEntries(repo: string): Promise<string[]> {
  const listed = split0(
    await must(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], repo),
  );
  return outermost(await reallyIgnored(repo, listed)).filter((f) => !NOT_CARRIED.has(path.basename(f)));
}

const includeFile = (repo: string) => path.join(repo, ".worktreeinclude");

/** What `.worktreeinclude` (gitignore syntax, at the top) names that is untracked and really ignored. */
export async function includedEntries(repo: string): Promise<string[]> {
  if (!fs.existsSync(includeFile(repo))) return [];
  const named = split0(
    await must(["ls-files", "-z", "--others", "--ignored", "--directory", `--exclude-from=${includeFile(repo)}`], repo),
  );
  return outermost(await reallyIgnored(repo, named));
}

/** Untracked files `.worktreeinclude` names that git does not ignore: they would be in the task's snapshot. */
export async function includedNotIgnored(repo: string): Promise<string[]> {
  if (!fs.existsSync(includeFile(repo))) return [];
  const named = new Set(
    split0(await must(["ls-files", "-z", "--others", "--ignored", `--exclude-from=${includeFile(repo)}`], repo)),
  );
  if (!named.size) return [];
  const untracked = split0(await must(["ls-files", "-z", "--others", "--exclude-standard"], repo));
  return untracked.filter((f) => named.has(f));
}

export function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
