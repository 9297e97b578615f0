// How many terminal rows a tool row of ours may take in pi's terminal UI. pi keeps the conversation scrolled to its
// end, so a row taller than what is left above pi's own lines pushes its top — our `Sub-agents:` summary and the
// first windows — off the screen while the children run. The rows are read the way pi's terminal reads them for its
// components (`tui.terminal.rows`: the output's rows, else $LINES, else 24); tool renderers get no `tui`, so this
// reads the same source directly, on every render (a resize re-renders).

/** pi's own lines under a tool row while it runs, measured in pi 1.6.0: the row's bottom padding and the gap after
 * it (2), the editor (3: its borders and one input line), the footer (2: folder, tokens and model) and the status
 * line (1: `subagents N running`); plus one for an editor that grows to a second line. */
export const PI_CHROME_ROWS = 9;

/** The smallest budget we lay out for, however small the terminal: a summary and a few headers. */
const MIN_BUDGET = 4;

export function terminalRows(): number {
  return process.stdout.rows || Number(process.env.LINES) || 24;
}

/** Rows the call header and the result together may take. */
export function rowBudget(rows = terminalRows()): number {
  return Math.max(MIN_BUDGET, rows - PI_CHROME_ROWS);
}

/**
 * Lines the call header takes for `tasks` tasks: one per task (what it was asked) when expanded, or when they
 * leave the windows a summary, their headers and two lines each; else the single title line (names only).
 */
export function callLines(tasks: number, expanded: boolean, budget = rowBudget()): number {
  if (!tasks) return 1;
  if (expanded) return 1 + tasks;
  return 1 + tasks + 1 + 3 * tasks <= budget ? 1 + tasks : 1;
}
