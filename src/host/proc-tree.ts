// Finds every live descendant of a process by reading /proc (Linux). pi's bash tool puts each command in its
// own process group, so killing our child's group would miss them: we walk parent links instead.
import * as fs from "node:fs";
import { execFileSync } from "node:child_process";

function parentLinks(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  const add = (pid: number, ppid: number) => {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  };
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return psLinks();
  }
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue;
    }
    // Field 2 (comm) may contain spaces and parentheses: parse from the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (rest[0] === "Z") continue;
    add(Number(name), Number(rest[1]));
  }
  return children;
}

/** Fallback for systems without /proc (macOS). */
function psLinks(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  try {
    const out = execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" });
    for (const line of out.split("\n")) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (!pid) continue;
      const list = children.get(ppid);
      if (list) list.push(pid);
      else children.set(ppid, [pid]);
    }
  } catch {
    // No ps either: nothing to find.
  }
  return children;
}

export function descendantsOf(pid: number): number[] {
  const links = parentLinks();
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const next = links.get(queue.shift()!) ?? [];
    for (const child of next) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}
