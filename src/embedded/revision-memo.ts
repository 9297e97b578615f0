// pi notices an auth.json or models-store.json changed by another process by stat-ing the file before every read
// (its `getFileRevision`). Building its model registry, a child reads a credential for each of pi's ~100 built-in
// providers, several times: ~800 stat calls (traced: 657 on auth.json, 132 on models-store.json) in one trivial
// child, each formatting five BigInts. In the embedded pi a revision, once read, is kept until the current turn
// of the event loop ends. Within one turn only another process can change the file, and pi already has that race
// between its stat and its read; its own writes are followed by reads in later turns (they wait on file locks),
// and a revision read just before a write only makes pi read the file once more on its next check.
export const REVISION_MEMO_KEY = "subagents.file-revision";

const REVISION_FN = /function getFileRevision\((\w+)\)\{/;

/** Wraps pi's getFileRevision with the memo (when installed). null when the file does not define it. */
export function hookFileRevision(source: string): string | null {
  const m = REVISION_FN.exec(source);
  if (!m) return null;
  const wrapper = `function getFileRevision(${m[1]}){const memo=globalThis[Symbol.for(${JSON.stringify(REVISION_MEMO_KEY)})];return memo?memo(${m[1]},__subagentsFileRevision):__subagentsFileRevision(${m[1]})}`;
  return source.replace(REVISION_FN, `${wrapper}function __subagentsFileRevision(${m[1]}){`);
}

/** Installs the memo. Self-contained (no imports, no outer names): the compiled user's pi runs its source text as
 * plain JS. */
export function installRevisionMemo(key: string): void {
  const cache = new Map<string, unknown>();
  let clearing = false;
  (globalThis as Record<symbol, unknown>)[Symbol.for(key)] = (path: string, read: (p: string) => unknown) => {
    if (cache.has(path)) return cache.get(path);
    const revision = read(path);
    cache.set(path, revision);
    if (!clearing) {
      clearing = true;
      setImmediate(() => {
        cache.clear();
        clearing = false;
      });
    }
    return revision;
  };
}
