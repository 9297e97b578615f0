// What pi learns about our tools besides their schemas (pi/tool-exposure.ts): annotations on all five, deferred
// retrieval tools from pi 1.6 on, and the declarations that keep them reachable when no loader is active.
import { expect, test } from "bun:test";
import { ANNOTATIONS } from "../../../src/core/call/tool-texts.ts";
import { defersTools, exposed, reachability } from "../../../src/pi/tool-exposure.ts";

test("every tool has annotations; the retrieval tools are read-only, the delegation tools may change anything", () => {
  for (const name of ["get_subagent_output", "get_subagent_session", "list_subagent_profiles"] as const)
    expect(ANNOTATIONS[name]).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  for (const name of ["delegate_to_subagents", "subagent"] as const)
    expect(ANNOTATIONS[name]).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
});

test("deferred from pi 1.6.0 on, and only the retrieval tools", () => {
  expect(defersTools("1.6.0")).toBe(true);
  expect(defersTools("1.10.2")).toBe(true);
  for (const v of ["1.5.2", "0.87.1", "0.73.1", ""]) expect(defersTools(v)).toBe(false);
  expect(exposed({ name: "get_subagent_output" }, true)).toMatchObject({ exposure: "deferred" });
  expect(exposed({ name: "delegate_to_subagents" }, true)).not.toHaveProperty("exposure");
  expect(exposed({ name: "get_subagent_output" }, false)).not.toHaveProperty("exposure");
  expect(exposed({ name: "get_subagent_output" }, false)).toHaveProperty("annotations");
});

/** pi's tool set as the extension sees it. */
function toolSet(active: string[], registered: string[]) {
  const set = { active: [...active], calls: 0 };
  return {
    set,
    pi: {
      getActiveTools: () => [...set.active],
      getAllTools: () => registered.map((name) => ({ name })),
      setActiveTools: (names: string[]) => {
        set.calls++;
        set.active = names;
      },
    },
  };
}

const ours = [
  "delegate_to_subagents",
  "subagent",
  "get_subagent_output",
  "get_subagent_session",
  "list_subagent_profiles",
];

test("without a loader: the profile list from the start, output and transcript once a call started sub-agents", () => {
  const { set, pi } = toolSet(["read", "delegate_to_subagents", "subagent"], ["read", "tool_search", ...ours]);
  const reach = reachability(pi, true);
  reach("start");
  expect(set.active).toEqual(["read", "delegate_to_subagents", "subagent", "list_subagent_profiles"]);
  reach("call");
  expect(set.active.slice(-2)).toEqual(["get_subagent_output", "get_subagent_session"]);
  reach("call");
  expect(set.calls).toBe(2);
});

test("with tool_search or codemode active nothing is declared; nor in an older pi; nor a tool settings left out", () => {
  for (const loader of ["tool_search", "codemode"]) {
    const { set, pi } = toolSet(["read", loader, "delegate_to_subagents"], ["read", loader, ...ours]);
    reachability(pi, true)("call");
    expect(set.calls).toBe(0);
  }
  const old = toolSet(["read"], ["read", ...ours]);
  reachability(old.pi, false)("call");
  expect(old.set.calls).toBe(0);
  const limited = toolSet(["read"], ["read", "delegate_to_subagents", "get_subagent_output"]);
  reachability(limited.pi, true)("call");
  expect(limited.set.active).toEqual(["read", "get_subagent_output"]);
});
