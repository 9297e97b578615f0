// Saved workflows (docs/composing.md "Saved workflows"): a call written down — the same `{tasks: [...], profile?}` document as the tool's
// parameters and `--tasks` — in `.pi/workflows/NAME.{yaml,yml,json}` (project: nearest folder up from cwd wins;
// repo-controlled, so it runs under the same consent rule as project agents) or `<agentDir>/workflows/NAME.*`.
// `{{input}}` in any string of it stands for the text the workflow is started with.
import { parse as parseYaml } from "yaml";
import type { Host } from "../host.ts";
import { ancestors } from "./profile-discovery.ts";

export type WorkflowSource = "user" | "project";
export type WorkflowFile = {
  name: string;
  file: string;
  source: WorkflowSource;
  description?: string;
  taskCount?: number;
  problem?: string;
};

const EXTENSIONS = [".yaml", ".yml", ".json"];
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export class WorkflowError extends Error {}

function filesIn(host: Host, dir: string, source: WorkflowSource): WorkflowFile[] {
  if (!host.stat(dir)?.isDirectory) return [];
  const out: WorkflowFile[] = [];
  for (const e of host.listDir(dir)) {
    const ext = EXTENSIONS.find((x) => e.name.endsWith(x));
    if (!e.isFile || !ext) continue;
    out.push({ name: e.name.slice(0, -ext.length), file: `${dir}/${e.name}`, source });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Every workflow visible from cwd, one per name: project files (nearest folder first) win over the user's. */
export function discoverWorkflows(host: Host, agentDir: string, cwd: string): WorkflowFile[] {
  const byName = new Map<string, WorkflowFile>();
  for (const w of filesIn(host, `${agentDir}/workflows`, "user")) if (!byName.has(w.name)) byName.set(w.name, w);
  // Root first, cwd last: a nearer folder overrides a farther one.
  for (const dir of ancestors(cwd))
    for (const w of filesIn(host, `${dir === "/" ? "" : dir}/.pi/workflows`, "project")) byName.set(w.name, w);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)).map((w) => describe(host, w));
}

function describe(host: Host, w: WorkflowFile): WorkflowFile {
  try {
    const doc = readDocument(host, w.file);
    return {
      ...w,
      ...(typeof doc.description === "string" ? { description: doc.description } : {}),
      taskCount: Array.isArray(doc.tasks) ? doc.tasks.length : 0,
    };
  } catch (err) {
    return { ...w, problem: (err as Error).message };
  }
}

function readDocument(host: Host, file: string): Record<string, unknown> {
  const text = host.readText(file);
  if (text === null) throw new WorkflowError(`cannot read ${file}`);
  let doc: unknown;
  try {
    doc = file.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new WorkflowError(
      `${file} is not valid ${file.endsWith(".json") ? "JSON" : "YAML"}: ${(err as Error).message.split("\n")[0]}`,
    );
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new WorkflowError(`${file} must hold an object with "tasks"`);
  return doc as Record<string, unknown>;
}

const INPUT = /\{\{\s*input\s*\}\}/g;

function fill(v: unknown, input: string): unknown {
  if (typeof v === "string") return v.replace(INPUT, () => input);
  if (Array.isArray(v)) return v.map((x) => fill(x, input));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, input)]));
  return v;
}

/**
 * The named workflow as delegate parameters, `{{input}}` filled in. Throws WorkflowError naming the file. The
 * result still goes through parseDelegateParams (the same checks as any call).
 */
export function loadWorkflow(
  host: Host,
  agentDir: string,
  cwd: string,
  name: string,
  input: string,
): { params: Record<string, unknown>; workflow: WorkflowFile } {
  if (!NAME_RE.test(name)) throw new WorkflowError(`workflow name "${name}" must be letters, digits, "_", "-" or "."`);
  const all = discoverWorkflows(host, agentDir, cwd);
  const workflow = all.find((w) => w.name === name);
  if (!workflow)
    throw new WorkflowError(
      `Unknown workflow "${name}". Available workflows: ${all.length ? all.map((w) => w.name).join(", ") : "(none; save one as .pi/workflows/NAME.yaml)"}`,
    );
  const doc = readDocument(host, workflow.file);
  const { description: _d, ...rest } = doc;
  if (!input.trim() && JSON.stringify(rest).match(INPUT))
    throw new WorkflowError(`workflow "${name}" (${workflow.file}) uses {{input}}: give the text to start it with`);
  return { params: fill(rest, input) as Record<string, unknown>, workflow };
}
