// Tool parameter schemas. Written with TypeBox, handed to pi as plain JSON Schema (the TypeBox symbols
// stripped): pi coerces arguments such as "600" → 600 only for plain schemas under Bun pi. We validate again
// inside each tool (TypeBox Value, or the delegate validator) so every rejection names the field. A task's
// fields come from their one definition (core/task-fields.ts).
import { Type, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { MAX_TASKS } from "../delegate-input.ts";
import { ISOLATION_SCHEMA, TASK_SCHEMA } from "../task-fields.ts";

/** A JSON round trip drops TypeBox's symbol keys; what is left is ordinary JSON Schema. */
export const plain = <T extends TSchema>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

/** Terse on purpose: every word here is in the model's prompt on every call. A description says only what the
 * name, the type and the tool's guidelines do not (a unit, a default that matters, what a value does). */
const Isolation = Type.Optional(ISOLATION_SCHEMA);

export const DELEGATE_SCHEMA = plain(
  Type.Object(
    {
      tasks: Type.Optional(Type.Array(TASK_SCHEMA, { minItems: 1, maxItems: MAX_TASKS })),
      workflow: Type.Optional(Type.String({ description: 'Saved workflow instead of tasks: "NAME input"' })),
      profile: Type.Optional(Type.String()),
      background: Type.Optional(Type.Boolean({ description: "Return now; notices follow" })),
      maxCost: Type.Optional(Type.Number({ description: "USD, all tasks" })),
    },
    { additionalProperties: false },
  ),
);

const SessionIdParams = Type.Object({ sessionId: Type.String() }, { additionalProperties: false });
export const SESSION_ID_SCHEMA = plain(SessionIdParams);

// get_subagent_output reaches a running sub-agent too: cheaper in prompt tokens than a tool of its own.
const OutputParams = Type.Object(
  {
    ...SessionIdParams.properties,
    steer: Type.Optional(Type.String({ description: "Message to the running sub-agent" })),
    wait: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const OUTPUT_SCHEMA = plain(OutputParams);

export const EMPTY_SCHEMA = plain(Type.Object({}, { additionalProperties: false }));

const SubagentParams = Type.Object(
  {
    agent: Type.String({ minLength: 1 }),
    task: Type.String({ minLength: 1 }),
    sessionId: Type.Optional(Type.String({ description: "Continue this session" })),
    isolation: Isolation,
    background: Type.Optional(Type.Boolean({ description: "Return now; a notice follows" })),
  },
  { additionalProperties: false },
);
export const SUBAGENT_SCHEMA = plain(SubagentParams);

// subagent_batch (docs/batch.md): off unless subagents.tools names it, so its words cost nothing by default.
const BatchParams = Type.Object(
  {
    action: Type.Union([Type.Literal("start"), Type.Literal("status"), Type.Literal("export")]),
    job: Type.Optional(Type.String({ description: "status/export: the job id; start: a name" })),
    items: Type.Optional(Type.String({ description: "start: .jsonl or .csv file" })),
    prompt: Type.Optional(Type.String({ description: "start: template, {{column}}" })),
    agent: Type.Optional(Type.String()),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1 })),
    maxCost: Type.Optional(Type.Number({ description: "USD, the whole job" })),
    out: Type.Optional(Type.String({ description: "JSONL results file" })),
  },
  { additionalProperties: false },
);
export const BATCH_SCHEMA = plain(BatchParams);

/** First problem with `value` against `schema`, as "field: message", or null. */
export function firstProblem(schema: TSchema, value: unknown): string | null {
  for (const e of Value.Errors(schema, value)) {
    const field = e.path.replace(/^\//, "").replace(/\//g, ".") || "parameters";
    return `${field}: ${e.message}`;
  }
  return null;
}

export const SCHEMAS = {
  sessionId: SessionIdParams,
  output: OutputParams,
  subagent: SubagentParams,
  batch: BatchParams,
};
