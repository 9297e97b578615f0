// The embedded pi builds its load-time validators lazily and checks models.json by interpreting the schema
// (src/embedded/lazy-validators.ts). What a user sees must be exactly what pi's own build says: the same
// complaint about a broken models.json, and the same models from a good one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { piCmd, REPO } from "../../support/pi-env.ts";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "validators-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function listModels(cmd: string[], modelsJson: unknown, extraEnv: Record<string, string> = {}): Promise<string> {
  const agentDir = join(root, `agent-${Math.random().toString(36).slice(2)}`);
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(join(agentDir, "models.json"), JSON.stringify(modelsJson));
  const proc = Bun.spawn({
    cmd: [...cmd, "--list-models"],
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: root,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      ...extraEnv,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  // pi's hint names its docs folder, which is a cache folder for the embedded pi: the one line that may differ.
  return (out + err).replaceAll(agentDir, "<agent>").replace(/^ *\S*\/docs\/\w+\.md$/gm, "<docs>");
}

const embedded = [join(REPO, "dist", "subagents")];
const cases: [string, unknown][] = [
  [
    "a wrong type and a missing field",
    { providers: { local: { baseUrl: 5, api: "openai-completions", apiKey: "k", models: [{ name: "no id" }] } } },
  ],
  ["an unknown top-level shape", { providers: [] }],
  [
    "a valid provider",
    {
      providers: {
        local: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          apiKey: "k",
          models: [{ id: "valid-model-x" }],
        },
      },
    },
  ],
];

for (const [what, modelsJson] of cases) {
  test(`models.json with ${what}: the embedded pi says what pi under Node 24 says`, async () => {
    const [ours, theirs] = await Promise.all([
      listModels(embedded, modelsJson, { SUBAGENTS_ROLE: "pi" }),
      listModels(piCmd("current", "node"), modelsJson),
    ]);
    expect(ours).toBe(theirs);
    if (what === "a valid provider") expect(ours).toContain("valid-model-x");
    else expect(ours).toContain("Invalid models.json schema");
  });
}
