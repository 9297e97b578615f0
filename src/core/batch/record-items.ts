// A job's items read from its file and recorded before any of them starts (docs/batch.md "Resuming"): each item's
// id, its rendered prompt and its key, a page at a time, so a file of any size is read once and never held.
import type { Refusal } from "../call/request.ts";
import type { BatchRecords, ItemEntry } from "../store/batch-records.ts";
import { inShard, itemKey, type JobSpec } from "./job.ts";
import { missingColumns, renderPrompt } from "./template.ts";

/** One item as the front read it: its fields, and where it stands in the file (its line, or CSV record). */
export type RawItem = { values: Record<string, unknown>; line: number };

const PAGE = 500;

/** An item's id: its `idColumn` (a string or a number), else its line. */
export function itemIdOf(item: RawItem, idColumn: string): string | null {
  const v = item.values[idColumn];
  if (v === undefined || v === null || v === "") return String(item.line);
  return typeof v === "string" || typeof v === "number" ? String(v) : null;
}

/**
 * Records every item of this shard in `pass`: how many, or why the job may not start (an id given twice, a template
 * naming a field the first item lacks, an id that is not text). `keyOf` names what besides the prompt an item's
 * result depends on (agent, model, schema).
 */
export async function recordItems(
  records: BatchRecords,
  jobId: string,
  pass: number,
  items: AsyncIterable<RawItem>,
  spec: Pick<JobSpec, "template" | "idColumn" | "shard">,
  keyOf: { agent: string; model: string; schema: unknown },
  where: string,
): Promise<{ count: number } | { refusal: Refusal }> {
  let page: ItemEntry[] = [];
  let count = 0;
  let first = true;
  const flush = (): Refusal | null => {
    const twice = records.record(jobId, pass, page);
    page = [];
    if (!twice.length) return null;
    // A number may be a line's: an item without an id is named by its line, and may meet an item whose id it is.
    const byLine = /^\d+$/.test(twice[0]) ? `; an item without "${spec.idColumn}" is named by its line number` : "";
    return {
      code: "INVALID_INPUT",
      message: `${where}: item id "${twice[0]}" appears more than once (ids name items; see --id${byLine})`,
    };
  };
  for await (const item of items) {
    if (first) {
      first = false;
      const missing = missingColumns(spec.template, item.values);
      if (missing.length)
        return {
          refusal: {
            code: "INVALID_INPUT",
            message: `${where}: the prompt uses {{${missing[0]}}}, which the first item (line ${item.line}) does not have; its fields: ${Object.keys(item.values).join(", ") || "none"}`,
          },
        };
    }
    const id = itemIdOf(item, spec.idColumn);
    if (id === null)
      return {
        refusal: {
          code: "INVALID_INPUT",
          message: `${where} line ${item.line}: the id field "${spec.idColumn}" must be text or a number`,
        },
      };
    if (!inShard(id, spec.shard)) continue;
    const prompt = renderPrompt(spec.template, item.values, id);
    page.push({ id, seq: item.line, prompt, key: await itemKey(prompt, keyOf.agent, keyOf.model, keyOf.schema) });
    count++;
    if (page.length >= PAGE) {
      const refusal = flush();
      if (refusal) return { refusal };
    }
  }
  // A file without items is a mistake (a truncated or regenerated file): resuming from it would drop every item the
  // job has, results included. Nothing is recorded.
  if (first)
    return {
      refusal: {
        code: "INVALID_INPUT",
        message: `${where} has no items (an empty file, or a CSV with only its header row): nothing to run, the job's records are kept`,
      },
    };
  const refusal = flush();
  return refusal ? { refusal } : { count };
}
