// The owner side of children's questions without any child (core/run/process/ask.ts): what goes back over the control
// pipe for each kind of question, and the broker's policy (deny, nobody, timeout, abort) with a manual clock.
import { expect, test } from "bun:test";
import {
  answerLine,
  askBroker,
  type AskAnswer,
  type AskRequest,
  type Question,
} from "../../../../src/core/run/process/ask.ts";
import { manualClock } from "../../../support/manual-clock.ts";

const confirm: Question = { id: "q1", kind: "confirm", title: "Allow bash?", message: "rm -rf build" };
const select: Question = { id: "q2", kind: "select", title: "Which?", options: ["Alpha", "Beta"] };

test("answers become the child's values: confirm yes/no, a select's option (case-insensitive), none = a note", () => {
  expect(JSON.parse(answerLine(confirm, { value: "yes" }))).toEqual({ type: "answer", id: "q1", value: true });
  expect(JSON.parse(answerLine(confirm, { value: "nope" }))).toEqual({ type: "answer", id: "q1", value: false });
  expect(JSON.parse(answerLine(select, { value: "beta" }))).toEqual({ type: "answer", id: "q2", value: "Beta" });
  expect(JSON.parse(answerLine(select, { value: "Gamma" })).value).toBeUndefined();
  expect(JSON.parse(answerLine(select, { none: "nobody" })).note).toContain("no one can answer now");
});

test("broker: deny and nobody answer at once; a person's answer goes back; askTimeout ends a wait; abort closes the dialog", async () => {
  const { clock, advance } = manualClock();
  const sent: string[] = [];
  const send = (l: string) => (sent.push(l), true);
  const deny = askBroker({ mode: "deny", timeoutSec: 60, clock, sessionId: "s", label: "t" });
  deny.handle(confirm, send);
  expect(deny.warnings).toEqual([
    'unanswered question (questions are turned off (subagents.ask = deny); the child got "no"): Allow bash? rm -rf build',
  ]);
  const nobody = askBroker({ mode: "auto", timeoutSec: 60, clock, sessionId: "s", label: "t" });
  nobody.handle(select, send);
  expect(nobody.warnings[0]).toContain("no one can answer now");

  let seen: AskRequest | null = null;
  let answer: (a: AskAnswer) => void = () => {};
  const ac = new AbortController();
  const b = askBroker({
    mode: "auto",
    timeoutSec: 60,
    clock,
    sessionId: "s1",
    label: "reviewer-2",
    signal: ac.signal,
    asker: (q) => ((seen = q), new Promise((r) => (answer = r))),
  });
  b.handle(confirm, send);
  expect(seen!).toMatchObject({ label: "reviewer-2", sessionId: "s1", title: "Allow bash?" });
  expect(b.pending()).toBe(1);
  answer({ value: true });
  await Bun.sleep(0);
  expect(b.pending()).toBe(0);
  expect(JSON.parse(sent.at(-1)!)).toEqual({ type: "answer", id: "q1", value: true });
  expect(b.warnings).toEqual([]);

  b.handle({ ...confirm, id: "q3" }, send);
  advance(59_000);
  expect(b.pending()).toBe(1);
  advance(1_000);
  expect(b.pending()).toBe(0);
  expect(b.warnings).toEqual([
    'unanswered question (no answer came in time; the child got "no"): Allow bash? rm -rf build',
  ]);
  expect(seen!.signal.aborted).toBe(true); // the dialog of a timed-out question is closed

  // The child withdrew a question: its dialog closes, nothing is sent, it is recorded.
  b.handle({ ...confirm, id: "q5" }, send);
  const sentBefore = sent.length;
  b.close("q5");
  expect(seen!.signal.aborted).toBe(true);
  expect(sent.length).toBe(sentBefore);
  expect(b.warnings.at(-1)).toContain("the asking extension stopped waiting");

  b.handle({ ...confirm, id: "q4" }, send);
  const dialog = seen!.signal;
  ac.abort();
  expect(dialog.aborted).toBe(true);
  b.closeAll();
  expect(b.warnings.at(-1)).toContain("the run ended before an answer came");
});
