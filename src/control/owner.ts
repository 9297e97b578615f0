// The control endpoint of a process that owns children (docs/cli.md "Background runs"): a CLI run, a background supervisor, a pi
// session. It listens on a Unix socket recorded in the owner registry and acts on its own tasks: steer (over
// the child's control pipe, answered once the child reports delivery or ends without it) and cancel (the
// task's abort signal, so the kill protocol and the recorded status are the engine's usual ones).
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type { RunState } from "../core/run/process/run-state.ts";
import type { TaskRun } from "../core/call/runner.ts";
import type { TaskWiring } from "../core/run/task-types.ts";
import type { ChildEvent } from "../core/types.ts";
import { CallWindows, DETAIL_LINES } from "../ui/call-windows.ts";
import { eventLine } from "../ui/event-line.ts";
import { MAX_STEER_CHARS, type ControlReply, type ControlRequest } from "./protocol.ts";
import type { AskAnswer, Asker } from "../core/run/process/ask.ts";
import { cancelledBy } from "../core/run/process/abort-reason.ts";
import { serveWatch, type WatchMessage, type WatchSource } from "./watch.ts";
import { procStartTime } from "../host/process-identity.ts";
import { removeOwner, socketPath, writeOwner, type OwnerRecord, type OwnerRole } from "./registry.ts";
import { waitingOf, type QueuedTask } from "./running.ts";

type Tracked = {
  abort: AbortController;
  send: ((line: string) => boolean) | null;
  /** Steers written to the child, waiting for its `steered` report. */
  waiting: Map<string, (r: ControlReply) => void>;
  /** Its live window, for watchers (attach, /subagents). */
  window: CallWindows;
  /** Its child's open questions, oldest first: a steer or `subagents answer` answers the oldest. */
  questions: Map<string, (a: AskAnswer) => void>;
};

export type Owner = {
  /** Wraps a task runner so each task can be steered, cancelled and watched through this owner. */
  wrap(run: TaskRun): TaskRun;
  /** Lists sessions this owner will run (queued ones too), so wait/steer/cancel find it before they start. */
  adopt(tasks: readonly QueuedTask[]): void;
  /** Forgets listed sessions that never started (skipped, refused, or their call ended first). */
  release(ids: string[]): void;
  /** Stops listening and removes the record. */
  close(): void;
};

let steerSeq = 0;

export async function startOwner(
  dataDir: string,
  role: OwnerRole,
  sessions: string[],
  extra: Partial<OwnerRecord> = {},
): Promise<Owner> {
  const tasks = new Map<string, Tracked>();
  const unfinished = new Set(sessions);
  const record: OwnerRecord = {
    pid: process.pid,
    startTime: procStartTime(process.pid),
    role,
    socket: socketPath(dataDir, process.pid),
    sessions,
    startedAt: Date.now(),
    ...extra,
  };
  const publish = () => {
    try {
      // Only what is still to run is listed (and kept: a long pi session adopts call after call).
      if (record.waiting)
        record.waiting = Object.fromEntries(Object.entries(record.waiting).filter(([id]) => unfinished.has(id)));
      writeOwner(dataDir, { ...record, sessions: [...unfinished] });
    } catch {
      // the data dir went away or is read-only: the run goes on, only uncontrollable from elsewhere
    }
  };

  const steer = (id: string, text: string, answerOnly = false): Promise<ControlReply> => {
    const t = tasks.get(id);
    if (!t)
      return Promise.resolve({
        ok: false,
        reason: unfinished.has(id) ? `session ${id} has not started yet (queued)` : `session ${id} is not running`,
      });
    if (!t.send)
      return Promise.resolve({
        ok: false,
        reason: `session ${id} has no control channel to its child right now (between attempts, the json transport, or a docker/slurm runner: only stdin/stdout cross those)`,
      });
    if (!text.trim()) return Promise.resolve({ ok: false, reason: "the message is empty" });
    if (text.length > MAX_STEER_CHARS)
      return Promise.resolve({ ok: false, reason: `the message is longer than ${MAX_STEER_CHARS} characters` });
    // A child waiting on a question is waiting for exactly this: the message is its answer.
    const open = [...t.questions.values()][0];
    if (open) {
      open({ value: text });
      return Promise.resolve({ ok: true, delivered: true, answered: true });
    }
    if (answerOnly)
      return Promise.resolve({
        ok: false,
        reason: `session ${id} has no open question (use steer to send it a message)`,
      });
    const steerId = `${process.pid}-${++steerSeq}`;
    return new Promise((resolve) => {
      t.waiting.set(steerId, resolve);
      if (!t.send?.(JSON.stringify({ type: "steer", id: steerId, text }))) {
        t.waiting.delete(steerId);
        resolve({ ok: false, reason: `session ${id}: its child is exiting` });
      }
    });
  };

  const cancel = (req: Extract<ControlRequest, { op: "cancel" }>): ControlReply => {
    const ids = req.all ? [...unfinished] : req.sessionId && unfinished.has(req.sessionId) ? [req.sessionId] : [];
    if (!ids.length) return { ok: false, reason: `session ${req.sessionId} is not running here` };
    const reason = req.by ? cancelledBy(`Stopped from ${req.by}`) : undefined;
    for (const id of ids) {
      const t = tasks.get(id);
      if (t) t.abort.abort(reason);
      else cancelledEarly.set(id, reason);
    }
    return { ok: true, cancelled: ids };
  };
  /** Queued tasks cancelled before they started: they start with an aborted signal and are recorded cancelled. */
  const cancelledEarly = new Map<string, unknown>();

  const handle = async (line: string): Promise<ControlReply> => {
    let req: ControlRequest;
    try {
      req = JSON.parse(line);
    } catch {
      return { ok: false, reason: "bad request" };
    }
    if (req.op === "ping") return { ok: true };
    if (req.op === "steer") return steer(String(req.sessionId), String(req.text ?? ""));
    if (req.op === "answer") return steer(String(req.sessionId), String(req.text ?? ""), true);
    if (req.op === "cancel") return cancel(req);
    if (req.op === "watch") return { ok: false, reason: "watch keeps its connection" };
    return { ok: false, reason: `unknown request ${(req as { op?: string }).op}` };
  };

  /** Watchers by session (they may subscribe while the task is still queued). */
  const watchers = new Map<string, Set<(m: WatchMessage) => void>>();
  const watchSource: WatchSource = {
    view: (id) => {
      const t = tasks.get(id);
      if (t) return t.window.snapshot(Date.now(), DETAIL_LINES).windows[0];
      return unfinished.has(id) ? "queued" : null;
    },
    listen: (id, fn) => {
      const set = watchers.get(id) ?? new Set();
      watchers.set(id, set.add(fn));
      return () => {
        set.delete(fn);
        if (!set.size) watchers.delete(id);
      };
    },
  };

  let server: net.Server;
  try {
    server = await listen(record.socket, handle, watchSource);
  } catch (err) {
    // Control is an addition: a data dir we cannot listen in must not stop the run itself.
    if (role !== "pi")
      process.stderr.write(
        `subagents: warning: no control socket (steer/cancel from elsewhere unavailable): ${(err as Error).message}\n`,
      );
    return { wrap: (run) => run, adopt: () => {}, release: () => {}, close: () => {} };
  }
  publish();

  return {
    adopt: (queued) => {
      for (const t of queued) if (t.sessionId) unfinished.add(t.sessionId);
      record.waiting = { ...record.waiting, ...waitingOf(queued) };
      publish();
    },
    release: (ids) => {
      let changed = false;
      for (const id of ids) {
        cancelledEarly.delete(id);
        if (!tasks.has(id) && unfinished.delete(id)) changed = true;
      }
      if (changed) publish();
    },
    wrap: (run) => async (input, hooks) => {
      const id = input.sessionId;
      const window = new CallWindows(
        [
          {
            name: input.name,
            sessionId: id,
            profile: input.agent,
            timeoutSec: input.timeoutSec,
          },
        ],
        DETAIL_LINES,
      );
      window.start(0, Date.now());
      const t: Tracked = { abort: new AbortController(), send: null, waiting: new Map(), window, questions: new Map() };
      if (cancelledEarly.has(id)) t.abort.abort(cancelledEarly.get(id));
      tasks.set(id, t);
      unfinished.add(id);
      const signal = hooks.signal ? AbortSignal.any([hooks.signal, t.abort.signal]) : t.abort.signal;
      const onEvent = (state: RunState, ev: ChildEvent) => {
        if (ev.type === "steered") {
          t.waiting.get(ev.id)?.({ ok: true, delivered: true });
          t.waiting.delete(ev.id);
        }
        t.window.event(0, state);
        // The readable line is built only for a session someone is watching (this runs on every event).
        const watching = watchers.get(id);
        const line = watching?.size ? eventLine(ev) : null;
        if (line) for (const fn of watching!) fn({ type: "line", text: line });
        hooks.onEvent?.(state, ev);
      };
      try {
        return await run(input, {
          ...hooks,
          signal,
          onEvent,
          onControl: (send) => (t.send = send),
          ask: ownerAsker(t, hooks.ask, hooks.remoteAsk),
        });
      } finally {
        // The run's status is recorded by now: a steer still waiting never reached the model.
        for (const resolve of t.waiting.values())
          resolve({ ok: false, reason: `session ${id} ended before the message was delivered` });
        tasks.delete(id);
        unfinished.delete(id);
        publish();
      }
    },
    close: () => {
      server.close();
      fs.rmSync(record.socket, { force: true });
      removeOwner(dataDir, process.pid);
    },
  };
}

/** Who answers a task's questions here: the person (a dialog, the terminal) if there is one, and for a background
 *  run also whoever answers through this owner (`subagents answer`, a steer, the fleet view). With neither, none:
 *  the engine answers "no one can answer now" at once. */
function ownerAsker(t: Tracked, person: Asker | undefined, remote: TaskWiring["remoteAsk"]): Asker | undefined {
  if (!person && !remote) return undefined;
  return (q) =>
    new Promise<AskAnswer>((resolve) => {
      const done = (a: AskAnswer) => {
        t.questions.delete(q.id);
        resolve(a);
      };
      t.questions.set(q.id, done);
      q.signal.addEventListener("abort", () => t.questions.delete(q.id), { once: true });
      remote?.notify?.(q);
      person?.(q).then(done, () => done({ none: "nobody" }));
    });
}

async function listen(
  socket: string,
  handle: (line: string) => Promise<ControlReply>,
  watch: WatchSource,
): Promise<net.Server> {
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  fs.rmSync(socket, { force: true });
  const server = net.createServer((sock) => {
    let buf = "";
    sock.on("error", () => {});
    sock.setEncoding("utf8");
    sock.on("data", (c: string) => {
      buf += c;
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      buf = "";
      const req = watchRequest(line);
      if (req) {
        sock.unref(); // a watcher never keeps the owner alive
        return serveWatch(sock, req.sessionId, watch);
      }
      void handle(line).then((reply) => sock.end(`${JSON.stringify(reply)}\n`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  fs.chmodSync(socket, 0o600);
  server.unref(); // the owner's own work decides when it exits
  return server;
}

function watchRequest(line: string): { sessionId: string } | null {
  try {
    const req = JSON.parse(line) as ControlRequest;
    return req.op === "watch" && typeof req.sessionId === "string" ? { sessionId: req.sessionId } : null;
  } catch {
    return null;
  }
}
