// A call's child pi processes, kept for its next tasks (loading pi is most of a short child's cost, and
// a call with more tasks than its concurrency, or tasks that wait for others, starts the same child over and
// over). A kept child runs pi in RPC mode; each task is one lease on it: `switch_session` to the task's own
// session file (pi builds a new session, extensions and MCP connections included, as at start-up), then
// `prompt`. The runner drives a lease like a process (the ChildProcess it knows): its fd 3 lines, its stderr, its
// control pipe. The lease "exits" when the child reports agent_settled, and the process goes back to the pool;
// anything else (a kill, a crash, a command pi refuses) ends the process, so no later task ever runs in a process
// something went wrong in. Only children whose whole start (argv, environment, cwd, and the content of the files
// they read) is the same share a process; the pool owns a copy of those files, since each task's own copy is
// removed when it ends.
import type { ChildProcess, Clock, ExitInfo, Host, SpawnSpec } from "../../host.ts";
import { drain } from "./drain.ts";
import { killTree, waitFor } from "./kill.ts";
import { LineSplitter } from "./line-splitter.ts";
import { PushStream } from "./push-stream.ts";
import { RpcLines } from "./rpc-lines.ts";
import { MAX_EVENT_LINE } from "./transport.ts";
import { MARK_ENV, newMark, sessionMark, type MarkedProcess } from "./marks.ts";
import { endLeftovers } from "./leftovers.ts";
import { keptFiles } from "./kept-files.ts";

/** The child extension's report of pi's agent_settled: the end of a task's automatic work. */
const SETTLED_LINE = JSON.stringify({ type: "settled" });
/** pi's RPC output is read only for dialogs and command replies, both short: longer lines are not kept. */
const RPC_LINE = 16 * 1024;
/** Dialogs an extension waits on; the child extension forwards its own to the owner, any other is declined. */
const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

/** One task's way into the pool: it leases through it (any number of attempts), and says when it is over. While a
 *  task that may still lease is under way, a closing pool keeps its idle children for it. */
export type PoolTicket = {
  lease(host: Host, spec: SpawnSpec, sessionFile: string, files: string[]): ChildProcess;
  done(): void;
};

export type Reuse = {
  pool: PoolTicket;
  /** Files the child reads at each session start (its system-prompt additions), named in its argv or env. */
  files: string[];
};

type Reply = { success?: boolean; error?: string; data?: { cancelled?: boolean } };

type Worker = {
  key: string;
  host: Host;
  proc: ChildProcess;
  lease: Lease | null;
  /** No further task: killed, crashed, refused a command, or the pool is closing. */
  gone: boolean;
  tasks: number;
  /** What the process and everything it starts carry; each task's session has its own mark under it. */
  mark: string;
  replies: Map<string, (r: Reply) => void>;
  exited: Promise<void>;
};

const encoder = new TextEncoder();

/** One task's view of a kept child: what the runner reads, writes and kills. */
class Lease implements ChildProcess {
  readonly stdout = new PushStream();
  readonly stderr = new PushStream();
  readonly fd3 = new PushStream();
  readonly exited: Promise<ExitInfo>;
  readonly sendControl?: (line: string) => boolean;
  readonly mark: string;
  /** What its task left running, once the pool has looked (as the task settled, or the process ended). */
  leftovers?: MarkedProcess[];
  done = false;
  /** Its prompt was sent: only an agent_settled after it ends the task (not one from the previous session). */
  prompted = false;
  private settle!: (exit: ExitInfo) => void;

  constructor(
    private readonly worker: Worker,
    sessionFile: string,
    /** Which of the process's tasks this is. */
    readonly task: number,
  ) {
    // On a kept child stdout is pi's RPC stream, which the pool reads: the task's own stdout is empty.
    this.stdout.end();
    this.exited = new Promise((resolve) => (this.settle = resolve));
    // The child extension gives the session this mark when it starts (src/child-extension/extension.ts).
    this.mark = sessionMark(worker.mark, sessionFile);
    const send = worker.proc.sendControl;
    // Each line names the task's session: the child drops one that arrives after its task (src/child-extension/control.ts).
    const session = `{"session":${JSON.stringify(sessionFile)},`;
    if (send) this.sendControl = (line) => !this.done && line.startsWith("{") && send(session + line.slice(1));
  }

  get pid(): number {
    return this.worker.proc.pid;
  }

  end(exit: ExitInfo): void {
    if (this.done) return;
    this.done = true;
    this.fd3.end();
    this.stderr.end();
    this.settle(exit);
  }

  kill(signal: "SIGTERM" | "SIGKILL"): void {
    // A task ended is no longer this lease's to stop; one stopped early takes its process with it.
    if (this.done) return;
    this.worker.gone = true;
    this.worker.proc.kill(signal);
  }
}

/** pi's print-mode command line as an RPC one: `-p` becomes `--mode rpc`. */
export function rpcArgv(argv: string[]): string[] | null {
  const i = argv.indexOf("-p");
  if (i < 0 || argv.includes("--mode")) return null;
  return [...argv.slice(0, i), "--mode", "rpc", ...argv.slice(i + 1)];
}

/** What two children must share to run in one process: everything but the session file and the task itself. */
export function reuseKey(spec: SpawnSpec, sessionFile: string, files: string[], contents: string[]): string {
  const named = (v: string) => {
    if (v === sessionFile) return "<session>";
    const i = files.indexOf(v);
    return i >= 0 ? `<file ${contents[i]}>` : v;
  };
  // Each task's TMPDIR is its own; a kept child has one for its life instead (start below). A traced task's
  // TRACEPARENT names its own span: a kept child makes it from each task's session (child-extension), so it does
  // not keep tasks apart (it had started a process per task, and kept each one idle).
  const own: Record<string, string> = { TMPDIR: "<tmp>", TRACEPARENT: "<trace>" };
  const env = Object.keys(spec.env)
    .sort()
    .map((k) => [k, own[k] ?? named(spec.env[k])]);
  return JSON.stringify([spec.cwd, spec.cmd.map(named), env, !!spec.fd3, !!spec.control]);
}

export class ChildPool {
  private readonly idle: Worker[] = [];
  private readonly workers = new Set<Worker>();
  private closing = false;
  private seq = 0;
  /** Tasks under way that have not leased yet: the idle children may still be theirs. */
  private unleased = 0;
  /** Processes started and tasks run, for the bench and tests. */
  readonly stats = { started: 0, tasks: 0 };

  constructor(
    private readonly clock: Clock,
    /** The most children kept idle (the call's concurrency): the one idle longest ends to make room (tasks that
     *  differ — their agent, model, files — had each left one idle until the call ended). */
    private readonly maxIdle = Number.POSITIVE_INFINITY,
  ) {}

  /** A task starts: it may lease (ticket.lease) until it is over (ticket.done). */
  ticket(): PoolTicket {
    this.unleased++;
    let counted = true;
    const settle = () => {
      if (!counted) return;
      counted = false;
      this.unleased--;
      if (this.closing && !this.unleased) this.retireIdle();
    };
    return {
      lease: (host, spec, sessionFile, files) => {
        // Its first lease takes an idle child before a closing pool may end them.
        const proc = this.lease(host, spec, sessionFile, files);
        settle();
        return proc;
      },
      done: settle,
    };
  }

  /**
   * Runs a task (`spec.stdin` is its prompt, `sessionFile` its session) on a kept child with the same start, or
   * on a new one. Throws like host.spawn when a new child cannot be started.
   */
  lease(host: Host, spec: SpawnSpec, sessionFile: string, files: string[]): ChildProcess {
    const contents = files.map((f) => host.readText(f) ?? "");
    const key = reuseKey(spec, sessionFile, files, contents);
    const i = this.idle.findIndex((w) => w.key === key && !w.gone);
    const kept = i >= 0 ? this.idle.splice(i, 1)[0] : null;
    const worker = kept ?? this.start(host, spec, key, files, contents);
    this.stats.tasks++;
    return this.begin(worker, sessionFile, spec.stdin ?? "", !kept);
  }

  /** No further tasks will start: idle children end once no task under way can still lease, busy ones when
   *  their task does. */
  drain(): void {
    this.closing = true;
    if (!this.unleased) this.retireIdle();
  }

  private retireIdle(): void {
    for (const w of this.idle.splice(0)) this.retire(w);
  }

  /** Every task is over: each child ends; resolves once all have exited. */
  async close(): Promise<void> {
    this.closing = true;
    this.unleased = 0;
    this.retireIdle();
    await Promise.all([...this.workers].map((w) => w.exited));
  }

  private start(host: Host, spec: SpawnSpec, key: string, files: string[], contents: string[]): Worker {
    const argv = rpcArgv(spec.cmd);
    if (!argv) throw new Error("a kept child needs pi's print-mode command line");
    // The task's own files go when its task ends; the process reads them again at each session start.
    const own = keptFiles(host, spec, argv, ++this.seq, files, contents);
    const env = own.env;
    // The child extension forwards dialogs to the owner even though RPC mode gives pi a UI (src/child-extension/ask.ts).
    env.PI_SUBAGENT_RPC = "1";
    const mark = newMark(spec.env[MARK_ENV], host.pid, "kept");
    env[MARK_ENV] = mark;
    let proc: ChildProcess;
    try {
      proc = host.spawn({ ...spec, cmd: own.cmd, env, stdin: "", keepStdin: true });
    } catch (err) {
      own.remove();
      throw err;
    }
    this.stats.started++;
    const worker: Worker = {
      key,
      host,
      proc,
      lease: null,
      gone: false,
      tasks: 0,
      mark,
      replies: new Map(),
      exited: Promise.resolve(),
    };
    const events = new LineSplitter((line, cut) => !cut && this.onEventLine(worker, line), MAX_EVENT_LINE);
    const rpc = new RpcLines((line) => this.onRpcLine(worker, line), RPC_LINE);
    const readers = Promise.all([
      drain(proc.fd3, (c) => events.push(c)),
      drain(proc.stdout, (c) => rpc.push(c)),
      drain(proc.stderr, (c) => worker.lease?.stderr.push(c)),
    ]);
    this.workers.add(worker);
    worker.exited = proc.exited.then(async (exit) => {
      worker.gone = true;
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      // What the process wrote last (a crash's stderr, its last events) belongs to its task.
      await waitFor(this.clock, readers, 300);
      events.end();
      const lease = worker.lease;
      worker.lease = null;
      // What the process's tasks left and the kill protocol's walk down its tree could not find.
      if (lease) lease.leftovers = await endLeftovers(host, this.clock, lease.mark);
      lease?.end(exit);
      await endLeftovers(host, this.clock, worker.mark);
      own.remove();
      this.workers.delete(worker);
    });
    return worker;
  }

  private begin(worker: Worker, sessionFile: string, prompt: string, fresh: boolean): Lease {
    const n = ++worker.tasks;
    const lease = new Lease(worker, sessionFile, n);
    worker.lease = lease;
    const send = (command: Record<string, unknown>, onReply: (r: Reply) => void) => {
      const id = `${command.type}-${n}`;
      worker.replies.set(id, onReply);
      if (!worker.proc.writeStdin?.(`${JSON.stringify({ ...command, id })}\n`))
        this.refuse(worker, lease, `could not send ${command.type} to the kept sub-agent process`);
    };
    const prompted = (r: Reply) => {
      if (r.success === false) this.refuse(worker, lease, r.error ?? "pi refused the prompt");
    };
    // A new process opened the task's session from its command line; a kept one switches to it first (and only
    // then prompts: pi handles commands concurrently, so a prompt sent at once would reach the old session).
    const promptIt = () => {
      lease.prompted = true;
      send({ type: "prompt", message: prompt }, prompted);
    };
    if (fresh) promptIt();
    else
      send({ type: "switch_session", sessionPath: sessionFile }, (r) => {
        if (r.success === false || r.data?.cancelled)
          return this.refuse(
            worker,
            lease,
            `pi could not open the session ${sessionFile}: ${r.error ?? "cancelled by an extension"}`,
          );
        promptIt();
      });
    return lease;
  }

  private onEventLine(worker: Worker, line: string): void {
    const lease = worker.lease;
    if (!lease || lease.done) return;
    lease.fd3.push(encoder.encode(`${line}\n`));
    if (line !== SETTLED_LINE || !lease.prompted) return;
    // The task's work is over: what it left running ends first (the next task must not see it), then the lease
    // exits and the process waits for the next task (or ends with the call).
    lease.prompted = false;
    void this.release(worker, lease);
  }

  private async release(worker: Worker, lease: Lease): Promise<void> {
    // The process's own helpers (its descendants now that no command runs) are pi's, not the task's.
    const own = new Set(worker.host.descendants(worker.proc.pid));
    lease.leftovers = await endLeftovers(worker.host, this.clock, lease.mark, { spare: (pid) => own.has(pid) });
    if (lease.done) return; // the process ended meanwhile: its exit ended the lease
    worker.lease = null;
    lease.end({ code: 0, signal: null });
    if (worker.gone || (this.closing && !this.unleased)) this.retire(worker);
    else {
      while (this.idle.length >= this.maxIdle) this.retire(this.idle.shift() as Worker);
      this.idle.push(worker);
    }
  }

  private onRpcLine(worker: Worker, line: string): void {
    let msg: { type?: string; id?: string; method?: string } & Reply;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.type === "extension_ui_request" && DIALOGS.has(msg.method ?? "")) {
      // As in print mode, where no one is there to answer: the asking extension gets its default.
      worker.proc.writeStdin?.(`${JSON.stringify({ type: "extension_ui_response", id: msg.id, cancelled: true })}\n`);
      return;
    }
    if (msg.type !== "response" || !msg.id) return;
    const reply = worker.replies.get(msg.id);
    worker.replies.delete(msg.id);
    reply?.(msg);
  }

  /** pi refused the task's command: the task fails with pi's reason, as a print-mode pi would have exited. */
  private refuse(worker: Worker, lease: Lease, why: string): void {
    if (lease.done) return;
    lease.stderr.push(encoder.encode(`${why}\n`));
    if (worker.lease === lease) worker.lease = null;
    lease.end({ code: 1, signal: null });
    this.retire(worker);
  }

  private retire(worker: Worker): void {
    if (worker.gone && !this.workers.has(worker)) return;
    worker.gone = true;
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    void killTree(worker.host, this.clock, worker.proc);
  }
}
