// The executable shipped with the extension bundle, found in each layout the extension is loaded from (a checkout's
// dist/, the npm package with its platform package hoisted beside it or inside it), and asked its versions once —
// a real process, as in use (a script standing in for the executable).
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundledEmbedded, bundledExecutable } from "../../../src/host/embedded-pi.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-bundled-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const platform = `subagents-${process.platform}-${process.arch}`;

/** An executable answering `--version` as ours does (and as Bun does with BUN_BE_BUN=1). */
function fakeExecutable(file: string, pi: string): string {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(
    file,
    `#!/bin/sh\nif [ "$BUN_BE_BUN" = 1 ]; then echo 1.4.5; else echo "subagents 0.1.0 · pi ${pi} inside · commit abc"; fi\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

test.skipIf(!["linux", "darwin"].includes(process.platform))(
  "found beside the bundle, in the npm package, or hoisted beside it; nothing elsewhere",
  () => {
    const checkout = join(root, "checkout", "dist");
    const exe = fakeExecutable(join(checkout, "subagents"), "1.6.0");
    expect(bundledExecutable(checkout)).toEqual([exe]);
    // `pi install npm:subagents`: npm hoists the platform package into the same node_modules.
    const hoisted = join(root, "npm", "node_modules", "subagents");
    mkdirSync(hoisted, { recursive: true });
    const platformExe = fakeExecutable(join(root, "npm", "node_modules", platform, "bin", "subagents"), "1.6.0");
    expect(bundledExecutable(hoisted)).toEqual([platformExe]);
    // An unpacked package with its platform package inside.
    const nested = join(root, "folder");
    const nestedExe = fakeExecutable(join(nested, "node_modules", platform, "bin", "subagents"), "1.6.0");
    expect(bundledExecutable(nested)).toEqual([nestedExe]);
    // `subagents install`'s runtime folder has none: the install record is used instead.
    mkdirSync(join(root, "agent", "subagents-runtime"), { recursive: true });
    expect(bundledExecutable(join(root, "agent", "subagents-runtime"))).toBeUndefined();
  },
);

test("its pi and Bun versions are asked once; one that does not answer as ours does is not used", () => {
  const dir = join(root, "probe", "dist");
  const exe = fakeExecutable(join(dir, "subagents"), "1.6.0");
  const e = bundledEmbedded(dir);
  expect(e).toMatchObject({ argv: [exe], version: "1.6.0", bun: "1.4.5", where: exe });
  expect(e?.env.SUBAGENTS_ROLE).toBe("pi");
  // Asked once per process: a changed answer is not seen again.
  fakeExecutable(exe, "9.9.9");
  expect(bundledEmbedded(dir)?.version).toBe("1.6.0");
  const other = join(root, "other", "dist");
  mkdirSync(other, { recursive: true });
  writeFileSync(join(other, "subagents"), "#!/bin/sh\necho something else\n");
  chmodSync(join(other, "subagents"), 0o755);
  expect(bundledEmbedded(other)).toBeNull();
});
