// The five tools as `tools/list` shows them to an MCP client: pi's schemas and texts (core/call/), less what the MCP
// front refuses or does differently — no `context: "fork"` (a client gives no conversation to copy), and
// `background` returns session ids that get_subagent_output collects (pi's "notices follow" never come over MCP) —
// with a title and the annotations pi's tools have.
import { TASKS_OUTPUT_SCHEMA } from "../core/call/results.ts";
import {
  BATCH_SCHEMA,
  DELEGATE_SCHEMA,
  EMPTY_SCHEMA,
  OUTPUT_SCHEMA,
  SESSION_ID_SCHEMA,
  SUBAGENT_SCHEMA,
} from "../core/call/schemas.ts";
import { ANNOTATIONS, TOOL_TEXTS, TOOL_TITLES, type ToolName } from "../core/call/tool-texts.ts";

type Schema = { properties: Record<string, Record<string, unknown>> } & Record<string, unknown>;

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

const BACKGROUND = {
  delegate_to_subagents: "Return the session ids now; get_subagent_output collects each output",
  subagent: "Return the session id now; get_subagent_output collects the result",
};

function delegateSchema(): Schema {
  const s = copy(DELEGATE_SCHEMA) as unknown as Schema;
  const task = (s.properties.tasks as { items: Schema }).items;
  delete task.properties.context;
  s.properties.background = { ...s.properties.background, description: BACKGROUND.delegate_to_subagents };
  return s;
}

function subagentSchema(): Schema {
  const s = copy(SUBAGENT_SCHEMA) as unknown as Schema;
  s.properties.background = { ...s.properties.background, description: BACKGROUND.subagent };
  return s;
}

/** pi's description and its guidelines (MCP has no field for them), less what only pi does. */
function describe(name: ToolName): string {
  return [TOOL_TEXTS[name].description, ...TOOL_TEXTS[name].guidelines]
    .join(" ")
    .replace(/ \(unless context: "fork"\)/, "");
}

export type ToolSpec = {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations: Record<string, unknown>;
};

const SCHEMAS: Record<ToolName, { input: unknown; output?: unknown }> = {
  delegate_to_subagents: { input: delegateSchema(), output: TASKS_OUTPUT_SCHEMA },
  subagent: { input: subagentSchema(), output: TASKS_OUTPUT_SCHEMA },
  get_subagent_output: { input: OUTPUT_SCHEMA },
  get_subagent_session: { input: SESSION_ID_SCHEMA },
  list_subagent_profiles: { input: EMPTY_SCHEMA },
  subagent_batch: { input: BATCH_SCHEMA },
};

/** Each tool as a client sees it. */
export function toolSpec(name: ToolName): ToolSpec {
  const title = TOOL_TITLES[name];
  return {
    name,
    title,
    description: describe(name),
    inputSchema: SCHEMAS[name].input,
    ...(SCHEMAS[name].output ? { outputSchema: SCHEMAS[name].output } : {}),
    annotations: { title, ...ANNOTATIONS[name] },
  };
}
