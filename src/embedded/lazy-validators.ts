// pi builds three TypeBox validators as its modules load (`X=Compile(Schema)`: models.json, keybindings, themes).
// Compiling one generates and evaluates JS for the whole schema: ~13 ms of CPU in every child (measured with a CPU
// profile of a trivial embedded child, ~12% of it), for validators a child uses at most once — on models.json —
// and the two others only in interactive mode. In the embedded pi they are made lazily instead, and until one is
// compiled its `Check`/`Errors` interpret the schema with pi's own TypeBox `Value` functions, which give the same
// answers (TypeBox's compiled validator is an acceleration of exactly those). Anything else a caller asks of the
// validator compiles it then, as pi would have done at load.

/** The global a hooked site asks for its validator; set by the pi role's prelude. */
export const VALIDATOR_KEY = "subagents.lazy-validator";
/** pi's TypeBox `Value` namespace, published by the chunk that defines it. */
export const TYPEBOX_VALUE_KEY = "subagents.typebox-value";

const TOP_COMPILE = /\b(\w+)=Compile\((\w+)\)(?=[;,])/g;
const VALUE_EXPORTS = /__export\((\w+),\{[^}]*?\bCheck:\(\)=>\w+,[^}]*?\bErrors:\(\)=>\w+/;

/** Rewrites one bundle file: its top-level validators become lazy, and the file that defines TypeBox's `Value`
 * publishes it. Returns null when the file has neither. */
export function hookValidators(source: string): { source: string; sites: number; value: boolean } | null {
  let sites = 0;
  const key = JSON.stringify(VALIDATOR_KEY);
  let out = source.replace(TOP_COMPILE, (_all, name: string, schema: string) => {
    sites++;
    return `${name}=(globalThis[Symbol.for(${key})]?.(${schema},()=>Compile(${schema}))??Compile(${schema}))`;
  });
  const value = VALUE_EXPORTS.exec(out);
  if (value) out += `\n;globalThis[Symbol.for(${JSON.stringify(TYPEBOX_VALUE_KEY)})]=${value[1]};\n`;
  return sites || value ? { source: out, sites, value: !!value } : null;
}

type Validator = Record<PropertyKey, unknown>;
type TypeBoxValue = {
  Check(schema: unknown, value: unknown): boolean;
  Errors(schema: unknown, value: unknown): unknown[];
};

/** Installs the lazy validator maker. Self-contained (no imports, no outer names): the compiled user's pi runs its
 * source text as plain JS. */
export function installLazyValidators(validatorKey: string, valueKey: string): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(validatorKey)] = (schema: unknown, compile: () => Validator) => {
    let compiled: Validator | undefined;
    return new Proxy({} as Validator, {
      get(_target, prop) {
        const value = (globalThis as Record<symbol, unknown>)[Symbol.for(valueKey)] as TypeBoxValue | undefined;
        if (!compiled && value && prop === "Check") return (v: unknown) => value.Check(schema, v);
        if (!compiled && value && prop === "Errors") return (v: unknown) => value.Errors(schema, v);
        compiled ??= compile();
        const member = compiled[prop];
        return typeof member === "function" ? (member as (...a: unknown[]) => unknown).bind(compiled) : member;
      },
    });
  };
}
