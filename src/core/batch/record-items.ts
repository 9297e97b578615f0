// A job's items read from its file and recorded before any of them starts (docs/batch.md "Resuming"): each item's
// id, its rendered prompt and its key, a page at a time, so a file of any size is read once and never held.
import type { Refusal } from "../call/request.ts";
import type { BatchRecords, ItemEntry } from "../store/batch-records.ts";
import { fnv1a, inShard, itemKey, type JobSpec } from "./job.ts";
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

const invalid = (message: string): { refusal: Refusal } => ({ refusal: { code: "INVALID_INPUT", message } });

/** The refusal of an id given twice. A number may be a line's: an item without an id is named by its line, and may
 *  meet an item whose id it is. */
const twiceRefusal = (where: string, id: string, idColumn: string) =>
  invalid(
    `${where}: item id "${id}" appears more than once (ids name items; see --id${/^\d+$/.test(id) ? `; an item without "${idColumn}" is named by its line number` : ""})`,
  );

/**
 * Every item of the file in order, with its id, once the file is known to be one a job can run: its first item has
 * every field the template names, each id is text or a number, and there is at least one item. Else the refusal.
 * `take` gets each item (its own refusal ends the walk).
 */
async function eachItem(
  items: AsyncIterable<RawItem>,
  spec: Pick<JobSpec, "template" | "idColumn">,
  where: string,
  take: (id: string, item: RawItem) => Promise<{ refusal: Refusal } | null> | ({ refusal: Refusal } | null),
): Promise<{ refusal: Refusal } | null> {
  let first = true;
  for await (const item of items) {
    if (first) {
      first = false;
      const missing = missingColumns(spec.template, item.values);
      if (missing.length)
        return invalid(
          `${where}: the prompt uses {{${missing[0]}}}, which the first item (line ${item.line}) does not have; its fields: ${Object.keys(item.values).join(", ") || "none"}`,
        );
    }
    const id = itemIdOf(item, spec.idColumn);
    if (id === null)
      return invalid(`${where} line ${item.line}: the id field "${spec.idColumn}" must be text or a number`);
    const refused = await take(id, item);
    if (refused) return refused;
  }
  // A file without items is a mistake (a truncated or regenerated file): resuming from it would drop every item the
  // job has, results included.
  if (first)
    return invalid(
      `${where} has no items (an empty file, or a CSV with only its header row): nothing to run, the job's records are kept`,
    );
  return null;
}

/**
 * Records every item of this shard in `pass`: how many, or why the job may not start (an id given twice, a template
 * naming a field the first item lacks, an id that is not text, no items). `keyOf` names what besides the prompt an
 * item's result depends on (agent, model, schema).
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
  const flush = () => {
    const twice = records.record(jobId, pass, page);
    page = [];
    return twice.length ? twiceRefusal(where, twice[0], spec.idColumn) : null;
  };
  const refused = await eachItem(items, spec, where, async (id, item) => {
    if (!inShard(id, spec.shard)) return null;
    const prompt = renderPrompt(spec.template, item.values, id);
    page.push({ id, seq: item.line, prompt, key: await itemKey(prompt, keyOf.agent, keyOf.model, keyOf.schema) });
    count++;
    return page.length >= PAGE ? flush() : null;
  });
  if (refused) return refused;
  const last = flush();
  return last ?? { count };
}

/**
 * What a job submitted as `shards` shards will run, checked here before any node starts (the checks each shard's
 * run makes, and ids given twice across shards): how many items each shard gets. Keeps the ids while it reads.
 */
export async function countShards(
  items: AsyncIterable<RawItem>,
  spec: Pick<JobSpec, "template" | "idColumn">,
  shards: number,
  where: string,
): Promise<{ perShard: number[] } | { refusal: Refusal }> {
  const perShard = Array.from({ length: shards }, () => 0);
  const seen = new Set<string>();
  const refused = await eachItem(items, spec, where, (id) => {
    if (seen.has(id)) return twiceRefusal(where, id, spec.idColumn);
    seen.add(id);
    perShard[fnv1a(id) % shards]++;
    return null;
  });
  return refused ?? { perShard };
}
