// Security: secrets a child prints never reach what we return, store, or mirror into the parent session.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, REPO, type PiWorld } from "../support/pi-env.ts";

const gen = (n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 11 + 5) % alphabet.length]).join("");

// Assembled at run time: 16 formats (provider keys, tokens, headers and the common cloud ones).
const SECRETS = [
  `sk-${gen(48)}`,
  `sk-proj-${gen(48)}`,
  `sk-ant-api03-${gen(80)}`,
  `ghp_${gen(36)}`,
  `gho_${gen(36)}`,
  `github_pat_${gen(22)}_${gen(59)}`,
  `AKIA${gen(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
  `xoxb-${gen(12, "0123456789")}-${gen(24)}`,
  `AIza${gen(35)}`,
  `eyJ${gen(24)}.eyJ${gen(40)}.${gen(43)}`,
  `glpat-${gen(20)}`,
  `npm_${gen(36)}`,
  `hf_${gen(34)}`,
];
const CONTEXT_SECRET = gen(32);
const CONTEXTUAL = [
  `Authorization: Bearer ${CONTEXT_SECRET}`,
  `password=${CONTEXT_SECRET}`,
  `aws_secret_access_key = ${CONTEXT_SECRET}`,
  `https://user:${CONTEXT_SECRET}@example.com/repo.git`,
  `-----BEGIN PRIVATE KEY-----\n${CONTEXT_SECRET}\n-----END PRIVATE KEY-----`,
];
const LEAKY = [...SECRETS, ...CONTEXTUAL].join("\n");

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const assertClean = (where: string, text: string) => {
  for (const s of [...SECRETS, CONTEXT_SECRET]) {
    const at = text.indexOf(s);
    expect(at === -1, `${where} leaks ${s.slice(0, 12)}… in: ${text.slice(Math.max(0, at - 150), at + 20)}`).toBe(true);
  }
};

test("secrets in a child's output never reach the CLI output, the store, or the transcript", async () => {
  const r = await cli(world, [
    "run",
    "default",
    `leak ${script([{ text: LEAKY }, { finalize: { status: "SUCCESS", result: LEAKY } }])}`,
    "--json",
  ]);
  assertClean("run --json", r.stdout + r.stderr);
  const id = r.json.at(-1)!.tasks[0].sessionId;
  assertClean("output", (await cli(world, ["output", id])).stdout);
  assertClean("session", (await cli(world, ["session", id])).stdout);
  expect((await cli(world, ["output", id])).stdout).toContain("[REDACTED]");
}, 60_000);

test("secrets never reach the pi tool result, its details, or the parent session file", async () => {
  const sessionFile = join(world.root, `secure-parent-${Date.now()}.jsonl`);
  const inner = `[[script:${JSON.stringify([{ finalize: { status: "SUCCESS", result: LEAKY } }])}]]`;
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "bun"), "-p", "--session", sessionFile, "-e", join(REPO, "dist", "extension.js")],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(
      `p ${script([
        {
          tools: [
            { name: "delegate_to_subagents", args: { tasks: [{ name: "leaky", prompt: `leak ${inner}` }] } },
            { name: "subagent", args: { agent: "scout", task: `leak ${inner}` } },
          ],
        },
        { text: "ok" },
      ])}`,
    ),
    stdout: "ignore",
    stderr: "ignore",
  });
  expect(await proc.exited).toBe(0);
  const text = readFileSync(sessionFile, "utf8");
  expect(text).toContain("[REDACTED]");
  // The parent session holds the tool results (content + details) and the appendEntry mirrors.
  const withoutPrompts = text
    .split("\n")
    .filter((l) => l && !l.includes('"role":"user"') && !(l.includes('"role":"assistant"') && l.includes('"toolCall"')))
    .join("\n");
  assertClean("parent session", withoutPrompts);
}, 60_000);
