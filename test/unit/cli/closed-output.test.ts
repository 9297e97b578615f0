// A reader that goes away (`… | head -c 1`) under the real runtime: writes to the closed stream are dropped without a
// trace, the command is told once, and a command holding its output (work under way) is not ended by it.
import { expect, test } from "bun:test";
import { join } from "node:path";

const MODULE = join(import.meta.dir, "..", "..", "..", "src", "cli", "terminal", "closed-output.ts");

/** A process writing lines to stdout read by `head -c 1`; what it says on stderr, and how it ended. */
async function writer(body: string): Promise<{ err: string; code: number }> {
  const program = `
    const m = await import(${JSON.stringify(MODULE)});
    m.guardOutput();
    ${body}
    for (let i = 0; i < 2000; i++) { process.stdout.write("line " + i + "\\n"); await Bun.sleep(0); }
    process.stderr.write("wrote on\\n");`;
  const sh = Bun.spawn({
    cmd: ["bash", "-c", `"$@" | head -c 1 >/dev/null; exit "\${PIPESTATUS[0]}"`, "_", process.execPath, "-e", program],
    stdout: "ignore",
    stderr: "pipe",
  });
  const err = await new Response(sh.stderr).text();
  return { err, code: await sh.exited };
}

test("a closed stdout: writes dropped, told once; a command holding it goes on, one that does not ends 141", async () => {
  const held = await writer(`
    m.holdOutput();
    m.onOutputClosed((w) => process.stderr.write("closed " + w + " held=" + m.outputHeld() + "\\n"));`);
  expect(held.err).toBe("closed stdout held=true\nwrote on\n");
  expect(held.code).toBe(0);
  const shown = await writer(`m.onOutputClosed((w) => { if (!m.outputHeld()) process.exit(141); });`);
  expect(shown.err).toBe("");
  expect(shown.code).toBe(141);
});
