// A Python virtual environment names its own folder by absolute path: the `#!` line of every script in its bin/
// (pip, pytest, …), its activate scripts, and the path files of editable installs (`*.pth`, `__editable__*`),
// which point at the project's source. Seen from an isolated task these would lead back to the user's tree — the
// task's `pip install` into the user's venv, its tests importing the user's code instead of the task's. So in the
// task's copy at a path of its own those files name the copy instead (a layer over the tree is seen at the tree's
// own path and needs none of this). The user's files are only read.
import * as fs from "node:fs";
import * as path from "node:path";
import { escapeRegExp } from "../core/regexp.ts";

/** Text files above this are no venv script or path file. */
const MAX_BYTES = 1024 * 1024;

/** The venvs in a carried folder: the folder itself, or one level down (`.tox/py311`, `envs/dev`). */
function venvRoots(dir: string): string[] {
  if (fs.existsSync(path.join(dir, "pyvenv.cfg"))) return [dir];
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "pyvenv.cfg")))
      .map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
}

/** The files of one venv that may name its folder: bin/*, and the path files at the top of each site-packages. */
function namingFiles(venv: string): string[] {
  const files: string[] = [];
  const add = (dir: string, keep: (name: string) => boolean) => {
    try {
      for (const e of fs.readdirSync(dir, { withFileTypes: true }))
        if (e.isFile() && keep(e.name)) files.push(path.join(dir, e.name));
    } catch {
      // no such folder in this venv
    }
  };
  add(path.join(venv, "bin"), () => true);
  let libs: string[] = [];
  try {
    libs = fs.readdirSync(path.join(venv, "lib")).filter((n) => n.startsWith("python"));
  } catch {
    // a venv without lib/ (Windows layout): nothing more
  }
  for (const lib of libs)
    add(path.join(venv, "lib", lib, "site-packages"), (n) => n.endsWith(".pth") || n.startsWith("__editable__"));
  return files;
}

/** Rewrites the repository's path to the copy's in the venvs of the copy's ignored folders (the user's are read). */
export function relocateVenvs(repo: string, wtPath: string, folders: string[]): number {
  // The repository's path as a whole path: /home/me/proj, not the start of /home/me/proj-old.
  const named = new RegExp(`${escapeRegExp(repo)}(?![A-Za-z0-9_.-])`, "g");
  let rewritten = 0;
  for (const folder of folders) {
    const base = path.join(repo, folder);
    for (const venv of venvRoots(base)) {
      for (const file of namingFiles(venv)) {
        const st = fs.statSync(file);
        if (st.size > MAX_BYTES) continue;
        const text = fs.readFileSync(file);
        if (text.subarray(0, 1024).includes(0)) continue;
        const before = text.toString("utf8");
        const after = before.replace(named, wtPath);
        if (after === before) continue;
        const to = path.join(wtPath, folder, path.relative(base, file));
        if (!fs.existsSync(path.dirname(to))) continue;
        // A copy's file may be a clone sharing blocks with the user's: replaced, never written through.
        fs.rmSync(to, { force: true });
        fs.writeFileSync(to, after);
        fs.chmodSync(to, st.mode & 0o7777);
        rewritten++;
      }
    }
  }
  return rewritten;
}
