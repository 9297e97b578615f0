// `background: true` on delegate_to_subagents and subagent: the tasks start under this pi session (its owner
// endpoint, so `subagents steer/cancel/wait/attach` reach them too), the tool returns at once with the session
// ids, and each task's end comes back to the model as a short notice — unless the model is already waiting for
// it (get_subagent_output with wait), which returns the output itself. The pi session owns them: its shutdown
// stops them and records them as interrupted.
import { runScheduled } from "../core/run/scheduler.ts";
import { statusLine } from "../core/run/outcome-text.ts";
import type { Engine, TaskOutcome } from "../core/run/task.ts";
import type { CallTaskInput } from "../core/call/request.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import type { CallEnv } from "./tool-env.ts";
import { questionText, type AskRequest } from "../core/run/process/ask.ts";
import { startedTasks } from "../core/call/results.ts";

const NOTICE_LINES = 12;
const NOTICE_BYTES = 2048;

export function completionNotice(o: TaskOutcome): string {
  const head = `Background sub-agent finished: ${statusLine(o)}`;
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

/** Starts the tasks without waiting for them; each end is mirrored into the session and announced. */
export async function launchBackground(
  call: CallEnv,
  engine: Engine,
  inputs: CallTaskInput[],
  maxCost?: number,
): Promise<void> {
  const bg = await call.background(inputs);
  // A question from a background child waits for an answer (get_subagent_output steer, `subagents answer`); the
  // model hears of it as a notice.
  const remoteAsk = { notify: (q: AskRequest) => bg.notify(questionNotice(q)) };
  const batch = runScheduled(
    inputs,
    engine.settings.concurrency,
    (input, hooks) => call.run(engine, input, { ...hooks, remoteAsk }),
    {
      rateLimitWaitSec: engine.settings.rateLimitWait,
      maxMessages: engine.settings.maxMessages,
      signal: bg.signal,
      maxCost,
      onTaskStart: (i) => call.persistStart(inputs[i]),
      onTaskEnd: (i, outcome) => {
        call.persist(outcome, inputs[i]);
        call.session.noteBackgroundSpend(outcome.sessionId, outcome.result.usage);
        if (!call.session.isAwaited(outcome.sessionId)) bg.notify(completionNotice(outcome));
      },
    },
  ).finally(bg.done);
  bg.track(batch);
}

export async function startInBackground(call: CallEnv, engine: Engine, inputs: CallTaskInput[], maxCost?: number) {
  await launchBackground(call, engine, inputs, maxCost);
  const lines = inputs.map((t) => `● ${t.name}: started in the background (session: ${t.sessionId})`);
  const text = `${lines.join("\n")}\nA notice arrives as each one ends; get_subagent_output returns an output by session id (wait: true blocks until it ends).`;
  return {
    content: [{ type: "text", text }],
    details: { background: true, sessions: inputs.map((t) => ({ name: t.name, sessionId: t.sessionId })) },
    structuredContent: startedTasks(inputs.map((t) => ({ name: t.name, sessionId: t.sessionId, agent: t.profile }))),
  };
}
