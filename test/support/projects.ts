// Real projects made in a test (an npm project with its dependency in the ignored node_modules), for the tests of
// what an isolated task sees of a repository's ignored files.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitIn } from "./git-repo.ts";

/** The dependency as the user has it installed. */
export const LEFTPAD = "module.exports = (s, n) => String(s).padStart(n, '0');\n";
/** A token in the project's ignored .env (not a pattern the sanitizer knows by its shape). */
export const ENV_SECRET = "Zq8vN3kLp0Xw7RtY2mBc44";
const DEFAULT_TEST =
  "const pad = require('leftpad');\nif (pad(7, 3) !== '007') process.exit(1);\nconsole.log('tests passed');\n";

export function writeFile(file: string, text: string): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
}

/**
 * An npm project as a user has it: `npm test` runs test.js, which requires `leftpad` from the ignored
 * node_modules; an ignored .env with a token, named in .worktreeinclude. `home` is git's HOME.
 */
export function npmProject(home: string, dir: string, test = DEFAULT_TEST): string {
  mkdirSync(dir, { recursive: true });
  // The repository may belong to another user by the time the test looks (test-user.ts).
  const git = (...args: string[]) => gitIn(home, dir, "-c", "safe.directory=*", ...args);
  git("init", "-q", "-b", "main");
  git("config", "user.email", "me@example.com");
  git("config", "user.name", "Me");
  writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "demo", version: "1.0.0", scripts: { test: "node test.js" } }),
  );
  writeFile(join(dir, "test.js"), test);
  writeFile(join(dir, "src", "api.ts"), "export function api(input: string) { return input; }\n");
  writeFile(join(dir, "README.md"), "# demo\n");
  writeFile(join(dir, ".gitignore"), "node_modules/\n.env\n");
  writeFile(join(dir, ".worktreeinclude"), ".env\n");
  git("add", "-A");
  git("commit", "-q", "-m", "first");
  writeFile(join(dir, "node_modules", "leftpad", "package.json"), '{"name":"leftpad","main":"index.js"}');
  writeFile(join(dir, "node_modules", "leftpad", "index.js"), LEFTPAD);
  writeFile(join(dir, ".env"), `SERVICE_TOKEN=${ENV_SECRET}\nPORT=3000\n`);
  return dir;
}

/** Our worktree folders under a world's data folder (not records, not probes): none may be left after a run. */
export const worktreesLeft = (root: string) =>
  existsSync(join(root, "worktrees"))
    ? readdirSync(join(root, "worktrees")).filter((n) => !n.startsWith(".") && !n.endsWith(".json"))
    : [];
