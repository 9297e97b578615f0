// The values in a file of settings and secrets (`.env`, `KEY: value` YAML, flat JSON) that must stay masked
// wherever a child's output shows them (sanitize.ts `maskLiterals`): an isolated task gets the ignored files its
// `.worktreeinclude` lists, and a child that prints one (`cat .env`, a failing test that echoes its config) must
// not put the secret into windows, results or the store. The pattern rules of sanitize.ts catch a value only when
// it is written next to a secret-looking name; these are the values themselves.

/** `KEY=value`, `export KEY="value"`, `key: value`, `"key": "value",` — one per line. */
const ASSIGNMENT = /^\s*(?:export\s+)?["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[=:]\s*(.*?)\s*,?\s*$/;
/** A name that says its value is a secret. */
const SECRET_NAME = /key|secret|token|passw|pwd|credential|auth|private|session|cookie|signature|dsn|salt/i;

function unquote(raw: string): string {
  const v = raw.replace(/\s+#.*$/, "");
  const q = v[0];
  if ((q === '"' || q === "'" || q === "`") && v.endsWith(q) && v.length >= 2) return v.slice(1, -1);
  return v;
}

/** A URL that carries a password (`scheme://user:pass@host`). */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^@\s]+@/i;

/** Looks generated rather than written: long, no spaces, letters and digits mixed (a token, a key, a hash), or a
 *  URL with a password; never words joined by dashes or dots (`my-little-app`, `debug-verbose-output`), a path, or a
 *  URL without credentials. */
function looksGenerated(v: string): boolean {
  if (URL_WITH_PASSWORD.test(v)) return true;
  if (v.length < 16 || /\s/.test(v) || /^[~.]?\//.test(v) || /^[a-z]+:\/\//i.test(v)) return false;
  const digits = (v.match(/[0-9]/g) ?? []).length;
  const letters = (v.match(/[A-Za-z]/g) ?? []).length;
  const longestWord = Math.max(0, ...(v.match(/[A-Za-z]+/g) ?? []).map((w) => w.length));
  // Words with a version or a number in them (`my-app-v2-production`) are written, not generated.
  if (longestWord >= 5 && digits < 3) return false;
  return (digits >= 3 && letters >= 3) || (v.length >= 32 && letters > 0 && /[^A-Za-z]/.test(v));
}

/** The values worth masking: every value of a secret-looking name, and every value that looks generated. */
export function secretValues(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split(/\r?\n/).slice(0, 5000)) {
    const m = ASSIGNMENT.exec(line);
    if (!m) continue;
    const value = unquote(m[2]);
    if (value.length < 8 || /^(true|false|null|yes|no|\d+(\.\d+)?)$/i.test(value)) continue;
    if (SECRET_NAME.test(m[1]) || looksGenerated(value)) out.add(value);
  }
  return [...out];
}
