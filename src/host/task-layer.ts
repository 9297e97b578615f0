// A task's layer over a folder of the user's (core/run/launch/worktree-view.ts says why): one overlay at the folder's
// own path, the user's tree below it read-only and the layer's `upper/` above, entered by the task's processes
// through `enter`. Git folders of the repository that lie outside the folder (a linked worktree's, a submodule's)
// get a layer of their own, so nothing the child's git writes reaches the user's. The owner reads the layer back
// (harvest.ts) through a read-only overlay of the same layers mounted elsewhere (`probeArgv`), never at the user's
// path. Made and read only in the data folder.
import * as fs from "node:fs";
import * as path from "node:path";
import { enterArgv, type Layer, type MountStep, type NamespaceWay } from "../core/run/launch/worktree-view.ts";
import { removeTree } from "./cow-probe.ts";

export type { Layer };

export const upperOf = (l: Pick<Layer, "dir">) => path.join(l.dir, "upper");
const STARTED = "started";

/** The mounts a task's processes enter: the folder's layer, then one per git folder outside it. */
export function layerSteps(l: Layer): MountStep[] {
  return [
    { kind: "overlay", lower: [l.root], upper: upperOf(l), work: path.join(l.dir, "work"), target: l.root },
    ...l.gitDirs.map((g, i): MountStep => {
      const d = path.join(l.dir, `g${i}`);
      return { kind: "overlay", lower: [g], upper: path.join(d, "upper"), work: path.join(d, "work"), target: g };
    }),
  ];
}

/** Where a file of `gitDir` (the folder holding HEAD and the index) lands in the layer when the child writes it. */
export function layerPathOf(l: Layer, file: string): string {
  for (const [i, g] of l.gitDirs.entries())
    if (file === g || file.startsWith(`${g}/`)) return path.join(l.dir, `g${i}`, "upper", path.relative(g, file));
  return path.join(upperOf(l), path.relative(l.root, file));
}

/** Makes the layer's folders and its start mark (whose change time tells later changes of the user's from earlier
 *  ones); returns the command prefix the task's processes start under. */
export function makeLayer(l: Layer, way: NamespaceWay): string[] {
  fs.mkdirSync(l.dir, { recursive: true, mode: 0o700 });
  const dirs = [upperOf(l), path.join(l.dir, "work")];
  for (const i of l.gitDirs.keys()) dirs.push(path.join(l.dir, `g${i}`, "upper"), path.join(l.dir, `g${i}`, "work"));
  for (const d of dirs) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(l.dir, STARTED), "");
  return enterArgv(way, layerSteps(l));
}

/** The change time of the layer's start mark, in nanoseconds: a file of the user's changed at or after it was
 *  changed while the task ran. */
export function startedNs(l: Pick<Layer, "dir">): bigint {
  return fs.statSync(path.join(l.dir, STARTED), { bigint: true }).ctimeNs;
}

/** The command prefix that shows the folder as the task left it (its layer over the user's tree), read-only, at
 *  `<layer>/view` — not at the user's path, so the user's own `.git` stays what git finds there. */
export function probeArgv(l: Layer, way: NamespaceWay): { argv: string[]; view: string } {
  const view = path.join(l.dir, "view");
  fs.mkdirSync(view, { recursive: true });
  return { argv: enterArgv(way, [{ kind: "overlay", lower: [upperOf(l), l.root], target: view }]), view };
}

export const removeLayer = (l: Pick<Layer, "dir">) => removeTree(l.dir);
