// A git config a sandboxed child wrote, made harmless (nested-report.ts): git runs programs named in dozens of
// keys (core.fsmonitor, core.hooksPath, core.pager, core.sshCommand, filters, diff and merge drivers, aliases,
// credential helpers, includes that pull in more), so the rule is an allow list of keys that only hold data — what
// `git init` and `git clone` write, a remote's URL, a branch's upstream, the author — and everything else goes.
// The kept keys are written back in canonical form (quoted, escaped), so what git reads is exactly what was checked,
// whatever odd syntax the original used; a line this parser does not understand is dropped, never kept.

/** section.key (subsection-free), or section.*.key for keys under a named subsection. */
const SAFE = new Set([
  "core.repositoryformatversion",
  "core.filemode",
  "core.bare",
  "core.logallrefupdates",
  "core.ignorecase",
  "core.precomposeunicode",
  "core.symlinks",
  "core.autocrlf",
  "core.eol",
  "core.safecrlf",
  "core.quotepath",
  "core.sharedrepository",
  "extensions.objectformat",
  "init.defaultbranch",
  "user.name",
  "user.email",
  "remote.*.url",
  "remote.*.pushurl",
  "remote.*.fetch",
  "remote.*.push",
  "remote.*.tagopt",
  "remote.*.prune",
  "branch.*.remote",
  "branch.*.pushremote",
  "branch.*.merge",
  "branch.*.rebase",
  "submodule.*.url",
  "submodule.*.active",
]);

/** Transports that run a command (git refuses ext:: and fd:: by default; a URL is checked anyway). */
const COMMAND_URL = /^\s*(ext|fd)::/i;

type Line = { section: string; sub: string | null; key: string; value: string | null };

/** The config's settings in order; `bad` counts lines that were not understood. */
export function parseGitConfig(text: string): { lines: Line[]; bad: number } {
  const lines: Line[] = [];
  let bad = 0;
  let section = "";
  let sub: string | null = null;
  // A backslash at the end of a line continues the value on the next one.
  const joined = text.replace(/\\\r?\n/g, "");
  for (let raw of joined.split(/\r?\n/)) {
    const head = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(raw);
    if (head) {
      const name = head[1].toLowerCase();
      const dot = name.indexOf(".");
      // [section.sub] is the old spelling of [section "sub"].
      section = dot < 0 ? name : name.slice(0, dot);
      sub = head[2] !== undefined ? head[2].replace(/\\(.)/g, "$1") : dot < 0 ? null : name.slice(dot + 1);
      raw = head[3];
    } else if (/^\s*\[/.test(raw)) {
      bad++;
      section = "";
      continue;
    }
    if (/^\s*([#;].*)?$/.test(raw)) continue;
    const kv = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(raw);
    if (!kv || !section) {
      bad++;
      continue;
    }
    const value = kv[2] === undefined ? null : unquote(kv[2]);
    if (value === undefined) {
      bad++;
      continue;
    }
    lines.push({ section, sub, key: kv[1].toLowerCase(), value });
  }
  return { lines, bad };
}

/** A value as git reads it: quotes joined, escapes resolved, a comment outside quotes cut; undefined if odd. */
function unquote(v: string): string | undefined {
  let out = "";
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === "\\") {
      const n = v[++i];
      if (n === "n") out += "\n";
      else if (n === "t") out += "\t";
      else if (n === "b") out = out.slice(0, -1);
      else if (n === '"' || n === "\\") out += n;
      else return undefined;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === "#" || c === ";")) break;
    else out += c;
  }
  return quoted ? undefined : out.trim();
}

const name = (l: Line) => (l.sub === null ? `${l.section}.${l.key}` : `${l.section}.${l.sub}.${l.key}`);
const safe = (l: Line) =>
  SAFE.has(l.sub === null ? `${l.section}.${l.key}` : `${l.section}.*.${l.key}`) &&
  !(l.key.endsWith("url") && COMMAND_URL.test(l.value ?? ""));

const quote = (v: string) =>
  `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t")}"`;

/**
 * The config with only data-holding keys, and the names of what was taken out (each once; "unreadable line" for
 * lines not understood). `removed` empty: the text is returned unchanged.
 */
export function safeGitConfig(text: string): { text: string; removed: string[] } {
  const { lines, bad } = parseGitConfig(text);
  const removed = [...new Set(lines.filter((l) => !safe(l)).map(name))];
  if (bad) removed.push(`${bad} unreadable line${bad === 1 ? "" : "s"}`);
  if (!removed.length) return { text, removed };
  const out: string[] = [];
  let header = "";
  for (const l of lines.filter(safe)) {
    const h = l.sub === null ? `[${l.section}]` : `[${l.section} ${quote(l.sub)}]`;
    if (h !== header) out.push((header = h));
    out.push(l.value === null ? `\t${l.key}` : `\t${l.key} = ${quote(l.value)}`);
  }
  return { text: out.length ? `${out.join("\n")}\n` : "", removed };
}
