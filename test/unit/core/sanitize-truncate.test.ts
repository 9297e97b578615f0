// Secret masking (15+ formats, no false positives, linear time) and head+tail truncation.
import { expect, test } from "bun:test";
import { maskHomeDir, printable, sanitize } from "../../../src/core/sanitize.ts";
import { TailBuffer, truncateHeadTail, utf8Length } from "../../../src/core/truncate.ts";

// Built at run time so this file itself holds no literal secrets.
const rnd = (n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 7 + 3) % alphabet.length]).join("");

const SECRETS: Record<string, string> = {
  openai: `sk-${rnd(40)}`,
  openaiProject: `sk-proj-${rnd(40)}`,
  anthropic: `sk-ant-api03-${rnd(60)}`,
  githubClassic: `ghp_${rnd(36)}`,
  githubOauth: `gho_${rnd(36)}`,
  githubFineGrained: `github_pat_${rnd(22)}_${rnd(59)}`,
  awsKeyId: `AKIA${rnd(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
  slack: `xoxb-${rnd(12, "0123456789")}-${rnd(24)}`,
  google: `AIza${rnd(35)}`,
  jwt: `eyJ${rnd(20)}.eyJ${rnd(30)}.${rnd(43)}`,
  gitlab: `glpat-${rnd(20)}`,
  npm: `npm_${rnd(36)}`,
  huggingface: `hf_${rnd(34)}`,
};

test("masks every bare secret format", () => {
  for (const [kind, secret] of Object.entries(SECRETS)) {
    const out = sanitize(`before ${secret} after`);
    expect(out, kind).not.toContain(secret);
    expect(out, kind).toContain("[REDACTED]");
    expect(out, kind).toStartWith("before ");
    expect(out, kind).toEndWith(" after");
  }
});

test("masks secrets in context: headers, assignments, URLs, PEM blocks, AWS secrets", () => {
  const secret = rnd(40);
  const cases = [
    `Authorization: Bearer ${secret}`,
    `curl -H "Authorization: Basic ${secret}"`,
    `api_key=${secret}`,
    `"apiKey": "${secret}"`,
    `OPENAI_API_KEY=${secret}`,
    `password: ${secret}`,
    `client_secret=${secret}`,
    `aws_secret_access_key = ${secret}`,
    `postgres://admin:${secret}@db.internal:5432/app`,
    `-----BEGIN RSA PRIVATE KEY-----\n${secret}\n${secret}\n-----END RSA PRIVATE KEY-----`,
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${secret}\n-----END OPENSSH PRIVATE KEY-----`,
  ];
  for (const c of cases) {
    const out = sanitize(c);
    expect(out, c).not.toContain(secret);
  }
  expect(sanitize(`api_key=${secret}`)).toBe("api_key=[REDACTED]");
  expect(sanitize(`postgres://admin:${secret}@db`)).toBe("postgres://admin:[REDACTED]@db");
});

test("leaves ordinary text alone", () => {
  const text = [
    "task-1 and risk-assessment are fine; the skeleton is done.",
    "session a3f7b9c2d1e8f4a1 completed with max_tokens: 4096 and token=12345",
    "const sk = 'short'; // sk-1 is a label",
    "Base64 in prose: SGVsbG8gd29ybGQ= is 'Hello world'.",
    "https://example.com/path?q=1",
  ].join("\n");
  expect(sanitize(text)).toBe(text);
});

test("home paths become ~ and long stack traces are shortened", () => {
  expect(sanitize("see /home/alice/project/x.ts and /Users/bob/y.ts")).toBe("see ~/project/x.ts and ~/y.ts");
  const stack = [
    "Error: boom",
    ...Array.from({ length: 30 }, (_, i) => `    at frame${i} (file.js:${i}:1)`),
    "after",
  ].join("\n");
  const out = sanitize(stack);
  expect(out).toContain("at frame9 ");
  expect(out).not.toContain("at frame10 ");
  expect(out).toContain("… (20 more frames)");
  expect(out).toEndWith("after");
});

test("every home is masked: root, Windows profiles (plain and JSON-escaped), and this user's $HOME elsewhere", () => {
  expect(sanitize("cat /root/.bashrc; ls /root")).toBe("cat ~/.bashrc; ls ~");
  expect(sanitize("/srv/root/x and /rootfs stay")).toBe("/srv/root/x and /rootfs stay");
  expect(sanitize(String.raw`C:\Users\Carol\repo\a.ts`)).toBe(String.raw`~\repo\a.ts`);
  expect(sanitize(String.raw`{"path":"C:\\Users\\Carol\\repo"}`)).toBe(String.raw`{"path":"~\\repo"}`);
  expect(sanitize("D:/Users/dave/x")).toBe("~/x");
  maskHomeDir("/srv/ci-home");
  try {
    expect(sanitize("wrote /srv/ci-home/out.txt; /srv/ci-home2 is another")).toBe(
      "wrote ~/out.txt; /srv/ci-home2 is another",
    );
  } finally {
    maskHomeDir(undefined);
  }
  expect(sanitize("/srv/ci-home/out.txt")).toBe("/srv/ci-home/out.txt");
});

test('a head+tail cut inside one long line says how much was cut, without "0 lines"', () => {
  const t = truncateHeadTail("x".repeat(6_000), { maxBytes: 1_000, maxLines: 100 });
  expect(t.truncated).toBe(true);
  const marker = t.text.split("\n")[1];
  expect(marker).toBe("… [4.9 KB omitted] …");
});

test("linear time on adversarial input (1 MB): ten times the input costs about ten times the CPU, not a hundred", () => {
  // CPU time, not wall time (another process on the machine does not change it), and a ratio, not a bound.
  const cpuMs = (f: () => void) => {
    const t = process.cpuUsage();
    f();
    const d = process.cpuUsage(t);
    return (d.user + d.system) / 1000;
  };
  const shapes: [string, number][] = [
    ["sk-", 350_000],
    ["a", 1_000_000],
    ["-----BEGIN PRIVATE KEY-----\n", 20_000],
    ["api_key=", 120_000],
    ["eyJ", 330_000],
  ];
  for (const [unit, n] of shapes) {
    const small = Math.max(
      1,
      cpuMs(() => sanitize(unit.repeat(n / 10))),
    );
    const big = cpuMs(() => sanitize(unit.repeat(n)));
    // Linear is ~10×; quadratic would be ~100×. Below a few ms the clock's grain dominates, so small is at least 1.
    expect(
      big / small,
      `${JSON.stringify(unit)} × ${n}: ${big.toFixed(1)} ms of CPU vs ${small.toFixed(1)} ms for a tenth`,
    ).toBeLessThan(40);
  }
});

test("truncateHeadTail keeps head and tail, marks the cut, never splits a character", () => {
  const text = Array.from({ length: 1000 }, (_, i) => `line ${i} ✓🙂`).join("\n");
  const t = truncateHeadTail(text, { maxBytes: 2000, maxLines: 40, hint: "see output ID" });
  expect(t.truncated).toBe(true);
  expect(t.text).toStartWith("line 0 ✓🙂");
  expect(t.text).toEndWith("line 999 ✓🙂");
  expect(t.text).toContain("lines /");
  expect(t.text).toContain("see output ID");
  expect(utf8Length(t.text)).toBeLessThan(2300);
  expect(t.text).not.toContain("\uFFFD");
  for (const ch of t.text) expect(ch.codePointAt(0)! < 0xd800 || ch.codePointAt(0)! > 0xdfff).toBe(true);
  const small = truncateHeadTail("short", { maxBytes: 100, maxLines: 10 });
  expect(small).toEqual({ text: "short", truncated: false, omittedLines: 0, omittedBytes: 0 });
  const oneLine = truncateHeadTail("x".repeat(10_000), { maxBytes: 1000, maxLines: 10 });
  expect(oneLine.truncated).toBe(true);
  expect(utf8Length(oneLine.text)).toBeLessThan(1200);
});

test("TailBuffer keeps only the last bytes", () => {
  const b = new TailBuffer(100);
  for (let i = 0; i < 10_000; i++) b.append(`chunk ${i}\n`);
  const s = b.toString();
  expect(s.length).toBeLessThanOrEqual(101);
  expect(s).toEndWith("chunk 9999\n");
});

test("printable: a child's escape sequences act on nothing (window title, OSC 52 clipboard, clear screen, reset, 8-bit CSI, hyperlinks, DCS); other controls are shown; text, newlines and tabs stay", () => {
  const cases: [string, string][] = [
    ["plain ✓ ünï\n\tindented", "plain ✓ ünï\n\tindented"],
    ["\x1b]0;pwned\x07after", "after"],
    ["\x1b]52;c;cm0gLXJmIH4=\x07copied?", "copied?"],
    ["\x1b]52;c;cm0gLXJmIH4=\x1b\\st", "st"],
    ["a\x1b[2J\x1b[Hb", "ab"],
    ["\x1bcreset", "reset"],
    ["\u009b31mred\u009b0m", "red"],
    ["\u009d0;t\u009cx", "x"],
    ["\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x1b\\", "link"],
    ["\x1bP+q544e\x1b\\dcs", "dcs"],
    ["hide\rshow", "hide␍show"],
    ["crlf\r\nline", "crlf\nline"],
    ["bell\x07 nul\x00 bs\x08 del\x7f", "bell␇ nul␀ bs␈ del␡"],
    ["\u0085next", "␛Enext"],
    ["cut \x1b", "cut "],
  ];
  for (const [given, shown] of cases) expect(printable(given), JSON.stringify(given)).toBe(shown);
  // Nothing that acts on a terminal is left in any of them.
  for (const [given] of cases) expect(printable(given)).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  // Linear on hostile input.
  const t0 = performance.now();
  printable(`\x1b]${"x".repeat(1_000_000)}`);
  printable("\x1b[".repeat(300_000));
  expect(performance.now() - t0).toBeLessThan(2000);
});
