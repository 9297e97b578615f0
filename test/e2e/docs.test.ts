// Docs that cannot drift: what the code offers (each --help, the pi tools' schemas, the settings parser) is
// named in docs/, every relative link resolves, the README stays short, and the examples marked `doc-test` run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { defaultSettings, mergeSettings } from "../../src/core/settings.ts";
import { TASK_FIELDS } from "../../src/core/task-fields.ts";
import { DELEGATE_SCHEMA, OUTPUT_SCHEMA, SESSION_ID_SCHEMA, SUBAGENT_SCHEMA } from "../../src/core/call/schemas.ts";
import { BUN, cli, piWorld, REPO, type PiWorld } from "../support/pi-env.ts";
import { RUN_END, RUN_START, withLatestRun } from "../../bench/page.ts";

const DOCS = join(REPO, "docs");
const read = (file: string) => readFileSync(file, "utf8");
const PAGES = [
  join(REPO, "README.md"),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(DOCS, f)),
];

/** The text of a page with its fenced code blocks kept (options are often shown in them). */
const page = (name: string) => read(join(DOCS, name));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

/** The anchors a Markdown page defines (headings outside code blocks; repeats get -1, -2, … as on GitHub). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Every `--option` and `-x` a help text names, anywhere in it (usage lines, options, prose). */
function optionsIn(help: string): string[] {
  return [...new Set([...help.matchAll(/(?<![\w/-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])/g)].map((m) => m[1]))];
}

/** A whole-token match: `--max-cost` must not count as found inside `--max-cost-x`. */
const names = (text: string, option: string) =>
  new RegExp(`(?<![\\w-])${option.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`).test(text);

/** The section of cli.md under `### subagents CMD`, up to the next heading of the same or a higher level. */
function commandSection(cliMd: string, cmd: string): string | null {
  const lines = cliMd.split("\n");
  const start = lines.indexOf(`### subagents ${cmd}`);
  if (start < 0) return null;
  let end = start + 1;
  while (end < lines.length && !/^#{1,3} /.test(lines[end])) end++;
  return lines.slice(start, end).join("\n");
}

/** Pages (under docs/) a section links to: an option may be documented on the page a command points to. */
const linkedPages = (section: string) =>
  [...section.matchAll(/\]\(([\w.-]+\.md)(#[^)]*)?\)/g)].map((m) => join(DOCS, m[1])).filter((f) => existsSync(f));

async function help(args: string[]): Promise<string> {
  const proc = Bun.spawn({
    cmd: [BUN, join(REPO, "src", "cli", "main.ts"), ...args, "--help"],
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`subagents ${args.join(" ")} --help exited ${code}: ${err.slice(-500)}`);
  return out;
}

describe("docs/cli.md", () => {
  const cliMd = page("cli.md");

  test("names every command of `subagents --help`, each with a section that names every option its --help prints", async () => {
    const main = await help([]);
    const block = main.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
    const commands = block
      .split("\n")
      .map((l) => /^ {2}([a-z][\w-]*)/.exec(l)?.[1])
      .filter((c): c is string => !!c);
    expect(commands.length, `no commands parsed from:\n${main}`).toBeGreaterThan(10);
    for (const option of optionsIn(main.split("Options:")[1] ?? ""))
      expect(names(cliMd, option), `subagents --help prints ${option}, docs/cli.md does not name it`).toBe(true);

    const helps = await Promise.all(commands.map(async (cmd) => [cmd, await help([cmd])] as const));
    const missing: string[] = [];
    for (const [cmd, text] of helps) {
      const section = commandSection(cliMd, cmd);
      if (section === null) {
        missing.push(`${cmd}: no "### subagents ${cmd}" section`);
        continue;
      }
      const where = [section, ...linkedPages(section).map(read)].join("\n");
      for (const option of optionsIn(text)) if (!names(where, option)) missing.push(`${cmd}: ${option}`);
    }
    expect(
      missing,
      `options --help prints that docs/cli.md (the command's section, or a page it links to) does not name:\n${missing.join("\n")}`,
    ).toEqual([]);
  }, 120_000);
});

describe("docs/pi-extension.md", () => {
  const piMd = page("pi-extension.md");

  /** Every property name of a JSON Schema, nested ones included (task fields, the forms of a files entry). */
  function properties(schema: any): string[] {
    if (!schema || typeof schema !== "object") return [];
    const own = schema.properties ? Object.keys(schema.properties) : [];
    const nested = [
      ...Object.values(schema.properties ?? {}),
      schema.items,
      ...(schema.anyOf ?? []),
      ...(schema.oneOf ?? []),
    ].flatMap(properties);
    return [...new Set([...own, ...nested])];
  }

  const tools = {
    delegate_to_subagents: DELEGATE_SCHEMA,
    get_subagent_output: OUTPUT_SCHEMA,
    get_subagent_session: SESSION_ID_SCHEMA,
    subagent: SUBAGENT_SCHEMA,
  };

  test("every parameter of every tool, nested fields included, is named", () => {
    const missing = Object.entries(tools).flatMap(([tool, schema]) =>
      properties(schema)
        .filter((p) => !piMd.includes(`\`${p}\``))
        .map((p) => `${tool}: ${p}`),
    );
    expect(
      missing,
      `parameters in src/core/call/schemas.ts that docs/pi-extension.md does not name:\n${missing.join("\n")}`,
    ).toEqual([]);
  });

  test("each tool's row in the tools table names its own top-level parameters", () => {
    for (const [tool, schema] of Object.entries(tools)) {
      const row = piMd.split("\n").find((l) => l.startsWith(`| \`${tool}\` |`));
      expect(row, `no row for ${tool} in the tools table`).toBeDefined();
      for (const p of Object.keys((schema as any).properties))
        expect(row!.includes(`\`${p}\``) || row!.includes(`${p}?`), `${tool}'s row does not name ${p}`).toBe(true);
    }
  });

  test("the Task fields table lists exactly the fields a task has (their one definition, core/task-fields.ts)", () => {
    const table = piMd.split("## Task fields")[1]?.split("\n\n")[1] ?? "";
    const listed = table
      .split("\n")
      .slice(2)
      .flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`(\w+)`/g)].map((m) => m[1]));
    expect(listed.sort(), `docs/pi-extension.md "Task fields" against TASK_FIELDS`).toEqual([...TASK_FIELDS].sort());
  });

  test("the extension's tools are each described (the tool names the settings parser knows)", () => {
    for (const tool of defaultSettings().tools)
      expect(piMd.includes(`| \`${tool}\` |`), `${tool} has no row in the tools table`).toBe(true);
  });
});

describe("docs/settings.md", () => {
  /**
   * The keys the settings parser reads, taken from the parser itself: a raw `subagents` object that records each
   * key looked up, and hands back another recorder so nested keys (docker.image, slurm.args) show up too.
   */
  function keysTheParserReads(): string[] {
    const seen = new Set<string>();
    const recorder = (prefix: string, nest: boolean): object =>
      new Proxy(
        {},
        {
          get: (_t, key) => {
            if (typeof key !== "string") return undefined;
            const name = prefix ? `${prefix}.${key}` : key;
            seen.add(name);
            return nest && !prefix ? recorder(name, false) : undefined;
          },
          has: () => false,
          ownKeys: () => [],
        },
      );
    // Twice: once with every key absent (so each alias of a key is looked up too), once with every key an object
    // (so the keys of object-valued settings are looked up).
    mergeSettings(defaultSettings(), recorder("", false), "docs-test", true);
    mergeSettings(defaultSettings(), recorder("", true), "docs-test", true);
    return [...seen].filter((k) => !["then", "toJSON", "constructor"].includes(k.split(".").at(-1)!));
  }

  test("every settings key the parser reads is named (nested ones as parent.key)", () => {
    const keys = keysTheParserReads();
    // The recorder itself must see what is known to be there, or the list would prove nothing.
    for (const known of [
      "timeout",
      "concurrency",
      "sandbox",
      "maxSpawnsPerSession",
      "docker.image",
      "slurm.partition",
      "looping_tool_count",
    ])
      expect(keys, `the parser was not seen reading ${known}`).toContain(known);
    const settingsMd = page("settings.md");
    const missing = keys.filter((k) => !settingsMd.includes(`\`${k}\``));
    expect(
      missing,
      `settings keys the parser reads that docs/settings.md does not name:\n${missing.join("\n")}`,
    ).toEqual([]);
  });
});

describe("links and length", () => {
  test("every relative link in README.md and docs/*.md resolves, to the file and to the heading", () => {
    const broken: string[] = [];
    for (const file of PAGES) {
      const text = read(file).replace(/```[\s\S]*?```/g, "");
      for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split("#");
        const dest = path ? resolve(dirname(file), path) : file;
        const where = `${file.slice(REPO.length + 1)}: ${target}`;
        if (!existsSync(dest)) broken.push(`${where} (no such file)`);
        else if (anchor && dest.endsWith(".md") && !anchors(read(dest)).has(anchor))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken, broken.join("\n")).toEqual([]);
  });

  test("the README is at most 300 lines, shows the picture, and keeps the quick start's test command", () => {
    const readme = read(join(REPO, "README.md"));
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toContain("npm install && npm test");
    expect(readme).toContain("](docs/windows.svg)");
    expect(read(join(DOCS, "windows.svg"))).toStartWith("<svg");
  });
});

/** Splits one shell line into words: double and single quotes, and a `#` comment after whitespace. */
function words(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (c === "#" && !started && (i === 0 || /\s/.test(line[i - 1]))) break;
    else if (/\s/.test(c)) {
      if (started) out.push(cur);
      cur = "";
      started = false;
    } else {
      cur += c;
      started = true;
    }
  }
  if (quote) throw new Error(`unclosed quote in a doc-test line: ${line}`);
  if (started) out.push(cur);
  return out;
}

/** The commands of every code block marked `doc-test` in the README and docs/, with where each is. */
function docTests(): { where: string; args: string[] }[] {
  const out: { where: string; args: string[] }[] = [];
  for (const file of PAGES) {
    for (const m of read(file).matchAll(/```[a-z]* doc-test\n([\s\S]*?)```/g)) {
      for (const line of m[1].split("\n")) {
        const w = words(line.trim());
        if (!w.length) continue;
        if (w[0] !== "subagents" && w[0] !== "./dist/subagents")
          throw new Error(`${file}: a doc-test line must start with subagents: ${line}`);
        out.push({ where: `${file.slice(REPO.length + 1)}: ${line.trim()}`, args: w.slice(1) });
      }
    }
  }
  return out;
}

describe("docs/BENCHMARKS.md and bench/", () => {
  test("npm run bench rewrites only its own region of the page (it had rewritten the page whole, hand-written sections and all)", () => {
    const text = page("BENCHMARKS.md");
    expect(text.split(RUN_START).length, "one start mark").toBe(2);
    expect(text.split(RUN_END).length, "one end mark").toBe(2);
    expect(text.indexOf(RUN_START)).toBeLessThan(text.indexOf(RUN_END));
    const rewritten = withLatestRun(text, "## The latest full run of `npm run bench`\n\nnew figures");
    expect(rewritten).toContain("new figures");
    // Everything outside the region is kept byte for byte.
    const outside = (t: string) => [t.slice(0, t.indexOf(RUN_START)), t.slice(t.indexOf(RUN_END))];
    expect(outside(rewritten)).toEqual(outside(text));
    // A page without the region keeps all it has and gets the region at its end.
    expect(withLatestRun("# Benchmarks\n\n## By hand\n", "run")).toBe(
      `# Benchmarks\n\n## By hand\n\n${RUN_START}\nrun\n${RUN_END}\n`,
    );
  });

  test("every bench script is in development.md's list", () => {
    const listed = page("development.md");
    const scripts = readdirSync(join(REPO, "bench")).filter(
      (f) => f.endsWith(".ts") && !["lib.ts", "page.ts"].includes(f),
    );
    expect(scripts.filter((f) => !listed.includes(`\`${f}\``))).toEqual([]);
  });
});

describe("examples marked doc-test run", () => {
  let world: PiWorld;
  beforeAll(async () => {
    world = await piWorld();
  });
  afterAll(() => world.close());

  const examples = docTests();
  test("there are examples to run", () => expect(examples.length).toBeGreaterThan(3));
  for (const ex of examples) {
    test(ex.where, async () => {
      const r = await cli(world, ex.args, { binary: true });
      expect(r.code, `exit ${r.code}\nstdout: ${r.stdout.slice(-1500)}\nstderr: ${r.stderr.slice(-1500)}`).toBe(0);
    }, 120_000);
  }
});
