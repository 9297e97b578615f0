// What a child tried to do to the protected paths of its folders (sandbox-guard.ts), and what is done about it, as
// the task's warnings: the writes the sandbox refused, found in its tool results (the error names the path: "…/.git/hooks/pre-commit:
// Read-only file system", "could not write config file .git/config: Device or resource busy" — a protected file
// is its own mount point, so replacing it is EBUSY rather than EROFS), protected paths that were missing at the
// start and exist now (moved aside: `NAME.quarantined`), and what it planted below the top (nested-report.ts).
import type { Host } from "../../host.ts";
import { escapeRegExp } from "../../regexp.ts";
import { listed } from "../../string-list.ts";
import type { StoredMessage } from "../../types.ts";
import type { SandboxGuard } from "./sandbox-guard.ts";
import { disarmNested, folderFs, quarantine } from "./nested-report.ts";
import { under } from "./sandbox.ts";

const REFUSED = /read-only file system|resource busy|\bEROFS\b|\bEBUSY\b/i;
const MAX = 5;

/** The protected path a refusal line names, as written there (absolute or relative to the task folder). */
function named(line: string, guard: SandboxGuard): string | null {
  for (const p of guard.watched) {
    // Stored tool results name the home folder `~` (sanitize.ts).
    const forms = [
      p,
      ...(guard.home && p.startsWith(`${guard.home}/`) ? [`~${p.slice(guard.home.length)}`] : []),
      ...guard.roots.filter((r) => p.startsWith(`${r}/`)).map((r) => p.slice(r.length + 1)),
    ];
    for (const f of forms) {
      const m = new RegExp(
        `(?:^|[\\s'"\`‘(=:])(?:\\./)?(${escapeRegExp(f)}(?:/[^\\s'"\`’:)]*)?)(?=$|[\\s'"\`’:)])`,
      ).exec(line);
      if (m) return m[1];
    }
  }
  return null;
}

/** The writes to protected paths the sandbox refused, found in the child's tool results: a warning naming them. */
export function refusedWrites(guard: SandboxGuard | undefined, messages: StoredMessage[]): string[] {
  if (!guard) return [];
  const refused = new Set<string>();
  for (const m of messages) {
    if (m.role !== "toolResult" || !m.text || !REFUSED.test(m.text)) continue;
    for (const line of m.text.split("\n")) {
      if (!REFUSED.test(line)) continue;
      const p = named(line, guard);
      if (p) refused.add(p);
    }
  }
  const list = [...refused];
  return list.length
    ? [
        `sandbox: refused the child's write to ${listed(list, MAX)} (protected: code there would run later outside the sandbox; subagents.sandboxWritable opens a path on purpose)`,
      ]
    : [];
}

/**
 * Acts on what the child planted where tools would run it later: protected paths that were missing at the start
 * and exist now are moved aside (`NAME.quarantined`; a `.git/commondir` removed), and what it planted below the top
 * is taken out (nested-report.ts disarmNested). Returns what it did, as the task's warnings.
 */
export function setPlantedAside(
  host: Pick<Host, "stat" | "listDir" | "readText" | "readBytes" | "within">,
  guard: SandboxGuard | undefined,
): string[] {
  if (!guard) return [];
  const out: string[] = [];
  for (const p of guard.missing) {
    // Looked at as the path itself: a link the child made there counts as made (a dangling one too), and is moved
    // as the link it is, never followed.
    const fs = folderFs(host, guard.writable ?? guard.roots, p);
    if (!fs?.info(p)) continue;
    // A main repository's git folder never has one: it points git at another folder's config and hooks.
    if (p.endsWith("/.git/commondir")) {
      const gone = fs.remove(p);
      out.push(
        `sandbox: the child created ${p}, which would point git at another config and hooks: ${gone ? "removed" : "could not be removed, remove it yourself"}`,
      );
      continue;
    }
    const to = quarantine(fs, p);
    out.push(
      to
        ? `sandbox: the child created ${p} (a protected path: tools run what is there): moved aside to ${to}; look at it before you move it back`
        : `sandbox: the child created ${p} (a protected path: tools run what is there); check it before you open the folder`,
    );
  }
  // Paths opened with subagents.sandboxWritable are the person's choice: left as they are.
  const opened = (p: string) => (guard.open ?? []).some((o) => under(p, o));
  return [...out, ...disarmNested(host, guard, opened)];
}
