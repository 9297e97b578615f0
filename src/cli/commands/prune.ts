// `subagents prune`: deletes old sessions (their runs, messages and the child's pi session file), then VACUUMs
// so the database file shrinks. A session that is running is never touched.
import { PRUNE_FLAGS } from "../flags/command-flags.ts";
import * as fs from "node:fs";
import { decimal } from "../../core/decimal.ts";
import * as path from "node:path";
import { childSessionFile } from "../../core/run/session-file.ts";
import type { PruneCandidate } from "../../core/store/store-types.ts";
import { AGE_UNITS, parse, parseAge } from "../flags/args.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { formatBytes } from "../doctor/checks.ts";
import { cliContext, dataDir, dbPath, openStore, worktreeHost } from "../engine.ts";
import { liveOwners } from "../../control/registry.ts";
import type { StaleWorktree } from "../../core/run/launch/isolation.ts";
import { sessionLogs, staleSupervisorLogs } from "../prune/logs.ts";
import { pruneCompiledPis } from "../prune/compiled-pi.ts";
import { runtimeDir } from "../../host/child-extension-path.ts";
import { removeStaleTempDirs } from "../../host/temp-dirs.ts";
import { removeStaleBallasts } from "../../host/open-store.ts";
import { EXIT, UsageError } from "../errors.ts";

export const PRUNE_HELP = `Usage: subagents prune [--older-than AGE] [--keep N] [--dry-run] [--json]

Deletes sessions from the session database together with their child pi session files, background event
logs and the task's versions of files a sandboxed task could not write back (conflicts), then compacts the
database (VACUUM). Running sessions are never deleted. Logs of background supervisors that ended before the
cut-off go too, and the layers (or copies) of tasks whose owner process died: what an isolated task's child
changed is committed on the task's branch first (each is listed with its branch, also in the session's record),
what a sandboxed task's child changed is written back into its folder; one whose owner died while it was being
made or while its setup command ran holds nothing of the task's and is removed with nothing kept. What such an
owner left running in it is ended first.
--dry-run lists exactly these. Compiled copies of the user's pi
(~/.cache/subagents/compiled-pi/) that no installed pi needs any more go as well, with half-written ones;
the ones kept are listed with why. So do the temporary folders (/tmp/subagents-…) of processes that are gone
(an owner killed with SIGKILL could not remove its own).

${optionsBlock(PRUNE_FLAGS)}

Examples:
  subagents prune                       sessions older than 30 days
  subagents prune --keep 100            all but the newest 100
  subagents prune --older-than 7d --keep 20 --dry-run`;

function parseKeep(raw: string): number {
  const n = decimal(raw);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`prune: --keep must be a whole number ≥ 0 (got "${raw}").`);
  return n;
}

/** The pi session file of a sub-agent session: the recorded one, or where the runner puts it. Only files named for
 * the session id qualify — a resumed or imported session may point at a file we must not delete. */
function sessionFileOf(agentDir: string, c: PruneCandidate): string | undefined {
  const file = c.sessionFile ?? childSessionFile(agentDir, c.cwd, c.agent, c.id);
  return path.basename(file).includes(c.id) && fs.statSync(file, { throwIfNoEntry: false })?.isFile()
    ? file
    : undefined;
}

/** One line per abandoned worktree: what becomes (or would become) of it. */
function worktreeLine(w: StaleWorktree, dryRun: boolean): string {
  const where = `${w.path}  (session ${w.id}, ${w.repo})`;
  if (w.action === "discard")
    return `${dryRun ? "would remove" : "removed"}  ${where}: its owner ended before the task's child started (the worktree was being made or set up); nothing in it is the task's work, nothing kept`;
  if (dryRun) return `would finish  ${where}: what the task changed goes on a branch, then the worktree goes`;
  if (w.error) return `kept  ${where}: ${w.error}`;
  return `finished  ${where}: ${w.branch ? `changes kept on branch ${w.branch} — subagents apply ${w.id}` : "no changes, no branch"}`;
}

const dbBytes = (file: string) =>
  [file, `${file}-wal`].reduce((n, f) => n + (fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);

export async function cmdPrune(argv: string[]): Promise<number> {
  const { values, positionals } = parse("prune", argv, parseOptions(PRUNE_FLAGS));
  if (values.help) {
    console.log(PRUNE_HELP);
    return EXIT.ok;
  }
  if (positionals.length)
    throw new UsageError(`prune: unexpected argument "${positionals[0]}". See 'subagents prune --help'.`);
  const keep = values.keep === undefined ? undefined : parseKeep(values.keep);
  const age =
    values["older-than"] !== undefined
      ? parseAge("prune", "older-than", values["older-than"])
      : keep === undefined
        ? AGE_UNITS.d * 30
        : undefined;
  const ctx = cliContext(process.cwd());
  const store = openStore(ctx);
  const file = dbPath(ctx);
  const before = age === undefined ? undefined : Date.now() - age;
  const candidates = store.prunable({ before, keep });
  const files = candidates.map((c) => sessionFileOf(ctx.agentDir, c)).filter((f): f is string => !!f);
  const bytesBefore = dbBytes(file);
  const dryRun = !!values["dry-run"];
  let deleted = candidates;
  let removedFiles = files;
  let logs = [
    ...sessionLogs(
      dataDir(ctx),
      candidates.map((c) => c.id),
    ),
    ...staleSupervisorLogs(dataDir(ctx), before),
  ];
  if (!dryRun) {
    const ids = new Set(store.deleteSessions(candidates.map((c) => c.id)));
    deleted = candidates.filter((c) => ids.has(c.id));
    removedFiles = [];
    for (const c of deleted) {
      // The task's versions of files a sandboxed task could not write back (conflicts) go with their session.
      fs.rmSync(path.join(dataDir(ctx), "conflicts", c.id), { recursive: true, force: true });
      const f = sessionFileOf(ctx.agentDir, c);
      if (!f) continue;
      fs.rmSync(f, { force: true });
      removedFiles.push(f);
    }
    // Only the logs of sessions really deleted (one may have started running meanwhile).
    logs = [
      ...sessionLogs(
        dataDir(ctx),
        deleted.map((c) => c.id),
      ),
      ...staleSupervisorLogs(dataDir(ctx), before),
    ];
    for (const f of logs) fs.rmSync(f, { force: true });
    store.vacuum();
  }
  // The reserve a process SIGKILLed left beside the database (it is no record: a dry run removes it too).
  removeStaleBallasts(dataDir(ctx));
  // Control records of owners that are gone (a SIGKILL leaves its own): reading them removes those.
  if (!dryRun) liveOwners(dataDir(ctx));
  // Worktrees of isolated tasks whose owner died (SIGKILL): changes kept on their branch, the folder removed.
  const wts = worktreeHost(ctx, store);
  const stale = dryRun ? wts.staleWorktrees() : await wts.cleanStale();
  const worktrees = stale.worktrees;
  const { removed: compiledPis, kept: keptCompiledPis } = pruneCompiledPis({
    env: ctx.host.env,
    cwd: process.cwd(),
    runtimeDir: runtimeDir(ctx.agentDir),
    remove: !dryRun,
  });
  const tempDirs = removeStaleTempDirs(dryRun);
  const bytesAfter = dbBytes(file);
  if (values.json) {
    console.log(
      JSON.stringify({
        dryRun,
        sessions: deleted.map(({ id, name, agent, updatedAt, runCount }) => ({ id, name, agent, updatedAt, runCount })),
        files: removedFiles,
        logs,
        worktrees,
        worktreeLeftovers: stale.leftovers,
        compiledPis,
        keptCompiledPis,
        tempDirs,
        bytesBefore,
        bytesAfter,
      }),
    );
    return EXIT.ok;
  }
  const verb = dryRun ? "Would delete" : "Deleted";
  for (const c of deleted)
    console.log(
      `${dryRun ? "would delete" : "deleted"}  ${c.id}  ${c.name}  (${c.agent}, ${new Date(c.updatedAt).toISOString().slice(0, 10)})`,
    );
  const size = dryRun
    ? `database ${formatBytes(bytesBefore)}`
    : `database ${formatBytes(bytesBefore)} → ${formatBytes(bytesAfter)}`;
  const logNote = logs.length ? `, ${logs.length} log file(s)` : "";
  console.log(
    `${verb} ${deleted.length} session(s) and ${removedFiles.length} session file(s)${logNote}; ${size} (${file}).`,
  );
  for (const w of worktrees) console.log(worktreeLine(w, dryRun));
  if (worktrees.length)
    console.log(
      `${dryRun ? "Would finish" : "Finished"} ${worktrees.length} abandoned worktree(s) of isolated tasks (their owner process is gone).`,
    );
  if (stale.leftovers.length)
    console.log(
      `${dryRun ? "Would remove" : "Removed"} ${stale.leftovers.length} file(s) such owners left beside them: ${stale.leftovers.join(", ")}`,
    );
  if (compiledPis.length) {
    for (const c of compiledPis)
      console.log(`${dryRun ? "would remove" : "removed"}  ${c.dir}  (${formatBytes(c.bytes)})`);
    const total = formatBytes(compiledPis.reduce((n, c) => n + c.bytes, 0));
    console.log(
      `${dryRun ? "Would remove" : "Removed"} ${compiledPis.length} compiled pi(s) no longer used by children; ${total} ${dryRun ? "to free" : "freed"}.`,
    );
  }
  for (const k of keptCompiledPis) console.log(`kept  ${k.dir}  (${k.why})`);
  if (tempDirs.length)
    console.log(
      `${dryRun ? "Would remove" : "Removed"} ${tempDirs.length} temporary folder(s) of processes that are gone: ${tempDirs.join(", ")}`,
    );
  return EXIT.ok;
}
