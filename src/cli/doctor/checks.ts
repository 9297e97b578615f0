// The checks behind `subagents doctor`. Each returns one line's worth: a status, what was found, and for a
// failure the command or setting that fixes it. Read-only: nothing here creates or changes a file.
import { Database } from "bun:sqlite";
import * as fs from "node:fs";
import * as path from "node:path";
import pkg from "../../../package.json" with { type: "json" };
import { credentialsFix, envKeysFor } from "../../core/credentials.ts";
import { discoverProfiles } from "../../core/profiles/profile-discovery.ts";
import { SCHEMA_VERSION } from "../../core/store/store.ts";
import { MIN_FREE_BYTES } from "../../core/store/store-error.ts";
import { freeBytes } from "../../host/fs-parts.ts";
import { runtimeDir } from "../../host/child-extension-path.ts";
import { isCompiledBinary } from "../../host/embedded-pi.ts";
import { extensionSource, installedBundle, installedStub } from "../installed.ts";
import { childPiStatus, dbPath, type CliContext } from "../engine.ts";
import { versionLine } from "../version-info.ts";

export type CheckStatus = "ok" | "warn" | "fail";
export type Check = { name: string; status: CheckStatus; detail: string; fix?: string };

const ok = (name: string, detail: string): Check => ({ name, status: "ok", detail });
const warn = (name: string, detail: string, fix?: string): Check => ({
  name,
  status: "warn",
  detail,
  ...(fix ? { fix } : {}),
});
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: "fail", detail, fix });

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(readText(file) ?? "") as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function versionCheck(): Check {
  return ok("version", versionLine());
}

export function childPiCheck(cwd: string): Check {
  const { line, slow } = childPiStatus(cwd);
  if (line.startsWith("none"))
    return fail(
      "children",
      `no pi for sub-agents: ${line}`,
      "install pi (npm i -g @earendil-works/pi-coding-agent) or set subagents.childPi in settings.json",
    );
  if (slow) return warn("children", `sub-agents run ${line} — ${slow.detail}`, slow.fix);
  return ok("children", `sub-agents run ${line}`);
}

/** Where a provider's credentials come from (a name, never the secret), or null. */
export function credentialSource(ctx: CliContext, provider: string): string | null {
  const env = envKeysFor(provider).find((k) => !!ctx.host.env[k]);
  if (env) return `$${env}`;
  const auth = readJson(path.join(ctx.agentDir, "auth.json"));
  if (auth?.[provider]) return "auth.json";
  const models = readJson(path.join(ctx.agentDir, "models.json"));
  const providers = (models?.providers ?? {}) as Record<string, { apiKey?: unknown }>;
  if (providers[provider]?.apiKey) return "models.json";
  return null;
}

export function modelCheck(ctx: CliContext, cwd: string): Check {
  // pi's own settings: the project's .pi/settings.json overrides the global one, key by key.
  const global = readJson(path.join(ctx.agentDir, "settings.json")) ?? {};
  const project = readJson(path.join(cwd, ".pi", "settings.json")) ?? {};
  const provider = (project.defaultProvider ?? global.defaultProvider) as string | undefined;
  const model = (project.defaultModel ?? global.defaultModel) as string | undefined;
  if (!provider)
    return warn(
      "model",
      "no default model in pi's settings.json: pi picks one from the credentials it finds",
      "choose one in pi with /model (or set model: in your profiles)",
    );
  const name = `${provider}/${model ?? "(provider default)"}`;
  const source = credentialSource(ctx, provider);
  if (!source) return fail("model", `${name}: no credentials for ${provider}`, credentialsFix(provider));
  return ok("model", `${name}, credentials from ${source}`);
}

/** The nearest existing folder at or above p (where a new file would have to be created). */
function nearestExisting(p: string): string {
  let dir = p;
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

function sizeOf(file: string): number {
  let total = 0;
  for (const f of [file, `${file}-wal`]) total += fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** SQLite's own integrity check, the first few problems: a file whose `-wal` was deleted while it held pages can
 *  open, read and write as usual while its indexes no longer match its rows (quick_check does not compare them). */
function integrityProblems(db: Database): string[] {
  const rows = db.query("PRAGMA integrity_check(3)").all() as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).filter((p) => p !== "ok");
}

/** Only the indexes are wrong: the rows are whole, and rebuilding the indexes mends the file. */
const indexesOnly = (problems: string[]) =>
  problems.every((p) => /missing from index|wrong # of entries in index|non-unique entry in index/.test(p));

function damagedDatabase(file: string, problems: string[]): Check {
  return fail(
    "database",
    `${file} is damaged: ${problems.join("; ")}`,
    indexesOnly(problems)
      ? `its rows are whole, only indexes are wrong: rebuild them (sqlite3 ${file} REINDEX), or move the file aside (a new one is made)`
      : `move the file aside (a new one is made; sqlite3's .recover may save what it holds), or point SUBAGENTS_DB at another file`,
  );
}

export function databaseCheck(ctx: CliContext): Check {
  const file = dbPath(ctx);
  const fix = `point SUBAGENTS_DB at a writable file, or make ${path.dirname(file)} writable`;
  if (!fs.existsSync(file)) {
    const dir = nearestExisting(path.dirname(file));
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return fail("database", `${file} cannot be created: ${dir} is not a folder`, fix);
    try {
      fs.accessSync(dir, fs.constants.W_OK);
    } catch {
      return fail("database", `${file} cannot be created: ${dir} is not writable`, fix);
    }
    return ok("database", `${file} (created on first run)`);
  }
  const free = freeBytes(path.dirname(file));
  if (free !== null && free < MIN_FREE_BYTES)
    return fail(
      "database",
      `disk full: ${Math.floor(free / 1024)} KB free where ${file} lives`,
      "free some space there, or point SUBAGENTS_DB at another disk",
    );
  let db: Database | undefined;
  try {
    db = new Database(file, { readwrite: true });
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    // A write rolled back before it reaches the file: what a read-only or another user's database refuses (taking
    // the write lock alone does not prove it).
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec("CREATE TABLE write_probe (x)");
    } finally {
      db.exec("ROLLBACK");
    }
    const size = formatBytes(sizeOf(file));
    const damage = integrityProblems(db);
    if (damage.length) return damagedDatabase(file, damage);
    if (version > SCHEMA_VERSION)
      return fail(
        "database",
        `${file}: schema ${version} is newer than this build's ${SCHEMA_VERSION}`,
        "update subagents (a newer version wrote this database)",
      );
    return ok(
      "database",
      `${file}, schema ${version}${version < SCHEMA_VERSION ? ` (upgraded to ${SCHEMA_VERSION} on next run)` : ""}, ${size}`,
    );
  } catch (err) {
    return fail("database", `${file} is not writable: ${(err as Error).message}`, fix);
  } finally {
    db?.close();
  }
}

/** A `subagents` entry in pi's `packages` setting (`pi install npm:subagents`, a git URL or a local path). */
function piPackageEntry(ctx: CliContext): string | undefined {
  const packages = readJson(path.join(ctx.agentDir, "settings.json"))?.packages;
  if (!Array.isArray(packages)) return undefined;
  const sources = packages
    .map((p) => (typeof p === "string" ? p : (p as { source?: unknown })?.source))
    .filter((s): s is string => typeof s === "string");
  return sources.find((s) => /(^npm:subagents(@|$))|[/\\]subagents(\.git)?\/?$/.test(s));
}

export function extensionCheck(ctx: CliContext): Check[] {
  const file = path.join(ctx.agentDir, "extensions", "subagents.js");
  const pkgEntry = piPackageEntry(ctx);
  if (!fs.existsSync(file)) {
    if (pkgEntry)
      return [ok("extension", `installed as the pi package ${pkgEntry} (its version is what npm installed)`)];
    return [
      warn(
        "extension",
        `not installed: pi has no delegation tools (${path.dirname(file)} has no subagents.js)`,
        "subagents install, or pi install npm:subagents",
      ),
    ];
  }
  if (pkgEntry)
    return [
      warn(
        "extension",
        `installed twice: ${file} and the pi package ${pkgEntry}`,
        `remove one: subagents install --uninstall, or pi remove ${pkgEntry}`,
      ),
    ];
  let ours: string;
  try {
    ours = extensionSource();
  } catch {
    return [
      warn("extension", `${file} installed; this checkout has no built extension to compare with`, "npm run build"),
    ];
  }
  const checks: Check[] = [];
  const same =
    fs.readFileSync(file, "utf8") === installedStub(ctx.agentDir) && readText(installedBundle(ctx.agentDir)) === ours;
  if (same) checks.push(ok("extension", `${file}, same as this binary (${pkg.version})`));
  else
    checks.push(
      warn(
        "extension",
        `${file} differs from this binary's (${pkg.version}): installed by another version`,
        "subagents install",
      ),
    );
  const record = readJson(path.join(runtimeDir(ctx.agentDir), "binary.json"));
  if (isCompiledBinary() && record?.path !== process.execPath) {
    checks.push(
      warn(
        "binary",
        `sub-agents inside pi use ${typeof record?.path === "string" ? record.path : "no recorded binary"}, not ${process.execPath}`,
        "subagents install",
      ),
    );
  }
  return checks;
}

export function profilesCheck(ctx: CliContext, cwd: string): Check {
  const { profiles, diagnostics } = discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir });
  const folders = new Set<string>();
  for (const p of profiles.values()) if (p.source !== "builtin" && p.filePath) folders.add(path.dirname(p.filePath));
  const builtin = [...profiles.values()].filter((p) => p.source === "builtin").length;
  const where = folders.size ? `agent folders ${[...folders].join(", ")}` : "no agent folders found";
  const detail = `${profiles.size} profiles (${builtin} built in); ${where}`;
  if (diagnostics.length)
    return warn(
      "profiles",
      `${detail}; ${diagnostics.length} profile file(s) with errors`,
      "subagents profiles (names each file and the reason)",
    );
  return ok("profiles", detail);
}

export function settingsCheck(ctx: CliContext): Check {
  if (ctx.warnings.length)
    return warn("settings", ctx.warnings.join("; "), "fix the subagents section of settings.json");
  return ok("settings", "subagents settings valid");
}

export function terminalCheck(
  env: Record<string, string | undefined>,
  out: { isTTY?: boolean; columns?: number },
): Check {
  if (!out.isTTY)
    return warn("terminal", "stdout is not a terminal: delegate prints one line per change instead of live windows");
  const utf8 = /utf-?8/i.test(env.LC_ALL || env.LC_CTYPE || env.LANG || "");
  const color = !env.NO_COLOR && env.TERM !== "dumb";
  const detail = `${out.columns ? `${out.columns} columns` : "width unknown"}, ${color ? "colour" : "no colour"}, ${utf8 ? "UTF-8" : "no UTF-8 locale"}`;
  if (!utf8 || env.TERM === "dumb")
    return warn(
      "terminal",
      detail,
      "use a UTF-8 locale (LANG=en_US.UTF-8) and a TERM other than dumb for live windows",
    );
  return ok("terminal", detail);
}
