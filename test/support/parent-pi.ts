// A real parent pi with our bundled extension, driven by a scripted model: what it recorded as tool results.
import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { script, type ScriptStep } from "../../src/scripted/model-server.ts";
import { afterClose, piCmd, REPO, type PiRelease, type PiWorld } from "./pi-env.ts";

export const EXTENSION = join(REPO, "dist", "extension.js");

export type ToolResultEntry = {
  toolName: string;
  text: string;
  details: any;
  isError: boolean;
  usage?: any;
  structuredContent?: any;
};

/** Runs a parent pi with our extension; returns the tool results it recorded in its session file. */
export async function runParentPi(
  world: PiWorld,
  /** installed: no `-e`, the extension `subagents install` put in the world's agent folder is what loads. */
  opts: {
    runtime: "node" | "bun";
    steps: ScriptStep[];
    env?: Record<string, string>;
    release?: PiRelease;
    args?: string[];
    cwd?: string;
    sessionFile?: string;
    installed?: boolean;
  },
): Promise<{ code: number; results: ToolResultEntry[]; stderr: string; sessionFile: string }> {
  const release = opts.release ?? "current";
  const sessionFile =
    opts.sessionFile ??
    join(world.root, `parent-${release}-${opts.runtime}-${Date.now()}-${Math.random().toString(16).slice(2)}.jsonl`);
  const proc = Bun.spawn({
    cmd: [
      ...piCmd(release, opts.runtime),
      "-p",
      "--session",
      sessionFile,
      ...(opts.installed ? [] : ["-e", EXTENSION]),
      ...(opts.args ?? []),
    ],
    cwd: opts.cwd ?? world.workDir,
    env: { ...world.env, ...opts.env },
    stdin: new TextEncoder().encode(`parent task ${script(opts.steps)}`),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  if (world.closed) return afterClose();
  expect(stdout).not.toContain('{"type"'); // the extension never writes to stdout
  const results: ToolResultEntry[] = [];
  if (!existsSync(sessionFile))
    throw new Error(`the parent pi wrote no session file (exit ${code}); stderr: ${stderr.slice(-1500)}`);
  for (const line of readFileSync(sessionFile, "utf8").split("\n")) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (e.type === "message" && e.message?.role === "toolResult") {
      results.push({
        toolName: e.message.toolName,
        text: e.message.content.map((c: { text?: string }) => c.text ?? "").join(""),
        details: e.message.details,
        isError: e.message.isError,
        usage: e.message.usage,
        structuredContent: e.message.structuredContent,
      });
    }
  }
  return { code, results, stderr, sessionFile };
}
