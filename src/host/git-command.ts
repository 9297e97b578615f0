// Running git (and the few other programs a worktree needs: cp, unshare) from the host: one process to its end,
// its output kept, never through a shell. Git's location variables are left out, so git (ours, or the child's)
// always works on the repository of its folder.
import { execFile } from "node:child_process";
import { GIT_LOCATION_VARS } from "../core/run/launch/isolation.ts";
import { ownTag } from "./process-identity.ts";

export type CommandOut = { code: number; stdout: string; stderr: string };

/** The last line of a program's output: what it says went wrong. */
export const lastLine = (s: string) => s.trim().split("\n").at(-1) ?? "";

/** Every program run here carries its owner (`<pid>.<start time>`, process-identity.ts ownTag): one an owner killed with SIGKILL left running (a `git worktree
 *  add` checking out) is found and ended before the clean-up removes what it writes in (orphans.ts). */
export const RUN_BY_ENV = "SUBAGENTS_RUN_BY";

/** Worked out once: an isolated task runs about 15 git commands. */
let cleanEnv: Record<string, string> | null = null;
function baseEnv(): Record<string, string> {
  if (cleanEnv) return cleanEnv;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !GIT_LOCATION_VARS.includes(k)) env[k] = v;
  return (cleanEnv = { ...env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", [RUN_BY_ENV]: ownTag() });
}

/** Runs a program to its end (killed after timeoutMs when given); exit 127 when it could not be started. */
export function runProgram(
  file: string,
  args: string[],
  opts: {
    cwd: string;
    env?: Record<string, string>;
    timeoutMs?: number;
    input?: string;
    /** Told the program's pid once it started (a caller that records who is changing the user's tree). */
    started?: (pid: number) => void;
  },
): Promise<CommandOut> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: opts.cwd,
        env: { ...baseEnv(), ...opts.env },
        maxBuffer: 64 * 1024 * 1024,
        encoding: "utf8",
        timeout: opts.timeoutMs ?? 0,
        killSignal: "SIGKILL",
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : (err as { killed?: boolean }).killed
              ? 137
              : 127
          : 0;
        resolve({ code, stdout, stderr: stderr || (err && (code === 127 || code === 137) ? err.message : "") });
      },
    );
    if (child.pid) opts.started?.(child.pid);
    // A program may end before it read all it was given (EPIPE): its exit code says what happened.
    child.stdin?.on("error", () => {});
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

export type BytesOut = { code: number; stdout: Buffer; stderr: Buffer };

/** Runs a program with bytes in and out (file names as git gives them with -z, which need not be UTF-8). */
export function runBytes(
  file: string,
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; input?: Buffer; timeoutMs?: number },
): Promise<BytesOut> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: opts.cwd,
        env: { ...baseEnv(), ...opts.env },
        maxBuffer: 256 * 1024 * 1024,
        encoding: "buffer",
        timeout: opts.timeoutMs ?? 0,
        killSignal: "SIGKILL",
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 127
          : 0;
        resolve({ code, stdout, stderr: stderr.length || !err ? stderr : Buffer.from(err.message) });
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(opts.input ?? Buffer.alloc(0));
  });
}

export const git = (args: string[], cwd: string, env: Record<string, string> = {}, input?: string) =>
  runProgram("git", args, { cwd, env, input });

/** The user's hooks are not run on our worktrees (written for their tree, they may block or prompt), and our
 *  commits do not start a background `gc --auto` in the user's repository. */
export const NO_HOOKS = ["-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0"];

/** Another git in the same repository holds a lock (a sibling task's worktree being made, the user's own git). */
const LOCK_BUSY = /\.lock'?: File exists|Unable to create '[^']*\.lock'|could not lock config file|cannot lock ref/;

/** git that must succeed: its stdout, or an error naming the command and git's last lines. */
export async function must(args: string[], cwd: string, env?: Record<string, string>): Promise<string> {
  let r = await git(args, cwd, env);
  // Isolated tasks of one call make their worktrees in the same repository at once: wait out a held lock.
  for (let attempt = 0; r.code !== 0 && attempt < 6 && LOCK_BUSY.test(r.stderr); attempt++) {
    await new Promise((done) => setTimeout(done, 50 * 2 ** attempt));
    r = await git(args, cwd, env);
  }
  if (r.code !== 0)
    throw new Error(
      `git ${args.filter((a) => !NO_HOOKS.includes(a)).join(" ")} failed: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" ")}`,
    );
  return r.stdout;
}
