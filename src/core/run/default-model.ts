// The default model a child without --model must run: pi's `defaultProvider`/`defaultModel` from the user's
// settings.json. A project's `.pi/settings.json` that sets its own applies only when pi trusts the project, which
// the owner cannot always tell (the CLI): then nothing is expected rather than a false "wrong model".
import type { Host } from "../host.ts";
import { type Engine, userModels } from "./engine.ts";

function projectSetsModel(host: Host, cwd: string): boolean {
  const text = host.readText(`${cwd}/.pi/settings.json`);
  if (text === null) return false;
  try {
    const s = JSON.parse(text) as Record<string, unknown> | null;
    return !!s && (s.defaultModel !== undefined || s.defaultProvider !== undefined);
  } catch {
    return false;
  }
}

export function expectedDefaultModel(engine: Engine, cwd: string): string | undefined {
  if (projectSetsModel(engine.host, cwd)) return undefined;
  return userModels(engine).defaultModel;
}
