// Structured results in the child (core/output-schema.ts): the task's JSON Schema becomes the `data` argument of
// `subagent_finalize`, so pi's own argument validation answers a mismatch with an error the model can fix in the
// same conversation. A SUCCESS without `data` is refused here the same way.
import type { FinalizePayload } from "../core/types.ts";

type Schema = {
  type: "object";
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties: boolean;
};

function schemaFromEnv(): Record<string, unknown> | null {
  const text = process.env.PI_SUBAGENT_OUTPUT_SCHEMA;
  if (!text) return null;
  try {
    const s = JSON.parse(text);
    return s && typeof s === "object" ? s : null;
  } catch {
    return null;
  }
}

const schema = schemaFromEnv();

export function finalizeParameters(base: Schema): Schema {
  if (!schema) return base;
  return {
    ...base,
    properties: {
      ...base.properties,
      data: { ...schema, description: "Your structured result (required for SUCCESS): must match this schema" },
    },
  };
}

export function withData(params: Partial<FinalizePayload>): Partial<FinalizePayload> {
  if (!schema || params.status !== "SUCCESS") return params;
  if (params.data === undefined)
    throw new Error(
      "Invalid subagent_finalize call: SUCCESS requires `data`, your structured result matching its schema.",
    );
  // The data is the answer: a text `result` is optional then.
  return typeof params.result === "string" && params.result.trim()
    ? params
    : { ...params, result: JSON.stringify(params.data, null, 2) };
}
