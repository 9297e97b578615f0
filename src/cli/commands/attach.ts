// `subagents attach ID`: the live window of a running session — background, or foreground in another terminal —
// drawn like `delegate` draws it, from its owner's `watch` stream. Ctrl-C detaches and leaves the run alone; when
// the run ends, its recorded end and output are printed as `wait` prints them.
import { watch } from "../../control/client.ts";
import type { WatchMessage } from "../../control/watch.ts";
import { finalFrame, startLine } from "../../ui/summary.ts";
import { sanitizeLine } from "../../ui/text-width.ts";
import type { WindowView } from "../../ui/windows.ts";
import { parse } from "../flags/args.ts";
import { ATTACH_FLAGS } from "../flags/command-flags.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { endedViews, outcomeOf } from "../../ui/recorded.ts";
import { printEnded } from "../terminal/ended-output.ts";
import { controlContext, type ControlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";
import { LiveDisplay } from "../terminal/live.ts";
import { colorStyle, streamWidth } from "../terminal/style.ts";

export const ATTACH_HELP = `Usage: subagents attach ID [--no-color]

Shows the live window of a running session — started with --background, or running in the foreground in
another terminal — as 'delegate' draws it: status, tools, time, the last lines of its work. When the run
ends, prints its end and output like 'subagents wait'. A session that already ended is printed at once.

Ctrl-C detaches: the session keeps running (see it again with 'attach', collect it with 'wait').
When standard output is not a terminal, prints one line per event instead of the window.

${optionsBlock(ATTACH_FLAGS)}

Exit codes: 0 completed (or detached); 1 failed, cancelled or interrupted; 2 usage or unknown session.`;

const POLL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when the user presses Ctrl-C (or the terminal goes away): attach then detaches. */
function detachSignal(): { promise: Promise<"detached">; dispose(): void } {
  let fire: () => void = () => {};
  const promise = new Promise<"detached">((resolve) => (fire = () => resolve("detached")));
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, fire);
  return {
    promise,
    dispose: () => {
      for (const s of signals) process.off(s, fire);
    },
  };
}

/** Follows the session's owner until the run ends ("ended") or the user detaches. */
async function follow(
  c: ControlContext,
  id: string,
  show: (m: WatchMessage) => void,
  detach: Promise<"detached">,
): Promise<"ended" | "detached"> {
  for (;;) {
    const state = c.state(id);
    if (state.kind !== "active") return "ended";
    // A supervisor that was just started has not opened its socket yet.
    if (!state.owner?.socket) {
      if ((await Promise.race([detach, sleep(POLL_MS)])) === "detached") return "detached";
      continue;
    }
    const w = watch(state.owner.socket, id, show);
    const r = await Promise.race([detach, w.done]);
    if (r === "detached") {
      w.close();
      return "detached";
    }
    if (r.ended) return "ended";
    if (r.refused) throw new Error(`cannot attach to ${id}: ${r.refused}`);
    // The owner went away: the loop asks the store and the registry where the session stands now.
    if ((await Promise.race([detach, sleep(POLL_MS)])) === "detached") return "detached";
  }
}

export async function cmdAttach(argv: string[]): Promise<number> {
  const { values, positionals } = parse("attach", argv, parseOptions(ATTACH_FLAGS));
  if (values.help) {
    console.log(ATTACH_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError("attach: expected one session ID. See 'subagents attach --help'.");
  const [id] = positionals;
  const c = controlContext();
  if (c.state(id).kind === "unknown") throw new UsageError(`attach: no session "${id}".`);
  const out = process.stdout;
  const tty = !!out.isTTY;
  const style = colorStyle(out, values["no-color"]);
  const width = () => streamWidth(out);
  const maxLines = c.ctx.settings.maxLinesPerWindow;

  let view: WindowView | null = null;
  const queuedView = (): WindowView => {
    const s = c.store.getSession(id);
    return {
      name: s?.name || id,
      sessionId: id,
      profile: s?.agent,
      status: "queued",
      toolCount: 0,
      elapsedMs: 0,
      timeoutSec: 0,
      cost: 0,
      lines: [],
    };
  };
  const live = tty ? new LiveDisplay(() => (view ? [view] : []), { maxLines, style }) : null;
  let announced = false;
  const show = (m: WatchMessage) => {
    if (m.type === "view") view = m.view;
    else if (m.type === "queued") view = queuedView();
    if (live || !view) return;
    // Not a terminal: a start line once, then the events as they come.
    if (!announced && m.type !== "line") {
      announced = true;
      console.log(
        view.status === "queued"
          ? `○ ${view.name}: queued (session: ${id})`
          : startLine(view.name, view.profile, id, style),
      );
      // What it did before we came: its window's lines (the events from here on follow one per line).
      for (const l of view.lines) console.log(`  ${sanitizeLine(l)}`);
    }
    if (m.type === "line") console.log(`  ${sanitizeLine(m.text)}`);
  };

  const detach = detachSignal();
  live?.start();
  live?.setNote("Ctrl-C detaches; the run goes on");
  let how: "ended" | "detached";
  try {
    how = c.state(id).kind === "active" ? await follow(c, id, show, detach.promise) : "ended";
  } catch (err) {
    detach.dispose();
    live?.stop();
    throw err;
  }
  // Detached: the handlers stay until exit — a second signal (timeout(1) also signals its process group) must
  // not kill us halfway through saying so.
  if (how === "ended") detach.dispose();
  if (how === "detached") {
    live?.stop();
    process.stderr.write(
      `Detached from ${id}; it keeps running. Again: subagents attach ${id} · collect: subagents wait ${id}\n`,
    );
    return EXIT.ok;
  }
  // The owner lets go of a task right after recording its end; a dead owner's run is recovered as interrupted.
  while (c.state(id).kind === "active") await sleep(POLL_MS);
  const outcome = outcomeOf(id, c.store.getSession(id), false);
  live?.stop(finalFrame(endedViews([outcome]), width(), style));
  printEnded([outcome], style, width(), { endLines: !live });
  return outcome.result.status === "completed" ? EXIT.ok : EXIT.taskFailed;
}
