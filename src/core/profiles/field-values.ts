// Reading one front-matter value by type — a string, a flag, a list, extraArgs — with the spellings of one field
// reconciled; what a field means is profile-fields.ts's.
import { stringList } from "../string-list.ts";
import type { Fields } from "./front-matter.ts";

/** Thrown only inside this module; parseProfile turns it into `{ error }`. */
export class Invalid extends Error {}

/** The field is set (YAML null counts as not set). */
export const present = (fm: Fields, key: string) => fm[key] !== undefined && fm[key] !== null;

/** The one alias of a field that is set; setting two spellings of the same field is ambiguous. */
export function pick(fm: Fields, keys: string[]): string | undefined {
  const set = keys.filter((k) => present(fm, k));
  if (set.length > 1)
    throw new Invalid(`fields ${set.map((k) => `"${k}"`).join(" and ")} mean the same thing: use one`);
  return set[0];
}

export function str(fm: Fields, key: string | undefined): string | undefined {
  if (key === undefined || !present(fm, key)) return undefined;
  const v = fm[key];
  if (typeof v === "number") return String(v);
  if (typeof v !== "string") throw new Invalid(`field "${key}" must be a string (got ${kind(v)})`);
  return v;
}

export function bool(fm: Fields, key: string): boolean | undefined {
  if (!present(fm, key)) return undefined;
  const v = fm[key];
  if (typeof v !== "boolean") throw new Invalid(`field "${key}" must be true or false (got ${kind(v)})`);
  return v;
}

/** A YAML list of strings or a comma-separated string. */
export function list(fm: Fields, key: string | undefined): string[] | undefined {
  if (key === undefined || !present(fm, key)) return undefined;
  const v = fm[key];
  const items = stringList(v);
  if (!items)
    throw new Invalid(`field "${key}" must be a list of strings or a comma-separated string (got ${kind(v)})`);
  return items.map((s) => s.trim()).filter(Boolean);
}

/** extraArgs: a YAML list (numbers allowed), or one string split on whitespace — commas are common inside argument values. */
export function argList(fm: Fields): string[] | undefined {
  if (!present(fm, "extraArgs")) return undefined;
  const v = fm.extraArgs;
  if (typeof v === "string") return v.split(/\s+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number")) return v.map(String);
  throw new Invalid(`field "extraArgs" must be a list of strings (got ${kind(v)})`);
}

export function kind(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${JSON.stringify(v)}`;
}
