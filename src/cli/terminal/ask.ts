// The CLI's answerer for children's questions (docs/limits.md "Children that ask") when a person is at the terminal: one question at a
// time (the others queue), asked below the live frame, which pauses meanwhile. An empty answer to a confirm is
// "no"; to anything else it is "no answer". Ctrl-C while asking stops the run as everywhere else.
import * as readline from "node:readline";
import type { AskAnswer, Asker, AskRequest } from "../../core/run/process/ask.ts";
import { sanitizeLine } from "../../ui/text-width.ts";

export type Pausable = { pause(): void; resume(): void };

/** The asker, or undefined when nobody is at the terminal (stdin or stdout not a TTY, --json, --quiet). */
export function terminalAsker(io: {
  tty: boolean;
  frame?: Pausable | null;
  out?: NodeJS.WriteStream;
}): Asker | undefined {
  if (!io.tty || !process.stdin.isTTY) return undefined;
  const out = io.out ?? process.stdout;
  let queue: Promise<unknown> = Promise.resolve();
  return (q) => {
    const turn = queue.then(() => (q.signal.aborted ? { none: "ended" as const } : askOne(q, out, io.frame ?? null)));
    queue = turn.catch(() => {});
    return turn;
  };
}

function promptOf(q: AskRequest): { head: string[]; prompt: string } {
  const head = [`[${sanitizeLine(q.label)}] ${sanitizeLine(q.title)}`];
  if (q.message) head.push(`  ${sanitizeLine(q.message)}`);
  for (const [i, o] of (q.options ?? []).entries()) head.push(`  ${i + 1}) ${sanitizeLine(o)}`);
  const prompt =
    q.kind === "confirm"
      ? "Allow? [y/N] "
      : q.options?.length
        ? "Choose (number or text, empty = no answer): "
        : "Answer (empty = no answer): ";
  return { head, prompt };
}

function interpret(q: AskRequest, raw: string): AskAnswer {
  const text = raw.trim();
  if (q.kind === "confirm") return { value: /^(y|yes)$/i.test(text) };
  if (!text) return { none: "dismissed" };
  const n = Number(text);
  if (q.options?.length && Number.isInteger(n) && n >= 1 && n <= q.options.length) return { value: q.options[n - 1] };
  return { value: text };
}

function askOne(q: AskRequest, out: NodeJS.WriteStream, frame: Pausable | null): Promise<AskAnswer> {
  frame?.pause();
  const { head, prompt } = promptOf(q);
  out.write(`${head.join("\n")}\n`);
  const rl = readline.createInterface({ input: process.stdin, output: out, terminal: true });
  // readline takes Ctrl-C for itself: hand it on, so the run stops as it would without a question open.
  rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"));
  return new Promise<AskAnswer>((resolve) => {
    let done = false;
    const finish = (a: AskAnswer) => {
      if (done) return;
      done = true;
      q.signal.removeEventListener("abort", onAbort);
      rl.close();
      const shown =
        "none" in a
          ? a.none === "ended"
            ? "(closed: answered elsewhere, timed out or stopped)"
            : "(no answer)"
          : `→ ${typeof a.value === "boolean" ? (a.value ? "yes" : "no") : sanitizeLine(a.value)}`;
      out.write(`${shown}\n`);
      frame?.resume();
      resolve(a);
    };
    // Answered elsewhere, timed out, or the run stopped: the question is closed here too.
    const onAbort = () => finish({ none: "ended" });
    q.signal.addEventListener("abort", onAbort, { once: true });
    rl.question(prompt, (line) => finish(interpret(q, line)));
  });
}

/** Consent asked of the person at this terminal (a project workflow: core/call/workflow.ts): y/N on stderr, or
 *  nobody when stdin or stderr is no terminal or the output is JSON. */
export function terminalConsent(json: boolean): {
  hasUI: boolean;
  ui?: { confirm(title: string, message: string): Promise<boolean> };
} {
  const ask = json || !process.stderr.isTTY ? undefined : terminalAsker({ tty: true, out: process.stderr });
  if (!ask) return { hasUI: false };
  const confirm = async (title: string, message: string) => {
    const a = await ask({
      id: "consent",
      kind: "confirm",
      title,
      message,
      sessionId: "",
      label: "subagents",
      signal: new AbortController().signal,
    });
    return "value" in a && a.value === true;
  };
  return { hasUI: true, ui: { confirm } };
}
