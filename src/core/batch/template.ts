// A batch's prompt template: `{{column}}` takes the item's value (docs/batch.md). Strings go in as they are, other
// values as JSON; `{{id}}` is the item's id even when the item has no such field.
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** The columns a template names, in order, once each. */
export function templateColumns(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

const valueText = (v: unknown): string =>
  v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);

/** The item's prompt. A column the item lacks becomes empty text (missingColumns says which, to refuse early). */
export function renderPrompt(template: string, item: Record<string, unknown>, id: string): string {
  return template.replace(PLACEHOLDER, (_whole, column: string) =>
    column === "id" && !(column in item) ? id : valueText(item[column]),
  );
}

/** The template's columns this item does not have (`id` it always has). */
export function missingColumns(template: string, item: Record<string, unknown>): string[] {
  return templateColumns(template).filter((c) => c !== "id" && !(c in item));
}
