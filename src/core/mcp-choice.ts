// The `mcp` field of an agent and the `subagents.mcp` setting: `true` (every configured MCP server, the default),
// `false` (none), or a list of server names (YAML list or comma-separated string).
import { stringList } from "./string-list.ts";

/** All configured servers, none, or only the named ones. */
export type McpChoice = boolean | string[];

/** Reads a raw value; a wrong one is a warning and leaves the field unset. */
export function mcpField(v: unknown, warnings: string[], where = "mcp"): McpChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  const items = stringList(v);
  if (!items) {
    warnings.push(
      `${where} must be true, false or a list of MCP server names (got ${Array.isArray(v) ? "a list of non-strings" : typeof v}); ignored`,
    );
    return undefined;
  }
  const names = items.map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !/^[A-Za-z0-9_-]+$/.test(n));
  if (bad.length) {
    warnings.push(`${where}: ${bad.join(", ")} is not an MCP server name (letters, digits, "_" and "-"); ignored`);
    return undefined;
  }
  return names;
}
