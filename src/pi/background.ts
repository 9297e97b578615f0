// `background: true` on delegate_to_subagents and subagent: the tasks start under this pi session (its owner
// endpoint, so `subagents steer/cancel/wait/attach` reach them too), the tool returns at once with the session
// ids, and each task's end comes back to the model as a short notice — unless the model is already waiting for
// it (get_subagent_output with wait), which returns the output itself. The pi session owns them: its shutdown
// stops them and records them as interrupted.
import type { PreparedCall } from "../core/call/prepare.ts";
import type { Refusal } from "../core/call/request.ts";
import type { CallEvent } from "../core/call/runner.ts";
import type { Engine } from "../core/run/engine.ts";
import { statusLines } from "../core/run/outcome-text.ts";
import { questionText, type AskRequest } from "../core/run/process/ask.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import type { CallEnv } from "./tool-env.ts";
import { startedLine, startedTasks } from "../core/call/results.ts";

const NOTICE_LINES = 12;
const NOTICE_BYTES = 2048;

export function completionNotice(o: TaskOutcome): string {
  const head = `Background sub-agent finished: ${statusLines(o)}`;
  const out = o.result.output.trim();
  if (!out) return head;
  const t = truncateHeadTail(out, {
    maxBytes: NOTICE_BYTES,
    maxLines: NOTICE_LINES,
    hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text`,
  });
  return `${head}\n${t.text}`;
}

export function questionNotice(q: AskRequest): string {
  return `Background sub-agent ${q.label} (session: ${q.sessionId}) asks: ${questionText(q)}\nIt waits for an answer (up to subagents.askTimeout): answer with get_subagent_output {sessionId: "${q.sessionId}", steer: "<your answer>"}, or let it decide itself.`;
}

/** Starts the call without waiting for it: each end is announced to the model (each is mirrored into the session
 *  by the call env), and so is a question when no dialog asks it. Null once started, else the caps' refusal. */
export async function launchBackground(
  call: CallEnv,
  engine: Engine,
  prepared: PreparedCall,
  onEvent?: (e: CallEvent) => void,
): Promise<Refusal | null> {
  for (const t of prepared.tasks) call.session.backgroundStarted(t.sessionId);
  const running = await call.start(engine, prepared, {
    background: true,
    onEvent: (e) => {
      onEvent?.(e);
      if (e.type === "question" && !call.dialogs) call.notify(questionNotice(e.question));
      if (e.type !== "taskEnd") return;
      call.session.noteBackgroundSpend(e.outcome.sessionId, e.outcome.result.usage);
      if (call.session.announceEnd(e.outcome.sessionId)) call.notify(completionNotice(e.outcome));
    },
  });
  if (!("refusal" in running)) return null;
  for (const t of prepared.tasks) call.session.announceEnd(t.sessionId);
  return running.refusal;
}

/** delegate_to_subagents with background: true, once its tasks started (launchBackground). */
export function startedInBackground(tasks: PreparedCall["tasks"]) {
  const lines = tasks.map(startedLine);
  const text = `${lines.join("\n")}\nA notice arrives as each one ends; get_subagent_output returns an output by session id (wait: true blocks until it ends).`;
  return {
    content: [{ type: "text", text }],
    details: { background: true, sessions: tasks.map((t) => ({ name: t.name, sessionId: t.sessionId })) },
    structuredContent: startedTasks(tasks),
  };
}
