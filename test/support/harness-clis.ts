// Other harnesses' real CLIs for the runtime tests (issue 27): installed from npm once, into a cache folder
// (never package.json: they are hundreds of MB each), and pointed at scripted servers on 127.0.0.1 with
// dummy keys and every update check, telemetry and error report turned off.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./pi-env.ts";
import { cannotRun } from "./engines.ts";

export const HARNESS_CLIS = {
  "claude-code": { pkg: "@anthropic-ai/claude-code", version: "2.1.337", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.171.0", bin: "codex" },
  gemini: { pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
  opencode: { pkg: "opencode-ai", version: "1.18.33", bin: "opencode" },
} as const;
export type HarnessName = keyof typeof HARNESS_CLIS;

export const CLI_CACHE = join(REPO, "node_modules", ".cache", "harness-clis");

async function run(cmd: string[], timeoutMs: number): Promise<{ code: number; stderr: string }> {
  const p = Bun.spawn({ cmd, stdout: "ignore", stderr: "pipe", timeout: timeoutMs });
  const stderr = await new Response(p.stderr).text();
  return { code: await p.exited, stderr };
}

/** The folder holding the CLI's program (for PATH), or null with the reason it could not be had. */
export async function ensureHarnessCli(name: HarnessName): Promise<{ binDir: string } | { skip: string }> {
  const { pkg, version, bin } = HARNESS_CLIS[name];
  const prefix = join(CLI_CACHE, name);
  const binDir = join(prefix, "node_modules", ".bin");
  const manifest = join(prefix, "node_modules", ...pkg.split("/"), "package.json");
  const installed =
    existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version === version;
  if (installed && existsSync(join(binDir, bin))) return { binDir };
  mkdirSync(prefix, { recursive: true });
  // Without this the install would climb up to our own package.json.
  if (!existsSync(join(prefix, "package.json"))) writeFileSync(join(prefix, "package.json"), '{"private":true}\n');
  const reach = await run(["npm", "view", `${pkg}@${version}`, "version"], 30_000);
  if (reach.code !== 0)
    return {
      skip: cannotRun(
        `the ${name} CLI tests`,
        `the npm registry cannot be reached (npm view ${pkg}: ${reach.stderr.trim().split("\n").at(-1)})`,
      ),
    };
  const r = await run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, `${pkg}@${version}`], 300_000);
  if (r.code !== 0 || !existsSync(join(binDir, bin)))
    return {
      skip: cannotRun(
        `the ${name} CLI tests`,
        `npm install ${pkg}@${version} failed: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`,
      ),
    };
  return { binDir };
}

/** Variables that keep every CLI off the network except our server (none of them needs more to run). */
export const QUIET_ENV: Record<string, string> = {
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  GEMINI_TELEMETRY_ENABLED: "false",
  GEMINI_CLI_NO_RELAUNCH: "true",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_SHARE: "1",
  NO_UPDATE_NOTIFIER: "1",
};

/** Each CLI's own configuration in the test's HOME, pointed at the scripted servers; returns its variables. */
export function configureHarness(
  name: HarnessName,
  home: string,
  urls: { origin: string; chatBaseUrl: string },
): Record<string, string> {
  switch (name) {
    case "claude-code":
      return { ANTHROPIC_BASE_URL: urls.origin, ANTHROPIC_API_KEY: "sk-ant-scripted", IS_SANDBOX: "1" };
    case "codex": {
      const dir = join(home, ".codex");
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, "config.toml"),
        [
          'model = "gpt-scripted"',
          'model_provider = "scripted"',
          "check_for_update_on_startup = false",
          "[analytics]",
          "enabled = false",
          "[model_providers.scripted]",
          'name = "scripted"',
          `base_url = "${urls.origin}/v1"`,
          'env_key = "SCRIPTED_API_KEY"',
          'wire_api = "responses"',
          "",
        ].join("\n"),
      );
      return { CODEX_HOME: dir, SCRIPTED_API_KEY: "scripted" };
    }
    case "gemini": {
      const dir = join(home, ".gemini");
      mkdirSync(dir, { recursive: true });
      const settings = {
        security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      };
      writeFileSync(join(dir, "settings.json"), JSON.stringify(settings));
      return { GEMINI_API_KEY: "scripted", GOOGLE_GEMINI_BASE_URL: urls.origin };
    }
    case "opencode": {
      const file = join(home, "opencode-test.json");
      const config = {
        provider: {
          scripted: {
            npm: "@ai-sdk/openai-compatible",
            name: "Scripted",
            options: { baseURL: urls.chatBaseUrl, apiKey: "scripted" },
            models: { "fake-model": { name: "fake" } },
          },
        },
        model: "scripted/fake-model",
        small_model: "scripted/fake-model",
        autoupdate: false,
        share: "disabled",
      };
      writeFileSync(file, JSON.stringify(config));
      return {
        OPENCODE_CONFIG: file,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_DATA_HOME: join(home, ".local", "share"),
        XDG_CACHE_HOME: join(home, ".cache"),
        XDG_STATE_HOME: join(home, ".local", "state"),
      };
    }
  }
}
