// Masks secrets in everything we return or store (keys, tokens, Authorization headers, GitHub
// tokens, user paths, overly long stack traces). Every pattern is linear: anchored on a fixed prefix and
// bounded character classes, so a megabyte of hostile text cannot make a regex backtrack for long.

import { escapeRegExp } from "./regexp.ts";

/** What a masked secret reads as, everywhere. */
export const REDACTED = "[REDACTED]";
const R = REDACTED;
/**
 * Start of a token: not preceded by a word character — or preceded by a JSON/C escape such as `\n`, because
 * text we sanitize is often JSON (tool arguments), where a secret on a new line follows a literal "\n".
 */
const B = String.raw`(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))`;
const re = (body: string, flags = "g") => new RegExp(B + body, flags);

type Rule = { re: RegExp; to: string | ((...m: string[]) => string) };

const RULES: Rule[] = [
  // PEM private keys: the whole block.
  {
    re: /-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY-----[\s\S]{0,20000}?-----END \1PRIVATE KEY-----/g,
    to: `-----BEGIN PRIVATE KEY----- ${R} -----END PRIVATE KEY-----`,
  },
  // Authorization headers (Bearer, Basic, token …).
  {
    re: /\b(authorization\s*[:=]\s*)(bearer|basic|token|bot)?\s*[A-Za-z0-9._~+/=-]{6,}/gi,
    to: (_m, k, scheme) => `${k}${scheme ? `${scheme} ` : ""}${R}`,
  },
  { re: /\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}/gi, to: (_m, k) => `${k} ${R}` },
  // Provider keys: Anthropic before OpenAI (sk-ant- is also sk-).
  { re: re(String.raw`sk-ant-[A-Za-z0-9_-]{16,}`), to: `sk-ant-${R}` },
  { re: re(String.raw`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), to: `sk-${R}` },
  // GitHub: classic and fine-grained.
  { re: re(String.raw`gh[pousr]_[A-Za-z0-9]{30,}`), to: `gh_${R}` },
  { re: re(String.raw`github_pat_[A-Za-z0-9_]{30,}`), to: `github_pat_${R}` },
  // GitLab, Slack, Google, Stripe-like, npm, Hugging Face.
  { re: re(String.raw`glpat-[A-Za-z0-9_-]{20,}`), to: `glpat-${R}` },
  { re: re(String.raw`xox[abprse]-[A-Za-z0-9-]{10,}`), to: `xox-${R}` },
  { re: re(String.raw`AIza[0-9A-Za-z_-]{35}`), to: `AIza${R}` },
  { re: re(String.raw`(?:sk|rk)_live_[A-Za-z0-9]{16,}`), to: R },
  { re: re(String.raw`npm_[A-Za-z0-9]{36}`), to: `npm_${R}` },
  { re: re(String.raw`hf_[A-Za-z0-9]{30,}`), to: `hf_${R}` },
  // AWS access key ids and secret assignments.
  { re: re(String.raw`(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}`), to: `AKIA${R}` },
  {
    re: /\b(aws_secret_access_key|aws_session_token)(\s*[:=]\s*["']?)[A-Za-z0-9/+=]{20,}/gi,
    to: (_m, k, sep) => `${k}${sep}${R}`,
  },
  // JWTs: three base64url segments, the first a JSON header.
  { re: re(String.raw`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), to: `eyJ${R}` },
  // Credentials in URLs.
  {
    re: /\b([a-z][a-z0-9+.-]{1,20}:\/\/)([^\s:/@]{1,100}):([^\s@/]{1,200})@/gi,
    to: (_m, scheme, user) => `${scheme}${user}:${R}@`,
  },
  // key=value / key: value assignments of secret-looking names.
  {
    re: /\b([A-Za-z0-9_.-]{0,40}(?:api[_-]?key|apikey|secret|token|password|passwd|pwd|access[_-]?key|private[_-]?key|client[_-]?secret)["']?)(\s*[:=]\s*)(["']?)(?![0-9]+\b)([^\s"',;}{\\]{4,})\3/gi,
    to: (_m, k, sep, q) => `${k}${sep}${q}${R}${q}`,
  },
  // Home directories: Linux and macOS users, root, Windows profiles (also with JSON-escaped backslashes).
  { re: /\b[A-Za-z]:(?:\\{1,2}|\/)Users(?:\\{1,2}|\/)[^\\/\s"'`]{1,64}/g, to: "~" },
  { re: /\/(?:home|Users)\/[A-Za-z0-9._-]{1,64}(?=\/|\b)/g, to: "~" },
  { re: /(?<![\w.-])\/root(?=\/|\b)/g, to: "~" },
];

/** The running user's home when it is elsewhere (`$HOME=/srv/ci`): masked too. Set by the host. */
let homeRule: Rule | null = null;

export function maskHomeDir(dir: string | undefined): void {
  const d = dir?.replace(/[\\/]+$/, "");
  if (!d || d.length < 2 || RULES.some((r) => d.replace(r.re, "") === "")) {
    homeRule = null;
    return;
  }
  const literal = escapeRegExp(d);
  homeRule = { re: new RegExp(`(?<![\\w.-])${literal}(?=[\\/]|\\b|$)`, "g"), to: "~" };
}

/** Secrets known by value (the values of an isolated task's `.worktreeinclude` files: secret-values.ts). */
let literalRule: RegExp | null = null;
const literals = new Set<string>();

/** Masks these exact values from now on in this process, wherever they appear. Values under 8 characters are not
 *  taken: masking them would blot out ordinary words. */
export function maskLiterals(values: string[]): void {
  const before = literals.size;
  for (const v of values) if (v.length >= 8) literals.add(v);
  if (literals.size === before) return;
  // Longest first, so a value that contains another is masked whole.
  const alternatives = [...literals].sort((a, b) => b.length - a.length).map(escapeRegExp);
  literalRule = new RegExp(alternatives.join("|"), "g");
}

const STACK_FRAME = /^\s+at\s.+$/;
const MAX_FRAMES = 10;

/** Keeps the first frames of each long stack trace and counts the rest. */
function shortenStacks(text: string): string {
  if (!text.includes("    at ")) return text;
  const lines = text.split("\n");
  const out: string[] = [];
  let run = 0;
  let hidden = 0;
  const flush = () => {
    if (hidden) out.push(`    … (${hidden} more frames)`);
    run = 0;
    hidden = 0;
  };
  for (const line of lines) {
    if (STACK_FRAME.test(line)) {
      run++;
      if (run > MAX_FRAMES) {
        hidden++;
        continue;
      }
    } else flush();
    out.push(line);
  }
  flush();
  return out.join("\n");
}

export function sanitize(text: string): string {
  if (!text) return text;
  let out = literalRule ? text.replace(literalRule, R) : text;
  for (const { re, to } of RULES) out = out.replace(re, to as string);
  if (homeRule) out = out.replace(homeRule.re, "~");
  return shortenStacks(out);
}

/**
 * Text a child wrote, made safe to print to a terminal: escape sequences (CSI: colours, cursor moves, clearing; OSC:
 * the window title, an OSC 52 clipboard write, hyperlinks; DCS, APC, PM, SOS strings; two-byte escapes such as a
 * reset) are dropped, in their 7-bit and 8-bit forms, and every other control character but newline and tab is shown
 * as its picture (`␛`, `␇`, a lone carriage return as `␍`, a C1 control as `␛` and its 7-bit letter), so nothing a
 * child writes can act on the terminal or hide what is around it. Linear: no pattern backtracks.
 */
export function printable(text: string): string {
  if (!text || !CONTROL.test(text)) return text;
  return text
    .replace(ESCAPES, "")
    .replace(/\r\n/g, "\n")
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => String.fromCharCode(c === "\x7f" ? 0x2421 : 0x2400 + c.charCodeAt(0)))
    .replace(/[\x80-\x9f]/g, (c) => `␛${String.fromCharCode(c.charCodeAt(0) - 0x40)}`);
}

/** Any control character but newline and tab: the common text has none and is returned as it is. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/** CSI (ESC [ or 0x9b) with its parameters; OSC, DCS, SOS, PM, APC strings up to their terminator (BEL, ST) or the
 *  next escape; any other escape and the bytes it takes. */
const ESCAPES =
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?/g;
