// The two files of pi's agent dir a sandboxed or container child writes, given to it one by one: its own session
// file (the folder holds the other sessions of the same task folder: their transcripts, which a resumed session
// loads as its context) and its own auth.json (child-auth.ts: handed over through a pipe where the runner can, else a
// file of the owner's removed when the child ends; never read back). A session file bound on its own must exist: a new
// one is made empty (0600; pi starts any empty session file as a new session), and is removed again after the run
// when the child wrote no conversation into it, so a resume replays the transcript as it would without the sandbox.
import type { Host } from "../../host.ts";
import { childAuth } from "./child-auth.ts";
import { dirOf } from "./sandbox.ts";
import type { PlaceRequest } from "./types.ts";

export type ChildFiles = {
  sessionFile: string;
  /** The child's auth.json, when the user has one and the child is a pi: its text, to hand over through a pipe
   *  (`inline`), or a file holding it. */
  auth?: { data: string } | { file: string };
  warnings(): string[];
  /** Runs after the child ended, on every end path. Never throws. */
  close(): Promise<void>;
};

/** Whether pi wrote a conversation into the session file (more than its header line). */
function hasConversation(host: Pick<Host, "stat" | "readBytes">, file: string): boolean {
  const st = host.stat(file);
  if (!st?.size) return false;
  if (st.size > 8192) return true;
  const text = new TextDecoder().decode(host.readBytes(file, 8192) ?? new Uint8Array());
  return text.split("\n").filter((l) => l.trim()).length > 1;
}

/**
 * The child's session file, ours alone from its first byte: pi makes a new one with the umask (0644) when the first
 * message is written, so a new one is made here first, empty and 0600 (pi starts any empty session file as a new
 * session and writes into the file as it is). The returned close runs after the child: a file it wrote no
 * conversation into goes again (a resume then replays the transcript, as when pi made none), one it did stays 0600.
 */
export function privateSessionFile(
  host: Pick<Host, "stat" | "readBytes" | "mkdirp" | "writeFile" | "remove" | "makePrivate">,
  sessionFile: string,
): () => void {
  const made = !host.stat(sessionFile);
  if (made) {
    host.mkdirp(dirOf(sessionFile));
    host.writeFile(sessionFile, "", 0o600);
  }
  return () => {
    if (made && !hasConversation(host, sessionFile)) host.remove(sessionFile);
    else host.makePrivate(sessionFile);
  };
}

/** `inline`: the runner hands the child's auth.json over through a pipe (bubblewrap on this machine): no file. */
export async function childFiles(req: PlaceRequest, o: { inline?: boolean } = {}): Promise<ChildFiles> {
  const { host, sessionFile } = req;
  const closeSession = privateSessionFile(host, sessionFile);
  const auth = req.piAuth ? await childAuth(host, req.agentDir, req.piAuth.provider, req.piAuth.refresher) : null;
  const file = auth && !o.inline ? `${host.privateTempDir()}/auth-${req.name}.json` : null;
  if (file && auth) host.writeFile(file, auth.text, 0o600);
  let closed: Promise<void> | null = null;
  return {
    sessionFile,
    ...(auth ? { auth: file ? { file } : { data: auth.text } } : {}),
    warnings: () => auth?.warnings ?? [],
    close: () =>
      (closed ??= (async () => {
        if (file) host.remove(file);
        closeSession();
      })()),
  };
}
