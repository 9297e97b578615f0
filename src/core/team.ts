// The siblings of one call as a team (docs/messaging.md): a child's `send_message {to, message}` reaches the
// owner over fd 3, and this hub routes it to the recipient's control pipe, where pi delivers it at the next turn
// boundary the way a steer is. One hub per call (the scheduler makes it), so a message never leaves its call.
// Pure: the runner gives each member its control pipe as its child starts, and its events as they come.

/** The tool's name in the child (registered by src/child-extension/message.ts). */
export const MESSAGE_TOOL = "send_message";
/** A message is a note to a sibling, not a file: longer content goes into a file and the message names it. */
export const MAX_MESSAGE_CHARS = 8000;
export const DEFAULT_MAX_MESSAGES = 50;
/** One line of each sibling's task in a child's prompt. */
const TASK_LINE_CHARS = 100;

/** How the recipient's model sees a message: who wrote it, then the text. */
/** The team note a child of a call gets after its task (see `note` below), wherever it stands in a text. */
const TEAM_NOTE = new RegExp(
  `\\n*You are "[^"\\n]*", one of \\d+ sub-agents of one call\\. Your siblings:\\n(?:- [^\\n]*\\n)*${MESSAGE_TOOL} reaches them; their messages reach you as "Message from sibling <name>: …"\\.`,
  "g",
);

/** A child's first message without the team note: its own task (the scripted model reads only that). */
export function withoutTeamNote(text: string): string {
  return text.replace(TEAM_NOTE, "");
}

export function framedMessage(from: string, text: string): string {
  return `Message from sibling ${from}: ${text}`;
}

/** A line in a window, `subagents logs` and `attach`. */
export function messageLine(from: string, to: string, text: string): string {
  return `✉ ${from} → ${to}: ${text.split("\n")[0]}`;
}

const CONFINED_NOTE = "you run in the sandbox and they do not; a sandboxed task cannot message a task outside it";

/** What the sender's tool call gets back: said to its model as the result (an error when not sent). */
export type TeamReply = { ok: boolean; text: string };

type Message = { id: string; from: string; to: string; text: string };
type MemberState = "queued" | "running" | "ended";

type Member = {
  name: string;
  /** Runs in the sandbox or a container: what it writes reaches no task that does not (see send below). */
  confined: boolean;
  task: string;
  state: MemberState;
  /** The control pipe to its child now (null before it starts, between attempts and after). */
  send: ((line: string) => boolean) | null;
  /** Not yet written to a child (held while queued, between attempts, or before its child starts). */
  outbox: Message[];
  /** Written to the child, waiting for it to report that the message entered its conversation. */
  inflight: Map<string, Message>;
  /** Said about this task's messages when it ends (refusals it met, messages it never got). */
  warnings: string[];
  refused: number;
};

/** One task's handle on its call's team: what its runner and child protocol use. */
export type TeamMember = {
  name: string;
  /** The lines added to the task's first prompt: who the siblings are, and how to reach them. */
  note: string;
  /** The child's control pipe at each spawn, null at its exit (messages written and not delivered are kept). */
  attach(send: ((line: string) => boolean) | null): void;
  /** The child called send_message. */
  send(to: string, text: string): TeamReply;
  /** The child reported that a message entered its conversation (its `message_in` event). */
  delivered(id: string): void;
  /** The child finalized: it takes no more messages (senders are told it finished). */
  finishing(): void;
  /** The task's run ended: what its record keeps about messages (undelivered ones, refusals). Idempotent. */
  leave(): string[];
};

export type CallTeam = {
  member(index: number): TeamMember;
  /** The scheduler started the task (its messages are written once its child starts). */
  start(index: number): void;
  /** The task ended (also one that never started a child): its leftover warnings, if the runner did not take them. */
  end(index: number): string[];
};

const firstLine = (s: string) => {
  const line = s.trim().split("\n")[0].trim();
  return line.length > TASK_LINE_CHARS ? `${line.slice(0, TASK_LINE_CHARS - 1)}…` : line;
};
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Team names: the task names, with `#2`, `#3`… added where two tasks share one. */
function teamNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((n) => {
    const count = (seen.get(n) ?? 0) + 1;
    seen.set(n, count);
    return count === 1 ? n : `${n}#${count}`;
  });
}

/** A call's team, or undefined for a lone task (it has no one to message). */
export function callTeam(
  tasks: readonly { name?: string; prompt: string; confined?: boolean }[],
  opts: { maxMessages?: number } = {},
): CallTeam | undefined {
  if (tasks.length < 2) return undefined;
  const budget = Math.max(0, Math.floor(opts.maxMessages ?? DEFAULT_MAX_MESSAGES));
  const names = teamNames(tasks.map((t, i) => t.name?.trim() || `task-${i + 1}`));
  const members: Member[] = tasks.map((t, i) => ({
    name: names[i],
    confined: !!t.confined,
    task: firstLine(t.prompt),
    state: "queued",
    send: null,
    outbox: [],
    inflight: new Map(),
    warnings: [],
    refused: 0,
  }));
  let sent = 0;
  let seq = 0;

  const write = (m: Member, msg: Message): boolean => {
    if (!m.send?.(JSON.stringify({ type: "message", id: msg.id, from: msg.from, to: msg.to, text: msg.text })))
      return false;
    m.inflight.set(msg.id, msg);
    return true;
  };
  const flush = (m: Member) => {
    if (!m.send) return;
    const held = m.outbox.splice(0);
    for (const [i, msg] of held.entries()) {
      if (write(m, msg)) continue;
      m.outbox.push(...held.slice(i));
      return;
    }
  };
  const running = (except: Member) => members.filter((m) => m !== except && m.state === "running").map((m) => m.name);
  const whoRuns = (from: Member) => {
    const r = running(from);
    return r.length ? `Running siblings: ${r.join(", ")}.` : "No sibling is running now.";
  };

  const undelivered = (m: Member): string[] => {
    const lost = [...m.inflight.values(), ...m.outbox.splice(0)];
    m.inflight.clear();
    return lost.map(
      (msg) =>
        `undelivered message from ${msg.from} (the task ended before its next turn): ${clip(msg.text.split("\n")[0], 200)}`,
    );
  };
  const leave = (m: Member): string[] => {
    m.state = "ended";
    m.send = null;
    const out = [...m.warnings.splice(0), ...undelivered(m)];
    if (m.refused)
      out.push(
        `${m.refused} message${m.refused === 1 ? "" : "s"} refused: the call's message budget (${budget}, subagents.maxMessages) was spent`,
      );
    m.refused = 0;
    return out;
  };

  const send = (from: Member, toRaw: string, textRaw: string): TeamReply => {
    const to = String(toRaw ?? "").trim();
    const text = String(textRaw ?? "").trim();
    if (!to) return { ok: false, text: `send_message needs \`to\`: a sibling's name or "*". ${whoRuns(from)}` };
    if (!text) return { ok: false, text: "send_message needs a non-empty `message`." };
    if (text.length > MAX_MESSAGE_CHARS)
      return {
        ok: false,
        text: `Not sent: the message has ${text.length} characters, more than ${MAX_MESSAGE_CHARS}. Put long content in a file and send its path.`,
      };
    let targets: Member[];
    // A confined task's words would arrive as a user turn in an unconfined one, whose tools run with the person's
    // rights: a way out of the sandbox through the other model. Refused, not delivered marked — a mark is only a
    // request to that model, which text can talk it out of.
    const outOfReach = (m: Member) => from.confined && !m.confined;
    let skipped: string[] = [];
    if (to === "*") {
      // Everyone who has not ended: running siblings now, queued ones when they start.
      const open = members.filter((m) => m !== from && m.state !== "ended");
      targets = open.filter((m) => !outOfReach(m));
      skipped = open.filter(outOfReach).map((m) => m.name);
      if (skipped.length) from.warnings.push(`a message to ${skipped.join(", ")} was refused: ${CONFINED_NOTE}`);
      if (!targets.length)
        return {
          ok: false,
          text: skipped.length
            ? `Not sent: ${CONFINED_NOTE} (${skipped.join(", ")}).`
            : `Not sent: no sibling is running or waiting to start.`,
        };
    } else {
      const m = members.find((x) => x.name === to);
      if (m === from) return { ok: false, text: `Not sent: "${to}" is you. ${whoRuns(from)}` };
      if (!m) return { ok: false, text: `Not sent: no sibling is named "${to}". ${whoRuns(from)}` };
      if (outOfReach(m)) {
        from.warnings.push(`a message to ${m.name} was refused: ${CONFINED_NOTE}`);
        return { ok: false, text: `Not sent: ${CONFINED_NOTE} (${m.name}).` };
      }
      if (m.state === "ended") return { ok: false, text: `Not sent: ${to} has finished. ${whoRuns(from)}` };
      targets = [m];
    }
    if (sent >= budget) {
      from.refused++;
      return {
        ok: false,
        text: `Not sent: this call's message budget is spent (${budget} messages, subagents.maxMessages). Go on with your task without messaging.`,
      };
    }
    sent++;
    const now: string[] = [];
    const later: string[] = [];
    for (const m of targets) {
      const msg: Message = { id: `m${++seq}`, from: from.name, to: m.name, text };
      if (m.state === "running" && m.send && write(m, msg)) now.push(m.name);
      else {
        m.outbox.push(msg);
        (m.state === "queued" ? later : now).push(m.name);
      }
    }
    const parts = [
      now.length ? `Sent to ${now.join(", ")} (delivered at ${now.length === 1 ? "its" : "their"} next turn).` : "",
      later.length
        ? `Held for ${later.join(", ")}, not started yet: delivered when ${later.length === 1 ? "it starts" : "they start"}.`
        : "",
      skipped.length ? `Not sent to ${skipped.join(", ")}: ${CONFINED_NOTE}.` : "",
    ];
    return { ok: true, text: parts.filter(Boolean).join(" ") };
  };

  const note = (i: number): string => {
    const others = members.filter((_, j) => j !== i);
    return [
      `You are "${members[i].name}", one of ${members.length} sub-agents of one call. Your siblings:`,
      ...others.map((m) => `- ${m.name}: ${m.task}`),
      `${MESSAGE_TOOL} reaches them; their messages reach you as "Message from sibling <name>: …".`,
    ].join("\n");
  };

  return {
    start(i) {
      if (members[i].state === "queued") members[i].state = "running";
    },
    end(i) {
      return leave(members[i]);
    },
    member(i) {
      const m = members[i];
      return {
        name: m.name,
        note: note(i),
        attach(sendLine) {
          if (sendLine) {
            m.send = sendLine;
            // A fallback model's attempt after a finalize-less end: the task runs again.
            if (m.state !== "running") m.state = "running";
            return flush(m);
          }
          m.send = null;
          // Written but never entered the conversation (the process ended first): kept for a next attempt.
          m.outbox.unshift(...m.inflight.values());
          m.inflight.clear();
        },
        send: (to, text) => send(m, to, text),
        delivered(id) {
          m.inflight.delete(id);
        },
        finishing() {
          m.state = "ended";
        },
        leave: () => leave(m),
      };
    },
  };
}
