// What a kept child (pool.ts) owns on disk for its life: its own copies of the files its tasks' children read at
// each session start (a task's copy is removed when its task ends), and a temp folder for its tasks' TMPDIR (pi's
// bash logs), since each task's own folder goes with its run. All of it is removed when the process ends.
import type { Host, SpawnSpec } from "../../host.ts";

export type KeptFiles = {
  /** The spawn's argv and environment, pointing at the process's own copies and temp folder. */
  cmd: string[];
  env: Record<string, string>;
  remove(): void;
};

export function keptFiles(host: Host, spec: SpawnSpec, argv: string[], n: number, files: string[], contents: string[]) {
  const dir = host.privateTempDir();
  const copies = files.map((f, i) => `${dir}/kept-${n}-${i}-${f.slice(f.lastIndexOf("/") + 1)}`);
  for (const [i, c] of copies.entries()) host.writeFile(c, contents[i], 0o600);
  const swap = (v: string) => {
    const i = files.indexOf(v);
    return i >= 0 ? copies[i] : v;
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.env)) env[k] = swap(v);
  const tmp = spec.env.TMPDIR ? `${dir}/kept-${n}-tmp` : null;
  if (tmp) {
    host.mkdirp(tmp);
    env.TMPDIR = tmp;
  }
  const out: KeptFiles = {
    cmd: argv.map(swap),
    env,
    remove: () => {
      for (const c of copies) host.remove(c);
      if (tmp) host.remove(tmp);
    },
  };
  return out;
}
