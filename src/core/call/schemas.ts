// Tool parameter schemas. Written with TypeBox, handed to pi as plain JSON Schema (the TypeBox symbols
// stripped): pi coerces arguments such as "600" → 600 only for plain schemas under Bun pi. We validate again
// inside each tool (TypeBox Value, or the delegate validator) so every rejection names the field.
import { Type, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { RUNNER_NAMES } from "../runner-settings.ts";
import { RUNTIME_NAMES } from "../runtime-names.ts";

/** A JSON round trip drops TypeBox's symbol keys; what is left is ordinary JSON Schema. */
export const plain = <T extends TSchema>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

const FileSpec = Type.Union([
  Type.String(),
  Type.Object(
    {
      path: Type.String(),
      start: Type.Optional(Type.Number({ minimum: 1 })),
      end: Type.Optional(Type.Number({ minimum: 1 })),
      head: Type.Optional(Type.Number({ minimum: 1 })),
      tail: Type.Optional(Type.Number({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
]);

/** Terse on purpose: every word here is in the model's prompt on every call. A description says only what the
 * name, the type and the tool's guidelines do not (a unit, a default that matters, what a value does). */
const Isolation = Type.Optional(Type.Literal("worktree", { description: "Own git worktree, changes on a branch" }));

const TaskObject = Type.Object(
  {
    name: Type.String(),
    prompt: Type.String(),
    cwd: Type.Optional(Type.String({ description: "Absolute" })),
    profile: Type.Optional(Type.String({ description: "Agent name" })),
    timeout: Type.Optional(Type.Number({ minimum: 1, description: "Seconds" })),
    resume: Type.Optional(Type.String({ description: "Session id to continue" })),
    files: Type.Optional(Type.Array(FileSpec)),
    isolation: Isolation,
    after: Type.Optional(
      Type.Array(Type.String(), { description: "Tasks to wait for; {{name}} in prompt = its output" }),
    ),
    gate: Type.Optional(Type.String({ description: "Shell check; exit 0 passes" })),
    gateTimeout: Type.Optional(Type.Number()),
    gateRetries: Type.Optional(Type.Integer()),
    outputSchema: Type.Optional(Type.Object({})),
    context: Type.Optional(
      Type.Union([Type.Literal("fork"), Type.Literal("fresh")], {
        description: "fork: starts from a copy of this conversation",
      }),
    ),
    sandbox: Type.Optional(Type.Boolean()),
    runner: Type.Optional(Type.Union(RUNNER_NAMES.map((n) => Type.Literal(n)))),
    runtime: Type.Optional(Type.Union(RUNTIME_NAMES.map((n) => Type.Literal(n)))),
    keepProcesses: Type.Optional(Type.Boolean()),
    // Budgets: terse on purpose (every word here is in every parent request); the names say what they are.
    maxTurns: Type.Optional(Type.Integer()),
    maxTokens: Type.Optional(Type.Integer()),
    maxCost: Type.Optional(Type.Number({ description: "USD" })),
  },
  { additionalProperties: false },
);

export const DELEGATE_SCHEMA = plain(
  Type.Object(
    {
      tasks: Type.Optional(Type.Array(TaskObject, { minItems: 1, maxItems: 16 })),
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

/** First problem with `value` against `schema`, as "field: message", or null. */
export function firstProblem(schema: TSchema, value: unknown): string | null {
  for (const e of Value.Errors(schema, value)) {
    const field = e.path.replace(/^\//, "").replace(/\//g, ".") || "parameters";
    return `${field}: ${e.message}`;
  }
  return null;
}

export const SCHEMAS = { sessionId: SessionIdParams, output: OutputParams, subagent: SubagentParams };
