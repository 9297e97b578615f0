// Planted code below the top of a task folder (docs/sandbox-runners.md "Protected paths"): what a walk of the folder
// finds that a tool would run code from — repositories (a `.git` folder, a `.git` file and the folder it names, a
// bare repository's folder), project config of pi and the other harnesses, editors and direnv in a subfolder — and
// the gitlinks in the repository's index (`git status` enters every populated submodule, at any depth). Taken before
// a sandboxed child starts (what exists is mounted read-only: sandbox-guard.ts) and again after it ended (what is new
// is made harmless and named: nested-report.ts). The walk is bounded: SCAN_DEPTH folders down, at most SCAN_DIRS
// folders, never into node_modules or a git folder, never through a symlink.
import type { DirEntry, Host } from "../../host.ts";

export const SCAN_DEPTH = 4;
const SCAN_DIRS = 4000;
const SKIP = new Set(["node_modules", ".git"]);

/** Names whose contents a tool started in their folder runs or loads (pi, the other harnesses, editors, direnv). */
const NESTED_NAMES = new Set([
  ".pi",
  ".agents",
  ".claude",
  ".mcp.json",
  ".codex",
  ".gemini",
  ".opencode",
  "opencode.json",
  "opencode.jsonc",
  ".vscode",
  ".idea",
  ".envrc",
]);

export type FolderScan = {
  /** Folders holding a `.git` (folder or file) below the top. */
  repos: string[];
  /** Git folders: `.git` folders, the folders `.git` files name, bare repositories. */
  gitDirs: string[];
  /** `.git` files and what they point at (as written). */
  gitFiles: { path: string; target: string }[];
  /** Protected names in a subfolder (the top's own are sandbox-guard.ts's). */
  names: string[];
  /** Populated gitlinks of the repository holding the top, by their folder; null when its index could not be read. */
  gitlinks: string[] | null;
  /** The walk stopped at SCAN_DIRS: what lies beyond was not looked at. */
  truncated: boolean;
};

type ScanHost = Pick<Host, "listDir" | "readText" | "readBytes" | "stat">;

/** `p` (absolute, or relative to `base`) as an absolute path without `.` and `..`. */
export function resolveFrom(base: string, p: string): string {
  const parts = (p.startsWith("/") ? p : `${base}/${p}`).split("/");
  const out: string[] = [];
  for (const s of parts) {
    if (s === "..") out.pop();
    else if (s && s !== ".") out.push(s);
  }
  return `/${out.join("/")}`;
}

/** Where a `.git` file points (its `gitdir:` line, as written), or undefined when it names nothing. */
export function gitdirOf(host: Pick<Host, "readText">, dotGitFile: string): string | undefined {
  return /^gitdir:\s*(.+)$/m.exec(host.readText(dotGitFile) ?? "")?.[1]?.trim() || undefined;
}

/** A folder that git would take for a repository of its own when run inside it (a bare one). */
function isBare(entries: DirEntry[]): boolean {
  const has = (n: string, dir: boolean) => entries.some((e) => e.name === n && (dir ? e.isDirectory : e.isFile));
  return has("HEAD", false) && has("config", false) && has("objects", true) && has("refs", true);
}

export function scanFolder(host: ScanHost, top: string, repo?: { top: string; gitDir: string }): FolderScan {
  const out: FolderScan = { repos: [], gitDirs: [], gitFiles: [], names: [], gitlinks: null, truncated: false };
  const queue: [string, number][] = [[top, 0]];
  for (let seen = 0; queue.length; seen++) {
    if (seen >= SCAN_DIRS) {
      out.truncated = true;
      break;
    }
    const [dir, depth] = queue.shift()!;
    const entries = host.listDir(dir);
    if (depth > 0 && isBare(entries)) {
      out.gitDirs.push(dir);
      continue;
    }
    for (const e of entries) {
      const p = `${dir}/${e.name}`;
      if (e.name === ".git") {
        if (depth === 0) continue; // the top's own repository: sandbox-guard.ts
        out.repos.push(dir);
        if (e.isDirectory && !e.isSymlink) out.gitDirs.push(p);
        else if (e.isFile) {
          const target = gitdirOf(host, p) ?? "";
          out.gitFiles.push({ path: p, target });
          if (target) out.gitDirs.push(resolveFrom(dir, target));
        }
        continue;
      }
      if (depth > 0 && NESTED_NAMES.has(e.name)) out.names.push(p);
      if (e.isDirectory && !e.isSymlink && !SKIP.has(e.name) && depth < SCAN_DEPTH) queue.push([p, depth + 1]);
    }
  }
  if (repo) {
    const links = indexGitlinks(host, repo.gitDir);
    out.gitlinks = links ? links.map((l) => `${repo.top}/${l}`).filter((l) => !!host.stat(`${l}/.git`)) : null;
  }
  return out;
}

const GITLINK = 0o160000;

/** The paths of the gitlinks (submodules) in a repository's index; null when it cannot be read here (a split index). */
export function indexGitlinks(host: Pick<Host, "readBytes" | "stat" | "readText">, gitDir: string): string[] | null {
  const file = `${gitDir}/index`;
  const size = host.stat(file)?.size;
  if (size === undefined) return [];
  const buf = host.readBytes(file, Math.min(size, 256 * 1024 * 1024));
  if (!buf || buf.length < 12) return null;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  // One decoder for the whole index (it is read before and after every sandboxed run, 100k entries in a big repo).
  const text = new TextDecoder();
  if (text.decode(buf.subarray(0, 4)) !== "DIRC") return null;
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return null;
  const sha256 = /objectformat\s*=\s*sha256/i.test(host.readText(`${gitDir}/config`) ?? "");
  const hash = sha256 ? 32 : 20;
  const count = view.getUint32(8);
  const links: string[] = [];
  let at = 12;
  // Version 4 names each path from the previous one's bytes: kept as bytes (the strip count is in bytes), in one
  // buffer that grows as needed rather than a new array per entry.
  let prev = new Uint8Array(4096);
  let prevLen = 0;
  for (let i = 0; i < count; i++) {
    if (at + 40 + hash + 2 > buf.length) return null;
    const mode = view.getUint32(at + 24);
    const flags = view.getUint16(at + 40 + hash);
    let nameAt = at + 40 + hash + 2;
    if (version >= 3 && flags & 0x4000) nameAt += 2;
    let path: Uint8Array;
    if (version === 4) {
      // The path is the previous one less N bytes, then a NUL-terminated suffix (no padding).
      let b = buf[nameAt++];
      let strip = b & 0x7f;
      while (b & 0x80) {
        b = buf[nameAt++];
        strip = ((strip + 1) << 7) | (b & 0x7f);
      }
      const end = buf.indexOf(0, nameAt);
      if (end < 0) return null;
      const keep = Math.max(0, prevLen - strip);
      if (keep + end - nameAt > prev.length) {
        const grown = new Uint8Array(2 * (keep + end - nameAt));
        grown.set(prev.subarray(0, keep));
        prev = grown;
      }
      prev.set(buf.subarray(nameAt, end), keep);
      prevLen = keep + end - nameAt;
      path = prev.subarray(0, prevLen);
      at = end + 1;
    } else {
      const end = buf.indexOf(0, nameAt);
      if (end < 0) return null;
      path = buf.subarray(nameAt, end);
      // Padded with 1–8 NULs to a multiple of 8 from the entry's start.
      const start = at;
      at = start + ((nameAt - start + (end - nameAt) + 8) & ~7);
    }
    // Only a gitlink's path is decoded: the other entries are only stepped over.
    if ((mode & 0o170000) === GITLINK) links.push(text.decode(path));
  }
  // A split index keeps most entries in another file: not read here.
  if (text.decode(buf.subarray(at, at + 4)) === "link") return null;
  return links;
}
