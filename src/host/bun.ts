// The Bun host: Bun.spawn (with fd 3 as an extra pipe), node:fs for small synchronous file work (fs-parts.ts),
// bun:sqlite.
import type { ChildProcess, Db, Host, SpawnSpec } from "../core/host.ts";
import { makeHost } from "./fs-parts.ts";
import { fdLineWriter } from "./control-fd.ts";

function spawn(spec: SpawnSpec): ChildProcess {
  // Cast: Bun's typings do not model a 4-entry stdio array together with stdin/stdout/stderr.
  const options = {
    cmd: spec.cmd,
    cwd: spec.cwd,
    env: spec.env,
    stdin: spec.stdin === null ? "ignore" : "pipe",
    stdout: "pipe",
    stderr: "pipe",
    stdio:
      spec.fd3 || spec.control || spec.fd5 !== undefined
        ? [
            spec.stdin === null ? "ignore" : "pipe",
            "pipe",
            "pipe",
            spec.fd3 ? "pipe" : "ignore",
            ...(spec.control || spec.fd5 !== undefined ? [spec.control ? "pipe" : "ignore"] : []),
            ...(spec.fd5 !== undefined ? ["pipe"] : []),
          ]
        : undefined,
    // A session of its own: Ctrl-C on the terminal signals the whole foreground process group, and a child that
    // died of it at once would orphan its bash commands before our kill protocol could see them. The owner
    // alone gets the signal and stops the child properly (and the child still notices a dead owner itself).
    detached: true,
  };
  const proc = (Bun.spawn as unknown as (o: typeof options) => ReturnType<typeof Bun.spawn>)(options);
  const sink = proc.stdin as unknown as { write(s: string): void; flush(): void; end(): void };
  let stdinOpen = spec.stdin !== null;
  const writeStdin = (text: string) => {
    if (!stdinOpen) return false;
    try {
      sink.write(text);
      if (spec.keepStdin) sink.flush();
      else sink.end();
      return true;
    } catch {
      // The child died before reading it; its exit code tells the rest.
      stdinOpen = false;
      return false;
    }
  };
  if (spec.stdin !== null) writeStdin(spec.stdin);
  if (spec.keepStdin) void proc.exited.then(() => (stdinOpen = false));
  const stdio = (proc as unknown as { stdio: unknown[] }).stdio;
  const fd3 = spec.fd3 ? (stdio[3] as unknown) : null;
  const control = spec.control && typeof stdio[4] === "number" ? fdLineWriter(stdio[4] as number) : undefined;
  if (control) void proc.exited.then(control.close);
  if (spec.fd5 !== undefined && typeof stdio[5] === "number") writeAndClose(stdio[5] as number, spec.fd5);
  return {
    pid: proc.pid,
    stdout: proc.stdout as unknown as AsyncIterable<Uint8Array>,
    stderr: proc.stderr as unknown as AsyncIterable<Uint8Array>,
    fd3: fd3 ? toIterable(fd3) : null,
    sendControl: control?.write,
    ...(spec.keepStdin ? { writeStdin } : {}),
    exited: proc.exited.then(() => ({
      code: proc.exitCode,
      signal: proc.signalCode === null ? null : String(proc.signalCode),
    })),
    kill: (signal) => {
      try {
        proc.kill(signal);
      } catch {
        // Already gone.
      }
    },
  };
}

/** fd 5's data, all of it, then the pipe closed (the reader waits for its end). */
function writeAndClose(fd: number, data: string): void {
  const w = fdLineWriter(fd);
  w.writeRaw(data);
  w.close();
}

/** Bun hands extra pipes out as a ReadableStream or a numeric fd depending on version: accept both. */
function toIterable(stream: unknown): AsyncIterable<Uint8Array> {
  // node:fs streams fail with EAGAIN on this non-blocking pipe; Bun.file(fd).stream() polls it properly.
  if (typeof stream === "number") return Bun.file(stream).stream() as unknown as AsyncIterable<Uint8Array>;
  return stream as AsyncIterable<Uint8Array>;
}

export function createBunHost(openDb: (path: string) => Db): Host {
  return makeHost("bun", spawn, openDb);
}
