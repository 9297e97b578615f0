// A child never silently runs another model than the one it was asked for. pi resolves the
// model at start-up and, when the default model in its settings is unknown to it (a model newer than that pi),
// quietly takes another. Before the first model call this compares what pi resolved with what the owner asked
// for (PI_SUBAGENT_EXPECT_MODEL: the --model it passed, else the default model in pi's settings) and, on a
// mismatch, exits before spending anything. The message names the model and the pi; its `Model "…" not found`
// prefix is what the owner already reads as "pi refused the model" (fallback models, or a clear failure).

type Model = { provider?: string; id?: string } | undefined;

/** Whether the resolved model is the one asked for. A bare or partial name (pi matches `other` to `other-model`)
 *  is satisfied by a resolved id containing it; a `provider/id` needs that provider. */
export function modelMatches(expected: string, resolved: Model): boolean {
  if (!resolved?.id) return true; // nothing resolved yet: pi itself fails then
  const want = expected.replace(/:[a-z]+$/, "");
  const slash = want.indexOf("/");
  const provider = slash > 0 ? want.slice(0, slash) : undefined;
  const id = slash > 0 ? want.slice(slash + 1) : want;
  if (provider && resolved.provider && provider.toLowerCase() !== resolved.provider.toLowerCase()) return false;
  return resolved.id === id || resolved.id.toLowerCase().includes(id.toLowerCase());
}

export function modelGuardMessage(expected: string, resolved: Model, piVersion: string | undefined): string {
  const pi = piVersion ? `pi ${piVersion}` : "this pi";
  return `Model "${expected}" not found by ${pi}: it resolved "${resolved?.provider ? `${resolved.provider}/` : ""}${resolved?.id}" instead, so the sub-agent stopped before any model call (update pi, or name a model it has: pi --list-models).`;
}

type Api = { on(event: string, handler: (event: any, ctx: any) => unknown): void };

export function guardModel(pi: Api): void {
  const expected = process.env.PI_SUBAGENT_EXPECT_MODEL;
  if (!expected) return;
  let checked = false;
  pi.on("before_agent_start", (_e, ctx) => {
    if (checked) return undefined;
    checked = true;
    const resolved = ctx?.model as Model;
    if (modelMatches(expected, resolved)) return undefined;
    process.stderr.write(`${modelGuardMessage(expected, resolved, process.env.PI_SUBAGENT_PI_VERSION)}\n`);
    process.exit(3);
  });
}
