// `background: true` on delegate_to_subagents: the tasks start under this pi session (its owner endpoint, so
// `subagents steer/cancel/wait` reach them too), the tool returns at once with the session ids, and each
// task's end comes back to the model as a short notice. The pi session owns them: its shutdown stops them.
import { runScheduled } from "../core/run/scheduler.ts";
import { statusLine } from "../core/run/outcome-text.ts";
import type { Engine, TaskInput, TaskOutcome } from "../core/run/task.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import type { CallEnv } from "./tool-env.ts";

const NOTICE_LINES = 12;
const NOTICE_BYTES = 2048;

export function completionNotice(o: TaskOutcome): string {
  const head = `Background sub-agent finished: ${statusLine(o)}`;
  const out = o.result.output.trim();
  if (!out) return head;
  const t = truncateHeadTail(out, { maxBytes: NOTICE_BYTES, maxLines: NOTICE_LINES, hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text` });
  return `${head}\n${t.text}`;
}

export async function startInBackground(call: CallEnv, engine: Engine, inputs: TaskInput[], maxCost?: number) {
  const bg = await call.background(inputs.map((t) => t.sessionId!));
  void runScheduled(inputs, engine.settings.concurrency, (input, hooks) => call.run(engine, input, hooks), {
    signal: bg.signal,
    maxCost,
    onTaskStart: (i) => call.persistStart(inputs[i]),
    onTaskEnd: (i, outcome) => {
      call.persist(outcome, inputs[i]);
      bg.notify(completionNotice(outcome));
    },
  }).finally(bg.done);
  const lines = inputs.map((t) => `● ${t.name}: started in the background (session: ${t.sessionId})`);
  const text = `${lines.join("\n")}\nA notice arrives as each one ends; get_subagent_output returns an output by session id.`;
  return { content: [{ type: "text", text }], details: { background: true, sessions: inputs.map((t) => ({ name: t.name, sessionId: t.sessionId })) } };
}
