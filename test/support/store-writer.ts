// A separate process writing sessions into a shared database (for the contention test).
import { Database } from "bun:sqlite";
import { Store } from "../../src/core/store/store.ts";
import { emptyUsage } from "../../src/core/types.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";

const [file, worker, count] = process.argv.slice(2);
const store = new Store(bunDbOpener(Database)(file), { isAlive: () => true });
for (let i = 0; i < Number(count); i++) {
  const id = store.newSessionId();
  store.createSession({ id, name: `w${worker}-${i}`, agent: "a", cwd: "/" });
  const run = store.startRun(id, { prompt: "p", ownerPid: process.pid });
  store.finishRun(run, {
    status: "completed",
    output: `out ${i}`,
    usage: emptyUsage(),
    exitCode: 0,
    toolCount: 0,
    messages: [{ role: "user", text: "p" }],
    stderrTail: "",
    durationMs: 1,
  });
}
