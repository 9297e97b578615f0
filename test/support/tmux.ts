// Drives the real compiled binary in a tmux pane of a given size: every test gets its own tmux server
// (`tmux -L name`), so tests never see each other's panes, and the server is killed when the test ends.
import { execFileSync, spawnSync } from "node:child_process";
import { cannotRun } from "./engines.ts";

/** Whether the terminal tests can run. Without tmux they are skipped, except in CI, where the files that need it
 *  fail at once, naming it (engines.ts cannotRun). */
export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
if (!hasTmux) cannotRun("the terminal tests (tmux)", "tmux is not installed (apt-get install tmux)");

let serial = 0;

export type Pane = {
  /** The visible screen, trailing blank lines dropped. */
  screen(): string;
  /** Screen plus scrollback. */
  history(): string;
  cursorVisible(): boolean;
  keys(...keys: string[]): void;
  resize(cols: number, rows: number): void;
  /** Polls the screen until `test` holds (or fails after `ms`), calling `each` on every capture on the way. */
  waitFor(test: (screen: string) => boolean, ms: number, each?: (screen: string) => void): Promise<string>;
  close(): void;
};

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Runs `argv` in `cwd` in a fresh pane; afterwards the pane shows `EXIT=<code>` and stays open. */
export function openPane(
  argv: string[],
  o: { cols: number; rows: number; cwd: string; env: Record<string, string>; clear?: boolean },
): Pane {
  const socket = `subagents-test-${process.pid}-${++serial}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const env = Object.entries({ ...o.env, TERM: "xterm-256color" }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const shell = `cd ${quote(o.cwd)} && ${o.clear ? "clear && " : ""}${argv.map(quote).join(" ")}; echo EXIT=$?; sleep 120`;
  tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", String(o.cols), "-y", String(o.rows), ...env, shell);
  // A late Ctrl-C may end the shell after the command exited: the pane (and its last screen) stays.
  tmux("set-option", "-t", "t", "remain-on-exit", "on");
  const trim = (s: string) => s.replace(/\s+$/, "");
  const pane: Pane = {
    screen: () => trim(tmux("capture-pane", "-p", "-t", "t")),
    history: () => trim(tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "t")),
    cursorVisible: () => tmux("display", "-p", "-t", "t", "#{cursor_flag}").trim() === "1",
    keys: (...keys) => void tmux("send-keys", "-t", "t", ...keys),
    resize: (cols, rows) => void tmux("resize-window", "-t", "t", "-x", String(cols), "-y", String(rows)),
    waitFor: async (test, ms, each) => {
      const end = Date.now() + ms;
      for (;;) {
        const s = pane.screen();
        each?.(s);
        if (test(s)) return s;
        if (Date.now() > end) throw new Error(`timed out after ${ms} ms; the screen:\n${s}`);
        await Bun.sleep(40);
      }
    },
    close: () => void spawnSync("tmux", ["-L", socket, "kill-server"]),
  };
  return pane;
}
