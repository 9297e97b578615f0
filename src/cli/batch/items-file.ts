// A batch's items file, read as a stream (a file of any size is never held whole): `.jsonl` (one JSON object a line;
// blank lines skipped) or `.csv` (a header row names the columns; quoted fields may hold commas and newlines, read by
// csv-parse). Each item comes with its line (JSONL) or record number (CSV): the id of an item that has none.
import * as fs from "node:fs";
import * as readline from "node:readline";
import { parse } from "csv-parse";
import type { RawItem } from "../../core/batch/record-items.ts";
import { UsageError } from "../errors.ts";

export type ItemsFormat = "jsonl" | "csv";

export function itemsFormat(file: string): ItemsFormat {
  if (/\.csv$/i.test(file)) return "csv";
  if (/\.(jsonl|ndjson|json)$/i.test(file)) return "jsonl";
  throw new UsageError(`batch: ${file}: the items file must be .jsonl (one JSON object a line) or .csv (a header row)`);
}

export function readItems(file: string, format: ItemsFormat = itemsFormat(file)): AsyncIterable<RawItem> {
  return format === "csv" ? csvItems(file) : jsonlItems(file);
}

async function* jsonlItems(file: string): AsyncIterable<RawItem> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (!text.trim()) continue;
    let values: unknown;
    try {
      values = JSON.parse(text);
    } catch (err) {
      lines.close();
      throw new UsageError(`batch: ${file} line ${line} is not JSON: ${(err as Error).message}`);
    }
    if (typeof values !== "object" || values === null || Array.isArray(values)) {
      lines.close();
      throw new UsageError(`batch: ${file} line ${line} is not a JSON object (each line is one item: {"id": …, …})`);
    }
    yield { values: values as Record<string, unknown>, line };
  }
}

async function* csvItems(file: string): AsyncIterable<RawItem> {
  const records = fs
    .createReadStream(file)
    .pipe(parse({ columns: true, info: true, bom: true, skip_empty_lines: true, trim: false }));
  try {
    for await (const r of records as AsyncIterable<{ record: Record<string, string>; info: { records: number } }>)
      yield { values: r.record, line: r.info.records };
  } catch (err) {
    throw new UsageError(`batch: ${file}: ${(err as Error).message}`);
  }
}
