// The child's model check (src/child-extension/model-guard.ts): what counts as the model asked for.
import { expect, test } from "bun:test";
import { modelGuardMessage, modelMatches } from "../../../src/child-extension/model-guard.ts";

test("the resolved model matches what was asked: exact, bare id, part of an id, thinking suffix; not another model", () => {
  const opus = { provider: "anthropic", id: "claude-opus-4-8" };
  expect(modelMatches("anthropic/claude-opus-4-8", opus)).toBe(true);
  expect(modelMatches("anthropic/claude-opus-4-8:high", opus)).toBe(true);
  expect(modelMatches("claude-opus-4-8", opus)).toBe(true);
  expect(modelMatches("opus", opus)).toBe(true);
  expect(modelMatches("anthropic/claude-fable-5-2", opus)).toBe(false);
  expect(modelMatches("openai/claude-opus-4-8", opus)).toBe(false);
  expect(modelMatches("claude-fable-5-2", opus)).toBe(false);
  expect(modelMatches("anything", undefined)).toBe(true); // nothing resolved: pi fails on its own
});

test("the message names the model, what pi resolved, and the pi; it reads as pi's own 'not found'", () => {
  const m = modelGuardMessage("anthropic/claude-fable-5-2", { provider: "anthropic", id: "claude-opus-4-8" }, "0.87.1");
  expect(m).toStartWith(
    'Model "anthropic/claude-fable-5-2" not found by pi 0.87.1: it resolved "anthropic/claude-opus-4-8" instead',
  );
  expect(/Model "[^"]+" not found/.test(m)).toBe(true);
});
