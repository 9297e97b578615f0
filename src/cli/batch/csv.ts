// One CSV line (RFC 4180): a field with a comma, a quote or a line break is quoted, its quotes doubled.
export const csvLine = (fields: readonly string[]) =>
  fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(",");
