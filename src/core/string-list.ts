// A list of names as people write them in front matter and settings: a YAML list of strings, or one
// comma-separated string. Null when the value is neither (each reader says so in its own words).
export function stringList(v: unknown): string[] | null {
  if (typeof v === "string") return v.split(",");
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : null;
}

/** Names as a message lists them: the first `max`, then how many more ("node_modules, .venv and 3 more"). */
export function listed(names: string[], max = 3): string {
  if (names.length <= max) return names.join(", ");
  return `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}
