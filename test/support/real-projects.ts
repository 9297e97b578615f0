// Real projects from the npm registry for the tests and benches of what a task sees of a repository (an isolated
// task's layer, a sandboxed task's): installed once per machine into a cache (SUBAGENTS_TEST_CACHE, else
// ~/.cache/subagents-tests), made atomically (a folder renamed into place, so two test files installing at once
// never see half of one), and copied into a test's folder as a git repository with its dependencies ignored, as
// the user has it. Only the npm registry is used (and Debian's python3 for the Python project).
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export const CACHE = process.env.SUBAGENTS_TEST_CACHE ?? join(homedir(), ".cache", "subagents-tests");
/** Debian's python3 (python3-venv): another user can run it, unlike one under root's home (pyenv). */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

function run(cmd: string[], cwd: string, env: Record<string, string> = {}): string {
  const r = spawnSync(cmd[0], cmd.slice(1), {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NPM_CONFIG_UPDATE_NOTIFIER: "false", NPM_CONFIG_FUND: "false", ...env },
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} failed in ${cwd}: ${(r.stderr || r.stdout).slice(-2000)}`);
  return r.stdout;
}

/** A cached folder made by `make` (in a fresh folder) the first time it is asked for on this machine. */
function cached(name: string, make: (dir: string) => void): string {
  const dir = join(CACHE, name);
  if (existsSync(join(dir, ".done"))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const tmp = mkdtempSync(join(CACHE, `.${name}-`));
  try {
    make(tmp);
    writeFileSync(join(tmp, ".done"), "");
    try {
      renameSync(tmp, dir);
    } catch {
      // Another process made it meanwhile: theirs is as good.
      if (!existsSync(join(dir, ".done"))) throw new Error(`could not put ${name} in ${CACHE}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** The project in `cachedDir` copied to `dest` as the user's git repository: what `.gitignore` names is not committed. */
function asRepository(cachedDir: string, dest: string, gitignore: string): string {
  mkdirSync(dirname(dest), { recursive: true });
  run(["cp", "-a", cachedDir, dest], dirname(dest));
  rmSync(join(dest, ".done"), { force: true });
  writeFileSync(join(dest, ".gitignore"), gitignore);
  const git = (...a: string[]) => run(["git", "-c", "user.email=me@example.com", "-c", "user.name=Me", ...a], dest);
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "the project");
  return dest;
}

/**
 * qs 6.14.0 (the querystring parser) from the registry with its own test suite: `npm test` lints with eslint and runs
 * tape under nyc — a suite that reads many files. Its devDependencies that live on git hosts or only build its
 * browser bundle are left out (no internet but the registry here).
 */
export function qsProject(dest: string): string {
  const dir = cached("qs-6.14.0", (d) => {
    run(["npm", "pack", "qs@6.14.0"], d);
    run(["tar", "xzf", "qs-6.14.0.tgz", "--strip-components=1"], d);
    rmSync(join(d, "qs-6.14.0.tgz"));
    const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
    for (const k of [
      "@browserify/envify",
      "@browserify/uglifyify",
      "browserify",
      "bundle-collapser",
      "common-shakeify",
      "eclint",
      "evalmd",
      "npmignore",
      "safe-publish-latest",
      "in-publish",
      "unassertify",
      "module-deps",
      "mkdirp",
    ])
      delete pkg.devDependencies[k];
    pkg.scripts = {
      test: "npm run lint && npm run tests-only",
      lint: "eslint --ext=js,mjs .",
      "tests-only": 'nyc tape "test/**/*.js"',
    };
    writeFileSync(join(d, "package.json"), JSON.stringify(pkg, null, 2));
    run(["npm", "install", "--no-audit", "--ignore-scripts"], d);
  });
  return asRepository(dir, dest, "node_modules/\n.nyc_output/\ncoverage/\ndist/\n");
}

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

/** A pure-Python wheel made by hand (no build tools): what `pip install --no-index` takes from a local file. */
function wheel(dir: string): string {
  const src = join(dir, "whl");
  write(join(src, "greet", "__init__.py"), "def hello():\n    return 'hello from greet'\n");
  const info = join(src, "greet-1.0.dist-info");
  write(join(info, "METADATA"), "Metadata-Version: 2.1\nName: greet\nVersion: 1.0\n");
  write(join(info, "WHEEL"), "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n");
  write(
    join(info, "RECORD"),
    "greet/__init__.py,,\ngreet-1.0.dist-info/METADATA,,\ngreet-1.0.dist-info/WHEEL,,\ngreet-1.0.dist-info/RECORD,,\n",
  );
  const out = join(dir, "greet-1.0-py3-none-any.whl");
  run([PYTHON, "-m", "zipfile", "-c", out, "greet", "greet-1.0.dist-info"], src);
  rmSync(src, { recursive: true });
  return out;
}

/**
 * A monorepo as a developer has it, with npm, pnpm, yarn PnP and Python packages side by side, everything installed
 * from the registry (and Debian's python3): `ts/` two TypeScript projects built with `tsc -b` (project references,
 * build info files in place), `pn/` a pnpm project (node_modules/.pnpm and its links), `yp/` a yarn 4 PnP project
 * (`.pnp.cjs`, `.pnp.loader.mjs`, its cache in a global folder beside it, reached by relative paths), `py/` a venv
 * with a wheel to install from a local file. Copied as one folder so the relative paths stay.
 */
export function monorepo(dest: string): string {
  const dir = cached("monorepo-5", (d) => {
    const pkg = (p: string, body: object) => write(join(d, p, "package.json"), JSON.stringify(body, null, 2));
    pkg("ts", { name: "ts", private: true, devDependencies: { typescript: "5.9.3" } });
    write(
      join(d, "ts", "tsconfig.json"),
      JSON.stringify({ files: [], references: [{ path: "lib" }, { path: "app" }] }),
    );
    const project = (name: string, refs: string[]) =>
      write(
        join(d, "ts", name, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: { composite: true, outDir: "dist", rootDir: "src", module: "commonjs", target: "es2020" },
          references: refs.map((path) => ({ path })),
        }),
      );
    project("lib", []);
    project("app", ["../lib"]);
    write(join(d, "ts", "lib", "src", "index.ts"), "export const answer = (): number => 41;\n");
    write(
      join(d, "ts", "app", "src", "main.ts"),
      'import { answer } from "../../lib/dist/index";\nconsole.log(answer());\n',
    );
    run(["npm", "install", "--no-audit"], join(d, "ts"));
    run(["npx", "tsc", "-b"], join(d, "ts"));
    // pnpm and yarn, from the registry, run by node from the cache.
    const tools = join(d, ".tools");
    mkdirSync(tools, { recursive: true });
    run(["npm", "install", "--no-audit", "--prefix", tools, "pnpm@10.11.0", "@yarnpkg/cli-dist@4.9.2"], d);
    pkg("pn", { name: "pn", private: true, dependencies: { "left-pad": "1.3.0" } });
    run(
      [
        "node",
        join(tools, "node_modules", "pnpm", "bin", "pnpm.cjs"),
        "install",
        "--store-dir",
        join(d, ".pnpm-store"),
      ],
      join(d, "pn"),
    );
    pkg("yp", { name: "yp", private: true, dependencies: { "left-pad": "1.3.0" }, packageManager: "yarn@4.9.2" });
    write(
      join(d, "yp", ".yarnrc.yml"),
      "nodeLinker: pnp\nenableGlobalCache: true\nglobalFolder: ../.yarn-global\nenableTelemetry: false\n",
    );
    write(join(d, "yp", "yarn.lock"), "");
    run(["node", join(tools, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js"), "install"], join(d, "yp"), {
      COREPACK_ENABLE_STRICT: "0",
      YARN_ENABLE_IMMUTABLE_INSTALLS: "false",
    });
    // What `npm install <pkg>` in a task takes from (--offline: the tests reach nothing but 127.0.0.1).
    run(["npm", "cache", "add", "is-odd@3.0.1", "is-number@6.0.0", "--cache", join(d, ".npm-cache")], d);
    run([PYTHON, "-m", "venv", join(d, "py", ".venv")], d);
    // Where the venv was made (the folder is renamed into the cache after): the copies' venvs are rewritten from it.
    writeFileSync(join(d, "py", ".venv", ".made-at"), join(d, "py", ".venv"));
    wheel(join(d, "py"));
    write(join(d, "py", "app.py"), "print('app')\n");
  });
  const repo = asRepository(
    dir,
    dest,
    [
      "node_modules/",
      "dist/",
      "*.tsbuildinfo",
      ".pnp.*",
      ".yarn/",
      ".yarn-global/",
      ".pnpm-store/",
      ".tools/",
      ".npm-cache/",
      ".venv/",
      "__pycache__/",
      "*.whl",
      "",
    ].join("\n"),
  );
  // The venv names its own folder by absolute path (scripts' #! lines, pyvenv.cfg): made the copy's.
  const venv = join(repo, "py", ".venv");
  const madeAt = readFileSync(join(venv, ".made-at"), "utf8");
  for (const f of [join(venv, "pyvenv.cfg"), ...readdirSync(join(venv, "bin")).map((n) => join(venv, "bin", n))]) {
    if (lstatSync(f).isSymbolicLink() || !lstatSync(f).isFile()) continue;
    const text = readFileSync(f);
    if (text.subarray(0, 512).includes(0)) continue;
    writeFileSync(f, text.toString("utf8").replaceAll(madeAt, venv));
  }
  return repo;
}

/** The tools the monorepo's commands run (from the cache: no global installs). */
export const monorepoTools = (repo: string) => ({
  npmCache: join(repo, ".npm-cache"),
  pnpm: `node ${join(repo, ".tools", "node_modules", "pnpm", "bin", "pnpm.cjs")}`,
  yarn: `node ${join(repo, ".tools", "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")}`,
});
