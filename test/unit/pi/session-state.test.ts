// When a background task's end is announced to the model: never twice (a wait that returned the output already
// told it), whichever comes first — the wait seeing the record's end, or the call's taskEnd event.
import { expect, test } from "bun:test";
import { PiSession } from "../../../src/pi/session-state.ts";

test("no wait: the end is announced", () => {
  const s = new PiSession();
  s.backgroundStarted("a");
  expect(s.announceEnd("a")).toBe(true);
});

test("the end arrives while a wait is under way: not announced", () => {
  const s = new PiSession();
  s.backgroundStarted("a");
  const release = s.awaiting("a");
  expect(s.announceEnd("a")).toBe(false);
  release(true);
});

test("the wait sees the record's end before the taskEnd event: still not announced", () => {
  const s = new PiSession();
  s.backgroundStarted("a");
  s.awaiting("a")(true);
  expect(s.announceEnd("a")).toBe(false);
});

test("a wait cut short (aborted) leaves the end to be announced", () => {
  const s = new PiSession();
  s.backgroundStarted("a");
  s.awaiting("a")(false);
  expect(s.announceEnd("a")).toBe(true);
});

test("a wait that ended after the announcement leaves nothing behind for the session's next background run", () => {
  const s = new PiSession();
  s.backgroundStarted("a");
  const release = s.awaiting("a");
  expect(s.announceEnd("a")).toBe(false);
  release(true);
  s.backgroundStarted("a");
  expect(s.announceEnd("a")).toBe(true);
});
