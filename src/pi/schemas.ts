// Tool parameter schemas. Written with TypeBox, handed to pi as plain JSON Schema (the TypeBox symbols
// stripped): pi coerces arguments such as "600" → 600 only for plain schemas under Bun pi. We validate again
// inside each tool (TypeBox Value, or the delegate validator) so every rejection names the field.
import { Type, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** A JSON round trip drops TypeBox's symbol keys; what is left is ordinary JSON Schema. */
export const plain = <T extends TSchema>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

const FileSpec = Type.Union([
  Type.String({ description: "File path (relative to the task's cwd, or absolute)" }),
  Type.Object(
    {
      path: Type.String({ description: "File path" }),
      start: Type.Optional(Type.Number({ minimum: 1, description: "First line (1-indexed, inclusive)" })),
      end: Type.Optional(Type.Number({ minimum: 1, description: "Last line (inclusive)" })),
      head: Type.Optional(Type.Number({ minimum: 1, description: "Only the first N lines" })),
      tail: Type.Optional(Type.Number({ minimum: 1, description: "Only the last N lines" })),
    },
    { additionalProperties: false },
  ),
]);

/** Terse on purpose: every word here is in the model's prompt on every call. */
const Isolation = Type.Optional(Type.Literal("worktree", { description: "Own git worktree; changes on a branch" }));

const TaskObject = Type.Object(
  {
    name: Type.String({ description: "Short display name for this sub-agent's window" }),
    prompt: Type.String({ description: "The complete, self-contained task for the sub-agent" }),
    cwd: Type.Optional(Type.String({ description: "Absolute working directory (default: the current one); no '..' segments" })),
    profile: Type.Optional(Type.String({ description: "Profile for this task (overrides the top-level profile)" })),
    timeout: Type.Optional(Type.Number({ minimum: 1, description: "Timeout in seconds (default 600); extended while the sub-agent is still working" })),
    resume: Type.Optional(Type.String({ description: "Session id of an earlier sub-agent to continue" })),
    files: Type.Optional(Type.Array(FileSpec, { description: "Files whose contents are prepended to the prompt (1 MB limit each)" })),
    isolation: Isolation,
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
      tasks: Type.Array(TaskObject, { minItems: 1, maxItems: 16, description: "1–16 tasks to run in parallel" }),
      profile: Type.Optional(Type.String({ description: "Default profile for every task" })),
      background: Type.Optional(Type.Boolean({ description: "Return at once with the session ids; a notice arrives as each task ends" })),
      maxCost: Type.Optional(Type.Number({ description: "USD, all tasks" })),
    },
    { additionalProperties: false },
  ),
);

const SessionIdParams = Type.Object({ sessionId: Type.String({ description: "The session id returned by delegate_to_subagents or subagent" }) }, { additionalProperties: false });
export const SESSION_ID_SCHEMA = plain(SessionIdParams);

export const EMPTY_SCHEMA = plain(Type.Object({}, { additionalProperties: false }));

const SubagentParams = Type.Object(
  {
    agent: Type.String({ minLength: 1, description: "Agent (profile) name, see list_subagent_profiles" }),
    task: Type.String({ minLength: 1, description: "The focused task for the agent" }),
    sessionId: Type.Optional(Type.String({ description: "Continue this earlier session of the same agent (keeps its context)" })),
    isolation: Isolation,
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

export const SCHEMAS = { sessionId: SessionIdParams, subagent: SubagentParams };
