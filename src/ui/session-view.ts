// `subagents session ID` / `output ID` for people: a header (id, name, agent, status, cwd, model, duration,
// cost) and a transcript whose parts say what they are — the prompt labelled, tool calls and results
// indented under the turn, failed results marked ✗. The tools' texts (docs/pi-extension.md) stay in core/store/transcript.ts.
import type { RunRecord, SessionRecord } from "../core/store/store-types.ts";
import type { StoredMessage } from "../core/types.ts";
import { sanitizeLine } from "./text-width.ts";
import { statusIcon, type Style } from "./windows.ts";

const RESULT_LINES = 6;

const seconds = (run: RunRecord) =>
  run.endedAt
    ? `${((run.endedAt - run.startedAt) / 1000).toFixed(1)}s`
    : run.status === "queued"
      ? "queued"
      : "running";
const cost = (runs: RunRecord[]) => runs.reduce((n, r) => n + (r.usage?.cost ?? 0), 0);

export function sessionHeader(record: SessionRecord, style: Style): string[] {
  const last = record.runs.at(-1);
  const total = cost(record.runs);
  const status =
    last?.errorCode === "SUBAGENT_CANCELLED" ? "cancelled" : last?.errorCode === "SKIPPED" ? "skipped" : record.status;
  const rows: [string, string][] = [
    ["Session", `${record.id}  ${style.bold(sanitizeLine(record.name))}`],
    [
      "Status",
      `${statusIcon(status, style)} ${status}${last?.error ? ` — ${sanitizeLine(last.error.split("\n")[0])}` : ""}`,
    ],
    ["Agent", record.agent],
    ["Model", last?.model ?? "-"],
    ...(last?.pi ? [["Pi", last.pi] as [string, string]] : []),
    ["Cwd", record.cwd],
    [
      "Runs",
      [
        `${record.runs.length}`,
        ...(last ? [`last took ${seconds(last)}`] : []),
        ...(total > 0 ? [`$${total.toFixed(4)}`] : []),
      ].join(" · "),
    ],
  ];
  const iso = last?.isolation;
  if (iso)
    rows.push([
      "Branch",
      iso.branch
        ? `${iso.branch} · ${iso.diffstat} (subagents apply ${record.id})`
        : iso.worktree
          ? `none yet: its worktree ${iso.worktree} is not finished (the run goes on, or prune finishes it)`
          : "none (isolated, changed nothing)",
    ]);
  return rows.map(([k, v]) => `${style.dim(k.padEnd(8))}${v}`);
}

function messageLines(messages: StoredMessage[], style: Style): string[] {
  const out: string[] = [];
  let first = true;
  for (const m of messages) {
    if (m.role === "user") {
      out.push(style.bold(first ? "Prompt:" : "User:"), ...m.text.split("\n").map((l) => `  ${sanitizeLine(l)}`));
      first = false;
    } else if (m.role === "assistant") {
      if (m.text.trim()) out.push(style.bold("Assistant:"), ...m.text.split("\n").map((l) => `  ${sanitizeLine(l)}`));
      for (const c of m.toolCalls) out.push(style.dim(`  → ${c.name} ${sanitizeLine(c.args)}`));
      if (m.error) out.push(style.red(`  ✗ ${sanitizeLine(m.error)}`));
    } else {
      const lines = m.text.split("\n");
      const shown = lines.slice(0, RESULT_LINES).map((l) => `      ${sanitizeLine(l)}`);
      if (lines.length > RESULT_LINES) shown.push(`      … ${lines.length - RESULT_LINES} more lines`);
      out.push(
        m.isError ? style.red(`    ✗ ${m.name} failed:`) : style.dim(`    ← ${m.name}:`),
        ...(m.isError ? shown.map(style.red) : shown.map(style.dim)),
      );
    }
  }
  return out;
}

export function transcriptView(
  record: SessionRecord,
  messagesByRun: Map<number, StoredMessage[]>,
  style: Style,
): string[] {
  const out = sessionHeader(record, style);
  record.runs.forEach((run, i) => {
    out.push("", style.dim(`── Run ${i + 1}/${record.runs.length} · ${run.status} · ${seconds(run)} ──`));
    out.push(...messageLines(messagesByRun.get(run.id) ?? [], style));
    // The error's first line, then what it quotes (a setup's or a gate's last lines of output), one line each.
    if (run.status === "error" && run.error) {
      const [first, ...quoted] = run.error.split("\n");
      out.push(style.red(`✗ ${sanitizeLine(first)}`), ...quoted.map((l) => style.dim(`  │ ${sanitizeLine(l)}`)));
    }
    // The run's warnings (a question nobody answered, a model substituted): part of what happened in it.
    for (const w of run.warnings ?? []) out.push(style.yellow(`⚠ ${sanitizeLine(w)}`));
  });
  return out;
}
