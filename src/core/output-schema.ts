// Structured results (docs/composing.md "Structured results"): with `outputSchema`, the child's `subagent_finalize` gets a `data` argument of
// that JSON Schema, so pi's own tool-argument validation sends a mismatch back to the child. Here: the check that
// a schema is usable at all, before anything starts (pi would otherwise fail the child's first finalize call
// with a compile error the model cannot fix).

/** Schemas travel to the child in its environment: keep them far below the OS's per-variable limit. */
export const MAX_SCHEMA_CHARS = 64 * 1024;

const TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function problemAt(s: unknown, at: string, depth: number): string | null {
  if (typeof s === "boolean") return null;
  if (!isObj(s)) return `${at} must be a JSON Schema object`;
  if (depth > 32) return `${at} is nested too deeply`;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const bad = types.find((t) => typeof t !== "string" || !TYPES.has(t));
    if (bad !== undefined || !types.length)
      return `${at}.type must be one of ${[...TYPES].join(", ")} (got ${JSON.stringify(bad ?? s.type)})`;
  }
  if (s.properties !== undefined) {
    if (!isObj(s.properties)) return `${at}.properties must be an object of schemas`;
    for (const [k, v] of Object.entries(s.properties)) {
      const p = problemAt(v, `${at}.properties.${k}`, depth + 1);
      if (p) return p;
    }
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string")))
    return `${at}.required must be a list of property names`;
  if (s.enum !== undefined && !Array.isArray(s.enum)) return `${at}.enum must be a list`;
  for (const key of ["items", "additionalProperties", "not"]) {
    if (s[key] === undefined) continue;
    const list = key === "items" && Array.isArray(s[key]) ? (s[key] as unknown[]) : [s[key]];
    for (const [i, v] of list.entries()) {
      const p = problemAt(v, `${at}.${key}${list.length > 1 ? `[${i}]` : ""}`, depth + 1);
      if (p) return p;
    }
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (s[key] === undefined) continue;
    if (!Array.isArray(s[key]) || !(s[key] as unknown[]).length)
      return `${at}.${key} must be a non-empty list of schemas`;
    for (const [i, v] of (s[key] as unknown[]).entries()) {
      const p = problemAt(v, `${at}.${key}[${i}]`, depth + 1);
      if (p) return p;
    }
  }
  if (s.$ref !== undefined) return `${at}.$ref is not supported (write the schema out in full)`;
  return null;
}

/** Why `schema` cannot be a task's outputSchema (naming `field`), or null. */
export function outputSchemaProblem(field: string, schema: unknown): string | null {
  if (!isObj(schema))
    return `${field} must be a JSON Schema object (got ${Array.isArray(schema) ? "array" : typeof schema})`;
  const text = JSON.stringify(schema);
  if (text.length > MAX_SCHEMA_CHARS)
    return `${field} is ${text.length} characters as JSON; at most ${MAX_SCHEMA_CHARS}`;
  return problemAt(schema, field, 0);
}
