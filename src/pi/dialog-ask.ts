// The pi extension's answerer for children's questions (docs/limits.md "Children that ask") when pi has a UI: a dialog in the parent pi
// that names the child ("[reviewer-2] Allow bash? rm -rf build"). Children asking at once queue: one dialog at a
// time, in the order asked. Esc (or a dialog closed by the question's signal) is "no answer". A confirm is shown
// as a Yes/No choice so that Esc can be told apart from "No".
import type { AskAnswer, Asker, AskRequest } from "../core/run/process/ask.ts";
import { sanitizeLine } from "../ui/text-width.ts";

export type DialogUI = {
  select(title: string, options: string[], opts?: { signal?: AbortSignal }): Promise<string | undefined>;
  input(title: string, placeholder?: string, opts?: { signal?: AbortSignal }): Promise<string | undefined>;
};

const YES = "Yes";
const NO = "No";
/** One queue per pi process: there is one screen, whichever tool call's children ask. */
let queue: Promise<unknown> = Promise.resolve();

export function dialogAsker(ui: DialogUI): Asker {
  return (q) => {
    const turn = queue.then(() => (q.signal.aborted ? ({ none: "ended" } as const) : askOne(ui, q)));
    queue = turn.catch(() => {});
    return turn;
  };
}

async function askOne(ui: DialogUI, q: AskRequest): Promise<AskAnswer> {
  const head = `[${sanitizeLine(q.label)}] ${sanitizeLine(q.title)}`;
  const title = q.message ? `${head} ${sanitizeLine(q.message)}` : head;
  const opts = { signal: q.signal };
  try {
    if (q.kind === "confirm") {
      const v = await ui.select(title, [YES, NO], opts);
      return v === undefined ? { none: q.signal.aborted ? "ended" : "dismissed" } : { value: v === YES };
    }
    const v = q.options?.length ? await ui.select(title, q.options, opts) : await ui.input(title, undefined, opts);
    if (v === undefined || (typeof v === "string" && !v.trim()))
      return { none: q.signal.aborted ? "ended" : "dismissed" };
    return { value: v };
  } catch {
    return { none: "nobody" };
  }
}
