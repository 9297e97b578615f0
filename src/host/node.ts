// The Node host, for the pi extension running inside a Node pi: node:child_process with fd 3 as an extra pipe,
// node:fs, and node:sqlite when this Node has it (openDb throws otherwise; the caller falls back to memory).
import { spawn as nodeSpawn } from "node:child_process";
import type { ChildProcess, Db, Host, SpawnSpec } from "../core/host.ts";
import { makeHost } from "./fs-parts.ts";

function spawn(spec: SpawnSpec): ChildProcess {
  const [file, ...args] = spec.cmd;
  const proc = nodeSpawn(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: [
      spec.stdin === null ? "ignore" : "pipe",
      "pipe",
      "pipe",
      spec.fd3 ? "pipe" : "ignore",
      ...(spec.control || spec.fd5 !== undefined ? ([spec.control ? "pipe" : "ignore"] as const) : []),
      ...(spec.fd5 !== undefined ? (["pipe"] as const) : []),
    ],
    windowsHide: true,
    ...(spec.ownGroup ? { detached: true } : {}),
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    let done = false;
    const finish = (code: number | null, signal: string | null) => {
      if (done) return;
      done = true;
      resolve({ code, signal });
    };
    // 'exit', not 'close': a grandchild holding our pipes must not keep us waiting.
    proc.once("exit", (code, signal) => finish(code, signal));
    proc.once("error", () => finish(null, null));
  });
  if (proc.pid === undefined) {
    // Spawn failed synchronously enough that there is no pid: surface it like Bun does.
    throw new Error(`cannot start ${file}`);
  }
  const stdin = proc.stdin;
  stdin?.on("error", () => {});
  const writeStdin = (text: string) => {
    if (!stdin || stdin.destroyed || stdin.writableEnded) return false;
    if (spec.keepStdin) stdin.write(text);
    else stdin.end(text);
    return true;
  };
  if (spec.stdin !== null) writeStdin(spec.stdin);
  const fd3 = spec.fd3 ? (proc.stdio[3] as NodeJS.ReadableStream | null) : null;
  const control = spec.control
    ? (proc.stdio[4] as (NodeJS.WritableStream & { destroyed?: boolean; on(e: string, f: () => void): void }) | null)
    : null;
  control?.on("error", () => {});
  if (spec.fd5 !== undefined) {
    const data = (proc.stdio as unknown[])[5] as
      | (NodeJS.WritableStream & { on(e: string, f: () => void): void })
      | null;
    data?.on("error", () => {});
    data?.end(spec.fd5);
  }
  return {
    pid: proc.pid,
    ...(spec.keepStdin ? { writeStdin } : {}),
    ...(control
      ? {
          sendControl: (line: string) => {
            if (control.destroyed) return false;
            control.write(`${line}\n`);
            return true;
          },
        }
      : {}),
    stdout: proc.stdout as unknown as AsyncIterable<Uint8Array>,
    stderr: proc.stderr as unknown as AsyncIterable<Uint8Array>,
    fd3: fd3 as unknown as AsyncIterable<Uint8Array> | null,
    exited,
    kill: (signal) => {
      try {
        proc.kill(signal);
      } catch {
        // already gone
      }
    },
  };
}

export function createNodeHost(openDb: (path: string) => Db): Host {
  return makeHost("node", spawn, openDb);
}
