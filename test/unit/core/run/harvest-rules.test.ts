// What the owner takes back from a task's layer, one changed path at a time: git data and special files never, links
// only inside the folder, the protected names not from a confined child (unless opened), nothing outside the task's
// folder when it is narrower than the layer; names are bytes.
import { expect, test } from "bun:test";
import { bytesOf, leftBehind, leftWarnings, linkInside, shown } from "../../../../src/core/run/launch/harvest-rules.ts";

const b = (s: string) => bytesOf(s);

test("git data stays at any depth and under any spelling of the path; other names come back from an unconfined child", () => {
  for (const p of [".git", ".git/config", "vendor/x/.git", "a/b/c/d/e/f/.git/hooks/pre-commit"])
    expect(leftBehind(b(p), { protect: false })).toBe("git");
  for (const p of ["src/app.ts", ".pi/extensions/x.js", ".envrc", "git/x", ".gitignore", "a.git/b", ".github/x"])
    expect(leftBehind(b(p), { protect: false })).toBeNull();
  // A name that is not UTF-8 is a name like any other.
  const odd = new Uint8Array([0x64, 0xff, 0x2f, 0x2e, 0x65, 0x6e, 0x76, 0x72, 0x63]); // "d\xff/.envrc"
  expect(leftBehind(odd, { protect: true })).toBe("protected");
  expect(shown(odd)).toBe("d\uFFFD/.envrc");
});

test("a confined child's protected names stay at any depth, but pi's agent memory and what the person opened", () => {
  const rules = { protect: true };
  for (const p of [
    ".pi/extensions/x.js",
    "pkg/.pi/settings.json",
    "a/b/c/d/e/.envrc",
    ".vscode/tasks.json",
    ".claude",
    "deep/er/.mcp.json",
    ".bashrc",
  ])
    expect(leftBehind(b(p), rules)).toBe("protected");
  for (const p of [".pi/agent-memory/notes.md", "pkg/.pi/agent-memory-local/x.md", "src/.pi.ts", "envrc"])
    expect(leftBehind(b(p), rules)).toBeNull();
  expect(leftBehind(b(".pi/agents/a.md"), { protect: true, open: [".pi/agents"] })).toBeNull();
  expect(leftBehind(b(".pi/extensions/x.js"), { protect: true, open: [".pi/agents"] })).toBe("protected");
  expect(leftBehind(b(".husky/_/pre-commit"), { protect: true, hooks: [".husky/_"] })).toBe("protected");
  // Narrower than the layer: the task's folder is pkg/.
  expect(leftBehind(b("other/x"), { protect: false, scope: "pkg" })).toBe("outside");
  expect(leftBehind(b("pkg/x"), { protect: false, scope: "pkg" })).toBeNull();
  expect(leftBehind(b("pkg2/x"), { protect: false, scope: "pkg" })).toBe("outside");
});

test("links come back only when they stay inside the folder and out of git data", () => {
  const root = "/home/me/proj";
  expect(linkInside(b("node_modules/.bin/tsc"), b("../typescript/bin/tsc"), root)).toBe(true);
  expect(linkInside(b("a/link"), b("../../x"), root)).toBe(false);
  expect(linkInside(b("link"), b("/home/me/.ssh"), root)).toBe(false);
  expect(linkInside(b("link"), b("/home/me/proj/src"), root)).toBe(true);
  expect(linkInside(b("link"), b("/home/me/project-old/src"), root)).toBe(false);
  expect(linkInside(b("h"), b(".git/hooks"), root)).toBe(false);
  expect(linkInside(b("a/h"), b("./../src/./x"), root)).toBe(true);
});

test("what stayed behind is said once per reason, naming a few paths", () => {
  const list = (n: string[]) => n.join(", ");
  expect(
    leftWarnings(
      [
        { path: ".pi", why: "protected" },
        { path: ".envrc", why: "protected" },
        { path: "evil", why: "link-out" },
      ],
      "sandbox",
      list,
    ),
  ).toEqual([
    "sandbox: not taken back from the task's layer: .pi, .envrc — protected (tools run what is there when you next open the folder; subagents.sandboxWritable opens a path on purpose)",
    "sandbox: not taken back from the task's layer: evil — symbolic links that point out of the folder (or into git data)",
  ]);
});
