// Run by Node 24 (node:sqlite, not bun:sqlite): opens the store at argv[2], records one sandboxed run of a child of
// parent "p", and prints how SQLite plans the caps' count and what the run record says.
import { loadNodeDb } from "../../src/host/sqlite-node.ts";
import { Store } from "../../src/core/store/store.ts";

const open = (await loadNodeDb())!;
const db = open(process.argv[2]);
const s = new Store(db, { isAlive: () => true });
const id = s.newSessionId();
s.createSession({ id, name: "n", agent: "a", cwd: "/", parentSession: "p" });
s.startRun(id, { prompt: "x", ownerPid: process.pid, sandbox: true, runner: "local" });
const plan = db.all<{ detail: string }>(
  "EXPLAIN QUERY PLAN SELECT COUNT(*) FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.parent_session = ?",
  ["p"],
);
const run = s.getSession(id)!.runs[0];
console.log(
  JSON.stringify({
    plan: plan.map((r) => r.detail),
    sandbox: run.sandbox,
    runner: run.runner,
    usage: s.parentUsage("p"),
  }),
);
