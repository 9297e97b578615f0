// Where a schedule's parts live: its definition <agentDir>/schedules/NAME.json (0600), its log NAME.log (what its
// runs printed), and its lock NAME.lock while a run is going.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseDefinition, type ScheduleDefinition } from "../../core/schedule/definition.ts";
import { writeFileAtomic } from "../../host/atomic-write.ts";
import { ConfigError } from "../errors.ts";

export const schedulesDir = (agentDir: string) => path.join(agentDir, "schedules");
export const definitionFile = (agentDir: string, name: string) => path.join(schedulesDir(agentDir), `${name}.json`);
export const logFile = (agentDir: string, name: string) => path.join(schedulesDir(agentDir), `${name}.log`);
export const lockFile = (agentDir: string, name: string) => path.join(schedulesDir(agentDir), `${name}.lock`);

/** NAME's definition; null when there is none; a ConfigError naming the file when it is broken. */
export function readDefinition(agentDir: string, name: string): ScheduleDefinition | null {
  const file = definitionFile(agentDir, name);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const d = parseDefinition(text);
  if (typeof d === "string") throw new ConfigError(`schedule ${name}: ${file} is ${d}`);
  return d;
}

/** Written whole or not at all: a full disk leaves the old definition (and no temporary file) behind. */
export function writeDefinition(agentDir: string, d: ScheduleDefinition): void {
  writeFileAtomic(definitionFile(agentDir, d.name), `${JSON.stringify(d, null, 2)}\n`);
}

/** Every schedule with a definition file (broken ones named with why). */
export function listDefinitions(agentDir: string): {
  defs: ScheduleDefinition[];
  broken: { name: string; why: string }[];
} {
  const defs: ScheduleDefinition[] = [];
  const broken: { name: string; why: string }[] = [];
  let names: string[] = [];
  try {
    names = fs
      .readdirSync(schedulesDir(agentDir))
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -5));
  } catch {
    return { defs, broken };
  }
  for (const name of names.sort()) {
    try {
      const d = readDefinition(agentDir, name);
      if (d) defs.push(d);
    } catch (err) {
      broken.push({ name, why: (err as Error).message });
    }
  }
  return { defs, broken };
}
