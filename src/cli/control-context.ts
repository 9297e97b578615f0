// What steer, cancel and wait share: the store, the data dir's live owners, and where a session stands.
import { sessionState, type SessionState } from "../control/client.ts";
import type { Store } from "../core/store/store.ts";
import { cliContext, dataDir, openStore, type CliContext } from "./engine.ts";

export type ControlContext = { ctx: CliContext; store: Store; data: string; state(id: string): SessionState };

export function controlContext(): ControlContext {
  const ctx = cliContext(process.cwd());
  const store = openStore(ctx);
  const data = dataDir(ctx);
  return { ctx, store, data, state: (id) => sessionState({ store, dataDir: data }, id) };
}
