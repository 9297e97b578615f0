// The README's picture (docs/windows.svg) from a real run: `dist/subagents demo` in a detached tmux session of
// 100×30, captured with its colours once one task is done while the others still run, turned into SVG with
// ansi-to-svg. Run: `npm run build && npm run screenshot` (needs tmux). Rerun it whenever the windows change.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ansiToSVG from "ansi-to-svg";

const REPO = join(import.meta.dir, "..");
const BIN = join(REPO, "dist", "subagents");
const OUT = join(REPO, "docs", "windows.svg");
const [COLS, ROWS] = [100, 30];
// A tmux server of our own (its own socket), so nothing of the user's tmux is touched.
const SOCKET = `subagents-shot-${process.pid}`;
const SESSION = "demo";

function tmux(...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

/** Mid-run: at least one window done (✓ or ✗) while at least one still runs. */
function midRun(plain: string): boolean {
  const m = /Sub-agents: (\d+) running, (\d+) done/.exec(plain);
  return !!m && Number(m[1]) > 0 && Number(m[2]) > 0;
}

async function capture(): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "subagents-shot-"));
  // A clean agent dir and database: the picture shows the demo, not this machine's settings or sessions.
  const env = [
    `PI_CODING_AGENT_DIR=${join(home, "agent")}`,
    `SUBAGENTS_DB=${join(home, "subagents.db")}`,
    `HOME=${home}`,
  ];
  // tmux runs one shell command; the pane stays open after the demo ends so the last frame can still be read.
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = ["env", "-u", "NO_COLOR", ...env, "TERM=xterm-256color", BIN, "demo"].map(quote).join(" ");
  const started = tmux(
    "new-session",
    "-d",
    "-s",
    SESSION,
    "-x",
    String(COLS),
    "-y",
    String(ROWS),
    `${command}; sleep 600`,
  );
  if (!started.ok) throw new Error(`tmux could not start the demo: ${started.out}`);
  try {
    const deadline = Date.now() + 120_000;
    let last = "";
    while (Date.now() < deadline) {
      last = tmux("capture-pane", "-p", "-t", SESSION).out;
      if (midRun(last)) return tmux("capture-pane", "-p", "-e", "-t", SESSION).out;
      await Bun.sleep(100);
    }
    throw new Error(`the demo never showed a finished task beside running ones within 120 s; last screen:\n${last}`);
  } finally {
    tmux("kill-server");
    rmSync(home, { recursive: true, force: true });
  }
}

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
if (spawnSync("tmux", ["-V"]).status !== 0) throw new Error("tmux is not installed (apt-get install tmux)");
const screen = (await capture()).replace(/\s+$/, "");
const svg = ansiToSVG(`${screen}\n`, {
  scale: 1,
  fontFamily: "DejaVu Sans Mono, Menlo, Consolas, monospace",
  fontSize: 14,
  lineHeight: 18,
  paddingTop: 12,
  paddingLeft: 14,
  paddingBottom: 12,
  paddingRight: 14,
  colors: { backgroundColor: "#1e1e2e", foregroundColor: "#d4d4d4", gray: "#8a8a8a" },
});
writeFileSync(OUT, svg);
console.log(`wrote ${OUT} (${screen.split("\n").length} lines)`);
