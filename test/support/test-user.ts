// An ordinary (non-root) user for the tests whose mechanism differs for root: made once per machine with useradd
// (CI runs as root), and commands run as it with setpriv, which keeps the environment it is given. Without root the
// tests are skipped with a loud message; they never pass silently.
import { spawnSync } from "node:child_process";
import { chownSync, lchownSync, lstatSync, readdirSync } from "node:fs";

export const TEST_USER = "subagents-tester";
export type TestUser = { name: string; uid: number; gid: number };

const idOf = (flag: string) => spawnSync("id", [flag, TEST_USER], { encoding: "utf8" });

/** The test user (made if missing), or why the tests that need one are skipped here. */
export function ensureTestUser(): TestUser | string {
  if (process.getuid?.() !== 0) {
    const msg = `*** SKIPPING the ordinary-user tests: not root (CI makes the user ${TEST_USER} with useradd) ***`;
    console.warn(`\n${msg}\n`);
    return msg;
  }
  if (idOf("-u").status !== 0) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/bin/sh", TEST_USER], {
      encoding: "utf8",
    });
    // Two test files may make it at once: the other one's user is as good.
    if (made.status !== 0 && idOf("-u").status !== 0) throw new Error(`useradd failed: ${made.stderr}`);
  }
  return { name: TEST_USER, uid: Number(idOf("-u").stdout.trim()), gid: Number(idOf("-g").stdout.trim()) };
}

/** The command, run as the user: same environment, the user's ids, no supplementary groups. */
export const asUser = (user: TestUser, argv: string[]) => [
  "setpriv",
  `--reuid=${user.uid}`,
  `--regid=${user.gid}`,
  "--clear-groups",
  "--",
  ...argv,
];

/** Gives a folder and everything in it to the user (symbolic links themselves, never what they point at; names as
 *  bytes: a folder a test named with an invalid UTF-8 byte is walked too). */
export function chownTree(dir: string | Buffer, user: TestUser): void {
  chownSync(dir, user.uid, user.gid);
  for (const name of readdirSync(dir, { encoding: "buffer" }) as Buffer[]) {
    const p = Buffer.concat([Buffer.from(dir), Buffer.from("/"), name]);
    const st = lstatSync(p);
    if (st.isDirectory()) chownTree(p, user);
    else if (st.isSymbolicLink()) lchownSync(p, user.uid, user.gid);
    else chownSync(p, user.uid, user.gid);
  }
}
