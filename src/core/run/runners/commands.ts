// Small host helpers the runners share: find a program on PATH, run one to its end (bounded).
import type { Host } from "../../host.ts";

export function onPath(host: Host, name: string): string | null {
  for (const dir of (host.env.PATH ?? "").split(":")) {
    if (!dir) continue;
    const p = `${dir}/${name}`;
    if (host.stat(p)?.isFile) return p;
  }
  return null;
}

async function text(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const dec = new TextDecoder();
  let out = "";
  try {
    for await (const c of stream) if (out.length < 65536) out += dec.decode(c, { stream: true });
  } catch {
    // the program is gone
  }
  return out;
}

/** A program's answer for a one-line report: whether it exited 0, and the first line it wrote (stdout, then stderr). */
export async function ask(host: Host, argv: string[]): Promise<{ ok: boolean; out: string }> {
  const r = await runCommand(host, argv, { timeoutMs: 10_000 });
  return { ok: r.code === 0, out: `${r.stdout}${r.stderr}`.trim().split("\n")[0] ?? "" };
}

/** Runs argv to its end (killed after timeoutMs); never throws. */
export async function runCommand(
  host: Host,
  argv: string[],
  opts: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let proc: ReturnType<Host["spawn"]>;
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(host.env)) if (v !== undefined) env[k] = v;
    proc = host.spawn({ cmd: argv, cwd: "/", env: { ...env, ...opts.env }, stdin: null, fd3: false });
  } catch (err) {
    return { code: null, stdout: "", stderr: (err as Error).message };
  }
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
  const [stdout, stderr, exit] = await Promise.all([text(proc.stdout), text(proc.stderr), proc.exited]);
  clearTimeout(timer);
  return { code: exit.code, stdout, stderr };
}
