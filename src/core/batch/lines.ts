// A finished item as one JSON line (`--out`, `batch export`, `batch merge`): the same fields everywhere.
import type { BatchItem, BatchRecords } from "../store/batch-records.ts";
import { tokensOf } from "../budget.ts";
import { emptyUsage, type Usage } from "../types.ts";

export type ItemLine = {
  id: string;
  status: BatchItem["status"];
  result?: string;
  data?: unknown;
  error?: string;
  errorCode?: string;
  attempts: number;
  sessionId?: string;
  usage: Usage;
  cost: number;
};

export function itemLine(item: BatchItem): ItemLine {
  return {
    id: item.id,
    status: item.status,
    ...(item.result !== undefined ? { result: item.result } : {}),
    ...(item.data !== undefined ? { data: item.data } : {}),
    ...(item.error !== undefined && item.status !== "completed" ? { error: item.error } : {}),
    ...(item.errorCode !== undefined && item.status !== "completed" ? { errorCode: item.errorCode } : {}),
    attempts: item.attempts,
    ...(item.sessionId ? { sessionId: item.sessionId } : {}),
    usage: item.usage ?? emptyUsage(),
    cost: item.cost,
  };
}

const PAGE = 500;

/** Every finished item of a job (`all`: every item), a page at a time, in file order. */
export function* finishedLines(records: BatchRecords, job: string, all = false): Generator<ItemLine> {
  for (let after = 0; ; ) {
    const page = records.page(job, after, PAGE, all ? undefined : ["completed", "failed"]);
    for (const item of page) yield itemLine(item);
    if (page.length < PAGE) return;
    after = page[page.length - 1].seq;
  }
}

export const isFinished = (status: string) => status === "completed" || status === "failed";

/** Of two lines for one id (shards, a re-run), the one to keep: a finished one over one that is not, a completed
 *  one over a failed one, else the later. */
export function betterLine(a: ItemLine, b: ItemLine): ItemLine {
  const rank = (l: ItemLine) => (l.status === "completed" ? 2 : isFinished(l.status) ? 1 : 0);
  return rank(b) >= rank(a) ? b : a;
}

/** The CSV columns of `batch export --csv`. */
export const CSV_COLUMNS = ["id", "status", "attempts", "result", "data", "error", "sessionId", "tokens", "cost"];

export function csvRow(l: ItemLine): string[] {
  return [
    l.id,
    l.status,
    String(l.attempts),
    l.result ?? "",
    l.data === undefined ? "" : JSON.stringify(l.data),
    l.error ?? "",
    l.sessionId ?? "",
    String(tokensOf(l.usage)),
    String(l.cost),
  ];
}
